"""Find, validate and flatten record files into one row per record (the ``records`` table of the SQL)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from schemas import MAX_RECORD_BYTES, BaselineRecord, Record, RecordError, load_record
from schemas._io import inside_repository

from ._columns import EXTRA_COLUMNS, extra_columns
from ._protocols import EAGER_KIND
from ._record_pages import render_record_page

PARALLEL_FROM = 2000
"""Record count from which records are read by a pool of worker processes."""

SKIPPED_DIRS = ("_baselines", "_audits")
"""Folders under ``records/`` that hold baseline records and audit reports, not Records."""

COLUMNS: dict[str, pa.DataType] = {
    "path": pa.string(), "page": pa.string(), "hardware": pa.string(), "device_name": pa.string(),
    "torch": pa.string(), "model": pa.string(), "provider": pa.string(), "sample": pa.int32(),
    "suite": pa.string(), "level": pa.int32(), "problem_id": pa.int32(), "problem_name": pa.string(),
    "problem_sha256": pa.string(), "protocol": pa.string(), "protocol_version": pa.string(),
    "status": pa.string(), "reason": pa.string(), "language": pa.string(), "statistic": pa.string(), "cand_ms": pa.float64(),
    "cand_ci_low_ms": pa.float64(), "cand_ci_high_ms": pa.float64(), "base_ms": pa.float64(),
    "vs_eager": pa.float64(), "vs_eager_fp32": pa.float64(), "vs_compile": pa.float64(),
    "cand_peak_bytes": pa.int64(), "base_peak_bytes": pa.int64(), "t_sol_ms": pa.float64(),
    "sol_score": pa.float64(), "fraction_of_roofline": pa.float64(), "failed_checks": pa.int32(),
    "failed_check": pa.string(), "failed_evidence": pa.string(), "failed_names": pa.list_(pa.string()),
    "failed_evidences": pa.list_(pa.string()), "labels": pa.string(),
    "reproduces": pa.string(), "timestamp": pa.string(), "kernel_sha256": pa.string(), "kernel_path": pa.string(),
    "kernel_url": pa.string(), "kernel_commit": pa.string(),
}
"""Columns of the flattened ``records`` table, in order (the extra ones of ``_columns`` last)."""
COLUMNS.update(EXTRA_COLUMNS)
INT_RANGES = {pa.int32(): 2**31 - 1, pa.int64(): 2**63 - 1}
"""Largest magnitude each integer column type holds."""
FIELD_OF_COLUMN = {"sample": "model.sample", "level": "problem.level", "problem_id": "problem.id",
                   "cand_peak_bytes": "memory.candidate_peak_bytes", "base_peak_bytes": "memory.baseline_peak_bytes",
                   "failed_checks": "integrity"}
"""The record field behind each integer column, for the error that names it."""
_OVERFLOW_HINT = re.compile(rb"[:\[,]\s*-?[\d.]+[eE]\+?\d{3}|\d{300}")
"""Number text that may not fit a float (``1e999``; an exponent of three digits after a key or in a list):
such files take the strict reader's path."""


@dataclass(frozen=True)
class LoadedRecords:
    """Every valid record as an Arrow table, plus the paths that were read."""

    table: pa.Table
    files: int


def _relpaths(root: Path) -> list[str]:
    """Record files under ``root`` as POSIX paths relative to it, in a stable order."""
    if not os.path.isdir(root):
        return []
    found: list[str] = []
    base = len(str(root)) + 1
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
        prefix = dirpath[base:].replace(os.sep, "/")
        prefix = prefix + "/" if prefix else ""
        found.extend(prefix + f for f in sorted(filenames) if f.endswith(".json") and not f.startswith("."))
    return found


def record_files(root: Path) -> list[Path]:
    """Record files under ``root`` (baseline and audit folders left out), in a stable order."""
    return [root / relpath for relpath in _relpaths(root)]


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
        "reason": record.reason,
        "language": record.kernel.language, "statistic": stat, "cand_ms": _statistic(t, stat),
        "cand_ci_low_ms": t.ci95_low_ms if t else None, "cand_ci_high_ms": t.ci95_high_ms if t else None,
        "base_ms": _statistic(eager.timing, stat) if eager else None,
        "vs_eager": record.speedup.vs_eager, "vs_eager_fp32": record.speedup.vs_eager_fp32,
        "vs_compile": record.speedup.vs_compile,
        "cand_peak_bytes": record.memory.candidate_peak_bytes, "base_peak_bytes": record.memory.baseline_peak_bytes,
        "t_sol_ms": roof.t_sol_ms if roof else None, "sol_score": roof.sol_score if roof else None,
        "fraction_of_roofline": roof.fraction_of_roofline if roof else None,
        "failed_checks": len(failed), "failed_check": failed[0].name if failed else None,
        "failed_evidence": failed[0].evidence if failed else None, "failed_names": [c.name for c in failed],
        "failed_evidences": [c.evidence for c in failed], "labels": ", ".join(record.labels),
        "reproduces": record.reproduces, "timestamp": record.environment.timestamp.isoformat(),
        "kernel_sha256": record.kernel.sha256, "kernel_path": record.kernel.path, "kernel_url": record.kernel.url,
        "kernel_commit": record.kernel.commit, **extra_columns(record),
    }


@dataclass(frozen=True)
class PageTarget:
    """Where record pages are written while loading: the built site folder and the repository root."""

    site_dir: str
    repo_root: str
    context: object = None
    """What a record page needs beyond its record (``_record_pages.RecordContext``)."""


