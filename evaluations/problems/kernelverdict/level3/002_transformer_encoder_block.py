"""Pre-norm transformer encoder block: multi-head self-attention and a GELU MLP, each with a residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 1024
d_model = 1024
heads = 16
d_ff = 4096


class Model(nn.Module):
    def __init__(self, d_model, heads, d_ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.ff2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(attn)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, heads, d_ff]
