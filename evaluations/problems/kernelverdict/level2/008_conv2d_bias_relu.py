"""3x3 convolution without bias, then a per-channel bias and ReLU."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 128
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        return torch.relu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
