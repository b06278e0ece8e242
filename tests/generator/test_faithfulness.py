"""The methodology page's timing-faithfulness tables: self-speedup rows read, aggregated in DuckDB,
rendered; figures worked out by hand and checked against the benchmark's own quantile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluations.protocols import quantile
from generator import SiteData, aggregate, faithfulness, read_self_speedup, rows_table
from schemas import RecordError

STD, VER = "kernelbench / standard (3 warm-ups, 100 calls, mean)", "verified (flush, ...)"


def _row(key: str, **ratios: float) -> dict:
    names = {"std": STD, "ver": VER}
    return {"key": key, "ref_ms": {names[k]: 0.5 for k in ratios},
            "self_speedup": {names[k]: v for k, v in ratios.items()}}


def _write(root: Path, hardware: str, rows: list[dict | str]) -> Path:
    path = root / "benchmarks" / "results" / hardware / "self_speedup.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rows_keep_each_problems_last_line_and_skip_failed_references(tmp_path: Path):
    _write(tmp_path, "h200", [
        _row("L1/1", std=1.5),
        _row("L1/1", std=1.005, ver=1.0),  # a re-run appends the row again with the recipe it added
        _row("L1/2", std=0.98, ver=0.995),
        {"key": "L1/3", "error": "RuntimeError: the reference failed"},
        _row("kernelverdict/L2/7", std=1.0, ver=1.02),
        "",
    ])
    rows = read_self_speedup(tmp_path)
    got = {(r["hardware"], r["suite"], r["problem"], r["recipe"]): r["self_speedup"] for r in rows}
    assert got == {("h200", "kernelbench-v0", "L1/1", STD): 1.005, ("h200", "kernelbench-v0", "L1/1", VER): 1.0,
                   ("h200", "kernelbench-v0", "L1/2", STD): 0.98, ("h200", "kernelbench-v0", "L1/2", VER): 0.995,
                   ("h200", "kernelverdict", "kernelverdict/L2/7", STD): 1.0,
                   ("h200", "kernelverdict", "kernelverdict/L2/7", VER): 1.02}
    assert read_self_speedup(tmp_path / "nowhere") == []


@pytest.mark.parametrize("bad", ["{not json", json.dumps({"key": "L1/1", "self_speedup": {STD: 1.0}}),
                                 json.dumps(_row("L1/1", std=-1.0))])
def test_a_malformed_row_is_refused_naming_file_and_line(tmp_path: Path, bad: str):
    path = _write(tmp_path, "h200", [_row("L1/1", std=1.0), bad])
    with pytest.raises(RecordError) as err:
        read_self_speedup(tmp_path)
    assert str(path) in str(err.value) and "line 2" in str(err.value)


def test_figures_per_recipe_match_the_benchmarks_report(tmp_path: Path):
    ratios = [1.005, 0.98, 1.04, 1.0]
    _write(tmp_path, "h200", [_row(f"L1/{i}", std=s) for i, s in enumerate(ratios)])
    agg = aggregate(rows_table([]), self_speedup=read_self_speedup(tmp_path))
    (r,) = agg.faithfulness
    devs = [abs(s - 1) for s in ratios]
    assert (r["hardware"], r["suite"], r["recipe"], r["problems"]) == ("h200", "kernelbench-v0", STD, 4)
    assert r["within_1pct"] == pytest.approx(0.5) and r["beyond_3pct"] == 1
    assert r["p50_dev"] == pytest.approx(quantile(devs, 0.5)) == pytest.approx(0.0125)
    assert r["p95_dev"] == pytest.approx(quantile(devs, 0.95)) and r["max_dev"] == pytest.approx(0.04)
    html = faithfulness(SiteData(agg=agg))
    assert "kv-faithfulness" in html and "50.0%" in html and "1.25%" in html and "4.00%" in html
    assert "kernelbench / standard" in html and "h200, kernelbench-v0" in html


def test_without_rows_the_page_says_so():
    html = faithfulness(SiteData(agg=aggregate(rows_table([]))))
    assert "kv-empty" in html and "benchmarks/self_speedup.py" in html
