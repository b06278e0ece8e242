"""Repository-level validation of the files under ``records/``, without torch.

``validate(paths, root)`` checks exactly what the site reads (records, reproductions, baselines, audit
reports, hidden folders included, and the benchmark rows) and what the pydantic models alone cannot:
strict JSON and strict types, that each file sits where its content says it belongs, that no two files
claim the same evaluation, that a record carries the parameters its protocol version pins
(``PROTOCOLS``, the one table of them), that speedups follow from the times they list, that statuses
agree with the evidence, that names are in one written form and collide with no other, and that
sources stay inside the repository. Every problem is a ``Finding`` that prints as one line,
``path: field: reason``, with control characters escaped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from ._io import RecordError, parse_record, read_json, record_relpath, slug, validate_strict
from ._io import baseline_relpath as _baseline_relpath
from ._manifest import MANIFEST_RELPATH, manifest_problems
from ._protocols import PROTOCOLS, Pinned
from ._record import BaselineRecord, Record
from ._validate_evidence import speedup_faults, status_faults, timing_faults, value_faults
from ._validate_names import NORMAL_FORM_FIELDS, bad_char, normal_form_problem
from ._validate_protocol import pinned_faults, trial_faults
from ._validate_source import source_faults
from ._validate_tree import (
    Finding,
    Loaded,
    check_baseline_ids,
    check_collisions,
    check_duplicates,
    check_reproductions,
    check_rows,
    iter_record_files,
    rel_path,
    shown_path,
)

__all__ = ["PROTOCOLS", "Finding", "Pinned", "iter_record_files", "validate"]

MAX_STRING_CHARS = 20_000
"""Longest string accepted anywhere in a record (the schema sets tighter limits on most fields)."""
MAX_LIST_ITEMS = 5_000
"""Longest list accepted anywhere in a record."""
MAX_NUMBER = 1e18
"""Largest magnitude of a number accepted anywhere in a record (sums and ratios of such stay finite)."""
MAX_ABS_ERROR = 1e300
"""Largest ``max_abs_error`` accepted: an output of large values (a product reduction overflowing towards float32's
limit) has a large absolute error however small its relative one, and the site only shows the figure."""
FUTURE_SLACK = timedelta(days=1)
"""How far past the validator's clock a timestamp may lie (clocks and time zones set wrongly)."""
NAME_FIELDS = ("model.name", "model.provider", "problem.suite", "problem.name", "environment.device_name",
               "protocol.distributions", "labels", "integrity.name", "correctness.name")
"""Fields shown as names on the site: control and bidirectional-override characters are refused there."""
ALLOWED_EXTRA_FILES = frozenset({"README.md", ".gitkeep", MANIFEST_RELPATH.name, MANIFEST_RELPATH.with_suffix(".lock").name})
"""Non-record files tolerated under ``records/``."""


def validate(paths: Iterable[str | os.PathLike[str]] | None = None, root: str | os.PathLike[str] = "records",
             repo_root: str | os.PathLike[str] | None = None) -> list[Finding]:
    """Validate record files (default: everything under ``root``, and the benchmark rows the site reads
    from the repository); an empty list means all is well.

    ``repo_root`` (default: the folder above ``root``) is where kernel sources named by
    ``kernel.path`` are looked up to confirm their sha256. Names are checked for collisions with the
    records already under ``root`` even when ``paths`` names only some files. One file that cannot be
    checked never hides the findings of the others.
    """
    root_p = Path(root)
    repo = Path(repo_root) if repo_root is not None else root_p.resolve().parent
    files = list(iter_record_files([Path(p) for p in paths] if paths is not None else [root_p]))
    findings: list[Finding] = []
    loaded: list[Loaded] = []
    for path in files:
        shown, rel = shown_path(path), rel_path(path, root_p)
        try:
            file_findings, item = _check_file(path, shown, rel)
            if item is not None:
                file_findings += _check_record(item, repo)
                loaded.append(item)
        except (OSError, RecursionError, ValueError) as exc:
            file_findings = [Finding(shown, "(file)", f"cannot be checked: {type(exc).__name__}: {exc}")]
        findings += file_findings
    findings += [Finding(shown_path(p), "(manifest)", why) for p, why in manifest_problems(root_p, files)]
    findings += check_duplicates(loaded)
    findings += check_reproductions(loaded, repo)
    findings += check_baseline_ids(loaded, root_p)
    findings += check_collisions(loaded, root_p, complete=paths is None)
    if paths is None:
        findings += check_rows(repo)
    return findings


