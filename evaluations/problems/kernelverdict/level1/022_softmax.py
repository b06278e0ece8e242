"""Softmax over the last dimension of wide rows."""

import torch
import torch.nn as nn

rows = 65536
cols = 16384


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
