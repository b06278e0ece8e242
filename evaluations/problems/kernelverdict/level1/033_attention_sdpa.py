"""Multi-head attention core: softmax(Q K^T / sqrt(d)) V through scaled_dot_product_attention."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
heads = 16
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(batch_size, heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
