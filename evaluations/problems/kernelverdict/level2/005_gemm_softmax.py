"""Linear layer followed by a softmax within each group of 16 outputs (a multi-head classifier)."""

import torch
import torch.nn as nn

batch_size = 3072
in_features = 4096
out_features = 8192
group_size = 16


class Model(nn.Module):
    def __init__(self, in_features, out_features, group_size):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.group_size = group_size

    def forward(self, x):
        y = self.fc(x)
        return torch.softmax(y.view(y.shape[0], -1, self.group_size), dim=-1).view(y.shape)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, group_size]
