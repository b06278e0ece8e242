"""Linear layer followed by a softmax over its outputs."""

import torch
import torch.nn as nn

batch_size = 3072
in_features = 4096
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
