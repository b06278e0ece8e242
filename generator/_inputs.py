"""The site's inputs besides records: audit reports (records/_audits/), the exploit-zoo manifest, and
the timing-faithfulness rows of ``benchmarks/self_speedup.py`` (benchmarks/results/<hardware>/)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from schemas import RecordError
from schemas._audit import AuditReport


@dataclass(frozen=True)
class Finding:
    """One audit finding about one problem."""

    hardware: str
    suite: str
    level: int
    problem_id: int
    problem_name: str
    check: str
    message: str
    evidence: str | None
    excluded: bool
    """Whether this finding excludes the problem from aggregates (severity ``exclude``)."""


def read_report(path: Path) -> AuditReport:
    """Read and validate one audit report; raises RecordError naming the file and field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordError(path, "", f"unreadable audit report: {exc}") from None
    try:
        return AuditReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RecordError(path, ".".join(str(p) for p in err["loc"]), err["msg"]) from None


def read_audit_reports(records_dir: Path) -> list[tuple[Path, AuditReport]]:
    """Every audit report under ``records/_audits/<hardware>/<suite>.json``, with its path."""
    return [(path, read_report(path)) for path in sorted((records_dir / "_audits").glob("*/*.json"))]


def read_audits(records_dir: Path, reports: list[tuple[Path, AuditReport]] | None = None) -> list[Finding]:
    """Every finding of every audit report (read from ``records_dir`` unless ``reports`` are given)."""
    findings: list[Finding] = []
    for _path, report in (reports if reports is not None else read_audit_reports(records_dir)):
        for p in report.problems:
            findings.extend(Finding(report.hardware, report.suite, p.level, p.id, p.name, f.code, f.message,
                                    f.evidence, f.severity == "exclude") for f in p.findings)
    return findings


def excluded_rows(findings: list[Finding]) -> list[dict]:
    """Rows of the ``excluded`` SQL table: one per excluded problem, the excluding messages joined."""
    rows: dict[tuple, dict] = {}
    for f in findings:
        if not f.excluded:
            continue
        key = (f.hardware, f.suite, f.level, f.problem_id)
        row = rows.setdefault(key, {"hardware": f.hardware, "suite": f.suite, "level": f.level,
                                    "problem_id": f.problem_id, "problem_name": f.problem_name, "reason": ""})
        text = f"{f.check}: {f.message}"
        row["reason"] = f"{row['reason']}; {text}" if row["reason"] else text
    return list(rows.values())


def read_listing(path: Path, what: str) -> object | None:
    """The JSON value of an optional listing file (None when it does not exist); malformed JSON raises
    ``RecordError`` naming the file and ``what`` it should have been."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RecordError(path, "", f"malformed {what}: {exc}") from None


def read_manifest(path: Path) -> list[dict]:
    """Entries of the exploit-zoo manifest (empty when the file does not exist)."""
    data = read_listing(path, "manifest")
    if data is None:
        return []
    entries = data.get("entries", data.get("kernels", [])) if isinstance(data, dict) else data
    keys = ("file", "kind", "problem", "hack", "expected_check")
    return [{k: (None if e.get(k) is None else str(e.get(k))) for k in keys} for e in entries if isinstance(e, dict)]


SELF_SPEEDUP_ROWS = "benchmarks/results/*/self_speedup.jsonl"
"""Rows of the self-speedup benchmark, one file per hardware folder, relative to the repository root."""
KERNELBENCH_SUITE = "kernelbench-v0"
"""Suite of a row whose key has no suite prefix (``L1/23``; the own suite's read ``kernelverdict/L1/23``)."""


def _self_speedup_rows(path: Path, line_no: int, row: dict) -> list[dict]:
    try:
        key = str(row["key"])
        if "error" in row:
            return []
        out = []
        for recipe, ratio in row["self_speedup"].items():
            ratio, ref_ms = float(ratio), float(row["ref_ms"][recipe])
            if not (ratio > 0 and ref_ms > 0):
                raise ValueError(f"{recipe}: self-speedup {ratio} or reference time {ref_ms} ms is not positive")
            out.append({"hardware": path.parent.name, "suite": key.split("/L", 1)[0] if "/L" in key else KERNELBENCH_SUITE,
                        "problem": key, "recipe": str(recipe), "ref_ms": ref_ms, "self_speedup": ratio})
        return out
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecordError(path, f"line {line_no}", f"malformed self-speedup row: {exc}") from None


def read_self_speedup(repo_root: Path) -> list[dict]:
    """One row per problem and timing recipe of every self-speedup rows file, from each problem's last
    line (a re-run appends the row again with the recipes it added); problems whose reference failed
    are left out. Raises RecordError naming the file and line of a malformed row."""
    rows: list[dict] = []
    for path in sorted(repo_root.glob(SELF_SPEEDUP_ROWS)):
        last: dict[str, tuple[int, dict]] = {}
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                last[str(row["key"])] = (n, row)
            except (ValueError, KeyError, TypeError) as exc:
                raise RecordError(path, f"line {n}", f"malformed self-speedup row: {exc}") from None
        for n, row in last.values():
            rows.extend(_self_speedup_rows(path, n, row))
    return rows
