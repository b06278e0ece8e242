"""Timing on the CPU: the same loop as on a GPU, on a monotonic host clock."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter, perf_counter_ns
from typing import Any

from ..core import median, summarize_verified
from .placements import _Rotation
from .plan import TimingPlan, TimingRun
from .turns import _Slots


def _time_host(call: Callable[[int], Any], rot: _Rotation, plan: TimingPlan, outputs: dict[int, Any]) -> TimingRun:
    slots = _Slots(plan, cuda=False)
    slots.begin()
    started, warm = perf_counter(), []
    while perf_counter() - started < plan.warmup_s or not all(rot.used) or len(warm) < plan.warmup_calls:
        k = rot.take()
        t0 = perf_counter_ns()
        outputs[k] = call(k)
        warm.append((perf_counter_ns() - t0) / 1e6)
    slots.end(False)
    samples: list[float] = []
    batches: list[int] = []
    started = slots.sampling(median(warm))
    while not slots.finished([samples], plan, started):
        for _ in range(slots.batch):
            k = rot.take()
            t0 = perf_counter_ns()
            outputs[k] = call(k)
            samples.append((perf_counter_ns() - t0) / 1e6)
            batches.append(slots.rounds)
        slots.batch_done([samples], plan, started)
    slots.leave()
    stats = summarize_verified(samples, "host_clock", l2_flush=False,
                               note="host monotonic clock on the CPU; inputs rotated and refreshed before every call"
                               + slots.note(), round_medians_ms=slots.round_medians(samples, batches))
    return TimingRun(stats, outputs, last_set=(rot.next - 1) % len(rot.sets), samples_ms=samples, batches=batches)
