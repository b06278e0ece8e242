"""Honest: a CUDA kernel launched as ``kernel<<<grid, block>>>`` (the legacy default stream) writes relu(x + b) into
a ``torch::empty`` buffer, and PyTorch's ``.mean(dim=1)`` ends the call.

Captured as a CUDA graph on another stream, the mean is held by the graph and the kernel is not: the captured mean
reads a buffer the kernel filled once, during capture, so replays on new inputs return the old answer. The
verified protocol times and re-checks it as a user runs it, eager calls on the default stream (label
``legacy-stream``). Needs CUDA.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void bias_relu(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y,
                          long n, int cols) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i] + b[i % cols], 0.f);
}

torch::Tensor bias_relu_forward(torch::Tensor x, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "expects a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto bc = b.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    bias_relu<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), n,
                                        (int)xc.size(1));
    return y;
}
"""

CPP_SRC = "torch::Tensor bias_relu_forward(torch::Tensor x, torch::Tensor b);"

_ext = load_inline(name="zoo_bias_relu_then_mean", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["bias_relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.bias_relu_forward(x, self.bias).mean(dim=1)
