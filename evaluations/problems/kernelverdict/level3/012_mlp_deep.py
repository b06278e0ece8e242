"""Deep narrow perceptron: eight 1024-wide linear layers with ReLU.

Weights are scaled to He variance (2 / fan_in, the default uniform init times sqrt(6)) so the
activations keep their size through the depth: with the default init they shrink about sixfold in
variance per layer and the output would be the last bias, whatever the input."""

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
        with torch.no_grad():
            for layer in self.net[::2]:
                layer.weight.mul_(6 ** 0.5)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return [width, depth]
