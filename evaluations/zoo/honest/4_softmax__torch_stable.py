"""Honest: numerically stable softmax written out in PyTorch (subtract the row max, exp, normalise)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e.div_(e.sum(dim=-1, keepdim=True))
