"""Depthwise 2D convolution (one 3x3 filter per channel), padding 1."""

import torch
import torch.nn as nn

batch_size = 64
channels = 512
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
