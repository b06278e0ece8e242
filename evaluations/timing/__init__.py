"""Timing of the verified protocol: raw per-call samples, then pure statistics (``evaluations.core``).

On a GPU every timed call gets inputs it has never seen (sets rotated and refreshed in place),
an L2 flush, and a short device-side spin before its start event, so the host has enqueued the
whole call before the device reaches it: host launch gaps (the cause of the swings seen on
networks of many small kernels) stay out of the event pair, and a host-bound call is reported as
such. Calls under ~20 us are timed several to an event pair. A call whose host enqueue takes
longer than ~1 ms and at least half its device time (thousands of launches: recurrent nets) overflows
the launch queue that the spin lets the host fill, so its event time would follow the host's launch
speed; it is captured once as a CUDA graph and its replays are timed instead (when capture fails,
or a replay does not redo the call's work because it was launched outside the capturing stream,
eager calls are timed and the record says so). Calls under ``SHORT_GRAPH_MS`` are timed as graph
replays too (the calls of one event pair in one graph). The timed module's weights rotate over
``PLACEMENTS`` places in memory, sample by sample (one graph per place under graph replays), so no
single placement's luck (worth a percent or two on short calls) decides the time: the time is the
mean of the medians per place, and its CI combines theirs.
Sampling stops once the 95% CI half-width of that time is under the target, after a minimum count
and a minimum wall time (so slow drifts average out rather than freeze into one run's median), or at
a time cap.
On the CPU the same loop uses a monotonic host clock.

Its modules: ``plan`` (the constants, ``TimingPlan``, ``TimingRun``), ``placements`` (input sets in turn, weights
over places), ``turns`` (timing in turns, ``_Slots``; ``_turns``, the file the parties share and the wait for them: ``create``,
``take_turns``, ``Turns``, ``mark_gone``, ``Abandoned``), ``graphs`` (CUDA graph capture and its check, ``output_mismatch``), ``probe`` (clock,
call and host probes), ``cuda`` (``_time_cuda``, the GPU timing's steps) and ``host`` (``_time_host``). Other
packages import from here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch

from ..core import gpulock
from ._turns import Abandoned, Turns, create, mark_gone, round_core, take_turns
from .cuda import _time_cuda
from .graphs import output_mismatch
from .host import _time_host
from .placements import _Rotation
from .plan import PLACEMENTS, TimingPlan, TimingRun
from .probe import calls_per_sample, clock_median, host_loop_ms

__all__ = [
    "PLACEMENTS", "Abandoned", "TimingPlan", "TimingRun", "Turns", "calls_per_sample", "clock_median", "create",
    "host_loop_ms", "mark_gone", "output_mismatch", "round_core", "take_turns", "time_calls",
]


def time_calls(call: Callable[[int], Any], sets: list[list[Any]], device: torch.device, plan: TimingPlan,
               module: torch.nn.Module | None = None) -> TimingRun:
    """Time ``call(k)`` (a call on input set ``k``) under the plan; outputs of the last calls are kept.

    ``module``, the ``nn.Module`` that ``call`` runs, has its weights rotated over ``plan.placements``
    places in memory on a GPU (``_Placements``; under graph replays one graph is captured per place,
    or, with ``graph_short`` off, one at the module's own place); without it they stay put.
    """
    rot = _Rotation(sets)
    outputs: dict[int, Any] = {}
    with torch.no_grad():
        if device.type == "cuda":
            # concurrent workers: nothing else runs on the GPU while this one times (in turns: during its turns)
            with gpulock.exclusive() if not plan.turns else contextlib.nullcontext():
                return _time_cuda(call, rot, plan, outputs, module)
        return _time_host(call, rot, plan, outputs)
