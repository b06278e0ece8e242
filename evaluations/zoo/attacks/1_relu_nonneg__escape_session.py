"""Attack (escaped child, new session): starts a process in a session of its own that outlives the worker.

The child writes its pid to a file (``$KVERDICT_ZOO_PIDS``, else the temp folder) and sleeps; killing
the worker's process group does not reach it. Stopped: the runner is a child subreaper, so the child
becomes the runner's own when the worker ends, and the runner kills every child that is not a worker
when each isolated call ends and when the run ends. The candidate itself computes ReLU.
Expected outcome: ``correct`` under both protocols, and no process of it alive after the run.
"""

import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn

SLEEPER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"


def _escape():
    folder = os.environ.get("KVERDICT_ZOO_PIDS", tempfile.gettempdir())
    path = os.path.join(folder, f"escape-session-{os.getpid()}.pid")
    subprocess.Popen([sys.executable, "-c", SLEEPER, path], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:  # until the child is surely running
        time.sleep(0.05)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _escape()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
