"""The verified protocol's timing as a recipe of ``benchmarks/self_speedup.py``.

A recipe takes a zero-argument callable on the current CUDA device and returns milliseconds.
This one runs the verified protocol's own timing loop (``evaluations._verified._timing``): warm-up
by time, L2 flush before every call, a device-side spin so host launch gaps stay outside the event
pair, several calls per event pair below ~20 us, and sampling until the 95% CI half-width of the
median is under 0.5% (capped at ``PLAN.time_cap_s`` per callable); the median counts.

Use: ``from _verified_recipe import RECIPES as VERIFIED_RECIPES; RECIPES.update(VERIFIED_RECIPES)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from evaluations._verified._timing import TimingPlan, TimingRun, time_calls

PLAN = TimingPlan(warmup_s=0.2, min_calls=100, ci_target_rel=0.005, time_cap_s=3.0)
"""The protocol's stopping rule with a shorter cap, so 250 problems x 2 callables fit in one run."""
NAME = "verified (flush, device spin, CI-stopped median)"


def verified_run(fn: Callable[[], Any], plan: TimingPlan = PLAN) -> TimingRun:
    """Full timing of ``fn`` under the verified protocol's loop (stats with CI, host-bound flag)."""
    return time_calls(lambda _k: fn(), [[]], torch.device("cuda"), plan)


def verified_median(fn: Callable[[], Any]) -> float:
    """Median per-call milliseconds of ``fn`` under the verified protocol's timing."""
    return verified_run(fn).stats.median_ms


RECIPES: dict[str, Callable[[Callable[[], Any]], float]] = {NAME: verified_median}
"""Recipe name -> recipe, in the form ``self_speedup.RECIPES`` holds."""
