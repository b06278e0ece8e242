"""Repository-level validation of the files under ``records/``, without torch.

``validate(paths, root)`` checks what the pydantic models alone cannot: that each file sits where its
content says it belongs, that no two files claim the same evaluation, that speedups follow from the
times they list, that statuses agree with the evidence, and that names and sources are safe to show.
Every problem is a ``Finding`` that prints as one line, ``path: field: reason``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ._io import RecordError, parse_record, read_json, record_relpath, slug
from ._io import baseline_relpath as _baseline_relpath
from ._manifest import manifest_problems
from ._record import BaselineRecord, Record, speedup_between, statistic_ms

PROTOCOLS: dict[str, dict[str, Any]] = {
    "standard": {"versions": ("1.0",), "statistic": "mean", "tf32_baseline": False,
                 "baseline_kinds": ("eager_fp32",),
                 "speedups": {"vs_eager": "eager_fp32", "vs_eager_fp32": "eager_fp32"}},
    "verified": {"versions": ("1.0", "1.1"), "statistic": "median", "tf32_baseline": True,
                 "baseline_kinds": ("eager_tf32", "compile", "eager_fp32"),
                 "speedups": {"vs_eager": "eager_tf32", "vs_compile": "compile", "vs_eager_fp32": "eager_fp32"}},
}
"""Known protocols: accepted versions, the timing statistic speedups use, baseline kinds, speedup columns."""

MAX_STRING_CHARS = 20_000
"""Longest string accepted anywhere in a record (the schema sets tighter limits on most fields)."""
MAX_LIST_ITEMS = 5_000
"""Longest list accepted anywhere in a record."""
SPEEDUP_REL_TOL = 1e-3
"""Relative tolerance of speedup = baseline time / candidate time (rounding of stored values)."""
SPEEDUP_ABS_TOL = 5e-3
"""Absolute tolerance of the same check, so speedups rounded to two decimals still pass."""
NAME_FIELDS = ("model.name", "model.provider", "problem.suite", "problem.name", "environment.device_name",
               "protocol.distributions", "labels", "integrity.name", "correctness.name")
"""Fields shown as names on the site: control and bidirectional-override characters are refused there."""
ALLOWED_EXTRA_FILES = frozenset({"README.md", ".gitkeep"})
"""Non-record files tolerated under ``records/``."""
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HEX_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class Finding:
    """One problem found in one file; ``str()`` is ``path: field: reason``."""

    path: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.reason}"

    def as_dict(self) -> dict[str, str]:
        """The finding as a JSON-ready mapping."""
        return asdict(self)


@dataclass(frozen=True)
class _Loaded:
    """A file that passed the schema, with where it was found."""

    path: Path
    shown: str
    rel: PurePosixPath | None
    record: Record | BaselineRecord


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _rel(path: Path, root: Path) -> PurePosixPath | None:
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        return None


def iter_record_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every file named, and every file under each folder named (hidden folders skipped), sorted."""
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                links = [d for d in dirnames if Path(dirpath, d).is_symlink()]
                for name in sorted(filenames + links):
                    yield Path(dirpath, name)
        else:
            yield p


def validate(paths: Iterable[str | os.PathLike[str]] | None = None, root: str | os.PathLike[str] = "records",
             repo_root: str | os.PathLike[str] | None = None) -> list[Finding]:
    """Validate record files (default: everything under ``root``); an empty list means all is well.

    ``repo_root`` (default: the folder above ``root``) is where kernel sources named by
    ``kernel.path`` are looked up to confirm their sha256.
    """
    root_p = Path(root)
    repo = Path(repo_root) if repo_root is not None else root_p.resolve().parent
    files = list(iter_record_files([Path(p) for p in paths] if paths is not None else [root_p]))
    findings: list[Finding] = []
    loaded: list[_Loaded] = []
    for path in files:
        shown, rel = _shown(path), _rel(path, root_p)
        file_findings, item = _check_file(path, shown, rel)
        findings += file_findings
        if item is not None:
            findings += _check_record(item, repo)
            loaded.append(item)
    findings += _check_duplicates(loaded)
    findings += _check_reproductions(loaded, repo)
    findings += [Finding(_shown(p), "(manifest)", why) for p, why in manifest_problems(root_p, files)]
    return findings