def _hidden(rel: PurePosixPath | None) -> str | None:
    for part in (rel.parts if rel is not None else ()):
        if part.startswith(".") and part != ".gitkeep":
            return part
    return None


def _check_file(path: Path, shown: str, rel: PurePosixPath | None) -> tuple[list[Finding], Loaded | None]:
    if path.is_symlink():
        return [Finding(shown, "(file)", "symbolic links are not accepted under records/")], None
    if not path.is_file():
        return [Finding(shown, "(file)", "no such file" if not path.exists() else "not a regular file")], None
    hidden = _hidden(rel)
    out = [Finding(shown, "(file)", f"hidden name {hidden!r}: hidden files and folders are not accepted under "
                                    "records/ (the site reads some of them)")] if hidden else []
    if path.suffix != ".json":
        if path.name in ALLOWED_EXTRA_FILES:
            return out, None
        return out + [Finding(shown, "(file)", "not a record: files under records/ must be .json records")], None
    if rel is not None and rel.parts and rel.parts[0] == "_audits":
        return out + _check_audit(path, shown, rel), None
    try:
        data = read_json(path)
        limits = list(_check_limits(data, shown))
        if limits:
            return out + limits, None
        record = parse_record(data, shown)
    except RecordError as exc:
        return out + [Finding(shown, exc.field or "(file)", exc.message.removeprefix("Value error, "))], None
    return out, Loaded(path, shown, rel, record)


def _walk(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    yield where, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]")


def _check_limits(data: dict[str, Any], shown: str) -> Iterator[Finding]:
    for where, value in _walk(data, ""):
        if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
            yield Finding(shown, where, f"string of {len(value)} characters, over the {MAX_STRING_CHARS} limit")
        elif isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
            yield Finding(shown, where, f"list of {len(value)} items, over the {MAX_LIST_ITEMS} limit")
        elif isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > _limit(where):
            yield Finding(shown, where, f"number {value:.6g} is out of range (at most {_limit(where):g} in magnitude)")


def _limit(where: str) -> float:
    return MAX_ABS_ERROR if where.endswith(".max_abs_error") else MAX_NUMBER


def _check_audit(path: Path, shown: str, rel: PurePosixPath) -> list[Finding]:
    if len(rel.parts) != 3:
        return [Finding(shown, "(layout)", "audit reports live at records/_audits/<hardware>/<suite>.json")]
    from ._audit import AuditReport

    try:
        data = read_json(path)
        limits = list(_check_limits(data, shown))
        if limits:
            return limits
        report = validate_strict(AuditReport, data, shown)
    except RecordError as exc:
        return [Finding(shown, exc.field or "(file)", exc.message.removeprefix("Value error, "))]
    out = []
    if report.hardware != rel.parts[1]:
        out.append(Finding(shown, "hardware", f"{report.hardware!r} does not match the folder {rel.parts[1]!r}"))
    if rel.name not in (f"{report.suite}.json", f"{slug(report.suite)}.json"):
        out.append(Finding(shown, "suite", f"{report.suite!r} does not match the file name {rel.name!r}"))
    out += [Finding(shown, f, r) for f, r in _timestamp("timestamp", report.timestamp)]
    for i, problem in enumerate(report.problems):
        for field, text in (("name", problem.name), ("key", problem.key)):
            if bad := bad_char(text):
                out.append(Finding(shown, f"problems[{i}].{field}", f"control character {bad} in a name"))
    return out


def _pin(rec: Record | BaselineRecord) -> Pinned | None:
    known = PROTOCOLS.get(rec.protocol.name)
    return known["pinned"].get(rec.protocol.version) if known else None


