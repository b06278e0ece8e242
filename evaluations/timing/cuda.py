"""Timing on a GPU (``_time_cuda``), as a recipe of steps: warm up, probe one call, choose the method (eager
calls or CUDA graph replays, and calls per event pair), sample until the stopping rule is met, summarise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import torch

from schemas import TIMING_NOTE_MAX

from ..core import grouped_median, median, refresh_in_place, summarize_verified, uses_graph
from .bound import _elapsed, _synchronize
from .graphs import _capture, work_outside_capture
from .placements import _Placements, _Rotation
from .plan import L2_FLUSH_BYTES, SHORT_GRAPH_MS, SPIN_MARGIN, SPIN_MAX_MS, TimingPlan, TimingRun
from .probe import (
    _clock_probe,
    _cycles_per_ms,
    _host_ms,
    _probe,
    _unsynchronised,
    calls_per_sample,
    clock_median,
    host_loop_ms,
)
from .turns import _Slots


@dataclass
class _Timing:
    """What the steps of one GPU timing share: its inputs, and what each step finds for the next."""

    call: Callable[[int], Any]
    rot: _Rotation
    plan: TimingPlan
    outputs: dict[int, Any]
    slots: _Slots
    flush_l2: Callable[[], Any]
    places: _Placements
    host_ms: float = 0.0
    """Host enqueue ms of one eager call (the probe's)."""
    device_ms: float = 0.0
    """Device ms of one call (the probe's)."""
    per_sample: int = 1
    """Calls per event pair."""
    short: bool = False
    """A call under ``SHORT_GRAPH_MS`` with ``graph_short`` on."""
    graphs: list[tuple[torch.cuda.CUDAGraph, dict[int, Any]]] = field(default_factory=list)
    """The captured graphs and their outputs, one per place of the weights (none: eager calls are timed)."""
    graph_sets: list[int] = field(default_factory=list)
    graph_note: str = ""
    """Why a graph was wanted but eager calls are timed ("" otherwise)."""
    graph_unsafe: str | None = None
    """Evidence that a captured graph did not do the call's work (``work_outside_capture``), if one did not."""
    sample: Callable[[list[int]], None] = lambda _ks: None
    """Enqueues one sample's calls on the given input sets."""
    prepare: Callable[[], list[int]] = lambda: []
    """Before a sample: the next place of the weights, and the input sets the sample calls on."""
    spin: int = 0
    """Device cycles spun before each sample."""
    samples: list[float] = field(default_factory=list)
    groups: list[list[float]] = field(default_factory=list)
    """Samples by place of the weights."""
    clocks: list[float] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)
    watch_host: bool = False
    """Eager calls whose time the host may set: the host's own speed is timed before and after."""
    loop_before: float = 0.0
    loop_after: float = 0.0


def _time_cuda(call: Callable[[int], Any], rot: _Rotation, plan: TimingPlan, outputs: dict[int, Any],
               module: torch.nn.Module | None = None) -> TimingRun:
    """Warm up, probe one call, choose the method (eager or graph replays, calls per event pair), sample until the
    stopping rule is met, summarise: in this timing's first turn up to the sampling, in later turns the batches."""
    if plan.flush not in ("write", "read"):
        raise ValueError(f"unknown L2 flush {plan.flush!r} (write or read)")
    slots = _Slots(plan, cuda=True)
    slots.begin()  # warm-up, probe and capture in this timing's first turn
    flush_l2 = _l2_flush(plan)
    t = _Timing(call, rot, plan, outputs, slots, flush_l2, _Placements(module, plan.placements))
    _warm_up(t)
    t.host_ms, t.device_ms = _probe(call, rot, outputs)
    _choose_method(t)
    if t.graphs:
        _replay_graphs(t)
    else:
        _call_eager(t)
    _sample_until_stop(t)
    return _summarise(t)


