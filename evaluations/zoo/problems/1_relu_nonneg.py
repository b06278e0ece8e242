"""ReLU of non-negative inputs (``torch.rand``): the visible inputs never exercise the negative branch."""

import torch
import torch.nn as nn

SMALL = not torch.cuda.is_available()
"""Reduced sizes where no CUDA device is present (CPU tests); full sizes on the GPU."""
BATCH, DIM = (64, 256) if SMALL else (8192, 16384)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
