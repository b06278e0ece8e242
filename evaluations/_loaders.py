"""Load problems and candidates in KernelBench format, unchanged, from folders, checkouts and bundles.

Supported inputs:

- a folder of problem files (``19_ReLU.py``), optionally with a ``meta.json`` (suite, level, id,
  name, tags, dtype, FLOPs, bytes per file name);
- a KernelBench checkout (``KernelBench/level1/1_Square_matrix_multiplication_.py``): the folder
  gives the level, the number prefix the id;
- a folder of candidates: ``NAME.py`` or ``NAME__LABEL.py`` solves problem ``NAME.py``; the sample
  index is the position of LABEL among the sorted labels of that problem (no label first);
- a JSON-lines bundle holding problems and candidates together (see :data:`KNOWN_BUNDLES`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._types import Candidate, Origin, Problem, ProblemMeta

META_FILE = "meta.json"
CHECKOUT_SUITE = "kernelbench"
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_ID_PREFIX = re.compile(r"^(\d+)_")
_MODEL_CLASS = re.compile(r"^class\s+Model\b", re.MULTILINE)


class LoadError(ValueError):
    """Input that cannot be loaded; ``str()`` is one line naming the file."""


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


KNOWN_BUNDLES: tuple[BundleFormat, ...] = (
    BundleFormat(
        name="cuda-l1-h100", file_name="h100.jsonl", level_key="level_id", id_key="task_id",
        problem_key="ref_code", kernel_key="custom_code", name_key=None, suite="kernelbench-v0",
        model="CUDA-L1", provider="deepreinforce-ai/CUDA-L1",
        url="https://github.com/deepreinforce-ai/CUDA-L1", commit="51e8356bf844101cab2aeeca4bdff47ebb1953b8",
        kernel_path="optimized_cuda_code/h100.json", problem_path="optimized_cuda_code/h100.json",
        rows_in_source=True,
    ),
    BundleFormat(
        name="kernelbench-triton-h200", file_name="dump.jsonl", level_key="level", id_key="problem_id",
        problem_key="problem_source", kernel_key="kernel_source", name_key="problem_name", suite=CHECKOUT_SUITE,
        model="kernelbench-triton-dump", provider="ScalingIntelligence/KernelBench (branch sokserey/tritonDump)",
        url="https://github.com/ScalingIntelligence/KernelBench", commit="6842d4f293f6736d758f5e1d19fee7cd1982e3fa",
        kernel_path="triton_runs/level{level}_triton", problem_path="KernelBench/level{level}/{name}",
    ),
)
"""Public bundles recognised by file name and row keys (provenance: ``datasets/README.md``)."""


@dataclass(frozen=True)
class SourceOverride:
    """Provenance given on the command line for a bundle: replaces the known table's entry."""

    url: str | None = None
    commit: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Loaded:
    """Problems and the candidates that solve them."""

    problems: list[Problem]
    candidates: list[Candidate]


def repo_relpath(path: Path, fallback_root: Path) -> str:
    """Path relative to the enclosing git checkout, else relative to ``fallback_root``."""
    path = path.resolve()
    for parent in path.parents:
        if (parent / ".git").exists():
            return path.relative_to(parent).as_posix()
    try:
        return path.relative_to(fallback_root.resolve()).as_posix()
    except ValueError:
        return path.name


