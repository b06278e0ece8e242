"""The JSON Schema files shipped in ``schemas/`` match the models, describe every field, and close the statuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _record_factory import make_baseline, make_record

from schemas import (
    SCHEMA_DIR,
    STATUSES,
    BaselineRecord,
    Record,
    RecordError,
    json_schemas,
    load_record,
    record_relpath,
    write_record,
)

EXPECTED_STATUSES = {"correct", "incorrect", "hacked", "compile_error", "runtime_error", "timeout"}


def _schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def _properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for where, obj in [("", schema), *((f"{k}.", v) for k, v in schema.get("$defs", {}).items())]:
        for name, prop in obj.get("properties", {}).items():
            yield where + name, prop


@pytest.mark.parametrize("name", sorted(json_schemas()))
def test_schema_file_is_in_sync_with_the_models(name: str) -> None:
    path = SCHEMA_DIR / name
    assert path.is_file(), f"{name} is missing; run python -m schemas._export"
    assert path.read_text(encoding="utf-8") == json_schemas()[name], \
        f"{name} is out of date with the models; run python -m schemas._export"


@pytest.mark.parametrize("name", ["record.schema.json", "baseline.schema.json"])
def test_schema_file_is_editor_ready(name: str) -> None:
    schema = _schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == name
    assert schema["additionalProperties"] is False
    assert "schema_version" in schema["required"] or "schema_version" in schema["properties"]


@pytest.mark.parametrize("name", ["record.schema.json", "baseline.schema.json"])
def test_every_field_has_a_description(name: str) -> None:
    undescribed = [where for where, prop in _properties(_schema(name)) if not prop.get("description", "").strip()]
    assert undescribed == []


@pytest.mark.parametrize("model", [Record, BaselineRecord])
def test_every_model_field_has_a_docstring(model: type) -> None:
    seen: set[type] = set()

    def walk(m: type) -> Iterator[str]:
        if m in seen:
            return
        seen.add(m)
        for name, info in m.model_fields.items():
            if not (info.description or "").strip():
                yield f"{m.__name__}.{name}"
            for arg in getattr(info.annotation, "__args__", ()) + (info.annotation,):
                inner = getattr(arg, "__args__", (arg,))
                for t in inner:
                    if isinstance(t, type) and hasattr(t, "model_fields"):
                        yield from walk(t)

    assert list(walk(model)) == []


def test_statuses_are_a_closed_set() -> None:
    assert set(STATUSES) == EXPECTED_STATUSES
    assert set(_schema("record.schema.json")["properties"]["status"]["enum"]) == EXPECTED_STATUSES


def test_every_unit_bearing_number_names_its_unit() -> None:
    timing = _schema("record.schema.json")["$defs"]["TimingStats"]["properties"]
    numbers = [k for k, v in timing.items() if "number" in json.dumps(v) and k not in ("calls",)]
    assert "median_ms" in numbers and "sm_clock_mhz" in numbers
    assert all(k.endswith(("_ms", "_mhz")) for k in numbers), numbers


def test_written_records_load_back_unchanged(tmp_path: Path) -> None:
    for rec in (make_record(), make_record(protocol_name="verified"), make_baseline()):
        path = write_record(tmp_path / f"{type(rec).__name__}-{rec.protocol.name}.json", rec)
        assert load_record(path) == rec


def test_unknown_status_is_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    data = make_record().model_dump(mode="json")
    data["status"] = "amazing"
    path = tmp_path / record_relpath(make_record())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError) as err:
        load_record(path)
    assert str(err.value).startswith(f"{path}: status: ")
