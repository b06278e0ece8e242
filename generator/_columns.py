"""Columns of the ``records`` table beyond the core ones of ``_load``: what the source claims for a kernel, and the
verified protocol's precision class and held-out shape re-check of a passing candidate, and whether the runner
checked the worker's report from outside (``outside_checked``: the record has ``judged``), and the harness version
that measured it."""

from __future__ import annotations

import pyarrow as pa

from schemas import Record

EXTRA_COLUMNS: dict[str, pa.DataType] = {
    "claimed_speedup": pa.float64(), "claimed_baseline": pa.string(),
    "claimed_ms": pa.float64(), "claimed_field": pa.string(),
    "precision_class": pa.string(), "shape_passed": pa.bool_(), "outside_checked": pa.bool_(),
    "harness_version": pa.string(),
}
"""Added after ``_load.COLUMNS``, in order."""


def extra_columns(record: Record) -> dict:
    """The extra columns of one record's row (``None`` where the record has no claim, no precision class, or no
    shape re-check that ran: ``shape_passed`` is ``None`` when the re-check was not run)."""
    c = getattr(record, "claimed", None)
    shape = record.shape_check
    judged = getattr(record, "judged", None) is not None or any(
        c.name in ("judged-outputs", "outer-timing") for c in record.integrity)
    return {"harness_version": record.environment.harness_version, "precision_class": record.precision_class, "shape_passed": shape.passed if shape else None,
            "outside_checked": judged,
            "claimed_speedup": c.speedup if c else None, "claimed_baseline": c.baseline if c else None,
            "claimed_ms": c.ms if c else None, "claimed_field": c.source_field if c else None}
