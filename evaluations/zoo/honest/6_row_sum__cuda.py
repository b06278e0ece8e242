"""Honest: row sum as a CUDA kernel: one block per row, float32 partial sums, warp-shuffle tree."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int THREADS = 512;

__global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float shared[THREADS / 32];
    const float* row = x + (long)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += THREADS) s += row[c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < THREADS / 32 ? shared[lane] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
        if (lane == 0) y[blockIdx.x] = s;
    }
}

torch::Tensor row_sum_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "expects a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty({xc.size(0)}, xc.options());
    row_sum<<<xc.size(0), THREADS>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(1));
    return y;
}
"""

CPP_SRC = "torch::Tensor row_sum_forward(torch::Tensor x);"

_ext = load_inline(name="zoo_row_sum", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["row_sum_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_sum_forward(x)
