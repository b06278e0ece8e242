"""The records committed in this repository pass the same validation that CI runs on a pull request."""

from __future__ import annotations

from pathlib import Path

from schemas import validate

REPO = Path(__file__).resolve().parents[2]


def test_committed_records_validate() -> None:
    findings = validate(root=REPO / "records", repo_root=REPO)
    assert [str(f) for f in findings] == []
