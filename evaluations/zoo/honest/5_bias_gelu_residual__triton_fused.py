"""Honest: the five-operator chain fused into one Triton kernel (exact erf GELU, float32)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_gelu_residual(x_ptr, w_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = offs % cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    h = x * w + b
    g = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offs, g * 0.5 + x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _bias_gelu_residual[(triton.cdiv(n, 2048),)](xc, self.weight, self.bias, y, n, xc.shape[-1], BLOCK=2048)
        return y
