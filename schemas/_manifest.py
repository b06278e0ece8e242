"""The digest manifest of a records folder: the sha256 of every record file as the runner wrote it.

The runner adds a line after each record it writes (``Manifest.add``); a re-run redoes a record whose
file no longer has its listed digest, and ``kverdict validate`` reports such files and listed files
that are missing. The manifest lives in ``MANIFEST.sha256`` at the top of the records folder, in
``sha256sum`` format (``cd records && sha256sum -c MANIFEST.sha256`` checks it by hand).

What it proves: that a listed file is byte for byte what the run wrote, unless whoever changed the
file also changed its line. Anyone with write access to the folder can do both, so without write
protection from the operating system it detects changes made behind the runner's back (a candidate
rewriting a record during a run is caught by the next run or ``validate``), not a determined forger.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ._io import write_atomic

MANIFEST_RELPATH = PurePosixPath("MANIFEST.sha256")
"""Where the manifest lives under a records folder (a hidden folder: the validator's walk skips it)."""
_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


class ManifestProblem(NamedTuple):
    """A record file that does not match the manifest, and why."""

    path: Path
    reason: str


def digest_text(text: str) -> str:
    """sha256 of a record's text as written (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest_file(path: Path) -> str | None:
    """sha256 of a file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def parse_manifest(text: str) -> dict[str, str]:
    """Relative path -> digest of every line of a manifest's text (lines of another form are skipped)."""
    entries = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            entries[match.group(2)] = match.group(1)
    return entries


def manifest_text(entries: dict[str, str]) -> str:
    """A manifest's text for relative path -> digest ``entries``, in path order (``sha256sum`` format)."""
    return "".join(f"{digest}  {rel}\n" for rel, digest in sorted(entries.items()))


def read_manifest(root: Path) -> dict[str, str]:
    """Relative path -> digest of every line of ``root``'s manifest (empty when there is none)."""
    try:
        text = (root / MANIFEST_RELPATH).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return parse_manifest(text)


class Manifest:
    """The manifest of one records folder, as the runner keeps it: read once, updated after each record."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.entries = read_manifest(root)

    def _key(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def contradicts(self, path: Path) -> bool:
        """Whether ``path`` is listed with a digest its bytes no longer have (changed after it was written).

        An unlisted file (written before manifests, or contributed) is not contradicted.
        """
        key = self._key(path)
        listed = self.entries.get(key) if key is not None else None
        return listed is not None and digest_file(path) != listed

    def add(self, path: Path, text: str) -> None:
        """Record that ``path`` now holds ``text``; the file is rewritten atomically, merged with other writers'."""
        key = self._key(path)
        if key is None:
            return
        self.entries[key] = digest_text(text)
        target = self.root / MANIFEST_RELPATH
        target.parent.mkdir(parents=True, exist_ok=True)
        with _locked(target.with_suffix(".lock")):
            merged = {**read_manifest(self.root), key: self.entries[key]}
            self.entries.update(merged)
            write_atomic(target, manifest_text(merged))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)



def manifest_problems(root: Path, files: Iterable[Path]) -> list[ManifestProblem]:
    """Files among ``files`` whose bytes differ from ``root``'s manifest, and listed files that are missing.

    Unlisted files are not problems: records from elsewhere carry no line. A record deleted on purpose
    takes its line with it (delete the line from the manifest too).
    """
    entries = read_manifest(root)
    problems = []
    base = root.resolve()
    for path in files:
        try:
            key = path.resolve().relative_to(base).as_posix()
        except ValueError:
            continue
        if key in entries and digest_file(path) != entries[key]:
            problems.append(ManifestProblem(path, "the file differs from the digest its run wrote in "
                                                  f"{MANIFEST_RELPATH}: changed after it was written"))
    problems += [ManifestProblem(base / key, f"listed in {MANIFEST_RELPATH} but missing: deleted after it was "
                                             "written") for key in sorted(entries) if not (base / key).exists()]
    return problems
