"""Transposed 2D convolution doubling the resolution (kernel 4, stride 2, padding 1)."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 256
out_channels = 128
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
