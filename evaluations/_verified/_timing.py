"""Timing of the verified protocol: raw per-call samples, then pure statistics (``_stats``).

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
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter, perf_counter_ns
from typing import Any

import torch

from schemas import TimingStats
from schemas._record import ROUNDS_MAX, TIMING_NOTE_MAX

from .. import _gpulock
from .._outcomes import median, uses_graph
from .._turns import Turns
from ._distributions import refresh_in_place
from ._integrity import outputs_of
from ._stats import grouped_half_width_rel, grouped_median, round_medians, summarize_verified

L2_FLUSH_BYTES = 256 << 20
"""Buffer zeroed before each timed call: several times the L2 of current GPUs."""
SHORT_CALL_MS = 0.02
"""Calls faster than this are timed several to one event pair."""
SAMPLE_TARGET_MS = 0.2
"""Device time aimed at per event pair for short calls."""
BATCH = 25
"""Samples collected between two looks at the stopping rule."""
TURN_MS = 100.0
"""Time aimed at per turn when timings take turns (``_Slots``): a batch of fewer samples for long calls, so
the host drifts little between a timing's turn and the next timing's."""
SPIN_MARGIN = 1.5
"""Spin length as a multiple of the measured host enqueue time of one sample."""
SPIN_MAX_MS = 50.0
"""Longest spin before one sample."""
PLACEMENTS = 16
"""Places in device memory a timed module's weights rotate over, one per sample (see ``_Placements``);
four left a place's luck in the mean of some problems (a 1.2 ms transposed convolution 2.7% apart)."""
PLACEMENT_BYTES_BUDGET = 1 << 30
"""Device memory spent on the extra copies of the weights; models with larger weights rotate over fewer places."""
SHORT_GRAPH_MS = 0.1
"""Device time per call under which calls are timed as CUDA graph replays (``TimingPlan.graph_short``):
eager calls of a few microseconds moved 1-4% between timings of the very same model, graph replays
of the same calls far less."""
CLOCK_PROBE_CYCLES = 500_000
"""Device cycles spun after each batch of samples to read the SM clock (~0.25 ms at 2 GHz; the
event overhead of a few microseconds makes the reading ~1% low, the same for every timing)."""

# Bound at import, before any candidate code runs: a candidate that replaces these cannot fake a time
# (the replacement itself is caught by the function-patching check).
_elapsed = torch.cuda.Event.elapsed_time
_synchronize = torch.cuda.synchronize


@dataclass(frozen=True)
class TimingPlan:
    """Stopping rule and warm-up of one timing."""

    warmup_s: float = 0.2
    min_calls: int = 100
    ci_target_rel: float = 0.005
    time_cap_s: float = 10.0
    max_calls: int = 20_000
    min_time_s: float = 0.5
    """Sampling spans at least this much wall time, so slow drifts (clocks, host) average out instead of
    freezing into a tight but run-specific median: 100 calls of 40 us took only ~20 ms."""
    calls_per_sample: int = 0
    """Calls per event pair fixed by the problem's eager baseline (0: decide from this call's probe).
    Every timing of a problem then uses one method: a candidate timed several calls per pair (warm
    L2 after the first) against a baseline timed one per pair would not be compared like for like."""
    flush: str = "write"
    """How the L2 is flushed before each sample: ``write`` zeroes a buffer larger than the L2 (the
    protocol's way; the L2 is left full of dirty lines), ``read`` reads one (left clean). The second
    exists to measure whether the flush's write-backs touch the timed call (``benchmarks/timing_drift.py``)."""
    placements: int = PLACEMENTS
    """Places the timed module's weights rotate over, sample by sample (1: the module's own tensors only)."""
    graph_short: bool = True
    """Calls under ``SHORT_GRAPH_MS`` are timed as CUDA graph replays too (the calls of one event pair in
    one graph), and every graph timing captures one graph per place of the weights. ``False``: the
    protocol's earlier way (graphs only for host-bound calls, captured at the module's own place),
    kept for ``benchmarks/``."""
    cuda_graph: int = 0
    """1: time replays of a CUDA graph captured from one call; -1: time eager calls; 0: decide from this
    call's probe (``uses_graph``). Set, like ``calls_per_sample``, by the problem's eager baseline."""
    turns: str = ""
    """Path of a turns file (``_turns``): this timing takes turns with other processes' timings of the same
    problem, a batch of samples a turn ("": timed alone, holding the device throughout)."""
    party: int = 0
    """This timing's place in the round of ``turns`` (0: the candidate, which the others follow)."""
    turn_cpu: int = -1
    """Host core every timing of the round runs its turns on (-1: wherever the system puts it). A host's slow
    phases were seen to be its cores': two processes on different cores did not share them, on one core they did."""

    @classmethod
    def of(cls, options: dict[str, Any]) -> TimingPlan:
        """The protocol's plan, with any field overridden by a job option of the same name.

        The runner's ``timed_calls`` override (``kverdict eval --timed-calls``) sets ``min_calls``.
        """
        base = cls()
        merged = {"min_calls": options["timed_calls"]} if "timed_calls" in options else {}
        merged.update({k: v for k, v in options.items() if k in base.__dataclass_fields__})
        return cls(**{f: _coerce(f, getattr(base, f), merged.get(f, getattr(base, f))) for f in base.__dataclass_fields__})


