"""Square matrix multiplication C = A @ B in float32."""

import torch
import torch.nn as nn

SMALL = not torch.cuda.is_available()
"""Reduced sizes where no CUDA device is present (CPU tests); full sizes on the GPU."""
N = 64 if SMALL else 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
