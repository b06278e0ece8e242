"""The verified protocol's timing as a recipe of ``benchmarks/self_speedup.py``.

The recipe runs the verified protocol's own timing loop (``evaluations.timing``) the way
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
is host-bound), as every candidate of a problem is timed with its eager baseline's. Where the
reference's timing follows the host's own speed (eager calls that no CUDA graph could hold:
``host_speed_bound``), reference and copy are timed again in turns, each in a process of its own (the
copy leading, as a candidate leads its baselines; every turn on one host core, as the runner does): those
two times are reported, and the self-speedup is the median of their per-round ratios, as a record's
speedup between timings in turns is.

Use: ``from _verified_recipe import RECIPES as VERIFIED_RECIPES; RECIPES.update(VERIFIED_RECIPES)``.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing as mp
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from evaluations.core import gpulock, host_speed_bound, pacing_of
from evaluations.protocols.standard import SEED, set_seed
from evaluations.protocols.verified import Settings, timing_sets, to_device
from evaluations.timing import TimingPlan, TimingRun, create, round_core, take_turns, time_calls
from evaluations.worker import load_module
from schemas import speedup_between

TURNS_TIMEOUT_S = 90.0
"""Longest the two processes of a timing in turns may take together (start-up and model build included)."""

PLAN = TimingPlan(time_cap_s=3.0)
"""The protocol's stopping rule with a 3 s cap instead of 10 s, so 325 problems x 2 callables fit."""
NAME = ("verified (flush, device spin, CI-stopped median over >= 0.5 s, paced by the reference, graphs when host-bound "
        "or under 0.1 ms, weights rotated over 16 places, mean of their medians)")
"""The recipe's name, which keys its figures in a row: the verified timing v7 of ``benchmarks/README.md``. A change
to the recipe gives it a new name, so rows keep the figures of each version under that version's name (the
README's table of recipes names them)."""
NAME_V6 = ("verified (flush, device spin, CI-stopped median over >= 0.5 s, paced by the reference, graphs when "
           "host-bound, weights rotated over 4 places, mean of their medians)")
"""The verified timing v6: eager calls under 0.1 ms, weights rotated over four places (``--with-previous`` measures
it beside ``NAME``)."""
PLAN_V6 = dataclasses.replace(PLAN, placements=4, graph_short=False)


def build_model(source: str, tag: str, folder: Path, copy: bool = False) -> tuple[ModuleType, torch.nn.Module]:
    """The problem's module and its ``Model`` on the GPU, constructed after the benchmark's seed; with ``copy``, a
    separately built copy instead (``Model`` renamed ``ModelNew``, imported as a module of its own)."""
    module = load_module(re.sub(r"\bModel\b", "ModelNew", source) if copy else source,
                         f"self_{'copy' if copy else 'ref'}_{tag}", folder)
    with torch.no_grad():
        set_seed(SEED)
        init = to_device(module.get_init_inputs(), torch.device("cuda"))
        set_seed(SEED)
        model = (module.ModelNew if copy else module.Model)(*init).cuda()
    return module, model


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
                  plan: TimingPlan = PLAN, source: str | None = None) -> tuple[float, float]:
    """Time (ms) of the reference, then of the copy timed with the reference's calls per event pair
    (as a candidate is timed with its problem's eager baseline's). With the problem's ``source``, a
    reference whose time follows the host's own speed is timed again with its copy in turns
    (:func:`in_turns`), and those times are returned; their ratio as the runner takes it (the median of
    per-round ratios, ``schemas.speedup_between``) is then left in ``LAST_SPEEDUP``."""
    LAST_SPEEDUP.clear()
    first = verified_run(reference, sets, plan)
    if source is not None and host_speed_bound(first.stats):
        with gpulock.released():  # each side holds the device as a worker of its own (_turn_worker)
            ref, cop = in_turns(source, dataclasses.replace(paced_by(first, plan), turn_cpu=round_core()))
        LAST_CLOCKS_MHZ.update(ref=ref.sm_clock_mhz, copy=cop.sm_clock_mhz)
        LAST_METHODS.update(ref=f"{ref.method} in turns", copy=f"{cop.method} in turns")
        paired = speedup_between(cop, ref)
        if paired is not None:
            LAST_SPEEDUP["self_speedup"] = paired
        return ref.median_ms, cop.median_ms
    second = verified_run(copy, sets, paced_by(first, plan))
    LAST_CLOCKS_MHZ.update(ref=first.stats.sm_clock_mhz, copy=second.stats.sm_clock_mhz)
    LAST_METHODS.update(ref=first.stats.method, copy=second.stats.method)
    return first.stats.median_ms, second.stats.median_ms