def _check_file(path: Path, shown: str, rel: PurePosixPath | None) -> tuple[list[Finding], _Loaded | None]:
    if path.is_symlink():
        return [Finding(shown, "(file)", "symbolic links are not accepted under records/")], None
    if not path.is_file():
        return [Finding(shown, "(file)", "no such file")], None
    if path.suffix != ".json":
        if path.name in ALLOWED_EXTRA_FILES:
            return [], None
        return [Finding(shown, "(file)", "not a record: files under records/ must be .json records")], None
    if rel is not None and rel.parts and rel.parts[0] == "_audits":
        return _check_audit(path, shown, rel), None
    try:
        data = read_json(path)
        limits = list(_check_limits(data, shown))
        if limits:
            return limits, None
        record = parse_record(data, shown)
    except RecordError as exc:
        return [Finding(shown, exc.field or "(file)", exc.message.removeprefix("Value error, "))], None
    return [], _Loaded(path, shown, rel, record)


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


def _check_audit(path: Path, shown: str, rel: PurePosixPath) -> list[Finding]:
    if len(rel.parts) != 3:
        return [Finding(shown, "(layout)", "audit reports live at records/_audits/<hardware>/<suite>.json")]
    try:
        data = read_json(path)
    except RecordError as exc:
        return [Finding(shown, exc.field or "(file)", exc.message)]
    try:
        from ._audit import AuditReport  # written alongside; absent in early checkouts
    except ImportError:
        return []
    from pydantic import ValidationError

    try:
        report = AuditReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(record)"
        return [Finding(shown, field, err["msg"])]
    out = []
    if report.hardware != rel.parts[1]:
        out.append(Finding(shown, "hardware", f"{report.hardware!r} does not match the folder {rel.parts[1]!r}"))
    if rel.name not in (f"{report.suite}.json", f"{slug(report.suite)}.json"):
        out.append(Finding(shown, "suite", f"{report.suite!r} does not match the file name {rel.name!r}"))
    return out


def _check_record(item: _Loaded, repo: Path) -> list[Finding]:
    rec, shown = item.record, item.shown
    out = [Finding(shown, f, r) for f, r in _layout(item)]
    out += [Finding(shown, f, r) for f, r in _protocol(rec)]
    out += [Finding(shown, f, r) for f, r in _environment(rec)]
    out += [Finding(shown, f, r) for f, r in _names(rec)]
    out += [Finding(shown, f, r) for f, r in _timing_order("timing", rec.timing)]
    if isinstance(rec, Record):
        for i, b in enumerate(rec.baselines):
            out += [Finding(shown, f, r) for f, r in _timing_order(f"baselines[{i}].timing", b.timing)]
        out += [Finding(shown, f, r) for f, r in _status(rec)]
        out += [Finding(shown, f, r) for f, r in _speedups(rec)]
        out += [Finding(shown, f, r) for f, r in _source(rec, repo)]
    return out


def _layout(item: _Loaded) -> Iterator[tuple[str, str]]:
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


