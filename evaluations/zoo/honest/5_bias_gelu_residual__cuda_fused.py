"""Honest: the five-operator chain fused into one CUDA kernel (one read of x, one write of y).

Eager PyTorch reads and writes the full tensor once per operator; the fused kernel moves a fifth
of the bytes, which is where its speedup over the TF32 eager baseline comes from.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float chain(float x, float w, float b) {
    float h = x * w + b;
    float g = 0.5f * h * (1.f + erff(h * 0.70710678118654752f));
    return g * 0.5f + x;
}

__global__ void bias_gelu_residual(const float* __restrict__ x, const float* __restrict__ w,
                                   const float* __restrict__ b, float* __restrict__ y, long n, int cols) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        int c = (int)(i % cols);
        y[i] = chain(x[i], w[c], b[c]);
    }
}

torch::Tensor fused_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects float32 CUDA tensors");
    auto xc = x.contiguous(); auto wc = w.contiguous(); auto bc = b.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    int cols = (int)xc.size(-1);
    int threads = 256;
    long blocks = std::min<long>((n + threads - 1) / threads, 65535L * 16);
    bias_gelu_residual<<<blocks, threads>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                                            y.data_ptr<float>(), n, cols);
    return y;
}
"""

CPP_SRC = "torch::Tensor fused_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b);"

_ext = load_inline(name="zoo_bias_gelu_residual", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["fused_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.fused_forward(x, self.weight, self.bias)
