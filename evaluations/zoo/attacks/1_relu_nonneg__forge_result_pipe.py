"""Attack (result forging): sends its own verdict through the worker's result pipe, then exits.

From ``forward`` it finds the harness's result connection among the process's objects, sends a
``correct`` outcome with a 1 microsecond timing and leaves before the checks finish. The runner reads
the first message on the pipe, so the forged verdict becomes the record: ``correct`` at an absurd
speedup under both protocols. NOT stopped today: everything in the worker's process, the pipe
included, belongs to the candidate once its code runs. What stops it is judging outputs and taking
times in a process that never imported the candidate; the runner does not do that yet.
Expected outcome: ``correct`` (forged) under both protocols.
"""

import gc
import os
from multiprocessing.connection import Connection

import torch
import torch.nn as nn


def _forge():
    from evaluations._outcomes import CandidateOutcome
    from schemas import TimingStats

    timing = TimingStats(method="host_clock", calls=100, mean_ms=0.001, median_ms=0.001, min_ms=0.001,
                         max_ms=0.001, std_ms=0.0)
    for obj in gc.get_objects():
        if isinstance(obj, Connection) and not obj.closed and obj.writable:
            obj.send(("ok", CandidateOutcome(status="correct", timing=timing)))
            os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _forge()
        return torch.zeros_like(x)
