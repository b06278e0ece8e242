"""The records folder's digest manifest: what the runner writes, and what validate reports from it."""

from __future__ import annotations

from pathlib import Path

from schemas import MANIFEST_RELPATH, Manifest, manifest_problems, validate


def _written(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    Manifest(root).add(path, text)
    return path


def test_a_changed_or_deleted_record_is_reported_and_an_unlisted_one_is_not(tmp_path):
    kept = _written(tmp_path, "cpu/m/a.json", '{"a": 1}\n')
    changed = _written(tmp_path, "cpu/m/b.json", '{"b": 1}\n')
    deleted = _written(tmp_path, "cpu/_baselines/c.json", '{"c": 1}\n')
    (tmp_path / "cpu/m/unlisted.json").write_text("{}\n")
    changed.write_text('{"b": 2}\n')
    deleted.unlink()
    files = sorted(tmp_path.rglob("*.json"))
    problems = {p.path.name: p.reason for p in manifest_problems(tmp_path, files)}
    assert set(problems) == {"b.json", "c.json"}
    assert "changed after it was written" in problems["b.json"] and "missing" in problems["c.json"]
    assert not Manifest(tmp_path).contradicts(kept) and Manifest(tmp_path).contradicts(changed)
    lines = (tmp_path / MANIFEST_RELPATH).read_text().splitlines()
    assert len(lines) == 3 and all(line.split("  ")[1].startswith("cpu/") for line in lines)  # sha256sum -c format


def test_validate_reports_manifest_findings_under_their_own_field(tmp_path):
    path = _written(tmp_path, "cpu/m/b.json", '{"b": 1}\n')
    path.write_text('{"b": 2}\n')
    findings = [f for f in validate([tmp_path], root=tmp_path) if f.field == "(manifest)"]
    assert len(findings) == 1 and findings[0].path.endswith("b.json")
