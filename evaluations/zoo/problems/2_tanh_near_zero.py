"""A tiny-valued output: tanh of the input scaled by 1e-3, so every output lies within 1e-2 of zero."""

import torch
import torch.nn as nn

SMALL = not torch.cuda.is_available()
"""Reduced sizes where no CUDA device is present (CPU tests); full sizes on the GPU."""
BATCH, DIM = (64, 256) if SMALL else (8192, 16384)


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * self.scale


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [1e-3]
