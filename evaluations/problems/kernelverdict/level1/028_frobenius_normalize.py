"""Scale each matrix of a batch to unit RMS by its Frobenius norm: x_b * sqrt(rows * cols) / ||x_b||_F.

A reduction over each matrix, then a broadcast divide. The sqrt(rows * cols) factor keeps the output
elements of order one (dividing by the bare norm would leave every element near 1/sqrt(rows * cols),
inside any absolute tolerance of zero).
"""

import torch
import torch.nn as nn

batch_size = 64
rows = 4096
cols = 4096


class Model(nn.Module):
    def forward(self, x):
        norm = torch.linalg.vector_norm(x, dim=(1, 2), keepdim=True)
        return x * (float(x.shape[1] * x.shape[2]) ** 0.5 / norm)


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
