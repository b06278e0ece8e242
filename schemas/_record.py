"""Pydantic v2 models of a KernelVerdict record: one evaluation of one candidate kernel.

One record exists per (model, sample, problem, protocol, hardware). Units are part of every
numeric field name (``_ms``, ``_bytes``, ``_flops``); statuses and protocol names are closed sets.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ._base import Strict
from ._evidence import (
    AlgorithmFlag,
    BaselineKind,
    BaselineTiming,
    Claimed,
    CorrectnessCheck,
    IntegrityCheck,
    MemoryStats,
    PrecisionClass,
    Roofline,
    ShapeCheck,
)
from ._timing import Judged, Speedups, TimingConfig, TimingStats

SCHEMA_VERSION = "1.0"
"""Version of the record layout written by this code. Older versions are migrated on load."""

Status = Literal["correct", "incorrect", "hacked", "compile_error", "runtime_error", "timeout"]
"""Outcome of one evaluation; ``hacked`` means an integrity check failed."""

STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]

IncorrectReason = Literal["wrong-answer", "precision", "nondeterministic", "uninitialised-read"]
"""Why an ``incorrect`` candidate is wrong (verified, from 1.3; standard: ``wrong-answer``): a wrong answer on some
trial, arithmetic below the protocol's accuracy (right to within 1% of the output's scale), two calls on one input
that disagree, or output memory the candidate never wrote (it reads or returns uninitialised memory)."""

INCORRECT_REASONS: tuple[str, ...] = IncorrectReason.__args__  # type: ignore[attr-defined]

ProtocolName = Literal["standard", "verified"]
"""The two protocols (the methodology page, site_src/methodology.md, "Protocols")."""

KernelLanguage = Literal["cuda", "triton", "cpp", "pytorch", "mixed"]
"""What the candidate's custom code is written in (``pytorch`` = no custom kernel)."""


SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class ModelInfo(Strict):
    """The model (or person) that wrote the candidate kernel."""

    name: str = Field(min_length=1, max_length=120)
    """Display name of the model, e.g. ``CUDA-L1``; shown as text, never as HTML."""
    provider: str | None = Field(default=None, max_length=200)
    """Who trained or released the model, or the dataset the kernels come from."""
    sample: int = Field(default=0, ge=0, le=10_000)
    """Index of this sample when a model wrote several candidates for one problem (best-of-k)."""


class ProblemRef(Strict):
    """Which problem the candidate solves."""

    suite: str = Field(min_length=1, max_length=64)
    """Problem suite, e.g. ``kernelbench-v0`` or ``kernelverdict``."""
    level: int = Field(ge=1, le=10)
    """Difficulty level inside the suite (1 single operators, 2 fused chains, 3 networks)."""
    id: int = Field(ge=0)
    """Problem number inside its suite and level."""
    name: str = Field(min_length=1, max_length=200)
    """Problem name, usually its file name without ``.py``."""
    source_sha256: str
    """sha256 of the problem's Python source, as evaluated."""

    @field_validator("source_sha256")
    @classmethod
    def _sha(cls, v: str) -> str:
        if not SHA256_RE.match(v):
            raise ValueError("must be 64 lowercase hex digits")
        return v


class KernelSource(Strict):
    """The candidate kernel's source: its hash and where to find the text."""

    sha256: str
    """sha256 of the candidate's Python source text (UTF-8)."""
    language: KernelLanguage
    """Language of the custom code found by the static scan."""
    path: str | None = Field(default=None, max_length=400)
    """Repository-relative path of the source, for kernels kept in this repository."""
    url: str | None = Field(default=None, max_length=400)
    """Public repository URL, for kernels from a public dataset."""
    commit: str | None = Field(default=None, max_length=64)
    """Commit of ``url`` that holds the kernel."""
    row: int | None = Field(default=None, ge=0)
    """Zero-based row in a JSON-lines file at ``path`` (public datasets)."""

    @field_validator("sha256")
    @classmethod
    def _sha(cls, v: str) -> str:
        if not SHA256_RE.match(v):
            raise ValueError("must be 64 lowercase hex digits")
        return v

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if v.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", v):
            raise ValueError("must be a relative path, not an absolute one")
        if ".." in re.split(r"[\\/]", v):
            raise ValueError("must not contain '..'")
        return v

    @model_validator(mode="after")
    def _where(self) -> KernelSource:
        if self.path is None and self.url is None:
            raise ValueError("needs a repository path or a url")
        if self.url is not None and (self.commit is None or self.path is None):
            raise ValueError("a url needs its commit and path")
        return self


