"""Linear layer, ReLU, then a constant scale."""

import torch
import torch.nn as nn

batch_size = 6144
in_features = 4096
out_features = 4096
scale = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
