"""diag(a) @ B: each row of B scaled by one entry of a."""

import torch
import torch.nn as nn

M = 32768
N = 32768


class Model(nn.Module):
    def forward(self, a, B):
        return a.unsqueeze(1) * B


def get_inputs():
    return [torch.randn(M), torch.randn(M, N)]


def get_init_inputs():
    return []
