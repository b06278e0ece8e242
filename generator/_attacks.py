"""The zoo's attacks on the harness (``evaluations/zoo/attacks.json``), read as plain JSON for the integrity page.

These candidates attack the runner itself (its result pipe, its processes, its files) rather than the
measurement; each entry says which status each protocol gives it and whether the runner stops it today.
The file is read directly, so building the site needs neither torch nor the evaluation packages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from schemas import RecordError

from ._inputs import read_listing

ATTACKS = Path("evaluations/zoo/attacks.json")
"""The attack list, relative to the repository root."""

Stopped = Literal["yes", "partly", "no"]
"""Whether the runner stops an attack today."""


class Attack(BaseModel):
    """One entry of the attack list."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    file: str
    """The candidate's file, relative to ``evaluations/zoo/``."""
    problem: str
    """The problem it is submitted for."""
    hack: str
    """What it attacks, in a few words."""
    expected_status: dict[str, str]
    """Protocol name -> the status its record gets."""
    stopped: Stopped
    """Whether the runner stops it today."""


def _field(exc: ValidationError, index: int) -> tuple[str, str]:
    error = exc.errors()[0]
    loc = ".".join(str(part) for part in error["loc"])
    return f"entries[{index}]" + (f".{loc}" if loc else ""), error["msg"]


def read_attacks(path: Path) -> list[Attack]:
    """Every attack entry in file order (empty when the file does not exist); a malformed file or entry raises
    ``RecordError`` naming the file and the field."""
    data = read_listing(path, "attack list")
    if data is None:
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise RecordError(path, "entries", "missing or not a list")
    attacks = []
    for i, entry in enumerate(entries):
        try:
            attacks.append(Attack.model_validate(entry))
        except ValidationError as exc:
            raise RecordError(path, *_field(exc, i)) from None
    return attacks