def _l2_flush(plan: TimingPlan) -> Callable[[], Any]:
    """The buffer that flushes the L2 before each sample, and how: zeroed (``write``) or read (``read``)."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    if plan.flush == "read":
        flush.zero_()
    return flush.zero_ if plan.flush == "write" else flush.max


def _warm_up(t: _Timing) -> None:
    """Eager calls for the warm-up time and at least the plan's warm-up calls, until every input set and every
    placement of the weights has been used."""
    started, calls = perf_counter(), 0
    while (perf_counter() - started < t.plan.warmup_s or not all(t.rot.used) or calls < t.places.count
           or calls < t.plan.warmup_calls):
        t.places.use(calls)  # every placement warmed up too
        k = t.rot.take()
        t.outputs[k] = t.call(k)
        _synchronize()
        calls += 1
    t.places.use(0)


def _choose_method(t: _Timing) -> None:
    """Calls per event pair, and whether graph replays are timed (the graphs captured), from the plan and the probe."""
    plan = t.plan
    per_sample = plan.calls_per_sample or calls_per_sample(t.device_ms, len(t.rot.sets))
    t.per_sample = max(1, min(len(t.rot.sets), per_sample))
    t.short = plan.graph_short and t.device_ms < SHORT_GRAPH_MS
    if plan.cuda_graph > 0 or (plan.cuda_graph == 0
                               and (t.short or (t.per_sample == 1 and uses_graph(t.host_ms, t.device_ms)))):
        _capture_graphs(t)


def _capture_graphs(t: _Timing) -> None:
    """One graph per place of the weights (or one at the module's own); none, and a note why, when one fails."""
    t.graph_sets = [t.rot.take() for _ in range(t.per_sample)]
    for j in range(t.places.count if t.plan.graph_short else 1):  # one graph per place, or one at the module's own
        t.places.use(j)
        captured = _capture(t.call, t.graph_sets, t.rot.sets)
        missed = None if isinstance(captured, str) else work_outside_capture(*captured, t.call, t.rot.sets)
        if isinstance(captured, str) or missed:
            t.graphs, t.graph_unsafe = [], missed
            why = (f"capture as a CUDA graph failed ({captured})" if isinstance(captured, str) else
                   f"a captured CUDA graph missed the call's work ({missed}; work launched outside the capturing "
                   "stream, such as a kernel on the legacy default stream, is not captured)")
            t.graph_note = (f"; {why}, so eager calls on the default stream were timed, as a user runs them, and the "
                            "host's launch speed is part of the time")
            break
        t.graphs.append(captured)
    t.places.use(0)


def _replay_graphs(t: _Timing) -> None:
    """Samples are replays of the current place's graph, on fresh values in its static inputs."""
    graphs, places, outputs, graph_sets, sets = t.graphs, t.places, t.outputs, t.graph_sets, t.rot.sets
    if len(graphs) == 1:
        places.restore()  # a graph reads the addresses it was captured with

    def sample(_ks: list[int]) -> None:
        replayed, outs = graphs[places.current]
        replayed.replay()
        outputs.update(outs)

    def prepare() -> list[int]:
        for k in graph_sets:
            refresh_in_place(sets[k])  # fresh values in the graph's static inputs
        places.use(places.current + 1)  # the next place's graph
        return graph_sets
    replay_host_ms = _host_ms(lambda: sample([]))
    t.sample, t.prepare = sample, prepare
    t.spin = int(_cycles_per_ms() * (SPIN_MARGIN * replay_host_ms + 0.02))


def _call_eager(t: _Timing) -> None:
    """Samples are eager calls on the next ``per_sample`` input sets, at the next place of the weights."""
    call, rot, places, outputs, per_sample = t.call, t.rot, t.places, t.outputs, t.per_sample

    def sample(ks: list[int]) -> None:
        for k in ks:
            outputs[k] = call(k)

    def prepare() -> list[int]:
        places.use(places.current + 1)
        return [rot.take() for _ in range(per_sample)]
    t.sample, t.prepare = sample, prepare
    t.spin = int(_cycles_per_ms() * min(SPIN_MAX_MS, SPIN_MARGIN * t.host_ms * per_sample + 0.02))


def _sample_until_stop(t: _Timing) -> None:
    """Batches of samples until the stopping rule (or, in turns, every timing's) is met."""
    t.groups = [[] for _ in range(t.places.count)]  # samples by place of the weights
    t.watch_host = not t.graphs and t.host_ms >= 0.5 * t.device_ms  # eager calls whose time the host may set
    t.loop_before = host_loop_ms() if t.watch_host else 0.0
    slots, plan = t.slots, t.plan
    slots.end(False)
    started = slots.sampling(max(t.host_ms, t.device_ms) * t.per_sample + t.spin / _cycles_per_ms())
    while not slots.finished(t.groups, plan, started):
        _batch(t)
        slots.batch_done(t.groups, plan, started)
    t.loop_after = host_loop_ms() if t.watch_host else 0.0


def _batch(t: _Timing) -> None:
    """One batch of samples enqueued, each after an L2 flush and a device spin, then an SM clock probe; read after
    one sync."""
    places, prepare, sample, flush_l2, spin = t.places, t.prepare, t.sample, t.flush_l2, t.spin
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(t.slots.batch)]
    where = []
    for start, end in events:
        ks = prepare()
        where.append(places.current)
        flush_l2()
        torch.cuda._sleep(spin)
        start.record()
        sample(ks)
        end.record()
    clock = _clock_probe()
    _synchronize()
    for (start, end), j in zip(events, where, strict=True):
        t.batches.append(t.slots.rounds)
        t.samples.append(_elapsed(start, end) / t.per_sample)
        t.groups[j].append(t.samples[-1])
    t.clocks.append(clock.mhz())


