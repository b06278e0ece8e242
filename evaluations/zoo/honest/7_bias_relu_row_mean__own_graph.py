"""Honest: a kernel that captures its own CUDA graph and hands back the graph's one static output buffer, as many
LLM-written kernels do. Called while another graph is being captured, where its own replay has no place, it
computes fresh outputs from then on. Every answer it returns is right when it returns it. An earlier call's buffer
then holds whatever the last call that used it wrote: ``correct``.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))
        self.graph = None
        self.static_in = None
        self.static_out = None
        self.own_graph = True

    def _compute(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias).mean(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda or not self.own_graph:
            return self._compute(x)
        if torch.cuda.is_current_stream_capturing():
            self.own_graph = False  # inside someone else's capture: fresh outputs from now on
            return self._compute(x)
        if self.static_in is None or self.static_in.shape != x.shape:
            self.static_in, self.graph = x.clone(), None
            return self._compute(x)
        if self.graph is None:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self._compute(self.static_in)  # warm-up before the capture
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = self._compute(self.static_in)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out
