"""3x3 convolution, group normalisation (32 groups), SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 256
out_channels = 256
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.gn = nn.GroupNorm(32, out_channels)

    def forward(self, x):
        return F.silu(self.gn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
