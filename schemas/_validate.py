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

import hashlib
import math
import os
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ._io import RecordError, inside_repository, parse_record, read_json, record_relpath, slug, validate_strict
from ._io import baseline_relpath as _baseline_relpath
from ._manifest import MANIFEST_RELPATH, manifest_problems
from ._protocols import PROTOCOLS, Pinned
from ._record import BaselineRecord, Record
from ._timing import speedup_between, statistic_ms
from ._validate_names import NORMAL_FORM_FIELDS, bad_char, normal_form_problem
from ._validate_protocol import pinned_faults, trial_faults
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
    repro_ref_faults,
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
MAX_INT32 = 2**31 - 1
"""Largest problem id (the site keeps ids as 32-bit integers)."""
FUTURE_SLACK = timedelta(days=1)
"""How far past the validator's clock a timestamp may lie (clocks and time zones set wrongly)."""
SPEEDUP_REL_TOL = 1e-3
"""Relative tolerance of speedup = baseline time / candidate time (rounding of stored values)."""
SPEEDUP_ABS_TOL = 5e-3
"""Absolute tolerance of the same check, so speedups rounded to two decimals still pass."""
NAME_FIELDS = ("model.name", "model.provider", "problem.suite", "problem.name", "environment.device_name",
               "protocol.distributions", "labels", "integrity.name", "correctness.name")
"""Fields shown as names on the site: control and bidirectional-override characters are refused there."""
ALLOWED_EXTRA_FILES = frozenset({"README.md", ".gitkeep", MANIFEST_RELPATH.name, MANIFEST_RELPATH.with_suffix(".lock").name})
"""Non-record files tolerated under ``records/``."""
ERROR_FIELDS = ("max_abs_error", "error_budget_used", "fp32_strict_budget_used", "fp32_tf32_budget_used")
"""Error measures of a correctness check: never negative."""
_HEX_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


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
    out += [Finding(shown, f, r) for f, r in _timing_order("timing", rec.timing)]
    out += [Finding(shown, f, r) for f, r in _values(rec)]
    if isinstance(rec, Record):
        for i, b in enumerate(rec.baselines):
            out += [Finding(shown, f, r) for f, r in _timing_order(f"baselines[{i}].timing", b.timing)]
        out += [Finding(shown, f, r) for f, r in _status(rec)]
        out += [Finding(shown, f, r) for f, r in (trial_faults(rec, pin) if pin else [])]
        out += [Finding(shown, f, r) for f, r in _speedups(rec)]
        out += [Finding(shown, f, r) for f, r in _source(rec, repo)]
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


def _timings(rec: Record | BaselineRecord) -> Iterator[tuple[str, Any]]:
    yield "timing", rec.timing
    for i, b in enumerate(rec.baselines if isinstance(rec, Record) else []):
        yield f"baselines[{i}].timing", b.timing


