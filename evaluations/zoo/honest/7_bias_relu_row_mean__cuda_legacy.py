"""Honest: one CUDA kernel, launched as ``kernel<<<grid, block>>>`` with no stream (the legacy default stream, as
most published kernels launch), writes each row's mean into a ``torch::empty`` output.

A CUDA graph captured on another stream does not hold the kernel: it runs once, during capture, and replays leave
its output as it was. The kernel is right for a user, who calls it eagerly: the verified protocol times and
re-checks it so (label ``legacy-stream``). Needs CUDA.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>

constexpr int THREADS = 256;

__global__ void bias_relu_row_mean(const float* __restrict__ x, const float* __restrict__ b,
                                   float* __restrict__ y, int cols) {
    __shared__ float partial[THREADS / 32];
    const float* row = x + (long)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += THREADS) s += fmaxf(row[c] + b[c], 0.f);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < THREADS / 32 ? partial[lane] : 0.f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
        if (lane == 0) y[blockIdx.x] = s / cols;
    }
}

torch::Tensor bias_relu_row_mean_forward(torch::Tensor x, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "expects a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto bc = b.contiguous();
    auto y = torch::empty({xc.size(0)}, xc.options());
    bias_relu_row_mean<<<xc.size(0), THREADS>>>(xc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(),
                                                (int)xc.size(1));
    return y;
}
"""

CPP_SRC = "torch::Tensor bias_relu_row_mean_forward(torch::Tensor x, torch::Tensor b);"

_ext = load_inline(name="zoo_bias_relu_row_mean_legacy", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["bias_relu_row_mean_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.bias_relu_row_mean_forward(x, self.bias)