def _environment(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    env = rec.environment
    for name in ("device_name", "torch", "python", "harness_version"):
        if not str(getattr(env, name)).strip():
            yield f"environment.{name}", "must not be empty"
    if env.hardware != "cpu":
        for name in ("driver", "cuda"):
            if not getattr(env, name):
                yield f"environment.{name}", f"required for GPU hardware {env.hardware!r}"


def _bad_char(text: str) -> str | None:
    for ch in text:
        if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return f"U+{ord(ch):04X}"
    return None


def _names(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    data = rec.model_dump(mode="json")
    for where, value in _walk(data, ""):
        if not isinstance(value, str):
            continue
        generic = re.sub(r"\[\d+\]", "", where)
        if generic in NAME_FIELDS:
            bad = _bad_char(value)
            if bad:
                yield where, f"control character {bad} in a name (names are shown as text on the site)"


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
    failed_checks = [c.name for c in rec.integrity if not c.passed]
    failed_trials = [c.name for c in rec.correctness if not c.passed]
    if rec.status == "correct":
        if not rec.correctness:
            yield "status", "'correct' needs at least one correctness trial"
        if rec.timing is None:
            yield "status", "'correct' needs the candidate's timing"
    elif rec.status == "hacked" and not failed_checks:
        yield "status", "'hacked' needs a failed integrity check"
    elif rec.status == "incorrect" and not failed_trials:
        yield "status", "'incorrect' needs a failed correctness trial"
    elif rec.status in ("compile_error", "runtime_error", "timeout") and not (rec.error or "").strip():
        yield "error", f"status {rec.status!r} needs the error text"
    if rec.status != "hacked" and failed_checks:
        yield "status", f"integrity check {failed_checks[0]!r} failed, so the status must be 'hacked'"


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
        if not k.url.startswith("https://"):
            yield "kernel.url", "must be an https:// URL"
        if k.commit is None or not _HEX_COMMIT.match(k.commit):
            yield "kernel.commit", "must be a commit hash (7 to 40 lowercase hex digits)"
    if k.row is not None and not (k.path or "").endswith((".jsonl", ".json")):
        yield "kernel.row", "a row needs a JSON-lines file as kernel.path"
    if rec.reproduces is not None:
        yield from _repro_ref(rec.reproduces)
    if k.url is None and k.path is not None and k.row is None:
        src = repo / k.path
        if src.is_symlink():
            yield "kernel.path", f"{k.path} is a symbolic link; commit the kernel file itself"
        elif not src.is_file():
            yield "kernel.path", f"{k.path} is not a file in the repository"
        else:
            try:
                digest = hashlib.sha256(src.read_text(encoding="utf-8").encode("utf-8")).hexdigest()
            except (OSError, UnicodeDecodeError) as exc:
                yield "kernel.path", f"{k.path} cannot be read as UTF-8 text ({exc.__class__.__name__})"
                return
            if digest != k.sha256:
                yield "kernel.sha256", f"does not match {k.path} (its sha256 is {digest})"


def _repro_ref(ref: str) -> Iterator[tuple[str, str]]:
    parts = re.split(r"[\\/]", ref)
    if ref.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", ref) or ".." in parts:
        yield "reproduces", "must be a repository path without '..', not an absolute path"
    elif parts[0] != "records" or not ref.endswith(".json") or ref.endswith("__repro.json"):
        yield "reproduces", "must name an original record, records/...json"


def _key(rec: Record | BaselineRecord) -> tuple[Any, ...]:
    p = rec.problem
    if isinstance(rec, BaselineRecord):
        return ("baseline", rec.environment.hardware, rec.protocol.name, p.suite, p.level, p.id, rec.kind)
    return ("record", rec.environment.hardware, rec.model.name, rec.model.sample, p.suite, p.level, p.id,
            rec.protocol.name, rec.reproduces)


def _check_duplicates(loaded: list[_Loaded]) -> list[Finding]:
    out: list[Finding] = []
    first: dict[tuple[Any, ...], _Loaded] = {}
    problems: dict[tuple[str, int, int], dict[str, _Loaded]] = defaultdict(dict)
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


def _check_reproductions(loaded: list[_Loaded], repo: Path) -> list[Finding]:
    """A reproduction must name an original that exists and re-ran the same kernel, problem and protocol."""
    by_path = {item.path.resolve(): item.record for item in loaded}
    out: list[Finding] = []
    for item in loaded:
        rec = item.record
        if not isinstance(rec, Record) or rec.reproduces is None or list(_repro_ref(rec.reproduces)):
            continue
        target = (repo / rec.reproduces).resolve()
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