def _read(path: str) -> Record | BaselineRecord:
    """Fast path: pydantic's own JSON parser; any failure is re-read by ``load_record`` for its exact message."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size) if size <= MAX_RECORD_BYTES else b""
    finally:
        os.close(fd)
    if data and len(data) == size and b"NaN" not in data and b"Infinity" not in data \
            and not _OVERFLOW_HINT.search(data):
        try:
            return Record.model_validate_json(data, strict=True)
        except ValueError:
            pass
    return load_record(path)


def _check_row(row: dict, path: Path) -> None:
    """Every integer fits its column, so the table is built without an overflow deep inside Arrow."""
    for column, kind in COLUMNS.items():
        limit = INT_RANGES.get(kind)
        value = row[column]
        if limit is not None and value is not None and abs(value) > limit:
            raise RecordError(path, FIELD_OF_COLUMN.get(column, column), f"{value} is too large for the site (at most {limit})")


def check_kernel_path(record: Record, path: Path, repo_root: Path) -> None:
    """A kernel kept in the repository is read for its page only from inside it, through no symbolic link."""
    k = record.kernel
    if k.path is not None and k.url is None and k.row is None:
        target, why = inside_repository(repo_root, k.path)
        if target is None:
            raise RecordError(path, "kernel.path", f"{k.path} {why}")


def _load_one(relpath: str, root: str, display_root: str) -> tuple[Record, dict]:
    """Validate and flatten one record file; raises RecordError naming it under ``display_root``."""
    try:
        record = _read(os.path.join(root, relpath))
    except RecordError as exc:
        raise RecordError(Path(display_root, relpath), exc.field, exc.message) from None
    shown = Path(display_root, relpath)
    if not isinstance(record, Record):
        raise RecordError(shown, "", "a baseline record outside a _baselines folder")
    row = flatten(record, relpath)
    _check_row(row, shown)
    return record, row


def iter_records(root: Path, display_root: Path | None = None) -> Iterator[tuple[Record, dict]]:
    """Validate every record file under ``root``; yields (record, row). Raises RecordError on the first bad one."""
    shown = str(display_root if display_root is not None else root)
    for relpath in _relpaths(root):
        yield _load_one(relpath, str(root), shown)


def rows_table(rows: list[dict]) -> pa.Table:
    """The Arrow ``records`` table for flattened rows (empty table with the right columns for none)."""
    schema = pa.schema(list(COLUMNS.items()))
    return pa.Table.from_pylist(rows, schema=schema)


def _write(path: str, data: bytes) -> None:
    """Write a file with plain system calls (cheaper than a buffered file object, 100,000 times over)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


@dataclass(frozen=True)
class _Chunk:
    """One worker's share of the records: their rows, or the first error met (errors cross processes as text)."""

    table: pa.Table
    error: tuple[str, str, str] | None = None


def _load_chunk(relpaths: list[str], root: str, shown: str, pages: PageTarget | None) -> _Chunk:
    rows: list[dict] = []
    made: set[str] = set()
    repo_root = Path(pages.repo_root) if pages is not None else None
    try:
        for relpath in relpaths:
            record, row = _load_one(relpath, root, shown)
            rows.append(row)
            if pages is not None and repo_root is not None:
                check_kernel_path(record, Path(shown, relpath), repo_root)
                _write_page(pages.site_dir, row["page"], made,
                            _render(record, row, repo_root, Path(shown, relpath), pages.context))
    except RecordError as exc:
        return _Chunk(rows_table([]), (exc.path, exc.field, exc.message))
    return _Chunk(rows_table(rows))


def _render(record: Record, row: dict, repo_root: Path, shown: Path, context: Any = None) -> bytes:
    """A record's page; a value the page cannot hold fails the build naming the file, never with a traceback."""
    try:
        return render_record_page(record, row, repo_root, context=context).encode("utf-8")
    except (ValueError, TypeError, OverflowError, ArithmeticError, LookupError) as exc:
        raise RecordError(shown, "", f"its page cannot be built ({type(exc).__name__}: {exc})") from None


def _write_page(site_dir: str, page: str, made: set[str], html: bytes) -> None:
    out = os.path.join(site_dir, page)
    folder = os.path.dirname(out)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    _write(out, html)


def _chunk_worker(args: tuple[list[str], str, str, PageTarget | None]) -> _Chunk:
    return _load_chunk(*args)


def load_rows(root: Path, display_root: Path | None = None, pages: PageTarget | None = None,
              workers: int | None = None) -> LoadedRecords:
    """Validate and flatten every record under ``root`` (in parallel for large folders).

    With ``pages``, each record's own page is rendered and written into the site as it is read,
    so a record file is parsed once per build. Raises RecordError for the first invalid record
    in file order.
    """
    relpaths = _relpaths(root)
    shown = str(display_root if display_root is not None else root)
    workers = workers or min(4, os.cpu_count() or 1)
    if len(relpaths) < PARALLEL_FROM or workers == 1:
        chunks = [_load_chunk(relpaths, str(root), shown, pages)]
    else:
        size = -(-len(relpaths) // (workers * 4))
        jobs = [(relpaths[i:i + size], str(root), shown, pages) for i in range(0, len(relpaths), size)]
        with ProcessPoolExecutor(workers) as pool:
            chunks = list(pool.map(_chunk_worker, jobs))
    for chunk in chunks:
        if chunk.error is not None:
            raise RecordError(*chunk.error)
    table = pa.concat_tables([c.table for c in chunks]) if chunks else rows_table([])
    return LoadedRecords(table, len(relpaths))
