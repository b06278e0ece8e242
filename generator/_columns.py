"""Columns of the ``records`` table beyond the core ones of ``_load``: what the source claims for a kernel."""

from __future__ import annotations

import pyarrow as pa

from schemas import Record

EXTRA_COLUMNS: dict[str, pa.DataType] = {
    "claimed_speedup": pa.float64(), "claimed_baseline": pa.string(),
    "claimed_ms": pa.float64(), "claimed_field": pa.string(),
}
"""Added after ``_load.COLUMNS``, in order."""


def extra_columns(record: Record) -> dict:
    """The extra columns of one record's row (``None`` where the record has no claim)."""
    c = getattr(record, "claimed", None)
    return {"claimed_speedup": c.speedup if c else None, "claimed_baseline": c.baseline if c else None,
            "claimed_ms": c.ms if c else None, "claimed_field": c.source_field if c else None}
