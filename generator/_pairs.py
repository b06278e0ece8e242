"""A model page's per-problem table: one row per problem with its standard and its verified result, the change
between them and why it happened, so a reader can sort by what the verified protocol took away."""

from __future__ import annotations

from dataclasses import dataclass

from ._headline import PROTOCOL_ORDER


@dataclass(frozen=True)
class Side:
    """One protocol's best-of-k result of a problem."""

    status: str
    correct: bool
    speedup: float | None
    """Speedup vs that protocol's eager baseline, where the result counts as correct."""
    page: str
    failed_check: str | None
    impossible: bool


@dataclass(frozen=True)
class ProblemPair:
    """A problem's standard and verified results for one model on one hardware."""

    hardware: str
    suite: str
    level: int
    problem_id: int
    problem_name: str
    standard: Side | None
    verified: Side | None

    @property
    def delta(self) -> float | None:
        """Verified ÷ standard speedup, where both are correct."""
        s, v = self.standard, self.verified
        if s and v and s.speedup and v.speedup is not None:
            return v.speedup / s.speedup
        return None

    @property
    def loss_key(self) -> float | None:
        """What sorting by the loss orders by: the delta, 0 where the verified verdict lost a correct kernel (the
        largest loss), None where there is nothing to compare."""
        s, v = self.standard, self.verified
        if s and s.correct and v and not v.correct:
            return 0.0
        return self.delta

    @property
    def reason(self) -> str:
        """Why the verified figure differs, in a few words."""
        s, v = self.standard, self.verified
        if v is None:
            return "not measured under the verified protocol"
        if s is None:
            return "not measured under the standard protocol"
        if v.impossible or s.impossible:
            return "physically impossible time"
        if s.correct and not v.correct:
            return f"verified: {v.status}" + (f" ({v.failed_check})" if v.failed_check else "")
        if not s.correct and not v.correct:
            return f"fails under both ({s.status} / {v.status})"
        if not s.correct:
            return f"standard: {s.status}; verified: correct"
        return "both correct: baseline and timing"


def _side(r: dict) -> Side:
    return Side(r["status"], bool(r["correct"]), r["vs_eager"] if r["correct"] else None, r["page"], r["failed_check"],
                bool(r["impossible"]))


def problem_pairs(results: list[dict]) -> list[ProblemPair]:
    """One pair per hardware x suite x level x problem of one model's best-of-k results, largest loss first."""
    first, second = PROTOCOL_ORDER[0], PROTOCOL_ORDER[-1]
    by_key: dict[tuple, dict[str, dict]] = {}
    for r in results:
        key = (r["hardware"], r["suite"], r["level"], r["problem_id"], r["problem_name"])
        by_key.setdefault(key, {})[r["protocol"]] = r
    pairs = [ProblemPair(*key, standard=_side(p[first]) if first in p else None,
                         verified=_side(p[second]) if second in p else None) for key, p in by_key.items()]
    return sorted(pairs, key=lambda q: (q.loss_key is None, q.loss_key if q.loss_key is not None else 0,
                                        q.suite, q.level, q.problem_id))
