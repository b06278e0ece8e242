"""Matrix product with the first operand stored transposed: C = A.T @ B."""

import torch
import torch.nn as nn

M = 4608
K = 4608
N = 4608


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
