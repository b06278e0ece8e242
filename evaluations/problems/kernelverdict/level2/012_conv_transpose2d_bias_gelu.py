"""Transposed convolution (x2 upsampling), extra bias, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 256
out_channels = 128
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        return F.gelu(self.deconv(x) + self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
