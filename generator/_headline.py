"""The home page's headline, one line per dataset: claimed -> standard -> verified speedup, against eager and
torch.compile, each with its bootstrap 95% CI and the number of problems it averages, and where it was measured.

Every figure is a geometric mean over the problems a model has correct under that protocol (the leaderboard's
convention); the drop table below the headline uses its own, stated in its header.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas import PROTOCOLS

from ._sql import Aggregates

PROTOCOL_ORDER: tuple[str, ...] = tuple(PROTOCOLS)
"""Protocols in the order a claim is checked: the table's own order (standard, then the stricter verified)."""


@dataclass(frozen=True)
class Figure:
    """A geometric-mean speedup with its bootstrap 95% CI and the count of problems it averages."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def spans_one(self) -> bool:
        """Whether the CI contains 1: the kernels are then not distinguishable from PyTorch."""
        return self.low is not None and self.high is not None and self.low <= 1 <= self.high


@dataclass(frozen=True)
class Provenance:
    """When, with what and on what a dataset's figures under one protocol were measured."""

    first_date: str
    last_date: str
    harness: str
    protocol_version: str
    device: str

    @property
    def dates(self) -> str:
        """The measurement date, or the first and last ones."""
        return self.first_date if self.first_date == self.last_date else f"{self.first_date} to {self.last_date}"


@dataclass(frozen=True)
class Stage:
    """One protocol's figures of one dataset."""

    protocol: str
    vs_eager: Figure
    vs_compile: Figure | None
    """None where the protocol has no torch.compile baseline (its table lists no ``vs_compile``)."""
    attempted: int
    n_problems: int
    impossible: int
    """Records flagged physically impossible and left out of the figures."""
    provenance: Provenance | None


@dataclass(frozen=True)
class HeadlineLine:
    """Everything the home page says of one dataset (hardware x suite x model) in its line."""

    hardware: str
    suite: str
    model: str
    claimed: float | None
    claimed_n: int
    claimed_baseline: str | None
    stages: tuple[Stage, ...]

    @property
    def last(self) -> Stage:
        """The strictest protocol the dataset was measured under."""
        return self.stages[-1]


def _provenance(agg: Aggregates) -> dict[tuple, Provenance]:
    return {(p["hardware"], p["suite"], p["model"], p["protocol"]): Provenance(
        p["first_date"] or "", p["last_date"] or "", p["harness_versions"] or "unknown",
        p["protocol_versions"] or "", p["devices"] or p["hardware"]) for p in agg.provenance}


def headline_lines(agg: Aggregates) -> list[HeadlineLine]:
    """One line per ranked dataset at level "all", in hardware, suite, model order."""
    ci = {(c["hardware"], c["protocol"], c["suite"], c["model"]): c for c in agg.speedup_ci if c["level"] == 0}
    claims = {(c["hardware"], c["suite"], c["model"]): c for c in agg.claims if c["level"] == 0}
    prov = _provenance(agg)
    stages: dict[tuple, list[Stage]] = {}
    for r in agg.summary:
        if r["level"] != 0:
            continue
        c = ci.get((r["hardware"], r["protocol"], r["suite"], r["model"]), {})
        eager = Figure(r["speedup_eager"], c.get("speedup_eager_ci_low"), c.get("speedup_eager_ci_high"), r["correct"])
        has_compile = "vs_compile" in PROTOCOLS.get(r["protocol"], {}).get("speedups", {})
        compile_ = Figure(r["speedup_compile"], c.get("speedup_compile_ci_low"), c.get("speedup_compile_ci_high"),
                          r["correct"]) if has_compile else None
        key = (r["hardware"], r["suite"], r["model"])
        stages.setdefault(key, []).append(Stage(r["protocol"], eager, compile_, r["attempted"], r["n_problems"],
                                                r["impossible"], prov.get((*key, r["protocol"]))))
    order = {p: i for i, p in enumerate(PROTOCOL_ORDER)}
    lines = []
    for key in sorted(stages):
        claim = claims.get(key)
        lines.append(HeadlineLine(*key, claimed=claim["claimed_speedup"] if claim else None,
                                  claimed_n=claim["kernels"] if claim else 0,
                                  claimed_baseline=claim["claimed_baseline"] if claim else None,
                                  stages=tuple(sorted(stages[key], key=lambda s: order.get(s.protocol, len(order))))))
    return lines
