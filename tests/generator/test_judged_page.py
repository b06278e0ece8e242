"""A record page says what the runner checked outside the candidate's process (from a committed H200 record)."""

from __future__ import annotations

from pathlib import Path

import schemas
from generator import render_record_page

REPO = Path(__file__).resolve().parents[2]


def test_a_judged_record_shows_its_judged_trials_and_the_outside_clock():
    path = next(p for p in sorted((REPO / "records" / "h200" / "honest-kernels").rglob("*.json"))
                if (r := schemas.load_record(p)).judged is not None and r.judged.outer is not None)
    record = schemas.load_record(path)
    row = {"path": str(path.relative_to(REPO / "records")), "page": "records/x/y.html", "timestamp": "t"}
    html = render_record_page(record, row, REPO)
    j = record.judged
    assert f"{j.trials} of {j.trials_reported} trials" in html and "Outside clock" in html
    assert f"{j.outer.calls} answers on fresh inputs" in html
    assert "judged-outputs" in html and "outer-timing" in html  # the two checks in the integrity table
