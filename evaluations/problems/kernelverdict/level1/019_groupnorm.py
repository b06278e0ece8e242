"""Group normalisation with 32 groups."""

import torch
import torch.nn as nn

batch_size = 128
channels = 256
groups = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
