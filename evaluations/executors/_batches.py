"""The unit an executor hands a lane or a cluster task: one problem with its candidates, every protocol.

A problem's baselines are measured once and shared by all its candidates' records, so a problem is never
split across lanes: two lanes timing the same baseline would give one problem two references.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .. import Loaded
from ..run import RunConfig, RunSummary


@dataclass(frozen=True)
class Batch:
    """One problem and its candidates, in the order the run loaded them."""

    index: int
    key: str
    loaded: Loaded

    @property
    def size(self) -> int:
        """Candidates in the batch (records it makes: this many per protocol)."""
        return len(self.loaded.candidates)


def batches(loaded: Loaded) -> list[Batch]:
    """``loaded`` as one batch per problem that has candidates, in the order the problems were loaded."""
    by_key: dict[str, list] = {}
    for c in loaded.candidates:
        by_key.setdefault(c.problem_key, []).append(c)
    problems = [p for p in loaded.problems if p.key in by_key]
    return [Batch(i, p.key, Loaded([p], by_key[p.key])) for i, p in enumerate(problems)]


@dataclass(frozen=True)
class LaneSpec:
    """What a lane process is given: the batch and how to run it (its own records folder and lane settings)."""

    batch: Batch
    config: RunConfig
    stats_path: Path | None = None
    """Where the lane writes the run's phase spans (``kverdict eval --stats-json``), when asked."""


@dataclass
class BatchReport:
    """What a lane reports when its batch is done: paths of its records folder, and problems it could not time."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    reference_failures: dict[str, str] = field(default_factory=dict)
    host: str = ""
    lane_wall_s: float = 0.0

    @classmethod
    def of(cls, summary: RunSummary, host: str, wall_s: float) -> BatchReport:
        """The report of one lane's finished run."""
        return cls(written=[str(p) for p in summary.written], skipped=[str(p) for p in summary.skipped],
                   tampered=[str(p) for p in summary.tampered], reference_failures=dict(summary.reference_failures),
                   host=host, lane_wall_s=wall_s)

    def to_json(self) -> str:
        """The report as JSON text."""
        return json.dumps(self.__dict__, indent=1)

    @classmethod
    def from_json(cls, text: str) -> BatchReport:
        """A report read back; raises ``ValueError`` on anything that is not one."""
        data = json.loads(text)
        if not isinstance(data, dict) or set(data) != set(cls().__dict__):
            raise ValueError("not a lane report")
        return cls(**data)
