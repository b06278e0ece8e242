"""What a protocol hands back to the runner, and how a timing's method paces the timings that follow it.

Outcomes cross a process boundary (pickled through a pipe), so they hold only plain values and
pydantic models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schemas import (
    CorrectnessCheck,
    IncorrectReason,
    IntegrityCheck,
    Judged,
    PrecisionClass,
    ShapeCheck,
    Status,
    TimingStats,
)

from ._types import AlgorithmFlags


@dataclass
class CandidateOutcome:
    """Result of evaluating one candidate under one protocol, produced inside a worker process."""

    status: Status
    error: str | None = None
    reason: IncorrectReason | None = None
    """Why an ``incorrect`` candidate is wrong (``None`` for every other status)."""
    correctness: list[CorrectnessCheck] = field(default_factory=list)
    timing: TimingStats | None = None
    integrity: list[IntegrityCheck] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    peak_memory_bytes: int | None = None
    peak_memory_missing: str | None = None
    """Why ``peak_memory_bytes`` is ``None`` (set by the runner, which measures memory in a worker of its own)."""
    algorithm_flags: AlgorithmFlags = ()
    """Algorithm-choice flags the candidate left changed (verified): its speedups use baselines timed with them."""
    precision_class: PrecisionClass | None = None
    """Precision class from its correctness trials (verified)."""
    shape_check: ShapeCheck | None = None
    """The held-out shape re-check (verified)."""
    judged: Judged | None = None
    """What the runner checked outside the worker (set by the runner, ``_judge.reconcile``)."""


@dataclass
class BaselineOutcome:
    """Result of timing one baseline kind of one problem, produced inside a worker process."""

    kind: str
    timing: TimingStats
    peak_memory_bytes: int | None = None


GRAPH_HOST_MS = 1.0
"""Host enqueue time per call from which a host-bound call is timed as CUDA graph replays."""


def uses_graph(host_ms: float, device_ms: float) -> bool:
    """Whether a call (one per event pair) is timed as CUDA graph replays: its host enqueue time is over
    ``GRAPH_HOST_MS`` and at least half its device time, so eager event times would follow the host."""
    return host_ms >= GRAPH_HOST_MS and host_ms >= 0.5 * device_ms


def host_speed_bound(stats: TimingStats) -> bool:
    """Whether a timing of eager calls follows the host's own speed: a graph was wanted (``uses_graph``) but
    could not hold the call (capture failed, or the work ran outside it). A timing without its host enqueue
    time (older records lack it) counts when it was judged host-bound."""
    if stats.method != "cuda_events":
        return False
    if stats.host_enqueue_ms is None:
        return bool(stats.host_bound)
    return stats.calls_per_sample == 1 and uses_graph(stats.host_enqueue_ms, stats.median_ms)


def pacing_of(stats: TimingStats) -> dict[str, int]:
    """Plan options that make a timing follow ``stats``' method (calls per event pair, and eager calls
    or graph replays): how every other timing of a problem follows its eager baseline's."""
    options = {"calls_per_sample": stats.calls_per_sample} if stats.calls_per_sample else {}
    if stats.method != "host_clock":
        options["cuda_graph"] = 1 if stats.method == "cuda_graph" else -1
    return options
