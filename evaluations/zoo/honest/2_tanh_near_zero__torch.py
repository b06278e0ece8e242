"""Honest: the near-zero problem computed for real (tanh, then the scale), in PyTorch."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x).mul_(self.scale)
