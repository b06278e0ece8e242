"""Honest: the elementwise chain with fewer temporaries (addcmul, then in-place ops on its own buffer)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.gelu(torch.addcmul(self.bias, x, self.weight))
        return y.mul_(0.5).add_(x)
