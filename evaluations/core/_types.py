"""Plain data passed between the loader, the runner, the worker processes and the protocols.

Everything here is picklable and torch-free, so it crosses a ``spawn`` process boundary and the
site build can import it without torch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

Counted = Literal["hand", "automatic"]
"""How a problem's FLOPs and bytes were found: written by hand from its sizes, or counted by running it."""


def sha256_text(text: str) -> str:
    """sha256 of a source text, as recorded in ``problem.source_sha256`` and ``kernel.sha256``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


AlgorithmFlags = tuple[tuple[str, bool], ...]
"""(flag under ``torch.backends``, value) pairs, e.g. ``(("cudnn.benchmark", True),)``, in a fixed order."""


@dataclass(frozen=True)
class ProblemMeta:
    """Metadata a problem carries beside its KernelBench source (the own suite's ``meta.json``, ``suite._meta``)."""

    tags: tuple[str, ...] = ()
    dtype: str = "float32"
    flops: float | None = None
    """Analytic floating-point operations of one forward call."""
    min_bytes: float | None = None
    """Fewest bytes one forward call must move (each input read once, each output written once)."""
    counted: Counted | None = None
    """How ``flops`` and ``min_bytes`` were found (``None`` while there are none)."""
    not_counted: str | None = None
    """Why an automatic count gave no figures (``None`` when counted or never tried)."""


@dataclass(frozen=True)
class Origin:
    """Where a source text came from: a repository path, or a public dataset URL + commit + path/row."""

    path: str
    url: str | None = None
    commit: str | None = None
    row: int | None = None


@dataclass(frozen=True)
class Problem:
    """One KernelBench-format problem: ``Model``, ``get_inputs``, ``get_init_inputs``."""

    suite: str
    level: int
    id: int
    name: str
    source: str
    origin: Origin
    meta: ProblemMeta = field(default_factory=ProblemMeta)
    file_name: str | None = None
    """File name the problem was loaded from (``19_ReLU.py``); candidates in a folder match it."""

    @property
    def sha256(self) -> str:
        return sha256_text(self.source)

    @property
    def key(self) -> str:
        """Identity of the problem inside a run: ``suite/level/id``."""
        return f"{self.suite}/{self.level}/{self.id}"


@dataclass(frozen=True)
class Claim:
    """The source dataset's own claim for a kernel, as its row states it (``schemas.Claimed`` in records)."""

    source_field: str
    """Field of the row the speedup came from (dotted when nested, ``claimed.speedup``)."""
    speedup: float | None = None
    """The claimed speedup against the source's own baseline."""
    baseline: str | None = None
    """What the source compared against (``eager``, ``torch.compile``)."""
    ms: float | None = None
    """The source's own time of the kernel per call, milliseconds."""


@dataclass(frozen=True)
class Candidate:
    """One candidate kernel (a source defining ``ModelNew``) for one problem."""

    problem_key: str
    model: str
    sample: int
    label: str
    source: str
    origin: Origin
    provider: str | None = None
    claimed: Claim | None = None
    """What the kernel's source dataset claimed for it (public bundles only)."""

    @property
    def sha256(self) -> str:
        return sha256_text(self.source)


OVERRIDDEN = ("trials", "warmup_calls", "timed_calls")
"""The counts a run may ask for in place of its protocol's (:class:`Overrides`), never through ``Job.options``."""


@dataclass(frozen=True)
class Overrides:
    """Counts a run uses in place of its protocol's (``kverdict eval --trials/--warmup-calls/--timed-calls``). Every
    protocol applies each one it is given, and its records' ``protocol`` block says so (``run.effective_info``);
    a record made with any of them is not the protocol's pinned one (``kverdict validate`` says which differ)."""

    trials: int | None = None
    """Correctness trials: the standard protocol's first N seeds; under the verified protocol, N fresh seeds for
    each hidden distribution."""
    warmup_calls: int | None = None
    """Untimed calls before timing (the verified protocol warms up for its time and at least this many calls)."""
    timed_calls: int | None = None
    """Timed calls (under the verified protocol, the fewest before its confidence target may stop it)."""

    def __post_init__(self) -> None:
        for name, least in (("trials", 1), ("warmup_calls", 0), ("timed_calls", 1)):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < least):
                raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")

    def given(self) -> dict[str, int]:
        """The overrides that are set, by name."""
        return {name: getattr(self, name) for name in OVERRIDDEN if getattr(self, name) is not None}


@dataclass(frozen=True)
class Job:
    """What a worker process needs to evaluate a candidate, or to measure a baseline (``candidate`` None)."""

    problem: Problem
    protocol: str
    device: str
    """``cuda`` or ``cpu``."""
    candidate: Candidate | None = None
    baseline_kind: str | None = None
    """For baseline jobs: ``eager_fp32``, ``eager_tf32`` or ``compile``."""
    build_dir: str | None = None
    """Folder for compiled extensions (shared cache, keyed by source hash)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The runner's and the tests' knobs of one job (the evidence file, seeds, a timing's pacing and turns, shorter
    timings in tests); the counts a user overrides are :attr:`overrides`, never here."""
    algorithm_flags: AlgorithmFlags = ()
    """For baseline jobs: algorithm-choice flags (``torch.backends.<name>``) set before the model is built, those a
    candidate set (``CandidateOutcome.algorithm_flags``); empty for PyTorch's defaults."""
    overrides: Overrides = field(default_factory=Overrides)
    """Counts used in place of the protocol's."""

    def __post_init__(self) -> None:
        misplaced = [name for name in OVERRIDDEN if name in self.options]
        if misplaced:
            raise ValueError(f"{', '.join(misplaced)} must be given as Overrides, not as job options")
