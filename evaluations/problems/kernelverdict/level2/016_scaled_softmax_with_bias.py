"""Attention-score softmax: scale, add a positional bias broadcast over the batch, softmax."""

import torch
import torch.nn as nn

batch_size = 64
q_len = 1024
k_len = 16384
scale = 0.125


class Model(nn.Module):
    def forward(self, scores, bias):
        return torch.softmax(scores * scale + bias, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, q_len, k_len), torch.randn(q_len, k_len)]


def get_init_inputs():
    return []
