"""Batched matrix product, bias, tanh."""

import torch
import torch.nn as nn

B = 64
N = 1152


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n) * 0.1)

    def forward(self, a, b):
        return torch.tanh(torch.bmm(a, b) + self.bias)


def get_inputs():
    return [torch.randn(B, N, N), torch.randn(B, N, N)]


def get_init_inputs():
    return [N]
