"""Timing on a GPU (``_time_cuda``), as a recipe of steps: warm up, probe one call, choose the method (eager
calls or CUDA graph replays, and calls per event pair), sample until the stopping rule is met, summarise.

Each step hands the next a small frozen value: what every step reads (``_Setting``), the probe of one call
(``_Probe``), the method chosen (``_Method``, with its ``_Graphs``), how a sample is taken (``_Sampler``), and
what sampling measured (``_Measured``, with the host's own speed around it, ``_HostSpeed``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, NamedTuple

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


class _Setting(NamedTuple):
    """What every step of one GPU timing reads: the call and its input sets, the plan, the outputs kept, the
    timing's turns, the L2 flush and the places of the weights."""

    call: Callable[[int], Any]
    rot: _Rotation
    plan: TimingPlan
    outputs: dict[int, Any]
    slots: _Slots
    flush_l2: Callable[[], Any]
    places: _Placements


class _Probe(NamedTuple):
    """One call, probed: medians of a few."""

    host_ms: float
    """Host enqueue ms of one eager call."""
    device_ms: float
    """Device ms of one call."""


_Graph = tuple[torch.cuda.CUDAGraph, dict[int, Any]]
"""A captured graph and its (static) outputs by input set."""


@dataclass(frozen=True)
class _Graphs:
    """The graph decision: the graphs timed, or none and why."""

    captured: tuple[_Graph, ...] = ()
    """One graph per place of the weights (none: eager calls are timed)."""
    sets: list[int] = field(default_factory=list)
    """The input sets the graphs call, in order (none where no graph was wanted)."""
    note: str = ""
    """Why a graph was wanted but eager calls are timed ("" otherwise)."""
    unsafe: str | None = None
    """Evidence that a captured graph did not do the call's work (``work_outside_capture``), if one did not."""


@dataclass(frozen=True)
class _Method:
    """How the samples are taken."""

    per_sample: int
    """Calls per event pair."""
    short: bool
    """A call under ``SHORT_GRAPH_MS`` with ``graph_short`` on."""
    graphs: _Graphs


class _Sampler(NamedTuple):
    """One sample's work, as the method takes it."""

    sample: Callable[[list[int]], None]
    """Enqueues one sample's calls on the given input sets."""
    prepare: Callable[[], list[int]]
    """Before a sample: the next place of the weights, and the input sets the sample calls on."""
    spin: int
    """Device cycles spun before each sample."""


class _Batch(NamedTuple):
    """One batch of samples, read after its sync."""

    samples_ms: list[float]
    """Each sample's ms per call."""
    places: list[int]
    """The place of the weights of each sample."""
    clock_mhz: float
    """The SM clock probed after the batch."""


class _HostSpeed(NamedTuple):
    """The host's own speed around the sampling, timed where it may set the time (eager calls whose host enqueue
    is at least half their device time)."""

    watched: bool
    before_ms: float
    """A fixed Python loop's ms before the sampling (0 where not watched)."""
    after_ms: float
    """The same loop's ms after it."""


@dataclass(frozen=True)
class _Measured:
    """What sampling measured."""

    samples: list[float]
    """Every sample (ms per call), in the order taken."""
    groups: list[list[float]]
    """Samples by place of the weights."""
    clocks: list[float]
    """The SM clock (MHz) after each batch."""
    batches: list[int]
    """The batch (in turns: the round) of each sample."""
    host: _HostSpeed


def _time_cuda(call: Callable[[int], Any], rot: _Rotation, plan: TimingPlan, outputs: dict[int, Any],
               module: torch.nn.Module | None = None) -> TimingRun:
    """Warm up, probe one call, choose the method (eager or graph replays, calls per event pair), sample until the
    stopping rule is met, summarise: in this timing's first turn up to the sampling, in later turns the batches."""
    if plan.flush not in ("write", "read"):
        raise ValueError(f"unknown L2 flush {plan.flush!r} (write or read)")
    slots = _Slots(plan, cuda=True)
    slots.begin()  # warm-up, probe and capture in this timing's first turn
    s = _Setting(call, rot, plan, outputs, slots, _l2_flush(plan), _Placements(module, plan.placements))
    _warm_up(s)
    probe = _Probe(*_probe(call, rot, outputs))
    method = _choose_method(s, probe)
    sampler = _replay_graphs(s, method.graphs) if method.graphs.captured else _call_eager(s, probe, method)
    measured = _sample_until_stop(s, probe, method, sampler)
    return _summarise(s, probe, method, measured)


