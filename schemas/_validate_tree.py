"""The records tree as the validator walks it, and the checks that look across files: duplicates,
reproductions and their originals, baseline ids, colliding names, and the benchmark rows the site reads."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ._io import RecordError, inside_repository, parse_record, printable, read_json
from ._protocols import baseline_versions
from ._record import BaselineRecord, Record
from ._validate_names import PAGE_OF, collisions
from ._validate_rows import check_rows_file, rows_files


@dataclass(frozen=True)
class Finding:
    """One problem found in one file; ``str()`` is ``path: field: reason``.

    Every part is kept printable (control characters escaped), so a file or folder name can neither
    break the one-line format nor write a workflow command into a CI log."""

    path: str
    field: str
    reason: str

    def __post_init__(self) -> None:
        for name in ("path", "field", "reason"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        """The finding as a JSON-ready mapping."""
        return asdict(self)


@dataclass(frozen=True)
class Loaded:
    """A file that passed the schema, with where it was found."""

    path: Path
    shown: str
    rel: PurePosixPath | None
    record: Record | BaselineRecord


def shown_path(path: Path) -> str:
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(path)
    return shown if shown[:1].isalnum() or shown[:1] in "/._" else "./" + shown  # never a command's "::"


def rel_path(path: Path, root: Path) -> PurePosixPath | None:
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        return None


def iter_record_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every file named, and every file under each folder named, sorted; hidden folders are walked too
    (the site reads some of them), and a symbolically linked folder is yielded, not entered."""
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                links = [d for d in dirnames if Path(dirpath, d).is_symlink()]
                for name in sorted(filenames + links):
                    yield Path(dirpath, name)
        else:
            yield p


def repro_ref_faults(ref: str) -> Iterator[tuple[str, str]]:
    parts = re.split(r"[\\/]", ref)
    if ref.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", ref) or ".." in parts:
        yield "reproduces", "must be a repository path without '..', not an absolute path"
    elif parts[0] != "records" or not ref.endswith(".json") or ref.endswith("__repro.json"):
        yield "reproduces", "must name an original record, records/...json"


def _key(rec: Record | BaselineRecord) -> tuple[Any, ...]:
    p = rec.problem
    if isinstance(rec, BaselineRecord):
        return ("baseline", rec.environment.hardware, rec.protocol.name, p.suite, p.level, p.id, rec.kind,
                tuple(f.token for f in rec.algorithm_flags))
    return ("record", rec.environment.hardware, rec.model.name, rec.model.sample, p.suite, p.level, p.id,
            rec.protocol.name, rec.reproduces)


def check_duplicates(loaded: list[Loaded]) -> list[Finding]:
    out: list[Finding] = []
    first: dict[tuple[Any, ...], Loaded] = {}
    problems: dict[tuple[str, int, int], dict[str, Loaded]] = defaultdict(dict)
    for item in loaded:
        key = _key(item.record)
        if key in first:
            out.append(Finding(item.shown, "(duplicate)", f"same evaluation as {first[key].shown}"))
        else:
            first[key] = item
        p = item.record.problem
        problems[(p.suite, p.level, p.id)].setdefault(f"{p.name}\0{p.source_sha256}", item)
    for (suite, level, pid), variants in problems.items():
        if len(variants) > 1:
            items = list(variants.values())
            for other in items[1:]:
                out.append(Finding(other.shown, "problem", (
                    f"conflicts with {items[0].shown}: problem {suite} level {level} id {pid} "
                    "has a different name or source_sha256 there")))
    return out


def check_reproductions(loaded: list[Loaded], repo: Path) -> list[Finding]:
    """A reproduction must name an original that exists and re-ran the same kernel, problem and protocol."""
    by_path = {item.path.resolve(): item.record for item in loaded}
    out: list[Finding] = []
    for item in loaded:
        rec = item.record
        if not isinstance(rec, Record) or rec.reproduces is None or list(repro_ref_faults(rec.reproduces)):
            continue
        inside, why = inside_repository(repo, rec.reproduces)
        if inside is None:
            out.append(Finding(item.shown, "reproduces", f"{rec.reproduces} {why}"))
            continue
        target = inside.resolve()
        original = by_path.get(target)
        if original is None and target.is_file():
            try:
                original = parse_record(read_json(target), rec.reproduces)
            except RecordError:
                continue  # reported against the original itself
        if not isinstance(original, Record):
            out.append(Finding(item.shown, "reproduces", f"{rec.reproduces} is not a record in the repository"))
            continue
        for field, mine, theirs in (("kernel.sha256", rec.kernel.sha256, original.kernel.sha256),
                                    ("problem.source_sha256", rec.problem.source_sha256,
                                     original.problem.source_sha256),
                                    ("protocol.name", rec.protocol.name, original.protocol.name),
                                    ("environment.hardware", rec.environment.hardware, original.environment.hardware)):
            if mine != theirs:
                out.append(Finding(item.shown, field, f"differs from the original {rec.reproduces} ({theirs})"))
    return out


