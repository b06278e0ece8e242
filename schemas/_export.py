"""Export the record models as JSON Schema files kept beside them."""

from __future__ import annotations

import json
from pathlib import Path

from ._record import BaselineRecord, Record

SCHEMA_DIR = Path(__file__).resolve().parent
SCHEMA_FILES = {"record.schema.json": Record, "baseline.schema.json": BaselineRecord}
SCHEMA_URL = "https://json-schema.org/draft/2020-12/schema"


def json_schemas() -> dict[str, str]:
    """JSON Schema text of each exported model, keyed by file name."""
    out: dict[str, str] = {}
    for name, model in SCHEMA_FILES.items():
        schema = {"$schema": SCHEMA_URL, "$id": name, **model.model_json_schema(mode="validation")}
        out[name] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def export_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Write the JSON Schema files; returns their paths."""
    written = []
    for name, text in json_schemas().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in export_schemas():
        print(p)
