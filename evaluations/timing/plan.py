"""The timing's plan: the constants that configure timing, ``TimingPlan`` (the stopping rule and method of one
timing, overridable by job options) and ``TimingRun`` (a timing and what the integrity checks need from it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas import TimingStats, pinned

from ..core import Overrides

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
four leave a place's luck in the mean of some problems (a 1.2 ms transposed convolution 2.7% apart)."""
PLACEMENT_BYTES_BUDGET = 1 << 30
"""Device memory spent on the extra copies of the weights; models with larger weights rotate over fewer places."""
SHORT_GRAPH_MS = 0.1
"""Device time per call under which calls are timed as CUDA graph replays (``TimingPlan.graph_short``):
eager calls of a few microseconds moved 1-4% between timings of the very same model, graph replays
of the same calls far less."""
CLOCK_PROBE_CYCLES = 500_000
"""Device cycles spun after each batch of samples to read the SM clock (~0.25 ms at 2 GHz; the
event overhead of a few microseconds makes the reading ~1% low, the same for every timing)."""
PROBE_SPIN_MS = 2.0
"""Device spin before each probe call, so its device time excludes the host's launch gap."""


_PIN = pinned("verified").timing
"""The timing the verified protocol's newest version pins (``schemas.PROTOCOLS``): the plan's defaults."""


def _pinned(value: float | None, name: str) -> float:
    """A figure of the verified timing the table must pin (its type allows ``None`` for the standard protocol's)."""
    if value is None:
        raise ValueError(f"the protocols' table pins no timing.{name} for the verified protocol")
    return value


@dataclass(frozen=True)
class TimingPlan:
    """Stopping rule and warm-up of one timing."""

    warmup_s: float = 0.2
    warmup_calls: int = _PIN.warmup_calls
    """Fewest warm-up calls, beside the warm-up time (and one call on every input set and place of the weights)."""
    min_calls: int = _PIN.timed_calls
    ci_target_rel: float = _pinned(_PIN.ci_target_rel, "ci_target_rel")
    time_cap_s: float = _pinned(_PIN.time_cap_s, "time_cap_s")
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
    one graph), and every graph timing captures one graph per place of the weights. ``False``: graphs
    only for host-bound calls, captured at the module's own place (a recipe ``benchmarks/self_speedup.py
    --with-previous`` measures beside the protocol's)."""
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
    def of(cls, options: dict[str, Any], overrides: Overrides | None = None) -> TimingPlan:
        """The protocol's plan, with any field overridden by a job option of the same name (the runner's pacing, the
        tests' shorter timings), then by the run's overrides: ``warmup_calls``, and ``timed_calls`` as ``min_calls``
        (``kverdict eval --warmup-calls/--timed-calls``)."""
        base = cls()
        merged = {k: v for k, v in options.items() if k in base.__dataclass_fields__}
        given = overrides.given() if overrides is not None else {}
        if "warmup_calls" in given:
            merged["warmup_calls"] = given["warmup_calls"]
        if "timed_calls" in given:
            merged["min_calls"] = given["timed_calls"]
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
    latest_output: Any = None
    """The output of the most recent call, on ``last_set``, where that call came after the timed ones (the check for
    work outside the timed stream, on the GPU); ``None`` where the most recent call is a timed one
    (``last_outputs[last_set]``)."""
    graph_unsafe: str | None = None
    """Where graph replays were wanted but a captured graph did not do the call's work as an eager call does
    (``graphs.work_outside_capture``): the evidence, and eager calls were timed; ``None`` otherwise."""
    samples_ms: list[float] = field(default_factory=list)
    """Every sample (ms per call), in the order taken."""
    batches: list[int] = field(default_factory=list)
    """The batch each sample of ``samples_ms`` belongs to (in turns: the round, the same for every timing of it)."""

    @property
    def host_ms_per_call(self) -> float | None:
        """Host enqueue time of one eager call (ms; ``None`` on the CPU), as the stats record it."""
        return self.stats.host_enqueue_ms

