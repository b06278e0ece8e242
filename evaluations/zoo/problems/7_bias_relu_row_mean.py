"""Bias, ReLU and the mean of each row: y = relu(x + b).mean(dim=1), with a per-column b.

A call takes a few microseconds on a GPU, so the verified protocol times it as replays of CUDA graphs: the problem
on which a kernel launched on the legacy default stream meets graph timing.
"""

import torch
import torch.nn as nn

SMALL = not torch.cuda.is_available()
"""Reduced sizes where no CUDA device is present (CPU tests); full sizes on the GPU."""
BATCH, DIM = (64, 256) if SMALL else (512, 1024)


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias).mean(dim=1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
