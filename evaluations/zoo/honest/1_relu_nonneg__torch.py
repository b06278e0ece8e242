"""Honest: ReLU through PyTorch itself (no custom kernel; labelled pytorch-fallback)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0.0)
