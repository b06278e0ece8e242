"""Maximum over the middle dimension of a 3D tensor."""

import torch
import torch.nn as nn

dim0 = 512
dim1 = 4096
dim2 = 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=1)


def get_inputs():
    return [torch.randn(dim0, dim1, dim2)]


def get_init_inputs():
    return []