def _l2_flush(plan: TimingPlan) -> Callable[[], Any]:
    """The buffer that flushes the L2 before each sample, and how: zeroed (``write``) or read (``read``)."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    if plan.flush == "read":
        flush.zero_()
    return flush.zero_ if plan.flush == "write" else flush.max


def _warm_up(s: _Setting) -> None:
    """Eager calls for the warm-up time and at least the plan's warm-up calls, until every input set and every
    placement of the weights has been used."""
    started, calls = perf_counter(), 0
    while (perf_counter() - started < s.plan.warmup_s or not all(s.rot.used) or calls < s.places.count
           or calls < s.plan.warmup_calls):
        s.places.use(calls)  # every placement warmed up too
        k = s.rot.take()
        s.outputs[k] = s.call(k)
        _synchronize()
        calls += 1
    s.places.use(0)


def _choose_method(s: _Setting, probe: _Probe) -> _Method:
    """Calls per event pair, and whether graph replays are timed (the graphs captured), from the plan and the probe."""
    plan = s.plan
    per_sample = max(1, min(len(s.rot.sets), plan.calls_per_sample or calls_per_sample(probe.device_ms,
                                                                                          len(s.rot.sets))))
    short = plan.graph_short and probe.device_ms < SHORT_GRAPH_MS
    wanted = plan.cuda_graph > 0 or (plan.cuda_graph == 0 and (
        short or (per_sample == 1 and uses_graph(probe.host_ms, probe.device_ms))))
    return _Method(per_sample, short, _capture_graphs(s, per_sample) if wanted else _Graphs())


def _capture_graphs(s: _Setting, per_sample: int) -> _Graphs:
    """One graph per place of the weights (or one at the module's own); none, and a note why, when one fails."""
    sets = [s.rot.take() for _ in range(per_sample)]
    captured: list[_Graph] = []
    for j in range(s.places.count if s.plan.graph_short else 1):  # one graph per place, or one at the module's own
        s.places.use(j)
        graph = _capture(s.call, sets, s.rot.sets)
        missed = None if isinstance(graph, str) else work_outside_capture(*graph, s.call, s.rot.sets)
        if isinstance(graph, str) or missed:
            why = (f"capture as a CUDA graph failed ({graph})" if isinstance(graph, str) else
                   f"a captured CUDA graph missed the call's work ({missed}; work launched outside the capturing "
                   "stream, such as a kernel on the legacy default stream, is not captured)")
            s.places.use(0)
            return _Graphs((), sets, f"; {why}, so eager calls on the default stream were timed, as a user runs "
                                     "them, and the host's launch speed is part of the time", missed)
        captured.append(graph)
    s.places.use(0)
    return _Graphs(tuple(captured), sets)


def _replay_graphs(s: _Setting, graphs: _Graphs) -> _Sampler:
    """Samples are replays of the current place's graph, on fresh values in its static inputs."""
    captured, places, outputs, graph_sets, sets = graphs.captured, s.places, s.outputs, graphs.sets, s.rot.sets
    if len(captured) == 1:
        places.restore()  # a graph reads the addresses it was captured with

    def sample(_ks: list[int]) -> None:
        replayed, outs = captured[places.current]
        replayed.replay()
        outputs.update(outs)

    def prepare() -> list[int]:
        for k in graph_sets:
            refresh_in_place(sets[k])  # fresh values in the graph's static inputs
        places.use(places.current + 1)  # the next place's graph
        return graph_sets
    replay_host_ms = _host_ms(lambda: sample([]))
    return _Sampler(sample, prepare, int(_cycles_per_ms() * (SPIN_MARGIN * replay_host_ms + 0.02)))


def _call_eager(s: _Setting, probe: _Probe, method: _Method) -> _Sampler:
    """Samples are eager calls on the next ``per_sample`` input sets, at the next place of the weights."""
    call, rot, places, outputs, per_sample = s.call, s.rot, s.places, s.outputs, method.per_sample

    def sample(ks: list[int]) -> None:
        for k in ks:
            outputs[k] = call(k)

    def prepare() -> list[int]:
        places.use(places.current + 1)
        return [rot.take() for _ in range(per_sample)]
    return _Sampler(sample, prepare,
                    int(_cycles_per_ms() * min(SPIN_MAX_MS, SPIN_MARGIN * probe.host_ms * per_sample + 0.02)))


def _sample_until_stop(s: _Setting, probe: _Probe, method: _Method, sampler: _Sampler) -> _Measured:
    """Batches of samples until the stopping rule (or, in turns, every timing's) is met."""
    groups: list[list[float]] = [[] for _ in range(s.places.count)]  # samples by place of the weights
    watched = not method.graphs.captured and probe.host_ms >= 0.5 * probe.device_ms  # the host may set the time
    before = host_loop_ms() if watched else 0.0
    samples: list[float] = []
    clocks: list[float] = []
    batches: list[int] = []
    slots, plan = s.slots, s.plan
    slots.end(False)
    started = slots.sampling(max(probe.host_ms, probe.device_ms) * method.per_sample + sampler.spin / _cycles_per_ms())
    while not slots.finished(groups, plan, started):
        batch = _batch(s, method.per_sample, sampler)
        for ms, j in zip(batch.samples_ms, batch.places, strict=True):
            batches.append(slots.rounds)
            samples.append(ms)
            groups[j].append(ms)
        clocks.append(batch.clock_mhz)
        slots.batch_done(groups, plan, started)
    after = host_loop_ms() if watched else 0.0
    return _Measured(samples, groups, clocks, batches, _HostSpeed(watched, before, after))


def _batch(s: _Setting, per_sample: int, sampler: _Sampler) -> _Batch:
    """One batch of samples enqueued, each after an L2 flush and a device spin, then an SM clock probe; read after
    one sync."""
    places, prepare, sample, flush_l2, spin = s.places, sampler.prepare, sampler.sample, s.flush_l2, sampler.spin
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(s.slots.batch)]
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
    return _Batch([_elapsed(start, end) / per_sample for start, end in events], where, clock.mhz())


