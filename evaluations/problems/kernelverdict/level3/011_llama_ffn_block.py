"""Decoder feed-forward block: RMS normalisation, SwiGLU MLP, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 3072
d_model = 2048
d_ff = 5632
eps = 1e-6


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.ones(d_model))
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * self.norm_weight
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def get_inputs():
    return [torch.randn(tokens, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
