"""The base of every record part: strict pydantic models, and the check of a finite, non-negative figure."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for every record part: unknown fields are refused, values are checked on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=True)


def finite_non_negative(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")
    return value

