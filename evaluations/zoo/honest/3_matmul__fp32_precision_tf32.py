"""Honest: a matmul that allows TF32 through PyTorch's newer setting (``torch.backends.cuda.matmul.fp32_precision``)
at construction.

TF32 matmul is what the verified protocol's eager baseline runs with, so the setting gains nothing the baseline
lacks: it is kept for the candidate's own calls and labelled (``sets:allow_tf32``), and the precision policy judges
its answers as for any TF32 arithmetic.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        torch.backends.cuda.matmul.fp32_precision = "tf32"

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)
