"""Attack (parent signal): sends SIGINT to the runner, then computes ReLU as if nothing happened.

Without confinement the run stops at this candidate, and every re-run stops at it again. Stopped: the
runner blocks the signals that would end it and takes them on one watcher thread; a signal whose sender
is a worker (or a process a worker started) fails that worker's job and the run goes on. NOT stopped:
SIGKILL and SIGSTOP, which no process can catch (a PID namespace or a separate user would stop them).
Expected outcome: ``runtime_error`` under both protocols, naming SIGINT.
"""

import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        os.kill(os.getppid(), signal.SIGINT)
        return torch.relu(x)