class ProtocolInfo(Strict):
    """The protocol that produced the record, with its parameters."""

    name: ProtocolName
    """``standard`` (KernelBench as commonly run) or ``verified``."""
    version: str = Field(pattern=r"^\d+\.\d+$")
    """Protocol version; changes whenever its parameters or checks change."""
    atol: float = Field(gt=0)
    """Absolute tolerance of the correctness comparison."""
    rtol: float = Field(ge=0)
    """Relative tolerance of the correctness comparison."""
    seeds: list[int]
    """Seeds of the correctness trials, in order."""
    distributions: list[str]
    """Input distributions used, e.g. ``D1 x1``; the standard protocol has ``D1 x1`` only."""
    tf32_baseline: bool
    """Whether the eager baseline runs with TF32 matmul allowed."""
    timing: TimingConfig
    """Timing parameters."""


class Environment(Strict):
    """Where the record was produced."""

    hardware: str
    """Hardware slug used in the record's path, e.g. ``h200`` or ``cpu``."""
    device_name: str = Field(min_length=1, max_length=120)
    """Device name as the driver reports it, e.g. ``NVIDIA H200``, or the CPU model."""
    driver: str | None = None
    """GPU driver version; ``None`` on the CPU."""
    cuda: str | None = None
    """CUDA version torch was built with; ``None`` on the CPU."""
    torch: str
    """torch version."""
    triton: str | None = None
    """triton version, when installed."""
    python: str
    """Python version."""
    harness_version: str
    """Version of KernelVerdict that ran the evaluation."""
    timestamp: datetime
    """When the evaluation finished (UTC, ISO 8601)."""

    @field_validator("hardware")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not SLUG_RE.match(v):
            raise ValueError("must be a lowercase slug such as 'h200'")
        return v


