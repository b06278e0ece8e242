"""Image stem: 7x7 convolution with stride 2 on 3-channel input."""

import torch
import torch.nn as nn

batch_size = 256
in_channels = 3
out_channels = 64
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=3, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
