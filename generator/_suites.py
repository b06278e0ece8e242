"""The problem list of every suite the site knows, read without torch from data committed in the repository.

``generator/data/suites.json`` names each suite: either a ``meta.json`` of the repository (the
KernelVerdict suite, the exploit zoo) whose entries are the problems, or a count per level with
its source (the KernelBench revisions, whose problem files are not part of this repository).
fast_p divides by these counts less the audit's exclusions; the physical floor reads the element
size of outputs from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from schemas import RecordError

SUITES_FILE = Path("generator/data/suites.json")
"""The suite list, relative to the repository root."""

DTYPE_BYTES = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2, "int64": 8, "int32": 4}
"""Bytes per element of the dtypes a problem's metadata may name."""


@dataclass(frozen=True)
class SuiteLevel:
    """How many problems one level of a suite has, and where that count comes from."""

    suite: str
    level: int
    problems: int
    source: str


@dataclass(frozen=True)
class ElementSize:
    """Bytes per output element of a problem, and where that figure comes from."""

    bytes: int
    source: str


@dataclass(frozen=True)
class SuiteUpstream:
    """Where a public suite's problem files live: repository, commit and folder (``{level}`` filled in)."""

    url: str
    commit: str
    folder: str


@dataclass(frozen=True)
class Suites:
    """Every known suite's levels, element sizes and upstream."""

    levels: list[SuiteLevel]
    element_sizes: dict[tuple[str, int, int], ElementSize]
    """(suite, level, id) -> element size, for suites whose metadata names each problem's dtype."""
    default_element: dict[str, ElementSize]
    """suite -> element size of every problem, for suites described by counts."""
    upstream: dict[str, SuiteUpstream]

    def element_size(self, suite: str, level: int, problem_id: int) -> ElementSize | None:
        """Bytes per output element of one problem, or None where no committed data says."""
        return self.element_sizes.get((suite, level, problem_id)) or self.default_element.get(suite)


def _meta_levels(repo_root: Path, entry: dict, sizes: dict) -> list[SuiteLevel]:
    path = repo_root / entry["meta"]
    try:
        problems = json.loads(path.read_text(encoding="utf-8"))["problems"]
    except (OSError, ValueError, KeyError) as exc:
        raise RecordError(path, "problems", f"unreadable suite metadata: {exc}") from None
    counts: dict[int, int] = {}
    for name, p in problems.items():
        level, pid = int(p["level"]), int(p["id"])
        counts[level] = counts.get(level, 0) + 1
        dtype = str(p.get("dtype", ""))
        if dtype in DTYPE_BYTES:
            sizes[(entry["suite"], level, pid)] = ElementSize(DTYPE_BYTES[dtype], f"{dtype}, from {entry['meta']} ({name})")
    return [SuiteLevel(entry["suite"], lv, n, entry["source"]) for lv, n in sorted(counts.items())]


def read_suites(repo_root: Path) -> Suites:
    """The suite list of ``generator/data/suites.json`` (empty where the file is absent)."""
    path = repo_root / SUITES_FILE
    if not path.is_file():
        return Suites([], {}, {}, {})
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["suites"]
    except (ValueError, KeyError) as exc:
        raise RecordError(path, "suites", f"unreadable suite list: {exc}") from None
    levels: list[SuiteLevel] = []
    sizes: dict[tuple[str, int, int], ElementSize] = {}
    default: dict[str, ElementSize] = {}
    upstream: dict[str, SuiteUpstream] = {}
    for i, e in enumerate(entries):
        try:
            if "meta" in e:
                levels += _meta_levels(repo_root, e, sizes)
            else:
                levels += [SuiteLevel(e["suite"], int(lv), int(n), e["source"]) for lv, n in sorted(e["levels"].items())]
            if "output_element_bytes" in e:
                default[e["suite"]] = ElementSize(int(e["output_element_bytes"]), e["element_source"])
            if "url" in e:
                upstream[e["suite"]] = SuiteUpstream(e["url"], e["commit"], e["folder"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(path, f"suites[{i}]", f"malformed suite entry: {exc}") from None
    return Suites(levels, sizes, default, upstream)
