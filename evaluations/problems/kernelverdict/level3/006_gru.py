"""Single-layer GRU over a sequence; returns every hidden state."""

import torch
import torch.nn as nn

batch_size = 64
seq_len = 128
input_size = 1024
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, batch_first=True)

    def forward(self, x):
        out, _ = self.gru(x)
        return out


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
