"""Honest: PyTorch's clamp of the biased input and its mean over each row."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + self.bias).clamp_min(0).mean(dim=1)
