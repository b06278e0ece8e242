"""Where a run's wall time goes: one span per isolated job or write, grouped by phase.

Phases overlap in a concurrent run, so each phase reports both the wall time it was in progress (the
union of its spans) and the worker-seconds it used (their sum). The GPU's busy share over each phase's
span comes from :mod:`evaluations.run._gpubusy`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Literal

Phase = Literal["build", "baseline", "candidate", "judge", "memory", "write"]
"""Extension builds, baseline timings, candidate evaluations, peak-memory measurements, record writing."""
PHASES: tuple[Phase, ...] = ("build", "baseline", "candidate", "judge", "memory", "write")


@dataclass(frozen=True)
class Span:
    """One job of a phase: seconds since the run's start, and what it was."""

    phase: Phase
    label: str
    start_s: float
    end_s: float
    ok: bool = True
    timed_ms: float | None = None
    """Device time the job's timing itself took (calls x mean time), where it timed something."""
    waited_s: float = 0.0
    """Seconds of it the job's worker spent waiting for the shared GPU lock (its own timings' turn, or others')."""
    status: str | None = None
    """How the job ended: a candidate's reported status (``correct``, ``runtime_error``, ...), ``ok`` for another job
    that returned, or ``failed:<kind>`` for a worker that returned nothing (``failed:exception``, ``failed:timeout``)."""
    error: str | None = None
    """The start of a failed baseline's error (PyTorch's own code; a candidate's text is kept only in its record)."""
    admitted_s: float = 0.0
    """Seconds the job waited, before its worker started, for room on the device (admission by memory, several at
    once on a GPU): part of its wall time."""

    @property
    def wall_s(self) -> float:
        """How long the job took."""
        return self.end_s - self.start_s


@dataclass(frozen=True)
class PhaseTotal:
    """One phase's totals over a run."""

    phase: Phase
    jobs: int
    wall_s: float
    """Seconds during which at least one job of the phase was in progress."""
    worker_s: float
    """Sum of the jobs' own seconds."""
    first_s: float | None
    last_s: float | None
    waited_s: float = 0.0
    """Sum of the seconds the jobs' workers waited for the shared GPU lock (part of ``worker_s``)."""
    admitted_s: float = 0.0
    """Sum of the seconds the jobs waited for room on the device before their workers started (part of ``worker_s``)."""


def union_s(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of ``(start, end)`` intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


@dataclass
class PhaseLog:
    """Thread-safe log of a run's spans, timed from its creation."""

    origin: float = field(default_factory=time.monotonic)
    spans: list[Span] = field(default_factory=list)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def now(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.origin

    def add(self, span: Span) -> None:
        """Keep a finished span."""
        with self._guard:
            self.spans.append(span)

    @contextmanager
    def span(self, phase: Phase, label: str) -> Iterator[None]:
        """Log the enclosed work as one span of ``phase``."""
        start = self.now()
        try:
            yield
        finally:
            self.add(Span(phase, label, start, self.now()))

    def totals(self) -> list[PhaseTotal]:
        """Per phase with at least one job: job count, wall seconds in progress, worker-seconds."""
        with self._guard:
            spans = list(self.spans)
        rows = []
        for phase in PHASES:
            mine = [s for s in spans if s.phase == phase]
            if mine:
                rows.append(PhaseTotal(phase, len(mine), union_s([(s.start_s, s.end_s) for s in mine]),
                                       sum(s.wall_s for s in mine), min(s.start_s for s in mine),
                                       max(s.end_s for s in mine), sum(s.waited_s for s in mine),
                                       sum(s.admitted_s for s in mine)))
        return rows

    def as_json(self) -> dict[str, object]:
        """Spans and totals as plain data (``kverdict eval --stats-json``)."""
        with self._guard:
            spans = [asdict(s) for s in self.spans]
        return {"spans": spans, "totals": [asdict(t) for t in self.totals()]}
