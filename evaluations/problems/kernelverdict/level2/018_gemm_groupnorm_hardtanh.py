"""Linear layer, group normalisation over features (64 groups), hardtanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 6144
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(64, out_features)

    def forward(self, x):
        return F.hardtanh(self.gn(self.fc(x)), -2.0, 2.0)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
