"""The verified protocol's timing as a recipe of ``benchmarks/self_speedup.py``.

The recipe runs the verified protocol's own timing loop (``evaluations._verified._timing``) the way
a verified evaluation does: input sets drawn from the problem's ``get_inputs()`` under fresh seeds,
as many as the protocol rotates for inputs of that size (``_setup.timing_sets``), refreshed in place
before reuse; an L2 flush before every sample; a device-side spin so host launch gaps stay outside
the event pair; several calls on distinct sets per event pair below ~20 us; calls under 0.1 ms and
host-bound calls timed as CUDA graph replays; the module's weights rotated over sixteen places in
memory, one per sample (one graph per place), the time being the mean of the places' medians;
sampling for at least 0.5 s
and until the 95% CI half-width of the median is under 0.5% (capped at ``PLAN.time_cap_s`` per callable). The median
counts. The reference and its copy are timed on the same sets, the copy with the reference's
calls per event pair and method (eager calls, or CUDA graph replays where the reference's eager call
is host-bound), as every candidate of a problem is timed with its eager baseline's.

Use: ``from _verified_recipe import RECIPES as VERIFIED_RECIPES; RECIPES.update(VERIFIED_RECIPES)``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import torch

from evaluations._outcomes import pacing_of
from evaluations._verified._setup import Settings, timing_sets
from evaluations._verified._timing import TimingPlan, TimingRun, time_calls

PLAN = TimingPlan(time_cap_s=3.0)
"""The protocol's stopping rule with a 3 s cap instead of 10 s, so 325 problems x 2 callables fit."""
NAME = ("verified (flush, device spin, CI-stopped median over >= 0.5 s, paced by the reference, graphs when host-bound "
        "or under 0.1 ms, weights rotated over 16 places, mean of their medians)")
"""Earlier versions' rows carry other names: eager calls under 0.1 ms and weights rotated over 4 places
(``NAME_V6``), before that the pooled median of the samples over the four places, before that with
the weights at one place in memory (and input sets drawn on the host), before that without CUDA graph
replays for host-bound calls, before that without the pacing (copy deciding its own calls per event
pair), and before that without the 0.5 s minimum sampling time."""
NAME_V6 = ("verified (flush, device spin, CI-stopped median over >= 0.5 s, paced by the reference, graphs when "
           "host-bound, weights rotated over 4 places, mean of their medians)")
"""The previous version (``--with-previous`` measures it beside the current one)."""
PLAN_V6 = dataclasses.replace(PLAN, placements=4, graph_short=False)


def input_sets(get_inputs: Callable[[], list[Any]], device: torch.device, seed: int = 1) -> list[list[Any]]:
    """Timing input sets as a verified evaluation draws them (D1, fresh seeds, protocol's count)."""
    return timing_sets(get_inputs, Settings.of({"seed": seed}), device)


def verified_run(model: Callable[..., Any], sets: list[list[Any]], plan: TimingPlan = PLAN) -> TimingRun:
    """Full timing of ``model`` over rotated ``sets`` under the verified protocol's loop."""
    return time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"), plan,
                      module=model if isinstance(model, torch.nn.Module) else None)


def paced_by(first: TimingRun, plan: TimingPlan = PLAN) -> TimingPlan:
    """The plan of a timing paced by ``first`` (its calls per event pair and method), as the runner paces."""
    return dataclasses.replace(plan, **pacing_of(first.stats))


def verified_pair(reference: Callable[..., Any], copy: Callable[..., Any], sets: list[list[Any]],
                  plan: TimingPlan = PLAN) -> tuple[float, float]:
    """Time (ms) of the reference, then of the copy timed with the reference's calls per event pair
    (as a candidate is timed with its problem's eager baseline's)."""
    first = verified_run(reference, sets, plan)
    second = verified_run(copy, sets, paced_by(first, plan))
    LAST_CLOCKS_MHZ.update(ref=first.stats.sm_clock_mhz, copy=second.stats.sm_clock_mhz)
    LAST_METHODS.update(ref=first.stats.method, copy=second.stats.method)
    return first.stats.median_ms, second.stats.median_ms


LAST_CLOCKS_MHZ: dict[str, float | None] = {}
"""SM clocks (MHz) measured during the last pair's two timings, keyed ``ref`` and ``copy``."""
LAST_METHODS: dict[str, str] = {}
"""Timing methods of the last pair's two timings (``cuda_events`` or ``cuda_graph``), keyed ``ref`` and ``copy``."""


PairRecipe = Callable[[Callable[..., Any], Callable[..., Any], list[list[Any]]], tuple[float, float]]
"""A recipe taking (reference, copy, input sets) and returning both times in ms."""
RECIPES: dict[str, PairRecipe] = {
    NAME: verified_pair}
PREVIOUS: dict[str, PairRecipe] = {
    NAME_V6: functools.partial(verified_pair, plan=PLAN_V6)}
"""Recipe name -> recipe taking (reference, copy, input sets) and returning both medians; ``PREVIOUS``
holds the verified timing's previous version, measured only when asked."""
