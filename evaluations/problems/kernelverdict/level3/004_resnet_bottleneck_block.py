"""ResNet bottleneck block: 1x1 reduce, 3x3, 1x1 expand, batch normalisation, identity shortcut."""

import torch
import torch.nn as nn

batch_size = 128
channels = 256
mid_channels = 64
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels, mid_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, mid_channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = torch.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return torch.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, mid_channels]