def check_baseline_ids(loaded: list[Loaded], root: Path) -> list[Finding]:
    """An original record's ``baseline_id`` names a baseline record under ``root`` of the same problem,
    protocol, hardware and kind, and the record holds that baseline's very timing. A reproduction
    (a maintainer's file) times its baselines afresh and keeps none, so its ids name only where the
    layout would put them and are not looked up."""
    by_rel = {item.rel: item.record for item in loaded if item.rel is not None}
    out: list[Finding] = []
    for item in loaded:
        rec = item.record
        if not isinstance(rec, Record) or rec.reproduces is not None:
            continue
        for i, b in enumerate(rec.baselines):
            if b.baseline_id is None:
                continue
            reason = _baseline_fault(rec, b, by_rel, root)
            if reason is not None:
                out.append(Finding(item.shown, f"baselines[{i}].baseline_id", reason))
    return out


def _baseline_fault(rec: Record, b: Any, by_rel: dict[PurePosixPath, Record | BaselineRecord],
                    root: Path) -> str | None:
    target, why = inside_repository(root, b.baseline_id)
    if target is None:
        return f"{b.baseline_id!r} {why} (records folder)"
    stored = by_rel.get(PurePosixPath(target.relative_to(root.resolve()).as_posix()))
    if stored is None and target.is_file():
        try:
            stored = parse_record(read_json(target), b.baseline_id)
        except RecordError:
            return f"{b.baseline_id!r} is not a valid baseline record"
    if not isinstance(stored, BaselineRecord):
        return f"{b.baseline_id!r} is not a baseline record under the records folder"
    mine = (rec.problem, rec.protocol.name, rec.environment.hardware, b.kind)
    theirs = (stored.problem, stored.protocol.name, stored.environment.hardware, stored.kind)
    if mine != theirs or stored.protocol.version not in baseline_versions(rec.protocol.name, rec.protocol.version):
        return f"{b.baseline_id!r} is a baseline of another problem, protocol, hardware or kind"
    if stored.timing != b.timing:
        return f"the timing differs from that of {b.baseline_id!r}, which it names as its source"
    return None


def _named(loaded: list[Loaded], root: Path, complete: bool) -> list[tuple[str, str, str]]:
    """(shown, field, name) of every page-making name: of the files checked, and, where only some files
    were named, of every other record under ``root`` (read leniently; they are not being checked)."""
    named = [(item.shown, field, _value(item.record, field)) for item in loaded for field in PAGE_OF
             if isinstance(item.record, Record) or field != "model.name"]
    if complete or not root.is_dir():
        return named
    seen = {item.path.resolve() for item in loaded}
    for path in iter_record_files([root]):
        rel = rel_path(path, root)
        if path.suffix != ".json" or path.resolve() in seen or rel is None or rel.parts[0] == "_audits":
            continue
        try:
            data = read_json(path)
        except (RecordError, OSError):
            continue
        for field in PAGE_OF:
            value = _dig(data, field)
            if isinstance(value, str):
                named.append((shown_path(path), field, value))
    return named


def _value(rec: Record | BaselineRecord, field: str) -> str:
    head, tail = field.split(".")
    return getattr(getattr(rec, head), tail)


def _dig(data: dict[str, Any], field: str) -> Any:
    head, tail = field.split(".")
    part = data.get(head)
    return part.get(tail) if isinstance(part, dict) else None


def check_collisions(loaded: list[Loaded], root: Path, complete: bool) -> list[Finding]:
    checked = {item.shown for item in loaded}
    return [Finding(shown, field, reason) for shown, field, reason in collisions(_named(loaded, root, complete))
            if shown in checked]


def check_rows(repo: Path) -> list[Finding]:
    out = []
    for path in rows_files(repo):
        shown = shown_path(path)
        out += [Finding(shown, field, reason) for field, reason in check_rows_file(path, repo, shown)]
    return out
