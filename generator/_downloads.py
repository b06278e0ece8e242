"""Downloadable data written into the built site: all records (Parquet, CSV), aggregates (JSON), JSON Schemas."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from schemas import SCHEMA_DIR

from ._sql import Aggregates

FOLDER = "downloads"
FILES = [
    {"name": "records.parquet", "href": "records.parquet", "what": "every record, one row each (flattened), Parquet"},
    {"name": "records.csv", "href": "records.csv", "what": "the same rows as CSV"},
    {"name": "aggregates.json", "href": "aggregates.json", "what": "every leaderboard metric, fast_p curve, CI and drop split"},
    {"name": "record.schema.json", "href": "record.schema.json", "what": "JSON Schema of a record file"},
    {"name": "baseline.schema.json", "href": "baseline.schema.json", "what": "JSON Schema of a baseline record file"},
]
"""Files of the downloads folder, as listed on the downloads page."""


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""


def inert_cell(text: str | None) -> str | None:
    """A text cell a spreadsheet shows as text: one that would start a formula gets a leading apostrophe."""
    return "'" + text if text is not None and text.startswith(FORMULA_STARTS) else text


def _flat_for_csv(records: pa.Table) -> pa.Table:
    """List columns (all failed checks' names and evidence) joined into text, one cell each: CSV has no lists;
    every text cell made inert (a model named ``=HYPERLINK(...)`` stays text in a spreadsheet)."""
    for i, f in enumerate(records.schema):
        if pa.types.is_list(f.type):
            cells = [None if v is None else " | ".join(x or "" for x in v) for v in records.column(i).to_pylist()]
        elif pa.types.is_string(f.type):
            cells = records.column(i).to_pylist()
        else:
            continue
        records = records.set_column(i, f.name, pa.array([inert_cell(c) for c in cells], pa.string()))
    return records


def write_downloads(site_dir: Path, records: pa.Table, agg: Aggregates) -> list[Path]:
    """Write every download into ``site_dir/downloads``; returns the paths written."""
    out = site_dir / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(records, out / "records.parquet")
    pacsv.write_csv(_flat_for_csv(records), out / "records.csv")
    data = {f.name: getattr(agg, f.name) for f in fields(agg) if f.name != "best"}  # rows are plain dicts already
    (out / "aggregates.json").write_text(json.dumps(data, separators=(",", ":"), default=float, allow_nan=False),
                                         encoding="utf-8")
    for name in ("record.schema.json", "baseline.schema.json"):
        shutil.copyfile(SCHEMA_DIR / name, out / name)
    return sorted(out.iterdir())
