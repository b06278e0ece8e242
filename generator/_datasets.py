"""Texts of public kernels and problems, read from a local copy of the public datasets when the build has one.

Records of public datasets name a kernel by repository, commit, path, row and sha256; its text is not
part of this repository. Where the build finds the datasets folder (``extra.kverdict_datasets`` in
mkdocs.yml, or ``$KVERDICT_DATASETS``), a record page shows the kernel's code and a problem page its
source, each only when the text's sha256 is the one the record names; elsewhere the pages link to
the public repository.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

MAX_ROWS_FILE_BYTES = 64 * 1024 * 1024
"""JSON-lines files larger than this are not read for kernel texts."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=8)
def _rows_files(folder: str) -> tuple[str, ...]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        found += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".jsonl")]
    return tuple(p for p in found if os.path.getsize(p) <= MAX_ROWS_FILE_BYTES)


@functools.lru_cache(maxsize=8)
def _lines(path: str) -> tuple[str, ...]:
    with open(path, encoding="utf-8") as fh:
        return tuple(fh.read().splitlines())


def kernel_text(folder: str | None, row: int | None, sha256: str) -> str | None:
    """The text at ``row`` of a dataset file whose sha256 is ``sha256`` (any string field of that row)."""
    if not folder or row is None or not os.path.isdir(folder):
        return None
    for path in _rows_files(folder):
        lines = _lines(path)
        if row >= len(lines):
            continue
        try:
            obj = json.loads(lines[row])
        except ValueError:
            continue
        for value in obj.values() if isinstance(obj, dict) else ():
            if isinstance(value, str) and _sha(value) == sha256:
                return value
    return None


@functools.lru_cache(maxsize=4)
def problem_files(folder: str | None) -> dict[str, Path]:
    """sha256 of every Python problem file under the datasets folder -> its path."""
    out: dict[str, Path] = {}
    if folder and os.path.isdir(folder):
        for path in sorted(Path(folder).rglob("*.py")):
            out.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return out
