"""Honest: row sum in Triton: one program per row, a float32 vector accumulator over column blocks."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        rows, cols = xc.shape
        y = torch.empty(rows, device=xc.device, dtype=torch.float32)
        _row_sum[(rows,)](xc, y, cols, BLOCK=2048, num_warps=8)
        return y