def _check_record(item: Loaded, repo: Path) -> list[Finding]:
    rec, shown = item.record, item.shown
    out = [Finding(shown, f, r) for f, r in _layout(item)]
    out += [Finding(shown, f, r) for f, r in _protocol(rec)]
    pin = _pin(rec)
    out += [Finding(shown, f, r) for f, r in (pinned_faults(rec, pin) if pin else [])]
    out += [Finding(shown, f, r) for f, r in _environment(rec)]
    out += [Finding(shown, f, r) for f, r in _timestamp("environment.timestamp", rec.environment.timestamp)]
    out += [Finding(shown, f, r) for f, r in _names(rec)]
    out += [Finding(shown, f, r) for f, r in timing_faults("timing", rec.timing)]
    out += [Finding(shown, f, r) for f, r in value_faults(rec)]
    if isinstance(rec, Record):
        for i, b in enumerate(rec.baselines):
            out += [Finding(shown, f, r) for f, r in timing_faults(f"baselines[{i}].timing", b.timing)]
        out += [Finding(shown, f, r) for f, r in status_faults(rec, pin)]
        out += [Finding(shown, f, r) for f, r in (trial_faults(rec, pin) if pin else [])]
        out += [Finding(shown, f, r) for f, r in speedup_faults(rec)]
        out += [Finding(shown, f, r) for f, r in source_faults(rec, repo)]
    return out


def _layout(item: Loaded) -> Iterator[tuple[str, str]]:
    rec, rel = item.record, item.rel
    expected = PurePosixPath(
        (_baseline_relpath(rec) if isinstance(rec, BaselineRecord) else record_relpath(rec)).as_posix())
    if rel is None:
        yield "(layout)", f"not under the records folder; records live at records/{expected}"
    elif rel != expected:
        yield "(layout)", f"path does not match the record's content: expected records/{expected}"


def _protocol(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    known = PROTOCOLS.get(rec.protocol.name)
    if known is None:
        yield "protocol.name", f"unknown protocol {rec.protocol.name!r}"
        return
    if rec.protocol.version not in known["versions"]:
        yield "protocol.version", (f"unknown version {rec.protocol.version!r} of protocol {rec.protocol.name!r} "
                                   f"(known: {', '.join(known['versions'])})")
    if rec.protocol.timing.statistic != known["statistic"]:
        yield "protocol.timing.statistic", (f"protocol {rec.protocol.name!r} uses the {known['statistic']}, "
                                            f"record says {rec.protocol.timing.statistic!r}")
    if rec.protocol.tf32_baseline != known["tf32_baseline"]:
        yield "protocol.tf32_baseline", f"protocol {rec.protocol.name!r} has tf32_baseline={known['tf32_baseline']}"
    kinds = [rec.kind] if isinstance(rec, BaselineRecord) else [b.kind for b in rec.baselines]
    field = "kind" if isinstance(rec, BaselineRecord) else "baselines"
    for kind in kinds:
        if kind not in known["baseline_kinds"]:
            yield field, f"baseline kind {kind!r} is not part of protocol {rec.protocol.name!r}"
    if len(set(kinds)) != len(kinds):
        yield "baselines", "a baseline kind is listed more than once"


def _timestamp(where: str, when: datetime) -> Iterator[tuple[str, str]]:
    if when.tzinfo is None or when.utcoffset() is None:
        yield where, "must name its time zone (UTC, e.g. a trailing 'Z')"
    elif when > datetime.now(UTC) + FUTURE_SLACK:
        yield where, f"{when.isoformat()} lies in the future"


def _environment(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    env = rec.environment
    for name in ("device_name", "torch", "python", "harness_version"):
        if not str(getattr(env, name)).strip():
            yield f"environment.{name}", "must not be empty"
    if env.hardware != "cpu":
        for name in ("driver", "cuda"):
            if not getattr(env, name):
                yield f"environment.{name}", f"required for GPU hardware {env.hardware!r}"


def _names(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    data = rec.model_dump(mode="json")
    for where, value in _walk(data, ""):
        if not isinstance(value, str):
            continue
        generic = re.sub(r"\[\d+\]", "", where)
        if generic in NAME_FIELDS and (bad := bad_char(value)):
            yield where, f"control character {bad} in a name (names are shown as text on the site)"
        elif generic in NORMAL_FORM_FIELDS and (problem := normal_form_problem(value)):
            yield where, problem