def _summarise(s: _Setting, probe: _Probe, method: _Method, measured: _Measured) -> TimingRun:
    """The weights back in place, the stats and their note, and the check for work outside the timed stream."""
    rotated = s.places.count
    s.places.restore()
    by_place = [median(g) for g in measured.groups if g]
    gpu_ms = grouped_median(measured.groups)[0]
    graphs = bool(method.graphs.captured)
    # why graphs, from this call's own probe: a candidate paced onto graphs by its problem's eager baseline
    # may be neither short nor host-bound itself, and is labelled as what it is
    own_host_graph = not method.short and uses_graph(probe.host_ms, probe.device_ms)
    host_bound = probe.host_ms > gpu_ms or (graphs and own_host_graph)
    note = (_method_note(probe, method, measured.host, gpu_ms, own_host_graph, host_bound)
            + _more_notes(s, method, rotated, by_place))
    stats = summarize_verified(measured.samples, "cuda_graph" if graphs else "cuda_events",
                               groups=measured.groups,
                               calls_per_sample=method.per_sample, l2_flush=True, host_bound=host_bound,
                               note=note[:TIMING_NOTE_MAX], host_enqueue_ms=probe.host_ms,
                               round_medians_ms=s.slots.round_medians(measured.samples, measured.batches),
                               sm_clock_mhz=clock_median(measured.clocks))
    unsync, last_set, latest = _unsynchronised(s.call, len(s.rot.sets), gpu_ms)  # in the last turn: nothing else on the device
    s.slots.leave()
    return TimingRun(stats, s.outputs, unsync, last_set=last_set, latest_output=latest, samples_ms=measured.samples,
                     batches=measured.batches, graph_unsafe=method.graphs.unsafe)


def _method_note(probe: _Probe, method: _Method, host: _HostSpeed, gpu_ms: float, own_host_graph: bool,
                 host_bound: bool) -> str:
    """The note's opening: how the samples were taken, and why."""
    host_ms, device_ms, per_sample, graphs = probe.host_ms, probe.device_ms, method.per_sample, method.graphs
    if graphs.captured and method.short:
        return (f"replays of CUDA graphs of {per_sample} call(s) on distinct input sets, one graph per place of the "
                f"weights, after an L2 flush and fresh input values each: a short call (device {device_ms:.3g} ms, "
                f"host enqueue {host_ms:.3g} ms per eager call) launched from a graph")
    if graphs.captured and own_host_graph:
        return (f"replays of a CUDA graph captured from one call, after an L2 flush and fresh input values each: "
                f"host-bound (host enqueue {host_ms:.3g} ms per eager call vs device {device_ms:.3g} ms), so eager "
                "event times would follow the host's launch speed")
    if graphs.captured:
        return (f"replays of CUDA graphs of {per_sample} call(s), after an L2 flush and fresh input values each: "
                f"as the problem's eager baseline is timed; this call itself is neither short nor host-bound "
                f"(device {device_ms:.3g} ms, host enqueue {host_ms:.3g} ms per eager call)")
    note = (f"CUDA events after an L2 flush and a device spin that keeps host launch gaps out; host enqueue "
            f"{host_ms:.3g} ms per call vs device {gpu_ms:.3g} ms" + (" (host-bound: the host, not the device, "
            "would set the time of eager calls)" if host_bound else "")) + graphs.note
    if host_bound and host.watched:
        note += (f"; the host's own speed, a fixed Python loop timed before and after: {host.before_ms:.3g} ms "
                 f"and {host.after_ms:.3g} ms")
    return note


def _more_notes(s: _Setting, method: _Method, rotated: int, by_place: list[float]) -> str:
    """The rest of the note: turns, calls per event pair, places of the weights, and who set the method."""
    note = s.slots.note()
    if method.per_sample > 1:
        note += f"; {method.per_sample} calls on distinct input sets per event pair"
    if rotated > 1:
        note += (f"; weights rotated over {rotated} places in memory, the time is the mean of their medians ("
                 + ", ".join(f"{m:.4g}" for m in by_place) + " ms)")
    if s.plan.calls_per_sample or s.plan.cuda_graph:
        note += " (method set by the problem's eager baseline)"
    return note
