"""JSON-lines bundles of problems and kernels: the known public layouts (:data:`KNOWN_BUNDLES`) with their provenance
and the source's own claims, and loading one into problems and candidates."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas import dataset_named

from ._kernelbench_index import identify
from ._loaders import CHECKOUT_SUITE, Loaded, LoadError, SourceOverride, known_meta, repo_relpath
from .core import Candidate, Claim, Origin, Problem


@dataclass(frozen=True)
class BundleFormat:
    """A JSON-lines layout of problems and kernels, and (for known public bundles) its provenance."""

    name: str
    file_name: str | None
    """File name that identifies this public bundle (``None`` = shape only, no provenance)."""
    level_key: str
    id_key: str
    problem_key: str
    kernel_key: str
    name_key: str | None
    suite: str
    model: str | None = None
    provider: str | None = None
    url: str | None = None
    commit: str | None = None
    kernel_path: str | None = None
    """Path of the kernels in ``url`` at ``commit``; ``{level}`` is filled in."""
    problem_path: str | None = None
    """Path of the problems in ``url`` at ``commit``; ``{level}`` and ``{name}`` are filled in."""
    rows_in_source: bool = False
    """Whether the bundle's row numbers are the rows of the file at ``kernel_path`` (same order)."""
    claim: Callable[[dict[str, Any], str], Claim | None] | None = None
    """Reads the source's own claim from a row (the second argument names the row in errors)."""


def _number(row: dict[str, Any], key: str, where: str) -> float | None:
    """A row's numeric field: ``None`` when absent or null; a LoadError naming the field otherwise."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise LoadError(f"{where}: field {key}: expected a finite non-negative number, got {value!r}")
    return float(value)


def _cuda_l1_claim(row: dict[str, Any], where: str) -> Claim | None:
    """``score_default``: the authors' speedup against eager PyTorch (their other scores pair other baselines
    or other variants of the kernel: ``cuda_graph_code``, ``cudnn_code``)."""
    speedup = _number(row, "score_default", where)
    return None if speedup is None else Claim(source_field="score_default", speedup=speedup, baseline="eager")


def _triton_dump_claim(row: dict[str, Any], where: str) -> Claim | None:
    """``claimed``: the source's H200 timings of the kernel and of the eager reference, and their ratio.

    Its time fields are named ``runtime_*_us`` but hold milliseconds: KernelBench's CUDA-event timer
    reports milliseconds; read so, the eager 4096 x 4096 matrix product's 2.76 is the H200's float32
    rate, while read as microseconds the kernel's 1.71 would be 200 times its measured TF32 rate.
    """
    claimed = row.get("claimed")
    if claimed is None:
        return None
    if not isinstance(claimed, dict):
        raise LoadError(f"{where}: field claimed: expected an object, got {type(claimed).__name__}")
    return Claim(source_field="claimed.speedup", speedup=_number(claimed, "speedup", f"{where}: claimed"),
                 baseline="eager", ms=_number(claimed, "runtime_triton_us", f"{where}: claimed"))


def _provenance(name: str) -> dict[str, Any]:
    """A known public dataset's provenance as :class:`BundleFormat` fields, from the one table of them."""
    d = dataset_named(name)
    return {"name": d.name, "file_name": d.file_name, "model": d.model, "provider": d.provider, "url": d.url,
            "commit": d.commit, "kernel_path": d.kernel_path, "problem_path": d.problem_path}


KNOWN_BUNDLES: tuple[BundleFormat, ...] = (
    BundleFormat(
        level_key="level_id", id_key="task_id", problem_key="ref_code", kernel_key="custom_code", name_key=None,
        suite="kernelbench-v0", rows_in_source=True, claim=_cuda_l1_claim, **_provenance("cuda-l1-h100"),
    ),
    BundleFormat(
        level_key="level", id_key="problem_id", problem_key="problem_source", kernel_key="kernel_source",
        name_key="problem_name", suite=CHECKOUT_SUITE, claim=_triton_dump_claim,
        **_provenance("kernelbench-triton-h200"),
    ),
)
"""Public bundles recognised by file name and row keys; their provenance is ``schemas.DATASETS``'."""


