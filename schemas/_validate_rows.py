"""Checks of the benchmark rows the site reads beside the records (``benchmarks/results/*/self_speedup.jsonl``).

The methodology page shows each row's problem key, recipe, reference time and self-speedup; a row the
site would misread or a file reached through a symbolic link is refused here with its file and line.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._io import MAX_RECORD_BYTES, RecordError, inside_repository, loads_strict
from ._validate_names import bad_char

SELF_SPEEDUP_ROWS = "benchmarks/results/*/self_speedup.jsonl"
"""The rows files the site reads, relative to the repository root (the same pattern the site globs)."""
MAX_ROWS_BYTES = 20 * MAX_RECORD_BYTES
"""Largest rows file accepted."""


def rows_files(repo: Path) -> list[Path]:
    """Every self-speedup rows file the site would read, in order."""
    return sorted(repo.glob(SELF_SPEEDUP_ROWS))


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _row_problem(row: Any) -> tuple[str, str] | None:
    """(field, reason) of the first thing wrong with one decoded row, or None."""
    if not isinstance(row, dict):
        return "(row)", f"expected a JSON object, got {type(row).__name__}"
    if not isinstance(row.get("key"), str) or not row["key"]:
        return "key", "must be a non-empty string such as 'L1/23'"
    if bad := bad_char(row["key"]):
        return "key", f"control character {bad} in a problem key (keys are shown as text on the site)"
    if "error" in row:
        return None
    ratios, refs = row.get("self_speedup"), row.get("ref_ms")
    if not isinstance(ratios, dict) or not isinstance(refs, dict):
        return "self_speedup", "needs the objects self_speedup and ref_ms, keyed by recipe"
    for recipe, ratio in ratios.items():
        if bad := bad_char(recipe):
            return "self_speedup", f"control character {bad} in a recipe name"
        if not _positive(ratio):
            return f"self_speedup.{recipe}", f"must be a positive number, got {ratio!r}"
        if not _positive(refs.get(recipe)):
            return f"ref_ms.{recipe}", f"must be a positive number of milliseconds, got {refs.get(recipe)!r}"
    return None


def check_rows_file(path: Path, repo: Path, shown: str) -> Iterator[tuple[str, str]]:
    """(field, reason) for each problem of one rows file (one per line at most)."""
    rel = path.relative_to(repo).as_posix() if path.is_relative_to(repo) else str(path)
    target, why = inside_repository(repo, rel)
    if target is None:
        yield "(file)", why
        return
    if not target.is_file() or target.stat().st_size > MAX_ROWS_BYTES:
        yield "(file)", f"not a regular file of at most {MAX_ROWS_BYTES} bytes"
        return
    try:
        text = target.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        yield "(file)", f"not UTF-8 text ({exc.reason})"
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads_strict(line, shown, f"line {n}")
        except RecordError as exc:
            yield exc.field, exc.message
            continue
        problem = _row_problem(row)
        if problem is not None:
            yield f"line {n}: {problem[0]}", problem[1]
