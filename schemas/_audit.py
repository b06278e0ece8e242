"""Pydantic v2 model of a problem audit: which problems of a suite are degenerate, and why.

An audit report lives at ``records/_audits/<hardware>/<suite>.json``. The site shows each problem's
findings on its page and leaves problems with ``excluded`` set out of every aggregate, naming the
reason.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

AUDIT_SCHEMA_VERSION = "1.0"
"""Version of the audit report layout."""

FindingCode = Literal[
    "zero-output",
    "near-zero-output",
    "constant-output",
    "uniform-output",
    "ignores-input",
    "ignores-weights",
    "nondeterministic",
    "nondeterministic-bitwise",
    "non-finite-output",
    "launch-bound",
    "time-not-scaling",
    "reference-error",
    "reference-timeout",
]
"""Closed set of audit findings (see ``evaluations._audit_checks`` for what each one means)."""

FINDING_CODES: tuple[str, ...] = FindingCode.__args__  # type: ignore[attr-defined]

Severity = Literal["exclude", "warn"]
"""``exclude``: the problem cannot measure a kernel and leaves the aggregates; ``warn``: shown only."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)


class AuditFinding(_Strict):
    """One thing the audit observed about a problem's reference."""

    code: FindingCode
    """What kind of degeneracy, e.g. ``zero-output``."""
    severity: Severity
    """Whether the finding excludes the problem from aggregates."""
    message: str = Field(min_length=1, max_length=500)
    """One sentence a reader understands, e.g. ``output is exactly zero for every input draw``."""
    evidence: str | None = Field(default=None, max_length=2000)
    """Measured values behind the finding, e.g. ``max |out| = 0.0 over 4 draws``."""


class ProblemAudit(_Strict):
    """The audit of one problem."""

    key: str = Field(min_length=1, max_length=200)
    """Identity inside the suite: ``suite/level/id``."""
    name: str = Field(min_length=1, max_length=200)
    """Problem name, usually its file name without ``.py``."""
    level: int = Field(ge=1, le=10)
    """Level inside the suite."""
    id: int = Field(ge=0)
    """Problem number inside its level."""
    source_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """sha256 of the problem source that was audited."""
    findings: list[AuditFinding] = Field(default_factory=list)
    """Everything observed, in the order checked; empty for a sound problem."""
    excluded: bool = False
    """True when any finding has severity ``exclude``."""
    reason: str | None = Field(default=None, max_length=1000)
    """Why the problem is excluded (the excluding findings' messages), ``None`` when it is not."""
    eager_ms: float | None = None
    """Median eager float32 time of one reference call, milliseconds (``None`` = not measured)."""
    output_shapes: list[list[int]] = Field(default_factory=list)
    """Shape of each output tensor of the reference."""

    @field_validator("eager_ms")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and (not math.isfinite(v) or v < 0):
            raise ValueError("eager_ms must be a finite, non-negative number")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ProblemAudit:
        should = any(f.severity == "exclude" for f in self.findings)
        if self.excluded != should:
            raise ValueError("excluded must be true exactly when a finding has severity 'exclude'")
        if self.excluded and not self.reason:
            raise ValueError("an excluded problem needs a reason")
        return self


class AuditReport(_Strict):
    """The audit of every problem of one suite on one hardware."""

    schema_version: Literal["1.0"] = AUDIT_SCHEMA_VERSION
    """Version of this layout."""
    suite: str = Field(min_length=1, max_length=64)
    """Suite audited, e.g. ``kernelbench-v0`` or ``kernelverdict``."""
    source: str = Field(min_length=1, max_length=400)
    """Where the problems were read from (repository-relative path or dataset name)."""
    hardware: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    """Hardware slug, e.g. ``h200`` or ``cpu``."""
    device_name: str = Field(min_length=1, max_length=120)
    """Device the references ran on."""
    torch: str
    """torch version."""
    harness_version: str
    """KernelVerdict version that ran the audit."""
    timestamp: datetime
    """When the audit finished (UTC)."""
    atol: float = Field(gt=0)
    """Tolerance under which an output counts as near zero, and differences count as real."""
    draws: int = Field(ge=1)
    """Input draws per problem."""
    timing_checked: bool
    """Whether launch-overhead findings were checked (only on a GPU)."""
    notes: list[str] = Field(default_factory=list)
    """Remarks on the run, e.g. why a check was skipped."""
    problems: list[ProblemAudit]
    """One entry per problem, in suite order."""

    @property
    def excluded(self) -> list[ProblemAudit]:
        """Problems that leave the aggregates."""
        return [p for p in self.problems if p.excluded]
