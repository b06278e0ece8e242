"""KernelBench's problems by the sha256 of their source text, so imported problems get their real names and ids.

Public kernel sets often carry a problem's source without its name (a row says ``task_id`` 23 of level 1);
the committed index (``evaluations/data/kernelbench_index.json``) maps the source back to its KernelBench
file, suite revision, level and id. It is committed so that identifying a problem needs no KernelBench
checkout where the evaluation runs. Regenerate it from checkouts of the revisions in :data:`REVISIONS`::

    python -m evaluations._kernelbench_index v0=PATH main=PATH          # rewrite the index
    python -m evaluations._kernelbench_index --check v0=PATH main=PATH  # exit 1 if it is stale

Each entry also holds the problem's automatic FLOP and byte count (``suite._auto_counts``, taken without a time
cap), so the loader gives known problems their roofline figures without running them.

A source matches by its exact sha256, else by the sha256 of its normalised text (line endings unified,
trailing whitespace and blank lines at the end removed), so a bundle that stored a file with CRLF line
endings or without its last newline still finds it. Any other difference is a different problem.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from .core import sha256_text

INDEX_PATH = Path(__file__).parent / "data" / "kernelbench_index.json"
URL = "https://github.com/ScalingIntelligence/KernelBench"
_LEVEL_DIR = re.compile(r"^level(\d+)$")
_ID_PREFIX = re.compile(r"^(\d+)_")


@dataclass(frozen=True)
class Revision:
    """One indexed KernelBench revision: the suite name its problems get, and its commit."""

    suite: str
    commit: str


REVISIONS: dict[str, Revision] = {
    "v0": Revision(suite="kernelbench-v0", commit="6500bbc8cf102520d7a8f09be34ee6d5db1c29b0"),
    "main": Revision(suite="kernelbench", commit="423217d9fda91e0c2d67e4a43bf62f96f6d104f1"),
}
"""Revision label -> suite and commit. ``v0`` holds the 250 problems CUDA-L1's rows carry; ``main`` the
current problems (sizes changed since v0)."""


@dataclass(frozen=True)
class KnownProblem:
    """A KernelBench file whose text matched a source."""

    revision: str
    suite: str
    level: int
    id: int
    name: str
    """File name without ``.py``, e.g. ``12_Matmul_with_diagonal_matrices_``."""
    file_name: str
    path: str
    """Path in the KernelBench repository at the revision's commit (``KernelBench/level1/19_ReLU.py``)."""
    exact: bool
    """Whether the text matched byte for byte (else after normalising whitespace)."""
    flops: float | None = None
    """Automatic FLOP count of one forward call (``None`` where it could not be counted)."""
    min_bytes: float | None = None
    """Automatic count of the fewest bytes one forward call moves."""
    dtype: str | None = None
    """Floating dtype of the problem's tensors."""
    not_counted: str | None = None
    """Why the automatic count gave nothing."""


