"""A record keeps what the runner checked outside the candidate's process, checked like every number."""

from __future__ import annotations

import json

import pytest
from _record_factory import make_record
from pydantic import ValidationError

from schemas import Judged, OuterTiming, json_schemas


def _outer(**kw):
    values = {"calls": 10, "method": "eager", "wall_ms": 12.0, "overhead_ms": 2.0, "per_call_ms": 1.0,
              "reported_ms": 0.9, **kw}
    return OuterTiming(**values)


def test_outer_timing_is_strict_and_finite():
    assert _outer().per_call_ms == 1.0
    for bad in ({"wall_ms": float("nan")}, {"per_call_ms": -1.0}, {"calls": 0}, {"method": "graph"}):
        with pytest.raises(ValidationError):
            _outer(**bad)


def test_a_record_judges_at_most_its_own_reported_trials():
    record = make_record()
    n = len(record.correctness)
    ok = record.model_copy(update={"judged": Judged(trials=n, trials_reported=n, outer=_outer())})
    assert type(record).model_validate(ok.model_dump()).judged.outer.calls == 10
    for trials, reported in ((n + 1, n), (n, n + 1)):
        with pytest.raises(ValidationError, match="judged"):
            type(record).model_validate({**record.model_dump(), "judged": {"trials": trials, "trials_reported": reported}})


def test_record_schema_documents_judged():
    schema = json.loads(json_schemas()["record.schema.json"])
    assert "judged" in schema["properties"] and "judged" not in schema.get("required", [])
    for name in ("Judged", "OuterTiming"):
        assert all(f.get("description") for f in schema["$defs"][name]["properties"].values()), name
