"""Gated linear unit: silu(x W1^T) * (x W2^T)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3072
in_features = 4096
hidden = 4096


class Model(nn.Module):
    def __init__(self, in_features, hidden):
        super().__init__()
        self.w1 = nn.Linear(in_features, hidden, bias=False)
        self.w2 = nn.Linear(in_features, hidden, bias=False)

    def forward(self, x):
        return F.silu(self.w1(x)) * self.w2(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden]
