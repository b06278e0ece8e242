"""Honest: tanh times a scale as a Triton kernel (tanh from exp, stable for large |x|)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh_scale(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(x < 0, -t, t)
    tl.store(y_ptr + offs, t * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _tanh_scale[(triton.cdiv(n, 1024),)](xc, y, n, self.scale, BLOCK=1024)
        return y
