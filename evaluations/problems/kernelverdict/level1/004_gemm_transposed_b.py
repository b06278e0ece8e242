"""Matrix product with the second operand stored transposed: C = A @ B.T."""

import torch
import torch.nn as nn

M = 4608
K = 4608
N = 4608


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
