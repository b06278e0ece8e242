"""Find, validate and flatten record files into one row per record (the ``records`` table of the SQL)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from schemas import MAX_RECORD_BYTES, BaselineRecord, Record, RecordError, load_record

from ._record_pages import write_record_page

SKIPPED_DIRS = ("_baselines", "_audits")
"""Folders under ``records/`` that hold baseline records and audit reports, not Records."""

EAGER_KIND = {"standard": "eager_fp32", "verified": "eager_tf32"}
"""Baseline kind behind ``Speedups.vs_eager`` for each protocol."""

COLUMNS: dict[str, pa.DataType] = {
    "path": pa.string(), "page": pa.string(), "hardware": pa.string(), "device_name": pa.string(),
    "torch": pa.string(), "model": pa.string(), "provider": pa.string(), "sample": pa.int32(),
    "suite": pa.string(), "level": pa.int32(), "problem_id": pa.int32(), "problem_name": pa.string(),
    "problem_sha256": pa.string(), "protocol": pa.string(), "protocol_version": pa.string(),
    "status": pa.string(), "language": pa.string(), "statistic": pa.string(), "cand_ms": pa.float64(),
    "cand_ci_low_ms": pa.float64(), "cand_ci_high_ms": pa.float64(), "base_ms": pa.float64(),
    "vs_eager": pa.float64(), "vs_eager_fp32": pa.float64(), "vs_compile": pa.float64(),
    "cand_peak_bytes": pa.int64(), "base_peak_bytes": pa.int64(), "t_sol_ms": pa.float64(),
    "sol_score": pa.float64(), "fraction_of_roofline": pa.float64(), "failed_checks": pa.int32(),
    "failed_check": pa.string(), "failed_evidence": pa.string(), "labels": pa.string(),
    "reproduces": pa.string(), "timestamp": pa.string(), "kernel_sha256": pa.string(), "kernel_path": pa.string(),
}
"""Columns of the flattened ``records`` table, in order."""


@dataclass(frozen=True)
class LoadedRecords:
    """Every valid record as an Arrow table, plus the paths that were read."""

    table: pa.Table
    files: int


def record_files(root: Path) -> list[Path]:
    """Record files under ``root`` (baseline and audit folders left out), in a stable order."""
    if not root.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        found.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(".json") and not f.startswith("."))
    return found


def page_of(relpath: str) -> str:
    """Site URL (relative to the site root) of a record's own page."""
    return "records/" + relpath[: -len(".json")] + ".html"


def _statistic(timing, statistic: str) -> float | None:
    if timing is None:
        return None
    return timing.median_ms if statistic == "median" else timing.mean_ms


def flatten(record: Record, relpath: str) -> dict:
    """One row of the ``records`` table for a validated record."""
    stat = record.protocol.timing.statistic
    eager = next((b for b in record.baselines if b.kind == EAGER_KIND[record.protocol.name]), None)
    failed = [c for c in record.integrity if not c.passed]
    t, roof = record.timing, record.roofline
    return {
        "path": relpath, "page": page_of(relpath), "hardware": record.environment.hardware,
        "device_name": record.environment.device_name, "torch": record.environment.torch,
        "model": record.model.name, "provider": record.model.provider, "sample": record.model.sample,
        "suite": record.problem.suite, "level": record.problem.level, "problem_id": record.problem.id,
        "problem_name": record.problem.name, "problem_sha256": record.problem.source_sha256,
        "protocol": record.protocol.name, "protocol_version": record.protocol.version, "status": record.status,
        "language": record.kernel.language, "statistic": stat, "cand_ms": _statistic(t, stat),
        "cand_ci_low_ms": t.ci95_low_ms if t else None, "cand_ci_high_ms": t.ci95_high_ms if t else None,
        "base_ms": _statistic(eager.timing, stat) if eager else None,
        "vs_eager": record.speedup.vs_eager, "vs_eager_fp32": record.speedup.vs_eager_fp32,
        "vs_compile": record.speedup.vs_compile,
        "cand_peak_bytes": record.memory.candidate_peak_bytes, "base_peak_bytes": record.memory.baseline_peak_bytes,
        "t_sol_ms": roof.t_sol_ms if roof else None, "sol_score": roof.sol_score if roof else None,
        "fraction_of_roofline": roof.fraction_of_roofline if roof else None,
        "failed_checks": len(failed), "failed_check": failed[0].name if failed else None,
        "failed_evidence": failed[0].evidence if failed else None, "labels": ", ".join(record.labels),
        "reproduces": record.reproduces, "timestamp": record.environment.timestamp.isoformat(),
        "kernel_sha256": record.kernel.sha256, "kernel_path": record.kernel.path,
    }


@dataclass(frozen=True)
class PageTarget:
    """Where record pages are written while loading: the built site folder and the repository root."""

    site_dir: str
    repo_root: str


def _read(path: Path) -> Record | BaselineRecord:
    """Fast path: pydantic's own JSON parser; any failure is re-read by ``load_record`` for its exact message."""
    data = path.read_bytes()
    if len(data) <= MAX_RECORD_BYTES and b"NaN" not in data and b"Infinity" not in data:
        try:
            return Record.model_validate_json(data)
        except ValueError:
            pass
    return load_record(path)


def _load_one(path: Path, root: Path, display_root: Path, pages: PageTarget | None = None) -> tuple[Record, dict]:
    relpath = path.relative_to(root).as_posix()
    try:
        record = _read(path)
    except RecordError as exc:
        shown = display_root / relpath
        raise RecordError(shown, exc.field, exc.message) from None
    if not isinstance(record, Record):
        raise RecordError(display_root / relpath, "", "a baseline record outside a _baselines folder")
    row = flatten(record, relpath)
    if pages is not None:
        write_record_page(Path(pages.site_dir), Path(pages.repo_root), record, row)
    return record, row


def iter_records(root: Path, display_root: Path | None = None) -> Iterator[tuple[Record, dict]]:
    """Validate every record file under ``root``; yields (record, row). Raises RecordError on the first bad one."""
    shown = display_root if display_root is not None else root
    for path in record_files(root):
        yield _load_one(path, root, shown)


def rows_table(rows: list[dict]) -> pa.Table:
    """The Arrow ``records`` table for flattened rows (empty table with the right columns for none)."""
    schema = pa.schema(list(COLUMNS.items()))
    return pa.Table.from_pylist(rows, schema=schema)


def _chunk_worker(args: tuple[list[str], str, str, PageTarget | None]) -> list[dict]:
    paths, root, shown, pages = args
    return [_load_one(Path(p), Path(root), Path(shown), pages)[1] for p in paths]


def load_rows(root: Path, display_root: Path | None = None, pages: PageTarget | None = None,
              workers: int | None = None) -> LoadedRecords:
    """Validate and flatten every record under ``root`` (in parallel for large folders).

    With ``pages``, each record's own page is rendered and written into the site as it is read,
    so a record file is parsed once per build.
    """
    files = record_files(root)
    shown = str(display_root if display_root is not None else root)
    workers = workers or min(4, os.cpu_count() or 1)
    if len(files) < 2000 or workers == 1:
        rows = [_load_one(p, root, Path(shown), pages)[1] for p in files]
    else:
        size = max(500, len(files) // (workers * 8))
        chunks = [([str(p) for p in files[i:i + size]], str(root), shown, pages) for i in range(0, len(files), size)]
        with ProcessPoolExecutor(workers) as pool:
            rows = [row for part in pool.map(_chunk_worker, chunks) for row in part]
    return LoadedRecords(rows_table(rows), len(files))
