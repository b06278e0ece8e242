"""1D convolution over long sequences, kernel 5, padding 2."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 256
out_channels = 256
length = 16384


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, padding=2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]
