"""Square matrix product in bfloat16."""

import torch
import torch.nn as nn

N = 8192


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(N, N, dtype=torch.bfloat16), torch.randn(N, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
