"""Validation of where a record's kernel source lives: a public URL with its commit, a row of a JSON-lines file,
or a file kept in this repository whose sha256 matches."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from ._io import inside_repository
from ._record import Record
from ._validate_tree import repro_ref_faults

_HEX_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


def source_faults(rec: Record, repo: Path) -> Iterator[tuple[str, str]]:
    """The kernel's URL and commit are well formed, a row names a JSON-lines file, a reproduction names its record,
    and a kernel kept here is a file of the repository with the record's sha256."""
    k = rec.kernel
    if k.url is not None:
        yield from _url(k.url)
        if k.commit is None or not _HEX_COMMIT.match(k.commit):
            yield "kernel.commit", "must be a commit hash (7 to 40 lowercase hex digits)"
    if k.row is not None and not (k.path or "").endswith((".jsonl", ".json")):
        yield "kernel.row", "a row needs a JSON-lines file as kernel.path"
    if rec.reproduces is not None:
        yield from repro_ref_faults(rec.reproduces)
    if k.url is None and k.path is not None and k.row is None:
        yield from _kernel_file(k.path, k.sha256, repo)


def _url(url: str) -> Iterator[tuple[str, str]]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        yield "kernel.url", "is not a well-formed URL"
        return
    if parts.scheme != "https" or not parts.hostname:
        yield "kernel.url", "must be an https:// URL with a host"
    elif "@" in parts.netloc or port is not None and port != 443:
        yield "kernel.url", "must not hold credentials or a port (nothing between '//' and the host name)"


def _kernel_file(relpath: str, sha256: str, repo: Path) -> Iterator[tuple[str, str]]:
    """A kernel kept here must be a file inside the repository, reached through no symbolic link; only
    then is its sha256 read (never that of a file outside the repository)."""
    src, why = inside_repository(repo, relpath)
    if src is None:
        yield "kernel.path", f"{relpath} {why}; commit the kernel file itself"
    elif not src.is_file():
        yield "kernel.path", f"{relpath} is not a file in the repository"
    else:
        try:
            digest = hashlib.sha256(src.read_text(encoding="utf-8").encode("utf-8")).hexdigest()
        except (OSError, UnicodeDecodeError) as exc:
            yield "kernel.path", f"{relpath} cannot be read as UTF-8 text ({exc.__class__.__name__})"
            return
        if digest != sha256:
            yield "kernel.sha256", f"does not match {relpath} (its sha256 is {digest})"