def _summarise(t: _Timing) -> TimingRun:
    """The weights back in place, the stats and their note, and the check for work outside the timed stream."""
    rotated = t.places.count
    t.places.restore()
    by_place = [median(g) for g in t.groups if g]
    gpu_ms = grouped_median(t.groups)[0]
    # why graphs, from this call's own probe: a candidate paced onto graphs by its problem's eager baseline
    # may be neither short nor host-bound itself, and is labelled as what it is
    own_host_graph = not t.short and uses_graph(t.host_ms, t.device_ms)
    host_bound = t.host_ms > gpu_ms or (bool(t.graphs) and own_host_graph)
    note = _method_note(t, gpu_ms, own_host_graph, host_bound) + _more_notes(t, rotated, by_place)
    stats = summarize_verified(t.samples, "cuda_graph" if t.graphs else "cuda_events",
                               groups=t.groups,
                               calls_per_sample=t.per_sample, l2_flush=True, host_bound=host_bound,
                               note=note[:TIMING_NOTE_MAX], host_enqueue_ms=t.host_ms,
                               round_medians_ms=t.slots.round_medians(t.samples, t.batches),
                               sm_clock_mhz=clock_median(t.clocks))
    unsync, last_set = _unsynchronised(t.call, len(t.rot.sets), gpu_ms)  # in the last turn: nothing else on the device
    t.slots.leave()
    return TimingRun(stats, t.outputs, unsync, last_set=last_set, samples_ms=t.samples, batches=t.batches,
                     graph_unsafe=t.graph_unsafe)


def _method_note(t: _Timing, gpu_ms: float, own_host_graph: bool, host_bound: bool) -> str:
    """The note's opening: how the samples were taken, and why."""
    host_ms, device_ms, per_sample = t.host_ms, t.device_ms, t.per_sample
    if t.graphs and t.short:
        return (f"replays of CUDA graphs of {per_sample} call(s) on distinct input sets, one graph per place of the "
                f"weights, after an L2 flush and fresh input values each: a short call (device {device_ms:.3g} ms, "
                f"host enqueue {host_ms:.3g} ms per eager call) launched from a graph")
    if t.graphs and own_host_graph:
        return (f"replays of a CUDA graph captured from one call, after an L2 flush and fresh input values each: "
                f"host-bound (host enqueue {host_ms:.3g} ms per eager call vs device {device_ms:.3g} ms), so eager "
                "event times would follow the host's launch speed")
    if t.graphs:
        return (f"replays of CUDA graphs of {per_sample} call(s), after an L2 flush and fresh input values each: "
                f"as the problem's eager baseline is timed; this call itself is neither short nor host-bound "
                f"(device {device_ms:.3g} ms, host enqueue {host_ms:.3g} ms per eager call)")
    note = (f"CUDA events after an L2 flush and a device spin that keeps host launch gaps out; host enqueue "
            f"{host_ms:.3g} ms per call vs device {gpu_ms:.3g} ms" + (" (host-bound: the host, not the device, "
            "would set the time of eager calls)" if host_bound else "")) + t.graph_note
    if host_bound and t.watch_host:
        note += (f"; the host's own speed, a fixed Python loop timed before and after: {t.loop_before:.3g} ms "
                 f"and {t.loop_after:.3g} ms")
    return note


def _more_notes(t: _Timing, rotated: int, by_place: list[float]) -> str:
    """The rest of the note: turns, calls per event pair, places of the weights, and who set the method."""
    note = t.slots.note()
    if t.per_sample > 1:
        note += f"; {t.per_sample} calls on distinct input sets per event pair"
    if rotated > 1:
        note += (f"; weights rotated over {rotated} places in memory, the time is the mean of their medians ("
                 + ", ".join(f"{m:.4g}" for m in by_place) + " ms)")
    if t.plan.calls_per_sample or t.plan.cuda_graph:
        note += " (method set by the problem's eager baseline)"
    return note