def normalized(text: str) -> str:
    """The text with ``\\r\\n``/``\\r`` as ``\\n``, no trailing whitespace on any line, one final newline."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).rstrip("\n") + "\n"


def _checkout_files(root: Path) -> list[tuple[int, Path]]:
    """(level, file) of every problem file under ``root`` (a checkout, or its ``KernelBench`` folder)."""
    base = root / "KernelBench" if (root / "KernelBench").is_dir() else root
    levels = sorted((int(m.group(1)), d) for d in base.iterdir() if d.is_dir() and (m := _LEVEL_DIR.match(d.name)))
    if not levels:
        raise FileNotFoundError(f"{root}: no KernelBench/level<N> folders")
    return [(level, f) for level, d in levels for f in sorted(d.glob("[0-9]*_*.py"))]


def _count_fields(text: str, name: str) -> dict:
    from .suite import count_source

    count = count_source(text, name, time_cap_s=None)
    if count.reason is not None:
        return {"not_counted": count.reason}
    return {"flops": count.flops, "min_bytes": count.min_bytes, "dtype": count.dtype}


def build_index(checkouts: dict[str, Path], counts: bool = True) -> dict:
    """The index content for checkouts of revisions named in :data:`REVISIONS` (label -> checkout root);
    ``counts=False`` leaves out the automatic counts (minutes for the recurrent networks)."""
    problems: dict[str, list[dict]] = {}
    counted: dict[str, dict] = {}
    for label, root in checkouts.items():
        if label not in REVISIONS:
            raise KeyError(f"unknown revision {label!r}; known: {', '.join(REVISIONS)}")
        for level, file in _checkout_files(Path(root)):
            text = file.read_bytes().decode("utf-8")
            sha = sha256_text(text)
            if counts and sha not in counted:
                counted[sha] = _count_fields(text, f"{label}_{level}_{file.stem}")
            problems.setdefault(sha, []).append({
                "revision": label, "level": level, "id": int(_ID_PREFIX.match(file.name).group(1)),  # type: ignore[union-attr]
                "file_name": file.name, "normalized_sha256": sha256_text(normalized(text)), **counted.get(sha, {}),
            })
    revisions = {label: {"suite": REVISIONS[label].suite, "commit": REVISIONS[label].commit} for label in checkouts}
    return {"url": URL, "revisions": revisions, "problems": dict(sorted(problems.items()))}


def render_index(index: dict) -> str:
    """Stable JSON text of the index, one source a line."""
    rows = ",\n".join(f"  {json.dumps(sha)}: {json.dumps(entries, sort_keys=True)}"
                      for sha, entries in index["problems"].items())
    head = ",\n".join(f" {json.dumps(key)}: {json.dumps(index[key], sort_keys=True)}" for key in ("url", "revisions"))
    return f'{{\n{head},\n "problems": {{\n{rows}\n }}\n}}\n'


@dataclass(frozen=True)
class _Index:
    exact: dict[str, tuple[KnownProblem, ...]]
    normalized: dict[str, tuple[KnownProblem, ...]]


@cache
def _load(path: Path = INDEX_PATH) -> _Index:
    data = json.loads(path.read_text(encoding="utf-8"))
    suites = {label: rev["suite"] for label, rev in data["revisions"].items()}
    exact: dict[str, tuple[KnownProblem, ...]] = {}
    norm: dict[str, list[KnownProblem]] = {}
    for sha, entries in data["problems"].items():
        found = []
        for e in entries:
            known = KnownProblem(revision=e["revision"], suite=suites[e["revision"]], level=e["level"], id=e["id"],
                                 name=Path(e["file_name"]).stem, file_name=e["file_name"],
                                 path=f"KernelBench/level{e['level']}/{e['file_name']}", exact=True,
                                 flops=e.get("flops"), min_bytes=e.get("min_bytes"), dtype=e.get("dtype"),
                                 not_counted=e.get("not_counted"))
            found.append(known)
            norm.setdefault(e["normalized_sha256"], []).append(replace(known, exact=False))
        exact[sha] = tuple(found)
    return _Index(exact=exact, normalized={k: tuple(v) for k, v in norm.items()})


def identify(source: str, prefer_suite: str | None = None, index_path: Path = INDEX_PATH) -> KnownProblem | None:
    """The KernelBench problem whose file holds ``source`` (exactly, else after normalising whitespace).

    Where the same text is in several revisions, the one of ``prefer_suite`` wins, else the first.
    ``None`` when no indexed file matches.
    """
    index = _load(index_path)
    matches = index.exact.get(sha256_text(source)) or index.normalized.get(sha256_text(normalized(source)))
    if not matches:
        return None
    return next((m for m in matches if m.suite == prefer_suite), matches[0])


def _checkout_arg(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    if not sep or label not in REVISIONS:
        raise argparse.ArgumentTypeError(f"expected REVISION=PATH with REVISION one of {', '.join(REVISIONS)}")
    return label, Path(path)


def index_main(argv: list[str] | None = None) -> int:
    """Rewrite the index from KernelBench checkouts, or with ``--check`` report whether it is up to date."""
    parser = argparse.ArgumentParser(description="Regenerate evaluations/data/kernelbench_index.json.")
    parser.add_argument("checkouts", nargs="+", type=_checkout_arg, metavar="REVISION=PATH",
                        help=f"a KernelBench checkout of each revision ({', '.join(REVISIONS)})")
    parser.add_argument("--check", action="store_true", help="exit 1 when the index is stale, write nothing")
    parser.add_argument("--index", type=Path, default=INDEX_PATH, help="the index file (default: the committed one)")
    args = parser.parse_args(argv)
    try:
        text = render_index(build_index(dict(args.checkouts)))
    except (OSError, KeyError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = not args.index.is_file() or args.index.read_text(encoding="utf-8") != text
        print(f"{args.index}: {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    args.index.write_text(text, encoding="utf-8")
    print(f"wrote {args.index} ({len(json.loads(text)['problems'])} sources)")
    return 0


if __name__ == "__main__":
    sys.exit(index_main())
