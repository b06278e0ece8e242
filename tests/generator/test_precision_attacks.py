"""The verified tab's precision-class and shape-general columns and its "float32-like only" figures, and the
integrity page's table of attacks on the harness, rendered from hand-built rows and attack lists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_pages import html_of, row

from generator import ATTACKS, SiteData, aggregate, integrity, leaderboard, read_attacks, rows_table
from schemas import RecordError

REPO = Path(__file__).resolve().parents[2]


def verified_row(html: str, model: str, level: int = 0) -> list[str]:
    """The cells of one model's row in the verified table, as HTML."""
    table = html[html.index('data-protocol="verified"'):]
    tr = re.search(rf'<tr data-hardware="h200" data-suite="kv" data-level="{level}">\s*<td class="kv-name">'
                   rf'<a href="[^"]*">{model}</a>(.*?)</tr>', table, re.S).group(1)
    return re.findall(r"<td[^>]*>.*?</td>", tr, re.S)


def header_index(html: str, name: str) -> int:
    table = html[html.index('data-protocol="verified"'):]
    heads = re.findall(r"<th[^>]*>(.*?)</th>", table[:table.index("</thead>")])
    return heads.index(name) - 1  # the model cell is not among the row's cells


def shown(cell: str, which: str) -> str:
    return re.search(rf'<span class="kv-{which}"[^>]*>(.*?)</span>', cell, re.S).group(1)


CLASSES = [("float32-like", 2.0, True), ("float32-like", 1.0, None), ("TF32-like", 4.0, False),
           ("reduced", 8.0, True), ("float32-like", 0.5, None)]


def test_precision_column_splits_correct_kernels_by_class_and_the_filter_keeps_float32_like_only():
    rows = [row("alpha", i, precision_class=c, vs_eager=v, shape_passed=s) for i, (c, v, s) in enumerate(CLASSES)]
    html = html_of(rows, leaderboard)
    cells = verified_row(html, "alpha")
    assert shown(cells[header_index(html, "Precision")], "all") == "f32 60% · TF32 20% · reduced 20%"
    shape = cells[header_index(html, "Shape-general")]
    assert shown(shape, "all") == "66.7%"  # 2 of the 3 re-checked correct kernels passed
    assert shown(shape, "f32") == "100.0%"  # the one re-checked float32-like kernel passed
    correct = cells[header_index(html, "Correct")]
    assert (shown(correct, "all"), shown(correct, "f32")) == ("100.0%", "60.0%")
    speedup = cells[header_index(html, "Speedup vs eager")]
    assert shown(speedup, "all").startswith("2×") and shown(speedup, "f32") == "1×"  # geomean of 2, 1, 0.5
    assert 'class="kv-precision-only" data-key="precision" value="float32-like"' in html


def test_float32_like_only_counts_the_fastest_float32_like_sample_of_a_problem():
    rows = [row("alpha", 0, precision_class="TF32-like", vs_eager=3.0, path="a/0.json"),
            row("alpha", 0, precision_class="float32-like", vs_eager=1.5, sample=1, path="a/1.json")]
    agg = aggregate(rows_table(rows))
    s = next(r for r in agg.summary if r["level"] == 0)
    assert s["speedup_eager"] == pytest.approx(3.0) and s["prec_tf32"] == 1
    assert s["f32_speedup_eager"] == pytest.approx(1.5) and s["f32_correct_share"] == 1


def test_shape_general_reads_a_dash_where_no_re_check_ran_and_standard_has_no_precision_column():
    rows = [row("alpha", 0, precision_class="float32-like"), row("alpha", 0, "standard")]
    html = html_of(rows, leaderboard)
    assert shown(verified_row(html, "alpha")[header_index(html, "Shape-general")], "all") == "–"
    standard = html[html.index('data-protocol="standard"'):html.index('data-protocol="verified"')]
    assert "Precision" not in standard and "Shape-general" not in standard


ATTACK_LIST = {"entries": [
    {"file": "attacks/forge.py", "problem": "relu.py", "hack": "result forging through the result pipe",
     "kind": "attack", "expected_status": {"standard": "correct", "verified": "correct"}, "stopped": "no"},
    {"file": "attacks/fork.py", "problem": "relu.py", "hack": "escaped child by a double fork",
     "kind": "attack", "expected_status": {"standard": "correct", "verified": "correct"}, "stopped": "yes"},
    {"file": "attacks/signal.py", "problem": "relu.py", "hack": "SIGINT sent to the runner",
     "kind": "attack", "expected_status": {"standard": "runtime_error", "verified": "runtime_error"}, "stopped": "partly"},
]}


def attacks_html(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "attacks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    site = SiteData(agg=aggregate(rows_table([])), attacks=read_attacks(path))
    return site.slots.fill(integrity(site))


def test_integrity_lists_attacks_on_the_harness_and_says_which_are_not_stopped(tmp_path):
    html = attacks_html(tmp_path, ATTACK_LIST)
    assert "Attacks on the harness" in html
    rows = dict(re.findall(r"<tr><td><code>(attacks/\w+\.py)</code></td>(.*?)</tr>", html, re.S))
    assert "not stopped" in rows["attacks/forge.py"] and "partly stopped" in rows["attacks/signal.py"]
    assert ">stopped</span>" in rows["attacks/fork.py"] and "not stopped" not in rows["attacks/fork.py"]
    assert 'kv-status-runtime_error">runtime_error' in rows["attacks/signal.py"]
    assert "<strong>1 of 3</strong> attacks" in html and "<strong>1</strong> not stopped yet" in html


def test_a_bad_stopped_value_names_the_file_and_the_entry(tmp_path):
    bad = {"entries": [dict(ATTACK_LIST["entries"][0], stopped="maybe")]}
    with pytest.raises(RecordError, match=r"attacks\.json: entries\[0\]\.stopped: "):
        attacks_html(tmp_path, bad)


def test_the_repository_attack_list_reads_without_the_evaluation_packages():
    attacks = read_attacks(REPO / ATTACKS)
    entries = json.loads((REPO / ATTACKS).read_text(encoding="utf-8"))["entries"]
    assert [a.file for a in attacks] == [e["file"] for e in entries] and attacks
