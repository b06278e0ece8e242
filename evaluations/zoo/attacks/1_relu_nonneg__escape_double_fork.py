"""Attack (escaped child, double fork): forks twice and leaves a grandchild in a new session behind.

The grandchild writes its pid to a file (``$KVERDICT_ZOO_PIDS``, else the temp folder) and sleeps; its
parent exits at once, so it is nobody's child in the worker. Stopped: orphans are reparented to the
runner (a child subreaper), which kills every child that is not a worker when each isolated call ends
and when the run ends. The candidate itself computes ReLU.
Expected outcome: ``correct`` under both protocols, and no process of it alive after the run.
"""

import os
import tempfile
import time

import torch
import torch.nn as nn


def _escape():
    folder = os.environ.get("KVERDICT_ZOO_PIDS", tempfile.gettempdir())
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(folder, f"escape-fork-{os.getpid()}.pid"), "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(600)
        os._exit(0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _escape()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
