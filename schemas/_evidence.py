"""Pydantic v2 models of the evidence a record carries: correctness trials, integrity checks, the held-out shape
re-check, baseline timings, peak memory, speed-of-light figures and a public dataset's own claim."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ._base import Strict, finite_non_negative
from ._timing import TimingStats

BaselineKind = Literal["eager_fp32", "eager_tf32", "compile"]
"""Which reference implementation a baseline timing belongs to."""

PrecisionClass = Literal["float32-like", "TF32-like", "reduced"]
"""How precise a passing candidate is next to PyTorch's own float32 arithmetic on the same inputs (verified,
from 1.2): within the noise of strict float32, of TF32, or less precise than TF32 (``reduced``)."""

AlgorithmFlagName = Literal["cudnn.benchmark", "cudnn.deterministic"]
"""Flags of ``torch.backends`` that choose among algorithms for the same arithmetic (verified, from 1.2): a
candidate may set them, and the baselines it is compared with are then timed with the same flags."""


class CorrectnessCheck(Strict):
    """One correctness trial: candidate output against the reference on one input draw."""

    name: str
    """Trial label, e.g. ``trial 0`` or ``D2 x3 seed 7``."""
    distribution: str
    """Input distribution of the trial."""
    seed: int
    """Seed of the inputs."""
    passed: bool
    """Whether the candidate's output was accepted."""
    max_abs_error: float | None = None
    """Largest |out - ref| over elements (``None`` when shapes differ or output is not finite)."""
    error_budget_used: float | None = None
    """max |out - ref| / (atol + rtol |ref|); 1.0 is exactly at the tolerance."""
    fp32_strict_budget_used: float | None = None
    """The same measure for PyTorch float32 with TF32 off, against the float64 reference (verified)."""
    fp32_tf32_budget_used: float | None = None
    """The same measure for PyTorch float32 with TF32 on, against the float64 reference (verified)."""
    message: str | None = Field(default=None, max_length=2000)
    """Why the trial failed, when it did."""


class AlgorithmFlag(Strict):
    """An algorithm-choice flag a candidate set, and the value it set it to."""

    name: AlgorithmFlagName
    """Flag under ``torch.backends``, e.g. ``cudnn.benchmark``."""
    value: bool
    """The value the candidate left it at."""

    @property
    def token(self) -> str:
        """Short form used in labels (``sets:<token>``) and baseline file names: the name, ``-off`` appended for False."""
        return self.name if self.value else f"{self.name}-off"


class ShapeCheck(Strict):
    """Held-out shape (verified, from 1.2): correctness re-checked once with one module-level size of the problem
    changed, reference and candidate built afresh; a failure labels the record ``shape-specific`` and leaves its
    status as it is."""

    constant: str | None = Field(default=None, max_length=80)
    """The problem's module-level constant that was changed (``None`` when no constant could be)."""
    original: int | None = None
    """Its value in the problem."""
    changed: int | None = None
    """The value it was changed to: half, made not a power of two."""
    passed: bool | None = None
    """Whether the candidate was right at the changed size (``None``: not run; ``message`` says why)."""
    error_budget_used: float | None = Field(default=None, ge=0)
    """The candidate's error budget at the changed size, where it produced comparable outputs."""
    message: str | None = Field(default=None, max_length=2000)
    """Why it failed, or why it was not run."""


class BaselineTiming(Strict):
    """A baseline's timing and memory, as used for this record's speedups."""

    kind: BaselineKind
    """Which baseline."""
    timing: TimingStats
    """Its timing under the same protocol."""
    peak_memory_bytes: int | None = Field(default=None, ge=0)
    """Peak device memory of one call in a fresh process (``None`` = not measured)."""
    baseline_id: str | None = Field(default=None, max_length=200)
    """Identifier of the baseline record it was taken from."""
    algorithm_flags: list[AlgorithmFlag] = Field(default_factory=list, max_length=8)
    """Algorithm-choice flags the baseline was timed with: the candidate's own (empty: PyTorch's defaults)."""
    peak_memory_missing: str | None = Field(default=None, max_length=500)
    """Why ``peak_memory_bytes`` is ``None`` (not measured on this device, or its measurement failed)."""


class MemoryStats(Strict):
    """Peak device memory of one call, each measured in a fresh process."""

    candidate_peak_bytes: int | None = Field(default=None, ge=0)
    """Candidate's peak allocated bytes (``None`` = not measured, e.g. on CPU)."""
    baseline_peak_bytes: int | None = Field(default=None, ge=0)
    """Eager baseline's peak allocated bytes."""
    candidate_peak_missing: str | None = Field(default=None, max_length=500)
    """Why ``candidate_peak_bytes`` is ``None`` (e.g. no device allocator on the CPU, a candidate that is not
    correct, a failed measurement); records of verified 1.2 always say."""
    baseline_peak_missing: str | None = Field(default=None, max_length=500)
    """Why ``baseline_peak_bytes`` is ``None``; records of verified 1.2 always say."""


class IntegrityCheck(Strict):
    """One integrity check of the verified protocol."""

    name: str = Field(min_length=1, max_length=80)
    """Check name, e.g. ``hidden-inputs``, ``output-aliasing``, ``timer-patching``."""
    passed: bool
    """False when the check caught a violation."""
    evidence: str | None = Field(default=None, max_length=2000)
    """What was observed, e.g. ``output storage overlaps input 0``."""


class Roofline(Strict):
    """Speed-of-light figures of the problem on this hardware."""

    flops: float = Field(ge=0)
    """Analytic floating-point operations of one call."""
    min_bytes: float = Field(ge=0)
    """Fewest bytes one call must move through device memory."""
    t_sol_ms: float = Field(ge=0)
    """max(flops / rate, bytes / bandwidth), milliseconds."""
    fraction_of_roofline: float | None = Field(default=None, ge=0)
    """t_sol_ms / candidate time (1.0 = at the hardware limit)."""
    sol_score: float | None = None
    """SOL ExecBench score 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL))."""
    ceilings_date: str | None = None
    """Date the hardware ceilings were measured."""
    counted: Literal["hand", "automatic"] | None = None
    """How the problem's FLOPs and bytes were counted: by hand (the own suite) or automatically (FLOP counter on the
    meta device, bytes of inputs, weights and outputs; an automatic FLOP count is the reference's algorithm, so
    the faster-than-physics check uses its bytes only). ``None`` in older records, which do not say."""


class Claimed(Strict):
    """What the kernel's source dataset claimed for it, kept beside our measurements (never used in them)."""

    speedup: float | None = None
    """The source's claimed speedup of the kernel against its own baseline."""
    baseline: str | None = Field(default=None, max_length=80)
    """What the source compared against, e.g. ``eager`` or ``torch.compile``."""
    ms: float | None = None
    """The source's own time of the kernel per call, milliseconds, when it gives one."""
    source_field: str = Field(min_length=1, max_length=120)
    """Which field of the dataset row the speedup came from, e.g. ``score_default`` or ``claimed.speedup``."""

    @model_validator(mode="after")
    def _finite(self) -> Claimed:
        for name in ("speedup", "ms"):
            finite_non_negative(getattr(self, name), name)
        return self
