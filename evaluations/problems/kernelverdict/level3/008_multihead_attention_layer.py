"""torch.nn.MultiheadAttention self-attention (projections, attention, output projection)."""

import torch
import torch.nn as nn

batch_size = 16
seq_len = 1024
embed_dim = 1024
heads = 16


class Model(nn.Module):
    def __init__(self, embed_dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, heads, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x, need_weights=False)
        return out


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, heads]
