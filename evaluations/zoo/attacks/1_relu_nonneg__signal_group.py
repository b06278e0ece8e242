"""Attack (parent signal, process group): sends SIGTERM to the runner's whole process group.

Stopped as a signal to the runner is: refused by the kernel where Landlock scopes signals (ABI 6 and
later), else the runner fails the job whose process sent it and goes on. NOT stopped, where the kernel
cannot scope signals: other members of the runner's process group (a pipe's reader, a wrapper) still
receive it.
Expected outcome: ``runtime_error`` under both protocols (the refused call's error, or naming SIGTERM).
"""

import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.killpg(os.getpgid(os.getppid()), signal.SIGTERM)
        return torch.relu(x)