def _values(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    """Values the schema's types allow but no measurement gives: times of zero, negative errors, huge ids."""
    for where, t in _timings(rec):
        if t is not None and (t.mean_ms <= 0 or t.median_ms <= 0):
            yield where, "a time of zero is not a measurement (mean_ms and median_ms must be positive)"
    for i, check in enumerate(rec.correctness if isinstance(rec, Record) else []):
        for field in ERROR_FIELDS:
            value = getattr(check, field)
            if value is not None and value < 0:
                yield f"correctness[{i}].{field}", f"an error is never negative, got {value}"
    if rec.problem.id > MAX_INT32:
        yield "problem.id", f"must be at most {MAX_INT32}"


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


def _timing_order(where: str, t: Any) -> Iterator[tuple[str, str]]:
    if t is None:
        return
    slack = 1e-9 + 1e-6 * t.max_ms
    for stat in ("mean_ms", "median_ms"):
        if not t.min_ms - slack <= getattr(t, stat) <= t.max_ms + slack:
            yield f"{where}.{stat}", f"{getattr(t, stat)} lies outside [min_ms, max_ms] = [{t.min_ms}, {t.max_ms}]"
    if t.q1_ms is not None and t.q3_ms is not None and not t.q1_ms - slack <= t.median_ms <= t.q3_ms + slack:
        yield f"{where}.median_ms", f"{t.median_ms} lies outside [q1_ms, q3_ms] = [{t.q1_ms}, {t.q3_ms}]"
    lo, hi = t.ci95_low_ms, t.ci95_high_ms
    if lo is not None and hi is not None and not lo - slack <= t.median_ms <= hi + slack:
        yield f"{where}.median_ms", f"{t.median_ms} lies outside its 95% CI [{lo}, {hi}]"
    for i, value in enumerate(t.round_medians_ms or []):  # a median of some of the samples
        if not t.min_ms - slack <= value <= t.max_ms + slack:
            yield (f"{where}.round_medians_ms", f"round {i}'s median {value} lies outside [min_ms, max_ms] = "
                   f"[{t.min_ms}, {t.max_ms}]")
            break


def _status(rec: Record) -> Iterator[tuple[str, str]]:
    pin = _pin(rec)
    wrong_answer = dict(pin.incorrect_checks) if pin else {}  # check -> reason, where a version has them
    failed_checks = [c.name for c in rec.integrity if not c.passed]
    hacks = [name for name in failed_checks if name not in wrong_answer]
    found = {wrong_answer[name] for name in failed_checks if name in wrong_answer}
    failed_trials = [c.name for c in rec.correctness if not c.passed]
    if rec.status == "correct":
        if not rec.correctness:
            yield "status", "'correct' needs at least one correctness trial"
        if rec.timing is None:
            yield "status", "'correct' needs the candidate's timing"
    elif rec.status == "hacked" and not hacks:
        yield "status", ("'hacked' needs a failed integrity check" + (
            f" other than those of a wrong answer ({', '.join(sorted(wrong_answer))}: 'incorrect')" if found else ""))
    elif rec.status == "incorrect":
        yield from _incorrect(rec, failed_trials, found, wrong_answer)
    elif rec.status in ("compile_error", "runtime_error", "timeout") and not (rec.error or "").strip():
        yield "error", f"status {rec.status!r} needs the error text"
    if rec.status != "hacked" and hacks:
        yield "status", f"integrity check {hacks[0]!r} failed, so the status must be 'hacked'"


def _incorrect(rec: Record, failed_trials: list[str], found: set[str],
               wrong_answer: dict[str, str]) -> Iterator[tuple[str, str]]:
    """An ``incorrect`` record shows its wrong answer: a failed trial or, from verified 1.3, a failed check of a
    wrong answer, and (where its version classes them) the reason that names it."""
    if not failed_trials and not found:
        yield "status", "'incorrect' needs a failed correctness trial" + (
            f" or a failed check of a wrong answer ({', '.join(sorted(wrong_answer))})" if wrong_answer else "")
    if not wrong_answer:
        return
    if rec.reason is None:
        yield "reason", f"{rec.protocol.name} {rec.protocol.version} names why an 'incorrect' record is wrong"
    elif rec.reason == "wrong-answer" and not failed_trials:
        yield "reason", "'wrong-answer' needs a failed correctness trial"
    elif rec.reason != "wrong-answer" and rec.reason not in found:
        check = next((c for c, r in wrong_answer.items() if r == rec.reason), rec.reason)
        yield "reason", f"reason {rec.reason!r} needs its check {check!r} failed"


def _speedups(rec: Record) -> Iterator[tuple[str, str]]:
    known = PROTOCOLS.get(rec.protocol.name)
    if known is None:
        return
    stat = rec.protocol.timing.statistic + "_ms"
    by_kind = {b.kind: b for b in rec.baselines}
    for column, value in rec.speedup.model_dump().items():
        if value is None:
            continue
        kind = known["speedups"].get(column)
        field = f"speedup.{column}"
        if kind is None:
            yield field, f"protocol {rec.protocol.name!r} has no {column} speedup"
        elif rec.timing is None:
            yield field, "a speedup needs the candidate's timing"
        elif kind not in by_kind:
            yield field, f"a speedup needs the {kind} baseline among the record's baselines"
        else:
            base_timing = by_kind[kind].timing
            expected = speedup_between(rec.timing, base_timing, rec.protocol.timing.statistic)
            expected = math.inf if expected is None else expected
            if math.isclose(value, expected, rel_tol=SPEEDUP_REL_TOL, abs_tol=SPEEDUP_ABS_TOL):
                continue
            if rec.timing.round_medians_ms and base_timing.round_medians_ms:
                yield field, (f"{value} disagrees with the median of the per-round ratios {kind} / candidate "
                              f"of their round_medians_ms = {expected:.6g} (both were timed in turns)")
            else:
                name = rec.protocol.timing.statistic
                cand, base = statistic_ms(rec.timing, name), statistic_ms(base_timing, name)
                yield field, (f"{value} disagrees with {kind} {stat} / candidate {stat} "
                              f"= {base} / {cand} = {expected:.6g}")


def _source(rec: Record, repo: Path) -> Iterator[tuple[str, str]]:
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


