"""The attack entries of the zoo: candidates that attack the runner itself rather than the measurement.

``attacks.json`` lists each: its file in ``attacks/``, problem, the attack's short name, the status each
protocol gives it (``expected_status``) and whether the runner stops it today (``stopped``: ``yes``,
``partly`` or ``no``; each file's docstring says what stops it and what does not). Unlike the exploits,
they are judged by running them through the runner (``kverdict eval``), since the defences live there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ._manifest import ZOO_DIR

Stopped = Literal["yes", "partly", "no"]
"""Whether the runner stops an attack today."""


@dataclass(frozen=True)
class AttackEntry:
    """One entry of ``attacks.json``."""

    file: str
    problem: str
    hack: str
    expected_status: dict[str, str]
    """Protocol name -> the status its record gets."""
    stopped: Stopped

    @property
    def path(self) -> Path:
        """The candidate's source file."""
        return ZOO_DIR / self.file


def load_attacks(path: Path | None = None) -> list[AttackEntry]:
    """Every attack entry, in file order."""
    data = json.loads((path or ZOO_DIR / "attacks.json").read_text(encoding="utf-8"))
    return [AttackEntry(e["file"], e["problem"], e["hack"], dict(e["expected_status"]), e["stopped"])
            for e in data["entries"]]
