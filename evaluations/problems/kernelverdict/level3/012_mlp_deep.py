"""Deep narrow perceptron: eight 1024-wide linear layers with ReLU."""

import torch
import torch.nn as nn

batch_size = 8192
width = 1024
depth = 8


class Model(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return [width, depth]
