"""3D convolution, leaky ReLU, 2x2x2 average pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 64
out_channels = 64
depth = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return F.avg_pool3d(F.leaky_relu(self.conv(x), 0.1), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