def _coerce(name: str, default: Any, value: Any) -> Any:
    """``value`` as the type of the plan field ``name``'s default; a value of another kind is refused (``bool("False")``
    is true, so a string never stands for a flag, and a flag never for a number)."""
    kind = type(default)
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, str) and value.lstrip("-").isdigit())
    elif kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ValueError(f"timing option {name}={value!r}: expected {kind.__name__}")
    return kind(value)


@dataclass
class TimingRun:
    """A timing and what the integrity checks need from it."""

    stats: TimingStats
    last_outputs: dict[int, Any] = field(default_factory=dict)
    """Set index -> output of the last timed call on that set (inputs unchanged since)."""
    unsynchronised: str | None = None
    """Evidence of device work outside the timed stream, or ``None``."""
    last_set: int = 0
    """Set index of the most recent call (its output is current even if buffers are reused)."""
    samples_ms: list[float] = field(default_factory=list)
    """Every sample (ms per call), in the order taken."""
    batches: list[int] = field(default_factory=list)
    """The batch each sample of ``samples_ms`` belongs to (in turns: the round, the same for every timing of it)."""

    @property
    def host_ms_per_call(self) -> float | None:
        """Host enqueue time of one eager call (ms; ``None`` on the CPU), as the stats record it."""
        return self.stats.host_enqueue_ms


class _Rotation:
    """Hands out input sets in turn, refreshing a set's content before it is used again."""

    def __init__(self, sets: list[list[Any]]) -> None:
        self.sets, self.next, self.used = sets, 0, [False] * len(sets)

    def take(self) -> int:
        k = self.next
        self.next = (k + 1) % len(self.sets)
        if self.used[k]:
            refresh_in_place(self.sets[k])
        self.used[k] = True
        return k


