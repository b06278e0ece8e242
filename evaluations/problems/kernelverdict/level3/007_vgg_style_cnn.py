"""Small VGG-style network: two conv-conv-pool stages, 7x7 adaptive average pooling, linear classifier.

Convolution weights are scaled to He variance (2 / fan_in, the default uniform init times sqrt(6)) so
the features keep their size through the ReLUs: with the default init they shrink about sixfold in
variance per layer. The classifier reads a 7x7 grid of pooled features, as VGG does: one global average
over the whole map would make the logits nearly the same for every image.
"""

import torch
import torch.nn as nn

batch_size = 32
height = 224
width = 224
num_classes = 1000


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
            nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.pool = nn.AdaptiveAvgPool2d(7)
        self.head = nn.Linear(128 * 7 * 7, num_classes)
        with torch.no_grad():
            for layer in self.features:
                if isinstance(layer, nn.Conv2d):
                    layer.weight.mul_(6 ** 0.5)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return [num_classes]
