"""What the judge is asked and what it finds: a worker that never imported the candidate rules on the outputs of
its reported trials (``evaluations.run`` reconciles its findings with the record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas import CorrectnessCheck


@dataclass(frozen=True)
class JudgeRequest:
    """What the judge rules on: the job (problem, protocol, seeds), the trials the worker reported, the file
    of their outputs, and the outside batch (its plan and the worker's fingerprints) when there was one."""

    job: Any
    reported: list[CorrectnessCheck]
    evidence: str
    outer_plan: dict[str, Any] | None = None
    fingerprints: list[float] | None = None


@dataclass
class Ruling:
    """The judge's verdict on one reported trial."""

    name: str
    passed: bool
    budget: float | None = None
    message: str | None = None
    missing: bool = False
    """The trial's outputs never reached the judge (while the file had room for them)."""


@dataclass
class Judgement:
    """What the judge found (made in its own worker); ``error`` when it could not judge at all."""

    rulings: list[Ruling] = field(default_factory=list)
    trials_room: int = 0
    """How many trials' outputs fit the evidence file (``_evidence.EVIDENCE_BYTES``)."""
    seeds_fault: str | None = None
    """The reported trials are not the evaluation's own (other seeds, distributions or count)."""
    outer_mismatch: str | None = None
    """The outside batch's fingerprints differ from the reference's: its answers were wrong."""
    outer_overhead_s: float | None = None
    """What drawing the batch's inputs and fingerprinting its outputs costs, timed by the judge."""
    error: str | None = None
