"""The methodology page's table of verified records by status and, for incorrect ones, by reason."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from generator import VERDICT_STATUSES, SiteData, aggregate, load, rows_table, verdict_reasons
from schemas import Record, load_record

ROOT = Path(__file__).resolve().parents[2]


def _row(status: str, reason: str | None, version: str = "1.3", model: str = "m") -> dict:
    return {"path": f"{model}/{status}/{reason}", "hardware": "h100", "model": model, "protocol": "verified",
            "protocol_version": version, "status": status, "reason": reason}


def test_records_are_counted_by_status_and_incorrect_ones_by_reason():
    rows = [_row("correct", None), _row("correct", None), _row("incorrect", "precision"),
            _row("incorrect", "precision"), _row("incorrect", "wrong-answer"), _row("hacked", None),
            _row("incorrect", None, version="1.2"), {**_row("correct", None), "protocol": "standard"}]
    html = verdict_reasons(SiteData(agg=aggregate(rows_table(rows))))
    body = re.findall(r"<tr><td>m</td><td>h100</td><td>(1\.\d)</td>(.*?)</tr>", html, flags=re.S)
    cells = {v: re.findall(r'data-v="(\d+)"', rest) for v, rest in body}
    assert cells["1.3"] == ["6", "2", "3", "1", "0", "0", "0"]  # records, then correct, incorrect, hacked, ...
    assert cells["1.2"] == ["1", "0", "1", "0", "0", "0", "0"]  # the standard record is not counted
    assert "precision: 2, wrong-answer: 1" in html and "—: 1" in html


def test_the_committed_cuda_l1_records_are_counted_as_the_files_say():
    folder = ROOT / "records" / "h200" / "cuda-l1" / "verified"
    records = [r for r in map(load_record, sorted(folder.rglob("*.json"))) if isinstance(r, Record)]
    rows = [load.flatten(r, f"h200/cuda-l1/{i}.json") for i, r in enumerate(records)]
    html = verdict_reasons(SiteData(agg=aggregate(rows_table(rows))))
    by_status = Counter(r.status for r in records)
    (row,) = re.findall(r"<tr><td>CUDA-L1</td>.*?</tr>", html, flags=re.S)
    cells = [int(v) for v in re.findall(r'data-v="(\d+)"', row)]
    assert cells == [len(records), *(by_status[s] for s in VERDICT_STATUSES)]
    assert len(records) >= 200 and by_status["hacked"] > 0