class _Placements:
    """Copies of a module's parameters and buffers at other device addresses, swapped in sample by sample.

    Where the weights happen to lie in memory moves a short call's time by a percent or two (a model
    and a separately built copy of it ran that far apart, each stable against itself), so one
    placement's luck would decide a small speedup. Every timing therefore rotates over the same number
    of placements, and its time is the mean of the placements' medians (pooled, placements a few
    percent apart make a multimodal mix whose median jumps between them). The module's own tensors
    are placement 0 and are back in place when the timing ends; the copies hold the same values, so
    outputs do not change.
    """

    def __init__(self, module: torch.nn.Module | None, count: int) -> None:
        tensors: dict[int, torch.Tensor] = {}
        if isinstance(module, torch.nn.Module):
            for t in (*module.parameters(), *module.buffers()):
                if t.numel() > 0:
                    tensors.setdefault(id(t), t)
        self.tensors = list(tensors.values())
        nbytes = sum(t.numel() * t.element_size() for t in self.tensors)
        self.count = max(1, min(count, 1 + PLACEMENT_BYTES_BUDGET // max(nbytes, 1))) if self.tensors else 1
        self.places = [[t.data for t in self.tensors]]
        self.places += [[d.clone() for d in self.places[0]] for _ in range(self.count - 1)]
        self.current = 0

    def use(self, j: int) -> None:
        """Put placement ``j`` (modulo the count) in the module's tensors."""
        j %= self.count
        if j != self.current:
            for t, d in zip(self.tensors, self.places[j], strict=True):
                t.data = d
            self.current = j

    def restore(self) -> None:
        """The module's own tensors back in place; the copies are released."""
        self.use(0)
        self.places = self.places[:1]
        self.count = 1


def _should_stop(groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
    """Whether sampling ends: at the caps, or once enough samples and time give a tight enough CI."""
    elapsed, count = perf_counter() - started, sum(len(g) for g in groups)
    if count >= plan.max_calls or elapsed > plan.time_cap_s:
        return True
    return (count >= plan.min_calls and elapsed >= plan.min_time_s
            and grouped_half_width_rel(groups) < plan.ci_target_rel)


class _Slots:
    """The turns a timing takes with other processes' timings (``plan.turns``), or one long turn when alone.

    ``begin`` waits for this timing's turn (letting go of a shared GPU meanwhile) and then holds the
    device alone; ``end`` lets the device go quiet and hands the turn on, saying whether this timing's
    stopping rule is met. Alone, both do nothing (``time_calls`` holds the device throughout). In
    turns, the stopping rule's clock counts this timing's own time only (not its waits for the others'
    turns), and a batch is cut to about ``TURN_MS``."""

    def __init__(self, plan: TimingPlan, cuda: bool) -> None:
        self.turns = Turns(plan.turns, plan.party) if plan.turns else None
        self.cuda = cuda
        self.cpu = plan.turn_cpu if plan.turn_cpu >= 0 and hasattr(os, "sched_setaffinity") else None
        self.batch = BATCH
        self._held = contextlib.ExitStack()
        self._waited_before = 0.0
        self.rounds = 0
        """Batches of samples taken so far (in turns, one a round; a record keeps at most ``ROUNDS_MAX``):
        the index of the batch being taken."""

    def begin(self) -> bool:
        """Wait for this timing's turn; True when all timings of the round are to stop (this turn is the last)."""
        if self.turns is None:
            return False
        with _gpulock.released():
            stop = self.turns.take()
        self._held.enter_context(_gpulock.exclusive())
        if self.cpu is not None:  # this thread on the round's core for its turn; waiting, it polls elsewhere
            before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {self.cpu})
            self._held.callback(os.sched_setaffinity, 0, before)
        return stop

    def _hand_on(self) -> None:
        if self.cuda:
            _synchronize()
        self._held.close()

    def end(self, satisfied: bool) -> None:
        """Hand the turn on (nothing of this timing's device work left running)."""
        if self.turns is not None:
            self._hand_on()
            self.turns.give(satisfied)

    def leave(self) -> None:
        """Hand the turn on for good, after the last one."""
        if self.turns is not None:
            self._hand_on()
            self.turns.leave()

    def sampling(self, sample_ms: float) -> float:
        """Sampling starts (samples of about ``sample_ms`` each); returns its start on the stopping rule's clock."""
        if self.turns is not None:
            self.batch = max(1, min(BATCH, int(TURN_MS / max(sample_ms, 1e-3))))
            self._waited_before = self.turns.waited_s
        return perf_counter()

    def _stop(self, groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
        waited = self.turns.waited_s - self._waited_before if self.turns is not None else 0.0
        return _should_stop(groups, plan, started + waited)

    def finished(self, groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
        """Before a batch of samples: whether sampling ends. Alone, by this timing's stopping rule; in turns,
        once every timing's rule is met (told at the start of a turn, which is then the last one)."""
        return self._stop(groups, plan, started) if self.turns is None else self.begin()

    def batch_done(self, groups: list[list[float]], plan: TimingPlan, started: float) -> None:
        """After a batch of samples: counted, and in turns, the turn handed on with this timing's stopping rule."""
        self.rounds += 1
        if self.turns is not None:
            self.end(self.rounds >= ROUNDS_MAX or self._stop(groups, plan, started))

    def round_medians(self, samples: list[float], batches: list[int]) -> list[float] | None:
        """In turns, the median of each round's samples (``None`` when timed alone): what a speedup between
        timings of the same turns is taken from (``schemas.speedup_between``)."""
        return round_medians(samples, batches) if self.turns is not None else None

    def note(self) -> str:
        """What the record says of the turns ("" when timed alone)."""
        if self.turns is None:
            return ""
        core = f", every turn on host core {self.cpu}" if self.cpu is not None else ""
        return (f"; timed in turns with {self.turns.parties - 1} other process(es) timing the same problem, "
                f"{self.batch} sample(s) a turn{core}, so the host's slow phases weigh on each timing alike "
                f"(waited {self.turns.waited_s:.3g} s in all for their turns)")


def _time_host(call: Callable[[int], Any], rot: _Rotation, plan: TimingPlan, outputs: dict[int, Any]) -> TimingRun:
    slots = _Slots(plan, cuda=False)
    slots.begin()
    started, warm = perf_counter(), []
    while perf_counter() - started < plan.warmup_s or not all(rot.used):
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


_CYCLES_PER_MS: list[float] = []


def _cycles_per_ms() -> float:
    if not _CYCLES_PER_MS:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(2_000_000)
        end.record()
        _synchronize()
        _CYCLES_PER_MS.append(2_000_000 / max(_elapsed(start, end), 1e-3))
    return _CYCLES_PER_MS[0]


def calls_per_sample(device_ms: float, sets: int) -> int:
    """Calls per event pair for a call of ``device_ms``: one, or enough distinct sets to fill ~0.2 ms."""
    if device_ms >= SHORT_CALL_MS:
        return 1
    return max(1, min(sets, math.ceil(SAMPLE_TARGET_MS / max(device_ms, 1e-4))))


def _capture(call: Callable[[int], Any], ks: list[int],
             sets: list[list[Any]]) -> tuple[torch.cuda.CUDAGraph, dict[int, Any]] | str:
    """A CUDA graph of ``call(k)`` for each ``k`` of ``ks`` in turn and their (static) outputs, or why
    capture failed. The input sets get new values between the warm-up calls and the capture, so an
    answer kept from the warm-up is stale in the captured outputs."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
            for k in ks:
                call(k)
        torch.cuda.current_stream().wait_stream(side)
        for k in ks:
            refresh_in_place(sets[k])
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = {k: call(k) for k in ks}
        _synchronize()
        return graph, outs
    except Exception as exc:  # noqa: BLE001 - any failure means: time eager calls, and say why
        try:
            _synchronize()
        except Exception:  # noqa: BLE001, S110 - the error above is the one reported
            pass
        _end_failed_capture()
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]


def _end_failed_capture() -> None:
    """Leave the device's random generator as it was before a capture that failed.

    A capture that fails at its end never runs the generator's capture epilogue, so the generator
    stays in capture mode and the next random draw on the device fails ("Offset increment outside
    graph capture encountered unexpectedly"): a model that draws random numbers in its forward could
    then not even be timed eager. A capture of one small kernel runs prologue and epilogue again."""
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            torch.zeros(1, device="cuda")
        _synchronize()
    except Exception:  # noqa: BLE001, S110 - best effort: the eager timing reports what still fails
        pass


def _mismatch(got: list[Any], want: list[Any]) -> str | None:
    """How the tensors of ``got`` differ from ``want`` beyond float noise (``torch.isclose`` with 1e-3
    relative and absolute: NaN where both are NaN, and an infinity of the same sign, count as equal), or
    ``None``."""
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)):
            continue
        if g.shape != w.shape:
            return f"output {i} has shape {tuple(g.shape)}, an eager call's {tuple(w.shape)}"
        if g.is_floating_point() or g.is_complex():
            wide = torch.complex128 if g.is_complex() else torch.float64
            same = bool(torch.isclose(g.to(wide), w.to(wide), rtol=1e-3, atol=1e-3, equal_nan=True).all())
        else:
            same = bool((g == w).all())
        if not same:
            return f"output {i} differs from an eager call's on the same inputs"
    return None


def _work_outside_capture(graph: torch.cuda.CUDAGraph, outs: dict[int, Any], call: Callable[[int], Any],
                          sets: list[list[Any]]) -> str | None:
    """Evidence that a call's work ran outside its captured graph, or ``None``.

    Work a call launches outside the capturing stream (a kernel on the legacy default stream, as
    ``kernel<<<grid, block>>>`` does without a stream argument; or on a side stream) runs once, during
    capture, and is not captured: the outputs are right after capture, and replays on new input values
    leave them as they were. Such a graph would be timed as doing nothing, so it is not used (eager
    calls are timed). A call whose outputs are already wrong during capture (an answer handed back
    without computing it) keeps its graph: replays leave that answer, and the re-check after timing
    reports it.
    """
    last = list(outs)[-1]
    shared = {o.untyped_storage().data_ptr() for o in outputs_of(outs[last]) if isinstance(o, torch.Tensor)}
    own = [k for k in outs if k == last or not any(  # a buffer reused by every call holds the last call's answer
        isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in shared for o in outputs_of(outs[k]))]

    def current() -> dict[int, list[Any]]:
        _synchronize()
        return {k: [o.clone() if isinstance(o, torch.Tensor) else o for o in outputs_of(outs[k])] for k in own}

    def eager(k: int) -> list[Any]:
        want = outputs_of(call(k))
        _synchronize()
        return want

    if any(_mismatch(got, eager(k)) for k, got in current().items()):
        return None  # wrong while captured: not work elsewhere but a stale answer (the re-check reports it)
    for k in outs:
        refresh_in_place(sets[k])
    graph.replay()
    for k, got in current().items():
        missed = _mismatch(got, eager(k))
        if missed:
            return f"a replay on new values of input set {k}: {missed}"
    return None


class _ClockProbe:
    """A fixed number of device cycles spun between two events, enqueued now and read after a sync."""

    def __init__(self) -> None:
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.start.record()
        torch.cuda._sleep(CLOCK_PROBE_CYCLES)
        self.end.record()

    def mhz(self) -> float:
        """SM clock in MHz over the spin (valid once the device has passed ``end``)."""
        ms = _elapsed(self.start, self.end)
        return CLOCK_PROBE_CYCLES / (ms * 1e3) if ms > 0 else float("nan")


def _clock_probe() -> _ClockProbe:
    return _ClockProbe()


def _clock_median(clocks: list[float]) -> float | None:
    finite = [c for c in clocks if math.isfinite(c) and c > 0]
    return median(finite) if finite else None


PROBE_SPIN_MS = 2.0
"""Device spin before each probe call, so its device time excludes the host's launch gap."""


def _probe(call: Callable[[int], Any], rot: _Rotation, outputs: dict[int, Any]) -> tuple[float, float]:
    """(host enqueue ms, device ms) of one call, medians of a few.

    Without the spin an idle device would wait for the host's launches inside the event pair, and a
    5 us call could look like a 20 us one, flipping how many calls each sample times.
    """
    host, device = [], []
    spin = int(_cycles_per_ms() * PROBE_SPIN_MS)
    for _ in range(5):
        k = rot.take()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        _synchronize()
        torch.cuda._sleep(spin)
        t0 = perf_counter()
        start.record()
        outputs[k] = call(k)
        end.record()
        host.append((perf_counter() - t0) * 1e3)
        _synchronize()
        device.append(_elapsed(start, end))
    return median(host), median(device)


def _unsynchronised(call: Callable[[int], Any], sets: int, device_ms: float) -> tuple[str | None, int]:
    """Compare device-synchronised wall time of back-to-back calls with the event time.

    No refresh or flush runs between these calls, so all device work in the window is the
    candidate's; an honest call takes about max(event time, host enqueue time). Returns the evidence
    (or ``None``) and the set of the last call: a candidate that reuses one output buffer now holds
    that set's answer in it, so the re-check after timing must read it as that set's.
    """
    calls = 10
    _synchronize()
    t0 = perf_counter()
    for i in range(calls):
        call(i % sets)
    host_ms = (perf_counter() - t0) * 1e3 / calls
    _synchronize()
    wall_ms = (perf_counter() - t0) * 1e3 / calls
    last = (calls - 1) % sets
    if wall_ms > 2.0 * max(device_ms, host_ms) + 0.05:
        return (f"device-synchronised wall time {wall_ms:.3g} ms per call is {wall_ms / max(device_ms, 1e-6):.3g}x "
                f"the event time {device_ms:.3g} ms: work ran outside the timed stream"), last
    return None, last


def _time_cuda(call: Callable[[int], Any], rot: _Rotation, plan: TimingPlan, outputs: dict[int, Any],
               module: torch.nn.Module | None = None) -> TimingRun:
    if plan.flush not in ("write", "read"):
        raise ValueError(f"unknown L2 flush {plan.flush!r} (write or read)")
    slots = _Slots(plan, cuda=True)
    slots.begin()  # warm-up, probe and capture in this timing's first turn
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    if plan.flush == "read":
        flush.zero_()
    flush_l2 = flush.zero_ if plan.flush == "write" else flush.max
    places = _Placements(module, plan.placements)
    started, calls = perf_counter(), 0
    while perf_counter() - started < plan.warmup_s or not all(rot.used) or calls < places.count:
        places.use(calls)  # every placement warmed up too
        k = rot.take()
        outputs[k] = call(k)
        _synchronize()
        calls += 1
    places.use(0)
    host_ms, device_ms = _probe(call, rot, outputs)
    per_sample = plan.calls_per_sample or calls_per_sample(device_ms, len(rot.sets))
    per_sample = max(1, min(len(rot.sets), per_sample))
    short = plan.graph_short and device_ms < SHORT_GRAPH_MS
    graphs: list[tuple[torch.cuda.CUDAGraph, dict[int, Any]]] = []
    graph_note = ""
    if plan.cuda_graph > 0 or (plan.cuda_graph == 0 and (short or (per_sample == 1 and uses_graph(host_ms, device_ms)))):
        graph_sets = [rot.take() for _ in range(per_sample)]
        for j in range(places.count if plan.graph_short else 1):  # one graph per place, or one at the module's own
            places.use(j)
            captured = _capture(call, graph_sets, rot.sets)
            missed = None if isinstance(captured, str) else _work_outside_capture(*captured, call, rot.sets)
            if isinstance(captured, str) or missed:
                graphs = []
                why = (f"capture as a CUDA graph failed ({captured})" if isinstance(captured, str) else
                       f"a captured CUDA graph missed the call's work ({missed}; work launched outside the capturing "
                       "stream, such as a kernel on the legacy default stream, is not captured)")
                graph_note = f"; {why}, so eager calls were timed and the host's launch speed is part of the time"
                break
            graphs.append(captured)
        places.use(0)
    if graphs:
        if len(graphs) == 1:
            places.restore()  # a graph reads the addresses it was captured with

        def sample(_ks: list[int]) -> None:
            replayed, outs = graphs[places.current]
            replayed.replay()
            outputs.update(outs)

        def prepare() -> list[int]:
            for k in graph_sets:
                refresh_in_place(rot.sets[k])  # fresh values in the graph's static inputs
            places.use(places.current + 1)  # the next place's graph
            return graph_sets
        replay_host_ms = _host_ms(lambda: sample([]))
        spin = int(_cycles_per_ms() * (SPIN_MARGIN * replay_host_ms + 0.02))
    else:
        def sample(ks: list[int]) -> None:
            for k in ks:
                outputs[k] = call(k)

        def prepare() -> list[int]:
            places.use(places.current + 1)
            return [rot.take() for _ in range(per_sample)]
        spin = int(_cycles_per_ms() * min(SPIN_MAX_MS, SPIN_MARGIN * host_ms * per_sample + 0.02))
    samples: list[float] = []
    groups: list[list[float]] = [[] for _ in range(places.count)]  # samples by place of the weights
    clocks: list[float] = []
    batches: list[int] = []
    watch_host = not graphs and host_ms >= 0.5 * device_ms  # eager calls whose time the host may set
    loop_before = host_loop_ms() if watch_host else 0.0
    slots.end(False)
    started = slots.sampling(max(host_ms, device_ms) * per_sample + spin / _cycles_per_ms())
    while not slots.finished(groups, plan, started):
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(slots.batch)]
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
            batches.append(slots.rounds)
            samples.append(_elapsed(start, end) / per_sample)
            groups[j].append(samples[-1])
        clocks.append(clock.mhz())
        slots.batch_done(groups, plan, started)
    loop_after = host_loop_ms() if watch_host else 0.0
    rotated = places.count
    places.restore()
    by_place = [median(g) for g in groups if g]
    gpu_ms = grouped_median(groups)[0]
    # why graphs, from this call's own probe: a candidate paced onto graphs by its problem's eager baseline
    # may be neither short nor host-bound itself, and is labelled as what it is
    own_host_graph = not short and uses_graph(host_ms, device_ms)
    host_bound = host_ms > gpu_ms or (bool(graphs) and own_host_graph)
    if graphs and short:
        note = (f"replays of CUDA graphs of {per_sample} call(s) on distinct input sets, one graph per place of the "
                f"weights, after an L2 flush and fresh input values each: a short call (device {device_ms:.3g} ms, "
                f"host enqueue {host_ms:.3g} ms per eager call) launched from a graph")
    elif graphs and own_host_graph:
        note = (f"replays of a CUDA graph captured from one call, after an L2 flush and fresh input values each: "
                f"host-bound (host enqueue {host_ms:.3g} ms per eager call vs device {device_ms:.3g} ms), so eager "
                "event times would follow the host's launch speed")
    elif graphs:
        note = (f"replays of CUDA graphs of {per_sample} call(s), after an L2 flush and fresh input values each: "
                f"as the problem's eager baseline is timed; this call itself is neither short nor host-bound "
                f"(device {device_ms:.3g} ms, host enqueue {host_ms:.3g} ms per eager call)")
    else:
        note = (f"CUDA events after an L2 flush and a device spin that keeps host launch gaps out; host enqueue "
                f"{host_ms:.3g} ms per call vs device {gpu_ms:.3g} ms" + (" (host-bound: the host, not the device, "
                "would set the time of eager calls)" if host_bound else "")) + graph_note
        if host_bound and watch_host:
            note += (f"; the host's own speed, a fixed Python loop timed before and after: {loop_before:.3g} ms "
                     f"and {loop_after:.3g} ms")
    note += slots.note()
    if per_sample > 1:
        note += f"; {per_sample} calls on distinct input sets per event pair"
    if rotated > 1:
        note += (f"; weights rotated over {rotated} places in memory, the time is the mean of their medians ("
                 + ", ".join(f"{m:.4g}" for m in by_place) + " ms)")
    if plan.calls_per_sample or plan.cuda_graph:
        note += " (method set by the problem's eager baseline)"
    stats = summarize_verified(samples, "cuda_graph" if graphs else "cuda_events",
                               groups=groups,
                               calls_per_sample=per_sample, l2_flush=True, host_bound=host_bound, note=note[:TIMING_NOTE_MAX],
                               host_enqueue_ms=host_ms, round_medians_ms=slots.round_medians(samples, batches),
                               sm_clock_mhz=_clock_median(clocks))
    unsync, last_set = _unsynchronised(call, len(rot.sets), gpu_ms)  # in the last turn: nothing else on the device
    slots.leave()
    return TimingRun(stats, outputs, unsync, last_set=last_set, samples_ms=samples, batches=batches)


def host_loop_ms(loops: int = 3, n: int = 100_000) -> float:
    """Median time (ms) of a fixed pure-Python loop that touches no device: the host's own speed.

    An eager call that waits for the host inside (it cannot be captured) takes as long as the host
    makes it; on a shared machine the host's own speed was seen to change twofold within a minute,
    so the note of such a timing gives this loop's time before and after it."""
    times = []
    for _ in range(loops):
        t0 = perf_counter()
        acc = 0
        for i in range(n):
            acc += i & 7
        times.append((perf_counter() - t0) * 1e3)
    return median(times)


def _host_ms(fn: Callable[[], Any]) -> float:
    """Median host enqueue ms of ``fn`` over three calls, the device synchronised between them."""
    times = []
    for _ in range(3):
        _synchronize()
        t0 = perf_counter()
        fn()
        times.append((perf_counter() - t0) * 1e3)
    _synchronize()
    return median(times)


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
            with _gpulock.exclusive() if not plan.turns else contextlib.nullcontext():
                return _time_cuda(call, rot, plan, outputs, module)
        return _time_host(call, rot, plan, outputs)