def _read_meta(folder: Path) -> dict[str, Any]:
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        return {}
    try:
        data = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LoadError(f"{meta_path}: cannot read: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("problems", {}), dict):
        raise LoadError(f"{meta_path}: expected {{'suite': ..., 'problems': {{file name: {{...}}}}}}")
    return data


def _problem_files(root: Path) -> tuple[list[tuple[int | None, Path]], bool]:
    """(level from folder or None, file) pairs, and whether the layout is a KernelBench checkout."""
    base = root / "KernelBench" if (root / "KernelBench").is_dir() else root
    level_dirs = sorted((int(m.group(1)), d) for d in base.iterdir()
                        if d.is_dir() and (m := _LEVEL_DIR.match(d.name)))
    if level_dirs:
        return [(lvl, f) for lvl, d in level_dirs for f in sorted(d.glob("*.py"))], True
    level_match = _LEVEL_DIR.match(root.name)
    level = int(level_match.group(1)) if level_match else None
    return [(level, f) for f in sorted(root.glob("*.py"))], bool(level_match and root.parent.name == "KernelBench")


def load_problem_folder(root: str | Path, *, suite: str | None = None) -> list[Problem]:
    """Problems from a folder of KernelBench-format files or a KernelBench checkout."""
    root = Path(root)
    if not root.is_dir():
        raise LoadError(f"{root}: not a folder")
    meta = _read_meta(root)
    files, checkout = _problem_files(root)
    suite_name = suite or meta.get("suite") or (CHECKOUT_SUITE if checkout else root.resolve().name)
    problems: list[Problem] = []
    for index, (folder_level, file) in enumerate(files, start=1):
        source = file.read_text(encoding="utf-8")
        if file.name.startswith("_") or not _MODEL_CLASS.search(source):
            continue
        entry = meta.get("problems", {}).get(file.name, {})
        prefix = _ID_PREFIX.match(file.name)
        problems.append(Problem(
            suite=suite_name, level=int(entry.get("level", folder_level or 1)),
            id=int(entry.get("id", int(prefix.group(1)) if prefix else index)),
            name=str(entry.get("name", file.stem)), source=source,
            origin=Origin(path=repo_relpath(file, root.parent)),
            meta=ProblemMeta(tags=tuple(entry.get("tags", ())), dtype=entry.get("dtype", "float32"),
                             flops=entry.get("flops"), min_bytes=entry.get("min_bytes")),
            file_name=file.name,
        ))
    if not problems:
        raise LoadError(f"{root}: no problem files (Python files defining class Model)")
    _check_unique(problems, root)
    return problems


def _check_unique(problems: list[Problem], where: Path) -> None:
    seen: dict[str, Problem] = {}
    for p in problems:
        if p.key in seen:
            raise LoadError(f"{where}: problems {seen[p.key].file_name} and {p.file_name} share id {p.key}")
        seen[p.key] = p


def _split_candidate_name(stem: str) -> tuple[str, str]:
    name, sep, label = stem.partition("__")
    return name, label if sep else ""


def load_candidate_folder(root: str | Path, problems: list[Problem], *, model: str,
                          provider: str | None = None) -> list[Candidate]:
    """Candidates ``NAME.py`` / ``NAME__LABEL.py`` for problems ``NAME.py`` (level folders narrow the match)."""
    root = Path(root)
    if not root.is_dir():
        raise LoadError(f"{root}: not a folder")
    by_stem: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        by_stem[Path(p.file_name or p.name).stem].append(p)
    found: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for file in sorted(root.rglob("*.py")):
        if file.name.startswith("_"):
            continue
        name, label = _split_candidate_name(file.stem)
        level_match = _LEVEL_DIR.match(file.parent.name)
        matches = [p for p in by_stem.get(name, [])
                   if not level_match or p.level == int(level_match.group(1))]
        if not matches:
            raise LoadError(f"{file}: no problem named {name}.py among the loaded problems")
        if len(matches) > 1:
            raise LoadError(f"{file}: {name}.py exists in several levels; put the candidate in a levelN folder")
        found[matches[0].key].append((label, file))
    candidates = []
    for key, entries in found.items():
        for sample, (label, file) in enumerate(sorted(entries, key=lambda e: e[0])):
            candidates.append(Candidate(
                problem_key=key, model=model, sample=sample, label=label,
                source=file.read_text(encoding="utf-8"), origin=Origin(path=repo_relpath(file, root.parent)),
                provider=provider,
            ))
    if not candidates:
        raise LoadError(f"{root}: no candidate files")
    return candidates


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
                        name_key=generic.name_key, suite=path.stem)


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
            row: int, level: int, name: str) -> Origin:
    """Where a row's text lives: the public source (URL, commit, path, row) or the bundle file itself."""
    url = override.url or fmt.url
    commit = override.commit if override.url else fmt.commit
    if url and not commit:
        raise LoadError(f"{local}: a source URL needs its commit (--source-commit)")
    if not url:
        return Origin(path=override.path or local, row=row)
    if override.path or override.url:
        return Origin(path=override.path or local, url=url, commit=commit, row=row)
    path = (template or local).format(level=level, name=name)
    return Origin(path=path, url=url, commit=commit, row=row if fmt.rows_in_source else None)


def load_bundle(path: str | Path, *, model: str | None = None, provider: str | None = None,
                override: SourceOverride | None = None) -> Loaded:
    """Problems and candidates from a JSON-lines bundle; rows with an empty kernel are skipped."""
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
        level, pid = int(row[fmt.level_key]), int(row[fmt.id_key])
        file_name = str(row[fmt.name_key]) if fmt.name_key else f"task_{pid}.py"
        stem = Path(file_name).stem
        if (level, pid) not in problems:
            problems[(level, pid)] = Problem(
                suite=fmt.suite, level=level, id=pid, name=stem, source=row[fmt.problem_key],
                origin=_origin(fmt, override, local, fmt.problem_path, row_index, level, file_name),
                file_name=file_name,
            )
        kernel = row.get(fmt.kernel_key) or ""
        if not kernel.strip():
            continue
        problem = problems[(level, pid)]
        candidates.append(Candidate(
            problem_key=problem.key, model=model_name, sample=samples[problem.key], label="",
            source=kernel, origin=_origin(fmt, override, local, fmt.kernel_path, row_index, level, file_name),
            provider=provider or fmt.provider,
        ))
        samples[problem.key] += 1
    return Loaded(problems=list(problems.values()), candidates=candidates)


def is_bundle(path: str | Path) -> bool:
    """Whether a path names a JSON-lines bundle rather than a folder."""
    return Path(path).suffix in (".jsonl", ".ndjson")


def load_inputs(problems: str | Path | None, candidates: str | Path, *, model: str | None,
                provider: str | None = None, suite: str | None = None,
                override: SourceOverride | None = None) -> Loaded:
    """What ``kverdict eval`` evaluates: a bundle alone, or problems plus a folder of candidates."""
    if is_bundle(candidates):
        loaded = load_bundle(candidates, model=model, provider=provider, override=override)
        if problems is None:
            return loaded
        own = load_problems(problems, suite=suite)
        keys = {p.key for p in own}
        return Loaded(own, [c for c in loaded.candidates if c.problem_key in keys])
    if problems is None:
        raise LoadError("--problems is required unless --candidates is a JSON-lines bundle")
    if not model:
        raise LoadError("--model is required for a folder of candidates")
    problem_list = load_problems(problems, suite=suite)
    return Loaded(problem_list, load_candidate_folder(candidates, problem_list, model=model, provider=provider))


def load_problems(path: str | Path, *, suite: str | None = None) -> list[Problem]:
    """Problems from a folder, a KernelBench checkout, or a JSON-lines bundle."""
    if is_bundle(path):
        return load_bundle(path, model="unused").problems
    return load_problem_folder(path, suite=suite)
