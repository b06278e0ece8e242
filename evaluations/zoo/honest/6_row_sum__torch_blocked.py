"""Honest: row sum as two stages (blocks of 64, then the block sums), in float32."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        if cols % 64:
            return x.sum(dim=-1)
        return x.reshape(rows, cols // 64, 64).sum(dim=-1).sum(dim=-1)
