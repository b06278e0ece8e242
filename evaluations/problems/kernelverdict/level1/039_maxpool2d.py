"""2D max pooling, kernel 3, stride 2, padding 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
channels = 256
height = 192
width = 192


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
