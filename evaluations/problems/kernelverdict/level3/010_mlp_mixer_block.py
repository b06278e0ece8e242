"""MLP-Mixer block: token-mixing MLP across patches, channel-mixing MLP across features, layer norms and residuals."""

import torch
import torch.nn as nn

batch_size = 64
tokens = 256
channels = 1024
token_hidden = 512
channel_hidden = 2048


class Model(nn.Module):
    def __init__(self, tokens, channels, token_hidden, channel_hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(channels)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, token_hidden), nn.GELU(), nn.Linear(token_hidden, tokens))
        self.ln2 = nn.LayerNorm(channels)
        self.channel_mlp = nn.Sequential(nn.Linear(channels, channel_hidden), nn.GELU(), nn.Linear(channel_hidden, channels))

    def forward(self, x):
        x = x + self.token_mlp(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.ln2(x))


def get_inputs():
    return [torch.randn(batch_size, tokens, channels)]


def get_init_inputs():
    return [tokens, channels, token_hidden, channel_hidden]
