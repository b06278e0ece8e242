"""MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise, 1x1 project, batch normalisation, ReLU6, shortcut."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
channels = 64
expansion = 6
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels, expansion):
        super().__init__()
        hidden = channels * expansion
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.depthwise = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = nn.BatchNorm2d(hidden)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu6(self.bn1(self.expand(x)))
        out = F.relu6(self.bn2(self.depthwise(out)))
        return x + self.bn3(self.project(out))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, expansion]
