"""Convolutional autoencoder: two stride-2 convolutions down, two transposed convolutions up."""

import torch
import torch.nn as nn

batch_size = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 64, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(64, 128, 4, stride=2, padding=1), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(64, 3, 4, stride=2, padding=1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return []
