"""3x3 convolution, 2x2 max pooling, hardtanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 128
out_channels = 128
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return F.hardtanh(F.max_pool2d(self.conv(x), 2), -1.0, 1.0)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