def _turn_worker(source: str, copy: bool, plan: TimingPlan, conn: Any, cpus: set[int] | None = None) -> None:
    """One side of :func:`in_turns`, in its own process: build the model (:func:`build_model`), draw the
    timing sets, time, and send the stats. ``cpus``: the host cores this process runs on (``None``:
    wherever the system puts it)."""
    try:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        torch.backends.cuda.matmul.allow_tf32 = False  # as self_speedup.run sets it
        with gpulock.shared("turns"), torch.no_grad():  # a no-op unless KVERDICT_GPU_LOCK is set
            module, model = build_model(source, "turns", Path(tempfile.mkdtemp(prefix="kv-turns-")), copy)
            run = verified_run(model, input_sets(module.get_inputs, torch.device("cuda")), plan)
        conn.send(("ok", run.stats, run.samples_ms, run.batches))
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        conn.send(("error", f"{'copy' if copy else 'reference'}: {type(exc).__name__}: {str(exc)[:300]}"))
    conn.close()


def in_turns(source: str, plan: TimingPlan, timeout_s: float = TURNS_TIMEOUT_S,
             cpus: set[int] | None = None) -> tuple[Any, Any]:
    """Timing stats of the problem's reference and of its copy, timed in turns in two fresh processes
    (``evaluations.timing.take_turns``, the copy leading), each with ``plan`` (and on the host cores ``cpus``, if
    given). RuntimeError when either fails."""
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="kv-turns-") as tmp:
        path = create(Path(tmp) / "turns.json", 2)
        sides = []
        for party, copy in enumerate((True, False)):
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_turn_worker, args=(source, copy, dataclasses.replace(
                plan, turns=str(path), party=party), writer, cpus), daemon=True)
            proc.start()
            writer.close()
            sides.append((proc, reader))
        deadline = time.monotonic() + timeout_s

        def stop() -> None:
            for proc, _ in sides:
                proc.kill()

        came: list[tuple[Any, ...] | None] = []
        try:  # also when the problem's own deadline interrupts: no timing may outlive it
            came = take_turns(path, [functools.partial(_result, reader, party, deadline)
                                     for party, (_, reader) in enumerate(sides)], stop)
        finally:
            for proc, _ in sides:
                proc.join(5 if came and None not in came else 0)
                if proc.is_alive():
                    proc.kill()
                    proc.join(5)
    sent = [message or ("error", f"party {i} timed out") for i, message in enumerate(came)]
    errors = [message[1] for message in sent if message[0] != "ok"]
    if errors:
        raise RuntimeError("timing in turns failed: " + "; ".join(errors))
    LAST_TURN_SAMPLES.update(ref=sent[1][2:], copy=sent[0][2:])
    return sent[1][1], sent[0][1]


def _result(reader: Any, party: int, deadline: float) -> tuple[Any, ...] | None:
    """What party ``party``'s process sent (:func:`_turn_worker`); ``None`` where nothing came by the ``deadline``."""
    if not reader.poll(max(0.0, deadline - time.monotonic())):
        return None
    try:
        return reader.recv()
    except EOFError:
        return ("error", f"party {party}'s process ended without a result")


LAST_TURN_SAMPLES: dict[str, tuple[list[float], list[int]]] = {}
"""(samples in ms, round of each) of the last :func:`in_turns`' two timings, keyed ``ref`` and ``copy``."""


LAST_SPEEDUP: dict[str, float] = {}
"""The last pair's reference-over-copy ratio where it is not the ratio of the returned times (timed in
turns: the median of per-round ratios), keyed ``self_speedup``; empty otherwise."""
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
holds the verified timing v6, measured only when asked."""
