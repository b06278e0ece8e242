"""A record carries its source's own claim beside the measured speedups, checked like every number."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from schemas import Claimed, Record, json_schemas


def test_claim_is_optional_and_strict() -> None:
    claim = Claimed(speedup=2.75, baseline="eager", source_field="score_default")
    assert claim.ms is None
    for bad in ({"speedup": float("nan")}, {"speedup": -1.0}, {"ms": float("inf")}):
        with pytest.raises(ValidationError):
            Claimed(source_field="x", **bad)
    with pytest.raises(ValidationError, match="source_field"):
        Claimed(speedup=1.0)
    with pytest.raises(ValidationError, match="extra"):
        Claimed(source_field="x", vs="eager")


def test_record_schema_documents_the_claim() -> None:
    schema = json.loads(json_schemas()["record.schema.json"])
    fields = schema["$defs"]["Claimed"]["properties"]
    assert set(fields) == {"speedup", "baseline", "ms", "source_field"}
    assert all(f.get("description") for f in fields.values())
    assert "claimed" in schema["properties"] and "claimed" not in schema.get("required", [])
    assert Record.model_fields["claimed"].default is None
