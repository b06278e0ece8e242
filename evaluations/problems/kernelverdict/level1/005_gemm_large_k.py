"""Matrix product with a long reduction dimension (small output, large K)."""

import torch
import torch.nn as nn

M = 1024
K = 98304
N = 1024


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
