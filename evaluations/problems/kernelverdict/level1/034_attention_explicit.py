"""Attention written out: scores = Q K^T * scale, softmax, times V."""

import torch
import torch.nn as nn

batch_size = 8
heads = 16
seq_len = 2048
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) * head_dim**-0.5
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
