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


def test_a_record_of_a_replaced_protocol_version_says_so_and_one_of_the_newest_does_not():
    versions = schemas.PROTOCOLS["verified"]["versions"]
    path = next(p for p in sorted((REPO / "records").rglob("*.json")) if "/verified/" in p.as_posix() and "/_" not in p.as_posix()
                and schemas.load_record(p).protocol.version == versions[-1])
    record = schemas.load_record(path)
    older = record.model_copy(update={"protocol": record.protocol.model_copy(update={"version": versions[-2]})})
    row = {"path": str(path.relative_to(REPO / "records")), "page": "records/x/y.html", "timestamp": "t"}
    assert "Judged under" not in render_record_page(record, row, REPO)
    assert (f"Judged under verified {versions[-2]}, whose rules verified {versions[-1]} has replaced"
            in render_record_page(older, row, REPO))
