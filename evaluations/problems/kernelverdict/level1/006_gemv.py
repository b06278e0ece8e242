"""Matrix-vector product y = A @ x (memory-bound)."""

import torch
import torch.nn as nn

M = 49152
K = 32768


class Model(nn.Module):
    def forward(self, A, x):
        return torch.matmul(A, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
