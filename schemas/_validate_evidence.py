"""Validation of a record's evidence against its status and figures: the status agrees with the trials and checks,
speedups follow from the times they list, statistics lie in order, and no value is one no measurement gives."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ._protocols import PROTOCOLS, Pinned
from ._record import BaselineRecord, Record
from ._timing import speedup_between, statistic_ms

SPEEDUP_REL_TOL = 1e-3
"""Relative tolerance of speedup = baseline time / candidate time (rounding of stored values)."""
SPEEDUP_ABS_TOL = 5e-3
"""Absolute tolerance of the same check, so speedups rounded to two decimals still pass."""
MAX_INT32 = 2**31 - 1
"""Largest problem id (the site keeps ids as 32-bit integers)."""
ERROR_FIELDS = ("max_abs_error", "error_budget_used", "fp32_strict_budget_used", "fp32_tf32_budget_used")
"""Error measures of a correctness check: never negative."""


def _timings(rec: Record | BaselineRecord) -> Iterator[tuple[str, Any]]:
    yield "timing", rec.timing
    for i, b in enumerate(rec.baselines if isinstance(rec, Record) else []):
        yield f"baselines[{i}].timing", b.timing


def value_faults(rec: Record | BaselineRecord) -> Iterator[tuple[str, str]]:
    """Values the schema's types allow but no measurement gives: times of zero, negative errors, huge ids."""
    for where, t in _timings(rec):
        if t is not None and (t.mean_ms <= 0 or t.median_ms <= 0):
            yield where, "a time of zero is not a measurement (mean_ms and median_ms must be positive)"
    for i, check in enumerate(rec.correctness if isinstance(rec, Record) else []):
        for field in ERROR_FIELDS:
            value = getattr(check, field)
            if value is not None and value < 0:
                yield f"correctness[{i}].{field}", f"an error is never negative, got {value}"
    if rec.problem.id > MAX_INT32:
        yield "problem.id", f"must be at most {MAX_INT32}"


def timing_faults(where: str, t: Any) -> Iterator[tuple[str, str]]:
    """The statistics of one timing lie in order: mean and median within [min, max], the median within its CI, each
    round's median within [min, max]. The median is not held to the pooled quartiles: a timing rotated over places
    of the weights takes the mean of the places' medians, which can fall just outside a tight pooled IQR."""
    if t is None:
        return
    slack = 1e-9 + 1e-6 * t.max_ms
    for stat in ("mean_ms", "median_ms"):
        if not t.min_ms - slack <= getattr(t, stat) <= t.max_ms + slack:
            yield f"{where}.{stat}", f"{getattr(t, stat)} lies outside [min_ms, max_ms] = [{t.min_ms}, {t.max_ms}]"
    if t.q1_ms is not None and t.q3_ms is not None and not t.q1_ms - slack <= t.q3_ms:
        yield f"{where}.q1_ms", f"q1_ms {t.q1_ms} lies above q3_ms {t.q3_ms}"
    lo, hi = t.ci95_low_ms, t.ci95_high_ms
    if lo is not None and hi is not None and not lo - slack <= t.median_ms <= hi + slack:
        yield f"{where}.median_ms", f"{t.median_ms} lies outside its 95% CI [{lo}, {hi}]"
    for i, value in enumerate(t.round_medians_ms or []):  # a median of some of the samples
        if not t.min_ms - slack <= value <= t.max_ms + slack:
            yield (f"{where}.round_medians_ms", f"round {i}'s median {value} lies outside [min_ms, max_ms] = "
                   f"[{t.min_ms}, {t.max_ms}]")
            break


