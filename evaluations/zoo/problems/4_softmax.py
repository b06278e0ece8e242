"""Softmax over the last dimension of a (batch, dim) float32 tensor."""

import torch
import torch.nn as nn

SMALL = not torch.cuda.is_available()
"""Reduced sizes where no CUDA device is present (CPU tests); full sizes on the GPU."""
BATCH, DIM = (32, 512) if SMALL else (8192, 8192)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
