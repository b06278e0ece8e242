"""Reading records: the worker-pool path used for large sites gives what the one-process path gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _factory import XSS_MODEL, site_fixture

from generator import _load
from generator._load import PageTarget, load_rows
from schemas import RecordError


@pytest.fixture
def records(tmp_path: Path) -> Path:
    return site_fixture(tmp_path / "records")


def _pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("*.html")}


def test_worker_pool_reads_the_same_rows_and_writes_the_same_pages(records: Path, tmp_path: Path, monkeypatch):
    serial = load_rows(records, pages=PageTarget(str(tmp_path / "one"), str(tmp_path)), workers=1)
    monkeypatch.setattr(_load, "PARALLEL_FROM", 1)
    pooled = load_rows(records, pages=PageTarget(str(tmp_path / "pool"), str(tmp_path)), workers=2)
    assert pooled.files == serial.files == 52
    assert pooled.table.equals(serial.table)  # same rows, in the same (file) order
    one, pool = _pages(tmp_path / "one"), _pages(tmp_path / "pool")
    assert len(pool) == 52 and pool == one
    hostile = next(text for text in pool.values() if "&lt;script&gt;window.__kv_pwned" in text)
    assert "<script>window.__kv_pwned" not in hostile and XSS_MODEL not in hostile


def test_worker_pool_reports_the_first_invalid_record_by_file_and_field(records: Path, monkeypatch):
    order = _load._relpaths(records)  # the loader's file order
    bad = [records / rel for rel in order if rel.endswith("0002-problem_1_2__s1.json")]
    assert len(bad) == 6  # three models x two protocols
    for path in (bad[0], bad[-1]):
        data = json.loads(path.read_text())
        data["model"]["sample"] = -3
        path.write_text(json.dumps(data))
    monkeypatch.setattr(_load, "PARALLEL_FROM", 1)
    with pytest.raises(RecordError) as caught:
        load_rows(records, display_root=Path("records"), workers=2)
    assert caught.value.path == str(Path("records") / bad[0].relative_to(records))
    assert caught.value.field == "model.sample"
