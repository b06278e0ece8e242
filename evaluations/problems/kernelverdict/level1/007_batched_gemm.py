"""Batched matrix product of independent square matrices."""

import torch
import torch.nn as nn

B = 64
N = 1152


class Model(nn.Module):
    def forward(self, A, C):
        return torch.bmm(A, C)


def get_inputs():
    return [torch.randn(B, N, N), torch.randn(B, N, N)]


def get_init_inputs():
    return []