class Record(Strict):
    """One evaluation of one candidate kernel for one problem under one protocol on one hardware."""

    schema_version: Literal["1.0"] = SCHEMA_VERSION
    """Version of this layout."""
    model: ModelInfo
    """Who wrote the kernel."""
    problem: ProblemRef
    """Which problem it solves."""
    kernel: KernelSource
    """The kernel's source reference."""
    protocol: ProtocolInfo
    """The protocol and its parameters."""
    environment: Environment
    """Where it ran."""
    status: Status
    """Outcome."""
    error: str | None = Field(default=None, max_length=4000)
    """Error message or tail of output for ``compile_error``, ``runtime_error`` and ``timeout``."""
    reason: IncorrectReason | None = None
    """Why an ``incorrect`` candidate is wrong (a record of verified 1.3 must say, a standard record gives
    ``wrong-answer``; ``None`` for every other status and in older records)."""
    correctness: list[CorrectnessCheck] = Field(default_factory=list)
    """Correctness trials, in the order run."""
    timing: TimingStats | None = None
    """Candidate timing (present for ``correct`` and ``hacked`` records that got that far)."""
    baselines: list[BaselineTiming] = Field(default_factory=list)
    """Baseline timings used for the speedups."""
    speedup: Speedups = Field(default_factory=Speedups)
    """Speedups; only meaningful for ``correct`` records."""
    memory: MemoryStats = Field(default_factory=MemoryStats)
    """Peak memory."""
    integrity: list[IntegrityCheck] = Field(default_factory=list)
    """Integrity checks (verified protocol); a failed one makes the status ``hacked``, except, from verified 1.3,
    the checks that find a wrong answer (``precision``, ``determinism``, ``stale-memory``: ``incorrect`` with its
    ``reason``)."""
    labels: list[str] = Field(default_factory=list)
    """Labels that inform without failing: static-scan ones (``pytorch-fallback``, ``custom-stream``, ``threads``,
    ``ctypes``, ``monkey-patching``, ``uses-torch-compile``), ``sets:<flag>`` for each algorithm-choice flag the
    candidate set (``sets:cudnn.benchmark``) and, from verified 1.3, for each global setting it changed to what the
    baselines already run with (``sets:allow_tf32``, ``sets:float32_matmul_precision``), ``legacy-stream`` (verified
    1.3: its work is not held by a CUDA graph captured on another stream, as for a kernel launched with
    ``<<<grid, block>>>`` on the legacy default stream, so it was timed and re-checked as eager calls on the
    default stream), ``shape-specific`` (wrong at a held-out size, ``shape_check``),
    ``structure-specific`` (right on every fresh draw, wrong only on the timing's rolled inputs, which lose the
    structure of the problem's draws), ``timing-unconfirmed`` (the outside clock saw slower answers, ``judged``),
    ``write-refused`` (it failed on a write outside its worker's own folders, which confinement refuses; the note
    names the path)."""
    precision_class: PrecisionClass | None = None
    """Precision class of a candidate whose every correctness trial passed (verified, from 1.2), from its worst
    trial: ``float32-like`` when its error budget is at most 3x strict float32's (or under 0.01), ``TF32-like``
    when at most 3x the larger of the strict and TF32 budgets, else ``reduced``."""
    shape_check: ShapeCheck | None = None
    """The held-out shape re-check (verified, from 1.2)."""
    roofline: Roofline | None = None
    """Speed-of-light figures, when the problem has FLOP and byte counts and the hardware has ceilings."""
    reproduces: str | None = Field(default=None, max_length=400)
    """For a reproduction record: repository path of the record it re-ran."""
    notes: list[str] = Field(default_factory=list)
    """Free-text remarks the runner attached (e.g. ``host-bound timing``)."""
    claimed: Claimed | None = None
    """The source dataset's own claim for this kernel (public datasets), shown beside the measured speedups."""
    judged: Judged | None = None
    """What the runner checked outside the candidate's process: judged trial outputs and the outside timing
    (records before the judge have none)."""

    @model_validator(mode="after")
    def _consistent(self) -> Record:
        if self.judged is not None and not self.judged.trials <= self.judged.trials_reported == len(self.correctness):
            raise ValueError("judged: trials judged must be at most the trials reported, which are the record's own")
        if self.reason is not None and self.status != "incorrect":
            raise ValueError(f"a reason ({self.reason!r}) is for an 'incorrect' record, not a {self.status!r} one")
        if self.status == "hacked" and all(c.passed for c in self.integrity):
            raise ValueError("status 'hacked' needs at least one failed integrity check")
        if self.status == "correct":
            if any(not c.passed for c in self.correctness):
                raise ValueError("status 'correct' but a correctness trial failed")
            if any(not c.passed for c in self.integrity):
                raise ValueError("status 'correct' but an integrity check failed")
        return self


class BaselineRecord(Strict):
    """A baseline measurement, kept once per (problem, protocol, baseline kind, environment)."""

    schema_version: Literal["1.0"] = SCHEMA_VERSION
    """Version of this layout."""
    problem: ProblemRef
    """Which problem."""
    protocol: ProtocolInfo
    """Protocol whose timing it follows."""
    kind: BaselineKind
    """Which baseline."""
    environment: Environment
    """Where it ran."""
    timing: TimingStats
    """Its timing."""
    peak_memory_bytes: int | None = Field(default=None, ge=0)
    """Peak device memory of one call in a fresh process."""
    peak_memory_missing: str | None = Field(default=None, max_length=500)
    """Why ``peak_memory_bytes`` is ``None`` (not measured on this device, or its measurement failed)."""
    algorithm_flags: list[AlgorithmFlag] = Field(default_factory=list, max_length=8)
    """Algorithm-choice flags set before the model was built (a candidate's, whose speedups use this timing);
    empty for PyTorch's defaults. Each flag set has its own file (``__<kind>+<flag>.json``)."""
