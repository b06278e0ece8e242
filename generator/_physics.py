"""The physical floor of a record's time: writing its own output at the hardware's measured copy bandwidth.

Whatever a kernel does, one call must write its output to device memory. A record whose time is
below ``output bytes / copy bandwidth`` (with a margin, :data:`BANDWIDTH_SLACK`) is physically
impossible under any protocol: the timing missed the work (a cached result, work on another
stream, a stale buffer). Output bytes are read without torch from committed data: the output shapes
that the hardware's audit of the suite recorded, times the element size the suite list gives
(``_suites``); the bandwidth is the copy rate of ``evaluations/data/ceilings/<hardware>.json``.
Where any of these is missing the record is "not checked", and its page says why.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from schemas import AuditReport

from ._suites import Suites

CEILINGS = Path("evaluations/data/ceilings")
"""Folder of the measured hardware ceilings, relative to the repository root."""
BANDWIDTH_SLACK = 1.5
"""A write may beat the measured copy rate (a benchmark, below the data-sheet peak) by a little; a time is
flagged only when writing the output in it would take more than this many times that rate."""

Verdict = Literal["impossible", "possible", "not-checked"]


@dataclass(frozen=True)
class Ceiling:
    """A hardware's measured copy bandwidth (bytes read + written per second) and the file it comes from."""

    copy_bytes_per_s: float
    source: str


@dataclass(frozen=True)
class OutputSize:
    """One problem's output bytes and how they were found."""

    output_bytes: int
    source_sha256: str | None
    how: str
    """e.g. ``output shape [16384, 16384] × 4 bytes (…), from records/_audits/h200/kernelbench-v0.json``."""


@dataclass(frozen=True)
class Floors:
    """Everything the check needs: per (hardware, suite, level, id) the output size (or why it is
    unknown) and per hardware the copy bandwidth."""

    outputs: dict[tuple[str, str, int, int], OutputSize | str]
    ceilings: dict[str, Ceiling]


@dataclass(frozen=True)
class PhysicsCheck:
    """The verdict on one record's time and the sentence that explains it."""

    verdict: Verdict
    reason: str
    floor_ms: float | None = None
    output_bytes: int | None = None


def read_ceilings(repo_root: Path) -> dict[str, Ceiling]:
    """Copy bandwidth of every hardware with a ceilings file."""
    out = {}
    for path in sorted((repo_root / CEILINGS).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rate = float(data["rates"]["copy_bytes_per_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if math.isfinite(rate) and rate > 0:
            out[path.stem] = Ceiling(rate, f"{CEILINGS.as_posix()}/{path.name}, measured {data.get('date', '?')}")
    return out


def output_sizes(reports: list[tuple[Path, AuditReport]], suites: Suites, shown_root: str = "records") -> dict:
    """Output size (or the reason it is unknown) of every problem an audit lists."""
    out: dict[tuple[str, str, int, int], OutputSize | str] = {}
    for path, report in reports:
        where = f"{shown_root}/_audits/{path.parent.name}/{path.name}"
        for p in report.problems:
            key = (report.hardware, report.suite, p.level, p.id)
            size = suites.element_size(report.suite, p.level, p.id)
            if not p.output_shapes:
                out[key] = f"the audit ({where}) recorded no output shape for this problem"
            elif size is None:
                out[key] = f"no element size is known for suite {report.suite} (generator/data/suites.json)"
            else:
                elements = sum(math.prod(s) for s in p.output_shapes)
                shapes = ", ".join(str(list(s)) for s in p.output_shapes)
                out[key] = OutputSize(elements * size.bytes, p.source_sha256,
                                      f"output shape {shapes} from {where}, {size.bytes} bytes an element: {size.source}")
    return out


def _bytes_text(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def check(floors: Floors, hardware: str, suite: str, level: int, problem_id: int, problem_sha256: str | None,
          cand_ms: float | None) -> PhysicsCheck:
    """Whether a record's time leaves room to write its own output at the measured copy bandwidth."""
    if cand_ms is None:
        return PhysicsCheck("not-checked", "the record has no candidate time")
    ceiling = floors.ceilings.get(hardware)
    if ceiling is None:
        return PhysicsCheck("not-checked", f"no measured copy bandwidth for {hardware} ({CEILINGS.as_posix()}/)")
    size = floors.outputs.get((hardware, suite, level, problem_id))
    if size is None:
        return PhysicsCheck("not-checked", f"the record carries no output bytes, and no {hardware} audit of "
                                           f"{suite} lists this problem's output shapes")
    if isinstance(size, str):
        return PhysicsCheck("not-checked", f"the record carries no output bytes, and {size}")
    if size.source_sha256 and problem_sha256 and size.source_sha256 != problem_sha256:
        return PhysicsCheck("not-checked", "the audit's output shapes belong to another source of this "
                                           "problem (its sha256 differs from the record's)")
    floor_ms = size.output_bytes / ceiling.copy_bytes_per_s * 1e3
    rate = size.output_bytes / (cand_ms / 1e3) if cand_ms > 0 else math.inf
    facts = (f"writing its {_bytes_text(size.output_bytes)} of output takes at least {floor_ms:.4g} ms at {hardware}'s "
             f"measured copy bandwidth of {_bytes_text(ceiling.copy_bytes_per_s)}/s ({ceiling.source}; {size.how})")
    if cand_ms * BANDWIDTH_SLACK < floor_ms:
        return PhysicsCheck("impossible", f"{cand_ms:.4g} ms would need {_bytes_text(rate)}/s, "
                                          f"{rate / ceiling.copy_bytes_per_s:.1f}× the measured bandwidth: {facts}",
                            floor_ms, size.output_bytes)
    return PhysicsCheck("possible", f"{facts}; this time, {cand_ms:.4g} ms, leaves room for it", floor_ms, size.output_bytes)