def _bundle_format(path: Path, first_row: dict[str, Any]) -> BundleFormat:
    shaped = [f for f in KNOWN_BUNDLES
              if {f.level_key, f.id_key, f.problem_key, f.kernel_key} <= first_row.keys()]
    if not shaped:
        keys = ", ".join(sorted(first_row)[:12])
        raise LoadError(f"{path}: unknown JSON-lines layout (keys: {keys})")
    for fmt in shaped:
        if fmt.file_name == path.name:
            return fmt
    generic = shaped[0]
    return BundleFormat(name="custom", file_name=None, level_key=generic.level_key, id_key=generic.id_key,
                        problem_key=generic.problem_key, kernel_key=generic.kernel_key,
                        name_key=generic.name_key, suite=path.stem, claim=generic.claim)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LoadError(f"{path}: line {lineno}: malformed JSON: {exc.msg}") from None
            if not isinstance(row, dict):
                raise LoadError(f"{path}: line {lineno}: expected a JSON object")
            rows.append(row)
    if not rows:
        raise LoadError(f"{path}: empty bundle")
    return rows


def _origin(fmt: BundleFormat, override: SourceOverride, local: str, template: str | None,
            row: int, level: int, pid: int, name: str) -> Origin:
    """Where a row's text lives: the public source (URL, commit, path, row) or the bundle file itself."""
    url = override.url or fmt.url
    commit = override.commit if override.url else fmt.commit
    if url and not commit:
        raise LoadError(f"{local}: a source URL needs its commit (--source-commit)")
    if not url:
        return Origin(path=override.path or local, row=row)
    if override.path or override.url:
        return Origin(path=override.path or local, url=url, commit=commit, row=row)
    path = (template or local).format(level=level, id=pid, name=name)
    return Origin(path=path, url=url, commit=commit, row=row if fmt.rows_in_source else None)


def _bundle_problem(fmt: BundleFormat, row: dict[str, Any], origin: Origin, level: int, pid: int,
                    where: str) -> Problem:
    """The row's problem, under its KernelBench name and id when its source is a KernelBench file."""
    source = row.get(fmt.problem_key)
    if not isinstance(source, str) or not source.strip():
        raise LoadError(f"{where}: field {fmt.problem_key}: expected the problem's source text")
    known = identify(source, prefer_suite=fmt.suite)
    if known is not None:
        return Problem(suite=known.suite, level=known.level, id=known.id, name=known.name, source=source,
                       origin=origin, meta=known_meta(known), file_name=known.file_name)
    file_name = str(row[fmt.name_key]) if fmt.name_key else f"task_{pid}.py"
    return Problem(suite=fmt.suite, level=level, id=pid, name=Path(file_name).stem, source=source,
                   origin=origin, file_name=file_name)


def load_bundle(path: str | Path, *, model: str | None = None, provider: str | None = None,
                override: SourceOverride | None = None) -> Loaded:
    """Problems and candidates from a JSON-lines bundle; rows with an empty kernel are skipped.

    Each candidate carries the row's own claim (``Candidate.claimed``) where the bundle's layout has one.
    """
    path = Path(path)
    if not path.is_file():
        raise LoadError(f"{path}: no such file")
    rows = _read_rows(path)
    fmt = _bundle_format(path, rows[0])
    override = override or SourceOverride()
    local = repo_relpath(path, path.parent)
    model_name = model or fmt.model
    if not model_name:
        raise LoadError(f"{path}: this bundle names no model; give one with --model")
    problems: dict[tuple[int, int], Problem] = {}
    candidates: list[Candidate] = []
    samples: dict[str, int] = defaultdict(int)
    for row_index, row in enumerate(rows):
        where = f"{path}: row {row_index}"
        try:
            level, pid = int(row[fmt.level_key]), int(row[fmt.id_key])
        except (KeyError, TypeError, ValueError):
            raise LoadError(f"{where}: fields {fmt.level_key} and {fmt.id_key} must be integers") from None
        file_name = str(row[fmt.name_key]) if fmt.name_key else f"task_{pid}.py"
        if (level, pid) not in problems:
            origin = _origin(fmt, override, local, fmt.problem_path, row_index, level, pid, file_name)
            problems[(level, pid)] = _bundle_problem(fmt, row, origin, level, pid, where)
        kernel = row.get(fmt.kernel_key) or ""
        if not kernel.strip():
            continue
        problem = problems[(level, pid)]
        candidates.append(Candidate(
            problem_key=problem.key, model=model_name, sample=samples[problem.key], label="",
            source=kernel, origin=_origin(fmt, override, local, fmt.kernel_path, row_index, level, pid, file_name),
            provider=provider or fmt.provider, claimed=fmt.claim(row, where) if fmt.claim else None,
        ))
        samples[problem.key] += 1
    return Loaded(problems=list(problems.values()), candidates=candidates)


def is_bundle(path: str | Path) -> bool:
    """Whether a path names a JSON-lines bundle rather than a folder."""
    return Path(path).suffix in (".jsonl", ".ndjson")
