"""Reading records: the worker-pool path used for large sites gives what the one-process path gives."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest
from _factory import XSS_MODEL, site_fixture

from generator import PageTarget, load, load_rows, record_files
from schemas import RecordError


@pytest.fixture
def records(tmp_path: Path) -> Path:
    return site_fixture(tmp_path / "records")


def _pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("*.html")}


def test_worker_pool_reads_the_same_rows_and_writes_the_same_pages(records: Path, tmp_path: Path, monkeypatch):
    serial = load_rows(records, pages=PageTarget(str(tmp_path / "one"), str(tmp_path)), workers=1)
    monkeypatch.setattr(load, "PARALLEL_FROM", 1)
    pooled = load_rows(records, pages=PageTarget(str(tmp_path / "pool"), str(tmp_path)), workers=2)
    assert pooled.files == serial.files == 52
    assert pooled.table.equals(serial.table)  # same rows, in the same (file) order
    one, pool = _pages(tmp_path / "one"), _pages(tmp_path / "pool")
    assert len(pool) == 52 and pool == one
    hostile = next(text for text in pool.values() if "&lt;script&gt;window.__kv_pwned" in text)
    assert "<script>window.__kv_pwned" not in hostile and XSS_MODEL not in hostile


def test_worker_pool_reports_the_first_invalid_record_by_file_and_field(records: Path, monkeypatch):
    order = record_files(records)  # the loader's file order
    bad = [path for path in order if path.name.endswith("0002-problem_1_2__s1.json")]
    assert len(bad) == 6  # three models x two protocols
    for path in (bad[0], bad[-1]):
        data = json.loads(path.read_text())
        data["model"]["sample"] = -3
        path.write_text(json.dumps(data))
    monkeypatch.setattr(load, "PARALLEL_FROM", 1)
    with pytest.raises(RecordError) as caught:
        load_rows(records, display_root=Path("records"), workers=2)
    assert caught.value.path == str(Path("records") / bad[0].relative_to(records))
    assert caught.value.field == "model.sample"


def _schemas_factory():
    spec = importlib.util.spec_from_file_location("_record_factory", REPO / "tests" / "schemas" / "_record_factory.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


REPO = Path(__file__).resolve().parents[2]
FORMULA_MODELS = ('=HYPERLINK("https://evil.example","x")', "@SUM(1+1)", "+cmd|' /C calc'!A0", "-2+3")
"""Model names a spreadsheet would run as formulas if a CSV cell began with them."""
ESCAPES = "\x1b[31mred\x1b]8;;https://evil.example\x07link\x1b]8;;\x07"
"""Terminal escape codes (colour, hyperlink) in free text."""
HTML_NAME = '<img src=x onerror="window.__kv_pwned=3">'


def _hostile_tree(root: Path) -> Path:
    """A records folder that ``kverdict validate`` accepts although every name and text in it is hostile."""
    f = _schemas_factory()
    for pid, model in enumerate((*FORMULA_MODELS, HTML_NAME)):
        f.place(root, f.make_record(model=model, pid=pid, name=f"{pid}_<b>op</b>"))
    crash = f.make_record(model="plain", pid=9, name="9_op")
    data = f.as_data(crash)
    data.update(status="runtime_error", error=f"boom {ESCAPES} </pre><script>window.__kv_pwned=4</script>",
                timing=None, correctness=[], speedup={"vs_eager": None, "vs_eager_fp32": None, "vs_compile": None},
                notes=[ESCAPES, "</script><script>window.__kv_pwned=5</script>"])
    f.place(root, crash, data)
    return root


def test_the_site_shows_accepted_but_hostile_values_inert(tmp_path: Path):
    from _sitebuild import mkdocs_build

    from schemas import validate

    records = _hostile_tree(tmp_path / "repo" / "records")
    assert validate(root=records) == []  # accepted: HTML, escape codes and formula-like names are data
    result = mkdocs_build(records, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "\x1b" not in result.stdout + result.stderr
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html")]
    assert any("&lt;img src=x onerror=" in page for page in pages)
    for page in pages:  # each hostile value appears only as text, never as markup
        assert "<img src=x" not in page and "<script>window.__kv_pwned" not in page and "<b>op</b>" not in page
    index = json.loads((tmp_path / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))
    entries = [doc["title"] + " " + doc["text"] for doc in index["docs"]]  # the theme shows both as HTML
    assert any("&lt;img src=x onerror=" in e and "/records/" not in e for e in entries)
    assert any("0_&lt;b&gt;op&lt;/b&gt;" in doc["title"] for doc in index["docs"] if doc["location"].startswith("records/"))
    for entry in entries:
        assert "<img src=x" not in entry and "<script>window.__kv_pwned" not in entry and "<b>op</b>" not in entry
    with open(tmp_path / "site" / "downloads" / "records.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    models = {row["model"] for row in rows}
    assert {"'" + m for m in FORMULA_MODELS} <= models
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row.values())


def _record_file(root: Path, change) -> Path:
    f = _schemas_factory()
    path = f.place(root, f.make_record())
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "field", "words"), [
    (lambda t: t.replace('"t_sol_ms": 0.002', '"t_sol_ms": 1e999'), "roofline.t_sol_ms", "out of range"),
    (lambda t: t.replace('"provider": "deepreinforce-ai"', '"provider": "\\ud800"'), "model.provider", "lone surrogate"),
    (lambda t: t.replace('"notes": []', '"notes": ' + "[" * 3000 + "]" * 3000), "", "nested more than"),
    (lambda t: t.replace('"sample": 0', '"sample": "0"'), "model.sample", "valid integer"),
    (lambda t: t.replace('"id": 19', '"id": 1099511627776'), "problem.id", "too large for the site"),
])
def test_the_site_refuses_what_would_crash_it_naming_file_and_field(tmp_path: Path, change, field: str, words: str):
    roof = '"roofline": {"flops": 1.0, "min_bytes": 8.0, "t_sol_ms": 0.002}'
    path = _record_file(tmp_path / "records", lambda t: change(t.replace('"roofline": null', roof)))
    with pytest.raises(RecordError) as caught:
        load_rows(tmp_path / "records", display_root=Path("records"), workers=1)
    assert caught.value.path.endswith(path.name) and caught.value.field.startswith(field)
    assert words in caught.value.message


def test_the_site_reads_no_kernel_through_a_symbolic_link(tmp_path: Path):
    f = _schemas_factory()
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.py").write_text("TOKEN = 'x'\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    (repo / "kernels" / "linked").symlink_to(tmp_path / "secret", target_is_directory=True)
    data = f.as_data(f.make_record())
    data["kernel"] = {"sha256": f.sha("TOKEN = 'x'\n"), "language": "cuda", "path": "kernels/linked/key.py"}
    f.place(repo / "records", f.make_record(), data)
    with pytest.raises(RecordError) as caught:
        load_rows(repo / "records", pages=PageTarget(str(tmp_path / "site"), str(repo)), workers=1)
    assert caught.value.field == "kernel.path" and "symbolic link (kernels/linked)" in caught.value.message
    assert not any("TOKEN" in p.read_text() for p in (tmp_path / "site").rglob("*.html"))
