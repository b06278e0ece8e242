"""Honest: PyTorch adds the bias, then a CUDA kernel launched as ``kernel<<<grid, block>>>`` (the legacy default
stream) sums the ReLU of each row, in chunks, into a ``torch::zeros`` output with ``atomicAdd``.

Captured as a CUDA graph on another stream, the addition and the zeroing are held by the graph but the kernel is
not: it runs during capture, before the captured addition has filled its input, and each replay zeroes the output
and adds nothing to it. The verified protocol times and re-checks it as a user runs it, eager calls on the default
stream (label ``legacy-stream``). Needs CUDA.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>

constexpr int THREADS = 256;

__global__ void relu_row_mean_atomic(const float* __restrict__ h, float* __restrict__ y, int cols, float scale) {
    const float* row = h + (long)blockIdx.y * cols;
    int start = blockIdx.x * THREADS * 4;
    float s = 0.f;
    for (int c = start + threadIdx.x; c < cols && c < start + THREADS * 4; c += THREADS) s += fmaxf(row[c], 0.f);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(y + blockIdx.y, s * scale);
}

torch::Tensor relu_row_mean(torch::Tensor h) {
    TORCH_CHECK(h.is_cuda() && h.scalar_type() == torch::kFloat32 && h.dim() == 2, "expects a 2-D float32 CUDA tensor");
    auto hc = h.contiguous();
    int rows = hc.size(0), cols = hc.size(1);
    auto y = torch::zeros({rows}, hc.options());
    dim3 grid((cols + THREADS * 4 - 1) / (THREADS * 4), rows);
    relu_row_mean_atomic<<<grid, THREADS>>>(hc.data_ptr<float>(), y.data_ptr<float>(), cols, 1.f / cols);
    return y;
}
"""

CPP_SRC = "torch::Tensor relu_row_mean(torch::Tensor h);"

_ext = load_inline(name="zoo_relu_row_mean_zeros", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["relu_row_mean"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_row_mean(x + self.bias)
