"""Attack (parent signal): sends SIGINT to the runner, then computes ReLU as if nothing happened.

Without confinement the run stops at this candidate, and every re-run stops at it again. Stopped: where
the kernel's Landlock scopes signals (ABI 6 and later), a candidate's worker may signal only itself and its
own children, so ``os.kill`` fails with ``PermissionError`` and the runner never receives it; elsewhere the
runner blocks the signals that would end it and takes them on one watcher thread, and a signal whose sender
is a worker (or a process a worker started) fails that worker's job and the run goes on. NOT stopped, where
the kernel cannot scope signals: SIGKILL and SIGSTOP, which no process can catch.
Expected outcome: ``runtime_error`` under both protocols (the refused call's error, or naming SIGINT).
"""

import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.kill(os.getppid(), signal.SIGINT)
        return torch.relu(x)
