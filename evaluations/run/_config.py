"""How a run is set up (:class:`RunConfig`, :func:`default_prewarm`) and what it reports (:class:`RunSummary`)."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemas
from schemas import BaselineRecord, Record

from ..core import OVERRIDDEN, Overrides
from ._gpubusy import BusySampler
from ._phases import PhaseLog

DEFAULT_BUILD_TIMEOUT_S = 900.0
"""Deadline of one job of the prepare stage (a candidate's builds and its warm-up call)."""
PREWARM_MIN_CPUS = 4
"""Fewest CPU cores on which spare workers may import ahead (they must not compete with timing)."""


def default_prewarm(device: str, requested: bool, concurrent: int = 1) -> bool:
    """Whether spare workers import ahead: on CUDA (device-timed) with cores to spare, when asked for or when
    several evaluations are in flight anyway (their start-up and host work already run beside every timing).

    One at a time it stays off unless requested. On the CPU the host clock times the calls and torch uses
    every core, so nothing may run beside them.
    """
    return (requested or concurrent > 1) and device == "cuda" and (os.cpu_count() or 1) >= PREWARM_MIN_CPUS


@dataclass(frozen=True)
class RunConfig:
    """How to run: where records go, which protocols, device, deadlines, parallelism, knobs."""

    out_dir: Path
    protocols: tuple[str, ...]
    device: str
    timeout_s: float = 300.0
    jobs: int = 1
    build_dir: Path = Path(".kv-cache/build")
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    options: dict[str, Any] = field(default_factory=dict)
    """Knobs given to every job (tests: shorter timings); the counts a user overrides are :attr:`overrides`."""
    overrides: Overrides = field(default_factory=Overrides)
    """Counts used in place of the protocols' (``--trials``, ``--warmup-calls``, ``--timed-calls``), applied by
    every protocol and recorded in each record's protocol block."""
    progress: bool = True
    prewarm: bool | None = None
    """Keep one spare worker importing torch and the protocols ahead of the next isolated call (each worker
    still serves exactly one job). True/False force it; None: :func:`default_prewarm`'s choice."""
    concurrent: int = 1
    """Evaluations in flight at once. Above 1 on CUDA, workers share the GPU through ``gpulock``: every
    timing holds the device alone; start-up, loading, correctness and integrity work overlap."""
    prepare_ahead: bool | None = None
    """Build the next chunk's extensions while this chunk is evaluated, and a chunk's extensions that are not built
    yet (the first chunk's) while its baselines are timed (``Runner.beside``). None: on CUDA with
    several evaluations in flight, where workers share the device through ``gpulock`` and builds let go of it."""
    in_turns: bool = False
    """Time every candidate of a protocol that takes turns (verified) in turns with fresh timings of its problem's
    baselines (``Runner.timed_in_turns``); otherwise only where that protocol asks for it (a host-bound eager
    baseline)."""

    def __post_init__(self) -> None:
        misplaced = [name for name in OVERRIDDEN if name in self.options]
        if misplaced:
            raise ValueError(f"{', '.join(misplaced)} must be given as overrides, not as options")


@dataclass
class RunSummary:
    """What a run did: records written, records skipped as already done, and every record's status."""

    written: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    reference_failures: dict[str, str] = field(default_factory=dict)
    """Problem key -> why its reference could not be timed (its candidates get no record)."""
    phases: PhaseLog = field(default_factory=PhaseLog)
    """Every isolated job and record write of the run, by phase, with its wall time."""
    gpu: BusySampler | None = None
    """The GPU's busy share over the run (CUDA runs only)."""
    tampered: list[Path] = field(default_factory=list)
    """Records whose file differs from the digest the manifest lists: changed after they were written, redone."""
    lost: dict[str, str] = field(default_factory=dict)
    """Problem key -> why its batch did not finish (its lane or cluster task failed every go; re-run to resume)."""

    def absorb(self, written: list[tuple[Path, Record | BaselineRecord]], skipped: list[Path], tampered: list[Path],
               reference_failures: dict[str, str]) -> None:
        """Add what a batch run elsewhere (a lane, a cluster task) finished: the records it wrote, each with its
        parsed content (a baseline is a file of the run, not counted, as in a run in this process), and those it
        skipped as finished, read back from their files."""
        for path, record in written:
            if isinstance(record, Record):
                self.written.append(path)
                self.records.append(record)
        for path in skipped:
            self.skipped.append(path)
            record = schemas.load_record(path)
            if isinstance(record, Record):
                self.records.append(record)
        self.tampered.extend(tampered)
        self.reference_failures.update(reference_failures)

    def status_counts(self, protocol: str) -> Counter[str]:
        """How many records of ``protocol`` have each status."""
        return Counter(r.status for r in self.records if r.protocol.name == protocol)

    def geomean_speedup(self, protocol: str) -> float | None:
        """Geometric mean of ``vs_eager`` over correct records of ``protocol``."""
        values = [r.speedup.vs_eager for r in self.records
                  if r.protocol.name == protocol and r.status == "correct" and r.speedup.vs_eager]
        return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else None


def write_stats(path: Path, summary: Any) -> None:
    """The run's phases and GPU samples as JSON, written atomically."""
    data = {**summary.phases.as_json(), "gpu_samples": summary.gpu.samples if summary.gpu else [],
            "gpu_unavailable": summary.gpu.unavailable if summary.gpu else "not a CUDA run",
            "written": len(summary.written), "skipped": len(summary.skipped)}
    schemas.write_text(path, json.dumps(data, indent=1))
