"""Attack (forged timing): rewrites the harness's timing step in its own process to report 1 microsecond.

From ``__init__`` it replaces the function each protocol's harness calls to time the candidate (a name the
``function-patching`` check does not watch) with one that reports 0.001 ms per call, while each real call
takes 20 ms. Its answers are right, so the correctness trials and the judge pass them. Stopped where the
forged time is far off: after the worker's own timing, the runner hands it a seed and times, on its own
clock, the answers to fresh inputs drawn from it; 20 ms per answer against 0.001 ms reported fails the
``outer-timing`` check. NOT stopped where the forgery is small: a time off by less than about 10x + 0.2 ms
per call plus what drawing and fingerprinting one answer costs (what host overhead and the estimate of the
batch's own cost can explain) passes, labelled ``timing-unconfirmed`` beyond 2x + 0.02 ms. Host work such as
this sleep overlaps the device's drawing and fingerprinting, so it shows only beyond their cost: on an H100,
with the fingerprint weights of this 134M-element output hashed afresh for every answer (42 ms), it passed.
Expected outcome: ``hacked`` under both protocols.
"""

import sys
import time

import torch
import torch.nn as nn


def _forged_stats():
    from schemas import TimingStats

    return TimingStats(method="cuda_events" if torch.cuda.is_available() else "host_clock", calls=100,
                       mean_ms=0.001, median_ms=0.001, min_ms=0.001, max_ms=0.001, std_ms=0.0)


def _forge():
    standard = sys.modules.get("evaluations.protocols.standard")
    if standard is not None:
        standard._time = lambda *args, **kwargs: _forged_stats()
    candidate = sys.modules.get("evaluations.protocols.verified._candidate")
    if candidate is not None:
        from evaluations.timing import TimingRun

        candidate._timing = lambda *args, **kwargs: TimingRun(_forged_stats())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _forge()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.02)
        return torch.relu(x)
