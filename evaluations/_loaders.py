"""Load problems and candidates in KernelBench format, unchanged, from folders, checkouts and bundles.

Supported inputs:

- a folder of problem files (``19_ReLU.py``), optionally with a ``meta.json`` (suite, level, id,
  name, tags, dtype, FLOPs, bytes per file name);
- a KernelBench checkout (``KernelBench/level1/1_Square_matrix_multiplication_.py``): the folder
  gives the level, the number prefix the id;
- a folder of candidates: ``NAME.py`` or ``NAME__LABEL.py`` solves problem ``NAME.py``; the sample
  index is the position of LABEL among the sorted labels of that problem (no label first);
- a JSON-lines bundle holding problems and candidates together (``_bundles``, :data:`~._bundles.KNOWN_BUNDLES`).

A problem whose source is a KernelBench file (``_kernelbench_index``) gets that file's suite revision,
level, id and name, unless a ``meta.json`` or ``--suite`` names it otherwise (another suite keeps the folder's
own levels, ids and names).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._kernelbench_index import KnownProblem, identify
from .core import Candidate, Origin, Problem, ProblemMeta

META_FILE = "meta.json"
CHECKOUT_SUITE = "kernelbench"
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_ID_PREFIX = re.compile(r"^(\d+)_")
_MODEL_CLASS = re.compile(r"^class\s+Model\b", re.MULTILINE)


class LoadError(ValueError):
    """Input that cannot be loaded; ``str()`` is one line naming the file."""


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
    """Path relative to the enclosing git checkout, else relative to ``fallback_root``.

    A copy of a checkout without its ``.git`` (a detached device run's) names its root in ``KVERDICT_CHECKOUT``, so
    its records carry the same repository paths as the checkout's.
    """
    path = path.resolve()
    named = os.environ.get("KVERDICT_CHECKOUT")
    checkout = Path(named).resolve() if named else None
    for parent in path.parents:
        if (parent / ".git").exists() or parent == checkout:
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
    """Problems from a folder of KernelBench-format files or a KernelBench checkout.

    A file that ``meta.json`` does not describe and whose text is a KernelBench file gets that file's suite
    revision (``kernelbench-v0`` for a v0 checkout), unless ``suite`` or ``meta.json`` names the suite; where it
    is of that revision's suite, it also gets that file's level, id and name from the index, whatever the folder's
    layout and the file's name (``L2_74_...py`` in a flat folder is level 2, id 74). Its ``file_name`` stays the
    file's own, so its candidates are named after the file.
    """
    root = Path(root)
    if not root.is_dir():
        raise LoadError(f"{root}: not a folder")
    meta = _read_meta(root)
    files, checkout = _problem_files(root)
    named_suite = suite or meta.get("suite")
    suite_name = named_suite or (CHECKOUT_SUITE if checkout else root.resolve().name)
    problems: list[Problem] = []
    for index, (folder_level, file) in enumerate(files, start=1):
        source = file.read_text(encoding="utf-8")
        if file.name.startswith("_") or not _MODEL_CLASS.search(source):
            continue
        entry = meta.get("problems", {}).get(file.name, {})
        known = identify(source) if not entry else None
        prefix = _ID_PREFIX.match(file.name)
        if known is not None and named_suite in (None, known.suite):  # its place in the index, whatever its name
            entry = {"level": known.level, "id": known.id, "name": known.name}
        problems.append(Problem(
            suite=known.suite if known and not named_suite else suite_name,
            level=int(entry.get("level", folder_level or 1)),
            id=int(entry.get("id", int(prefix.group(1)) if prefix else index)),
            name=str(entry.get("name", file.stem)), source=source,
            origin=Origin(path=repo_relpath(file, root.parent)),
            meta=known_meta(known) if known else _meta_of(entry, root / META_FILE, file.name), file_name=file.name,
        ))
    if not problems:
        raise LoadError(f"{root}: no problem files (Python files defining class Model)")
    _check_unique(problems, root)
    return problems


def _meta_of(entry: dict[str, Any], meta_path: Path, file_name: str) -> ProblemMeta:
    """A ``meta.json`` entry's metadata; its FLOP and byte counts are hand-written unless it says otherwise."""
    flops, min_bytes = entry.get("flops"), entry.get("min_bytes")
    counted = entry.get("counted", "hand") if flops is not None and min_bytes is not None else None
    if counted not in (None, "hand", "automatic"):
        raise LoadError(f"{meta_path}: problems.{file_name}.counted: expected 'hand' or 'automatic', got {counted!r}")
    return ProblemMeta(tags=tuple(entry.get("tags", ())), dtype=entry.get("dtype", "float32"),
                       flops=flops, min_bytes=min_bytes, counted=counted)


def known_meta(known: KnownProblem) -> ProblemMeta:
    """Metadata of an indexed KernelBench problem: its automatic counts, or why it has none."""
    if known.flops is None or known.min_bytes is None:
        return ProblemMeta(not_counted=known.not_counted or "not counted")
    return ProblemMeta(dtype=known.dtype or "float32", flops=known.flops, min_bytes=known.min_bytes,
                       counted="automatic")


def _check_unique(problems: list[Problem], where: Path) -> None:
    seen: dict[str, Problem] = {}
    for p in problems:
        if p.key in seen:
            raise LoadError(f"{where}: problems {seen[p.key].file_name} and {p.file_name} share id {p.key}")
        seen[p.key] = p


def _split_candidate_name(stem: str, problem_stems: set[str]) -> tuple[str, str] | None:
    """(problem stem, label) of a candidate file stem ``NAME`` or ``NAME__LABEL``: the longest problem stem
    that the candidate's stem equals or continues with ``__`` (problem names may hold ``__`` or end in
    ``_``); ``None`` when no problem's stem fits."""
    fits = [name for name in problem_stems if stem == name or stem.startswith(name + "__")]
    if not fits:
        return None
    name = max(fits, key=len)
    return name, stem[len(name) + 2:]


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
        level_match = _LEVEL_DIR.match(file.parent.name)
        level = int(level_match.group(1)) if level_match else None
        stems = {stem for stem, ps in by_stem.items() if level is None or any(p.level == level for p in ps)}
        split = _split_candidate_name(file.stem, stems)
        if split is None:
            raise LoadError(f"{file}: no problem named {file.stem}.py among the loaded problems "
                            "(a candidate is NAME.py or NAME__LABEL.py for problem NAME.py)")
        name, label = split
        matches = [p for p in by_stem[name] if level is None or p.level == level]
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


def load_inputs(problems: str | Path | None, candidates: str | Path, *, model: str | None,
                provider: str | None = None, suite: str | None = None,
                override: SourceOverride | None = None, count: bool = True) -> Loaded:
    """What ``kverdict eval`` evaluates: a bundle alone, or problems plus a folder of candidates.

    With ``count``, problems that have neither hand-written nor indexed counts are counted automatically
    (``suite._auto_counts``), so their records get roofline figures.
    """
    loaded = _load_inputs(problems, candidates, model=model, provider=provider, suite=suite, override=override)
    if not count:
        return loaded
    from .suite import with_automatic_counts

    return Loaded(with_automatic_counts(loaded.problems), loaded.candidates)


def _load_inputs(problems: str | Path | None, candidates: str | Path, *, model: str | None,
                 provider: str | None, suite: str | None, override: SourceOverride | None) -> Loaded:
    from ._bundles import is_bundle, load_bundle  # bundles build on this module's types

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
    from ._bundles import is_bundle, load_bundle  # bundles build on this module's types

    if is_bundle(path):
        return load_bundle(path, model="unused").problems
    return load_problem_folder(path, suite=suite)
