"""Tall-skinny matrix product: a long M against small K and N."""

import torch
import torch.nn as nn

M = 131072
K = 1024
N = 768


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
