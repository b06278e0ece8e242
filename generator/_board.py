"""The leaderboard's columns: label, meaning (shown in the page's "how to read" legend and as the header's
title) and whether a column is folded away until the reader asks for every column."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from ._protocols import VERIFIED


@dataclass(frozen=True)
class Column:
    """One leaderboard column."""

    label: Markup
    meaning: str
    more: bool = False
    """Rarely used: hidden unless "show every column" is ticked."""
    only: str | None = None
    """The one protocol whose tab has this column (None: every tab)."""


def _c(label: str, meaning: str, more: bool = False, only: str | None = None) -> Column:
    return Column(Markup(label), meaning, more, only)


COLUMNS: tuple[Column, ...] = (
    _c("Model", "the model; 'standard protocol only' marks one not yet measured under the verified protocol"),
    _c("Rank", "rank within its suite, hardware and level by fast₁ (ties: speedup); – where the suite has one model"),
    _c("Suite", "the problem suite the model was measured on"),
    _c("Hardware", "the GPU the records were measured on"),
    _c("Attempted", "problems with a result / problems of the suite level (less the audit's exclusions)"),
    _c("Correct", "share of attempted problems whose best sample is correct (a physically impossible time is not)"),
    _c("fast<sub>0</sub>", "share of the suite's problems whose best correct sample has speedup above 0", more=True),
    _c("fast<sub>0.5</sub>", "the same above 0.5", more=True),
    _c("fast<sub>0.8</sub>", "the same above 0.8", more=True),
    _c("fast<sub>1</sub>", "the same above 1: correct and faster than eager; what the rank orders by"),
    _c("fast<sub>1.5</sub>", "the same above 1.5", more=True),
    _c("fast<sub>2</sub>", "the same above 2", more=True),
    _c("Speedup vs eager", "geometric mean of eager time / kernel time over correct problems; ≈1 marks a 95% CI that "
       "contains 1 (not distinguishable from PyTorch)"),
    _c("95% CI", "bootstrap 95% confidence interval of that geometric mean"),
    _c("Median", "median of the per-problem speedups", more=True),
    _c("Win / tie / loss", "correct problems faster / within / slower than the protocol's own noise band around 1×"),
    _c("Speedup vs compile", "geometric mean against torch.compile of the reference (verified protocol)"),
    _c("95% CI (compile)", "bootstrap 95% confidence interval of the speedup against torch.compile"),
    _c("Mem regressions", "share of correct kernels whose peak memory exceeds the baseline's", more=True),
    _c("Mem Eff", "geometric mean of baseline peak / kernel peak memory", more=True),
    _c("Median SOL score", "median SOL ExecBench score: 1 at the hardware's speed of light, 0.5 at the baseline",
       more=True),
    _c("Hacked", "best samples that failed an integrity check (the standard protocol runs none: there, reports the "
       "runner's judge refuted)"),
    _c("Physically impossible", "correct records whose time is below what writing their own output allows at the "
       "measured copy bandwidth", more=True),
    _c("k", "most samples of one problem (best-of-k)", more=True),
    _c("Precision", "share of correct problems by the precision class of their best kernel: f32 = float32-like, TF32 = "
       "TF32-like, reduced = less precise than TF32", more=True, only=VERIFIED),
    _c("Shape-general", "share of correct problems whose kernel was also right at a held-out size, over those where "
       "that re-check ran", more=True, only=VERIFIED),
)
"""In the order of the table's cells."""


def columns_of(protocol: str) -> list[Column]:
    """The columns of one protocol's tab."""
    return [c for c in COLUMNS if c.only in (None, protocol)]