def status_faults(rec: Record, pin: Pinned | None) -> Iterator[tuple[str, str]]:
    """The status agrees with the evidence: what ``correct``, ``hacked``, ``incorrect`` and the errors need, and
    ``hacked`` wherever a check other than those of a wrong answer failed."""
    wrong_answer = dict(pin.incorrect_checks) if pin else {}  # check -> reason, where a version has them
    failed_checks = [c.name for c in rec.integrity if not c.passed]
    hacks = [name for name in failed_checks if name not in wrong_answer]
    found = {wrong_answer[name] for name in failed_checks if name in wrong_answer}
    failed_trials = [c.name for c in rec.correctness if not c.passed]
    if rec.status == "correct":
        if not rec.correctness:
            yield "status", "'correct' needs at least one correctness trial"
        if rec.timing is None:
            yield "status", "'correct' needs the candidate's timing"
    elif rec.status == "hacked" and not hacks:
        yield "status", ("'hacked' needs a failed integrity check" + (
            f" other than those of a wrong answer ({', '.join(sorted(wrong_answer))}: 'incorrect')" if found else ""))
    elif rec.status == "incorrect":
        yield from _incorrect(rec, failed_trials, found, wrong_answer)
    elif rec.status in ("compile_error", "runtime_error", "timeout") and not (rec.error or "").strip():
        yield "error", f"status {rec.status!r} needs the error text"
    if rec.status != "hacked" and hacks:
        yield "status", f"integrity check {hacks[0]!r} failed, so the status must be 'hacked'"


def _incorrect(rec: Record, failed_trials: list[str], found: set[str],
               wrong_answer: dict[str, str]) -> Iterator[tuple[str, str]]:
    """An ``incorrect`` record shows its wrong answer: a failed trial or, from verified 1.3, a failed check of a
    wrong answer, and (where its version classes them) the reason that names it."""
    if not failed_trials and not found:
        yield "status", "'incorrect' needs a failed correctness trial" + (
            f" or a failed check of a wrong answer ({', '.join(sorted(wrong_answer))})" if wrong_answer else "")
    if not wrong_answer:
        return
    if rec.reason is None:
        yield "reason", f"{rec.protocol.name} {rec.protocol.version} names why an 'incorrect' record is wrong"
    elif rec.reason == "wrong-answer" and not failed_trials:
        yield "reason", "'wrong-answer' needs a failed correctness trial"
    elif rec.reason != "wrong-answer" and rec.reason not in found:
        check = next((c for c, r in wrong_answer.items() if r == rec.reason), rec.reason)
        yield "reason", f"reason {rec.reason!r} needs its check {check!r} failed"


def speedup_faults(rec: Record) -> Iterator[tuple[str, str]]:
    """Each speedup is one of its protocol's columns and follows from the times it divides (or, timed in turns, from
    the median of the per-round ratios)."""
    known = PROTOCOLS.get(rec.protocol.name)
    if known is None:
        return
    stat = rec.protocol.timing.statistic + "_ms"
    by_kind = {b.kind: b for b in rec.baselines}
    for column, value in rec.speedup.model_dump().items():
        if value is None:
            continue
        kind = known["speedups"].get(column)
        field = f"speedup.{column}"
        if kind is None:
            yield field, f"protocol {rec.protocol.name!r} has no {column} speedup"
        elif rec.timing is None:
            yield field, "a speedup needs the candidate's timing"
        elif kind not in by_kind:
            yield field, f"a speedup needs the {kind} baseline among the record's baselines"
        else:
            base_timing = by_kind[kind].timing
            expected = speedup_between(rec.timing, base_timing, rec.protocol.timing.statistic)
            expected = math.inf if expected is None else expected
            if math.isclose(value, expected, rel_tol=SPEEDUP_REL_TOL, abs_tol=SPEEDUP_ABS_TOL):
                continue
            if rec.timing.round_medians_ms and base_timing.round_medians_ms:
                yield field, (f"{value} disagrees with the median of the per-round ratios {kind} / candidate "
                              f"of their round_medians_ms = {expected:.6g} (both were timed in turns)")
            else:
                name = rec.protocol.timing.statistic
                cand, base = statistic_ms(rec.timing, name), statistic_ms(base_timing, name)
                yield field, (f"{value} disagrees with {kind} {stat} / candidate {stat} "
                              f"= {base} / {cand} = {expected:.6g}")
