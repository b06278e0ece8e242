"""The trusted side of an evaluation: what the runner believes of a candidate's worker only after checking.

A candidate's worker runs the candidate's code, so everything in that process, the harness's own checks
and its result pipe included, is the candidate's to rewrite. The runner takes two things from outside it:

- **Judged outputs.** The worker keeps the outputs of its correctness trials (``Job.options["evidence"]``,
  a file); a *judge*, a fresh worker that never imported candidate code, draws each trial's inputs itself
  from the evaluation's seeds (which the runner chose), runs the reference and rules on those outputs.
- **The outside clock.** After its own timing, the worker asks the runner for a seed (:class:`OuterClock`);
  from that moment the runner's clock runs while the worker draws fresh inputs from the seed, calls the
  candidate on each and sends back four fingerprints per output (a random projection and a nonlinear one,
  each against weights of mean 1 and of random signs, so no shortcut computes them without the whole
  output). The judge checks the fingerprints against the reference's and measures, in its own process, what
  drawing and fingerprinting cost. The time per answer seen from outside bounds the worker's own reported time.

:func:`reconcile` turns the judge's findings into the record's verdict. This module holds no torch (the
runner's side); ``_evidence`` holds the device work of both sides.
"""

from __future__ import annotations

import math
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from schemas import IntegrityCheck, Judged, OuterTiming, Pinned

from ..core import CandidateOutcome, Judgement, JudgeRequest, failure_status, verdict

OUTER_TARGET_MS = 100.0
"""The outside batch runs about this long at the worker's reported speed."""
OUTER_CALLS = (5, 50)
"""Fewest and most calls of the outside batch."""
CONTRADICTION_BUDGET = 2.0
"""A trial its worker reported as passed whose judged error budget exceeds this is a contradiction (``hacked``);
between 1 and this it is a narrow miss the judge's own reference could explain (``incorrect``)."""
UNCONFIRMED = (2.0, 0.02, 0.5)
"""(factor, ms, share): an answer seen from outside taking longer than factor x the reported time + ms + share of
the drawing and fingerprinting per call (whose estimate, from another process, is that uncertain) is labelled
``timing-unconfirmed``."""
REFUTED = (10.0, 0.2, 1.0)
"""(factor, ms, share): longer than this is no longer host overhead or noise but a reported time the candidate
did not take (integrity check ``outer-timing`` fails)."""
LABEL_UNCONFIRMED = "timing-unconfirmed"


def outer_calls(reported_ms: float | None) -> int:
    """Calls of the outside batch for a worker that reports ``reported_ms`` per call."""
    lo, hi = OUTER_CALLS
    if reported_ms is None or not math.isfinite(reported_ms) or reported_ms <= 0:
        return hi
    return max(lo, min(hi, math.ceil(OUTER_TARGET_MS / reported_ms)))


OUTER_BATCHES = 3
"""Most batches of the outside timing: where one batch is slower than the refutation bound (before its drawing and
fingerprinting are taken off), the runner asks for another under a new seed and keeps the fastest, as other
work on the host only ever slows a batch down."""


@dataclass
class OuterClock:
    """The runner's side of one worker's outside timing: answers its questions (``_isolation.ask``) and times
    them on the runner's own clock. Questions: ``("ready", reported_ms, method)`` -> ``{"seed", "calls",
    "method"}`` (the clock starts); ``("done", fingerprints)`` (it stops) -> ``{"again": False}``, or a new plan
    with ``"again": True`` for another batch; ``("failed", reason)``. The fastest batch is kept."""

    plan: dict[str, Any] | None = None
    started: float | None = None
    wall_s: float | None = None
    fingerprints: list[float] | None = None
    failed: str | None = None
    batches: int = 0
    refused: list[str] = field(default_factory=list)
    """Questions out of turn (asked twice, done before ready): each is refused and kept as evidence."""
    _current: dict[str, Any] | None = None
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, question: Any) -> Any:
        """The answer to one question of the worker (raises for one out of turn)."""
        with self._guard:
            kind = question[0] if isinstance(question, tuple) and question else None
            if kind == "ready" and self._current is None and self.batches == 0 and len(question) == 3:
                reported = question[1] if isinstance(question[1], float | int) else None
                method = question[2] if question[2] in ("eager", "cuda_graph") else "eager"
                return self._start(float(reported) if reported is not None else None, method)
            if kind == "done" and self._current is not None and len(question) == 2:
                wall = time.monotonic() - (self.started or 0.0)
                values = question[1]
                if not (isinstance(values, list) and all(isinstance(v, float) for v in values)):
                    self.refused.append("fingerprints that are not a list of numbers")
                    raise ValueError("fingerprints must be a list of floats")
                self.batches += 1
                if self.wall_s is None or wall < self.wall_s:
                    self.plan, self.wall_s, self.fingerprints = self._current, wall, values
                self._current = None
                if self.batches < OUTER_BATCHES and self._too_slow(wall):
                    return {**self._start(self.plan["reported_ms"], self.plan["method"]), "again": True}
                return {"again": False}
            if kind == "failed" and self._current is not None and len(question) == 2 and isinstance(question[1], str):
                self.failed = question[1][:500]
                self._current = None
                return {"again": False}
            self.refused.append(f"{str(kind)[:40]!r} out of turn")
            raise ValueError("question out of turn")

    def _start(self, reported: float | None, method: str) -> dict[str, Any]:
        self._current = {"seed": secrets.randbelow(2**31 - 2**20) + 2**20, "calls": outer_calls(reported),
                         "method": method, "reported_ms": reported}
        self.started = time.monotonic()
        return dict(self._current)

    def _too_slow(self, wall_s: float) -> bool:
        current = self.plan or {}
        reported = current.get("reported_ms")
        factor, ms, _ = REFUTED
        return reported is not None and wall_s * 1e3 / current["calls"] > factor * reported + ms


def _check(name: str, passed: bool, evidence: str | None) -> IntegrityCheck:
    return IntegrityCheck(name=name, passed=passed, evidence=evidence[:2000] if evidence else None)


NOT_JUDGED = "not judged outside the candidate's process"
"""How a record's note begins where the judge could not rule (the reason follows)."""


def reconcile(outcome: CandidateOutcome, clock: OuterClock, judgement: Judgement | None,
              pin: Pinned | None = None) -> Judged | None:
    """Apply the judge's findings to a worker's ``correct`` outcome (in place) and return the record's ``judged``.

    A report its own outputs contradict, outputs missing that the file had room for, trials under other seeds,
    a reported timing without the outside batch, wrong answers in that batch, or a reported time far below
    what the outside clock saw: ``hacked``. A narrow miss: ``incorrect``, by ``precision`` where the protocol
    version ``pin`` classes that check as a wrong answer's (the check is then failed with the judge's evidence),
    else a ``wrong-answer``. A failed outside batch: ``runtime_error``. A judge that could not judge leaves the
    verdict as reported, with a note.
    """
    if outcome.status != "correct":
        return None
    if judgement is None or judgement.error:
        outcome.notes.append(f"{NOT_JUDGED}: {(judgement.error if judgement else 'no judge')[:300]}")
        return None
    failures = _trial_failures(outcome, judgement)
    outer = _outer_timing(outcome, clock, judgement)
    failures += _outer_failures(outcome, clock, judgement, outer)
    if clock.failed and not failures:
        outcome.status, outcome.error = failure_status("run"), f"the outside timing check failed: {clock.failed}"
    hard = [(name, why) for name, why, narrow in failures if not narrow]
    narrow = [why for _, why, is_narrow in failures if is_narrow]
    if hard:
        outcome.status, outcome.reason = verdict([name for name, _ in hard], False, pin)
        outcome.integrity = [*outcome.integrity, *(_check(name, False, why) for name, why in hard)]
    elif narrow:  # wrong by at most twice the tolerance: the precision the judge's own reference could explain
        by_precision = pin is not None and ("precision", "precision") in pin.incorrect_checks
        outcome.status, outcome.reason = verdict(["precision"] if by_precision else [], not by_precision, pin)
        outcome.error = narrow[0]
        if by_precision:
            outcome.integrity = [c if c.name != "precision" else _check("precision", False, narrow[0])
                                 for c in outcome.integrity]
            if not any(c.name == "precision" for c in outcome.integrity):
                outcome.integrity.append(_check("precision", False, narrow[0]))
        missed = {r.name: r for r in judgement.rulings if not r.passed and not r.missing}
        outcome.correctness = [c.model_copy(update={
            "passed": False, "error_budget_used": missed[c.name].budget,
            "message": f"judged outside the candidate's process: {missed[c.name].message or 'wrong'}"[:2000]})
            if c.name in missed else c for c in outcome.correctness]
    if outcome.status != "correct":
        outcome.precision_class = None  # a class is of a candidate whose every trial passed
    if outcome.status == "correct":
        outcome.integrity = [*outcome.integrity, _check("judged-outputs", True, _judged_text(judgement, outcome)),
                             _check("outer-timing", True, _outer_text(outer))]
        if outer is not None and not _host(outcome) and _beyond(outer, UNCONFIRMED, False):  # the CPU's noise: no label
            outcome.labels = [*outcome.labels, LABEL_UNCONFIRMED]
            outcome.notes.append(f"timing unconfirmed: {_outer_text(outer)}")
    judged_count = sum(1 for r in judgement.rulings if not r.missing)
    return Judged(trials=judged_count, trials_reported=len(outcome.correctness), outer=outer)


def _trial_failures(outcome: CandidateOutcome, judgement: Judgement) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    if judgement.seeds_fault:
        out.append(("judged-outputs", f"the reported trials are not this evaluation's: {judgement.seeds_fault}", False))
    reported = {c.name: c for c in outcome.correctness}
    for r in judgement.rulings:
        if r.missing:
            out.append(("judged-outputs", f"{r.name}: reported as passed, but its outputs never reached the judge "
                        f"(the evidence file had room for {judgement.trials_room} trials)", False))
        elif not r.passed and reported.get(r.name) is not None:
            narrow = r.budget is not None and r.budget <= CONTRADICTION_BUDGET
            why = (f"{r.name}: its worker reported it passed; its outputs, judged in a process that never imported "
                   f"the candidate, fail: {r.message or 'wrong'}")
            out.append(("judged-outputs", why, narrow))
    return out


def _outer_timing(outcome: CandidateOutcome, clock: OuterClock, judgement: Judgement) -> OuterTiming | None:
    plan, timing = clock.plan, outcome.timing
    if plan is None or clock.wall_s is None or clock.fingerprints is None or timing is None:
        return None
    overhead = judgement.outer_overhead_s or 0.0
    wall_ms, overhead_ms = clock.wall_s * 1e3, overhead * 1e3
    per_call = max(0.0, wall_ms - overhead_ms) / plan["calls"]
    reported = timing.median_ms if timing.median_ms > 0 else timing.mean_ms
    return OuterTiming(calls=plan["calls"], method=plan["method"], wall_ms=wall_ms, overhead_ms=overhead_ms,
                       per_call_ms=per_call, reported_ms=reported)


def _outer_failures(outcome: CandidateOutcome, clock: OuterClock, judgement: Judgement,
                    outer: OuterTiming | None) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    if clock.refused:
        out.append(("outer-timing", "its worker put questions out of turn to the runner: " + "; ".join(clock.refused[:3]),
                    False))
    if clock.failed:
        return out
    if outcome.timing is not None and (clock.plan is None or clock.fingerprints is None):
        out.append(("outer-timing", "its worker reported a timing without the outside batch the harness always runs "
                    "first: the report did not come from the harness", False))
    elif judgement.outer_mismatch:
        out.append(("outer-timing", f"answers computed under the runner's clock are wrong: {judgement.outer_mismatch}",
                    False))
    elif outer is not None and _beyond(outer, REFUTED, _host(outcome)):
        out.append(("outer-timing", f"its reported time is not the time its answers take: {_outer_text(outer)}", False))
    return out


HOST_SLACK = 25.0
"""On the CPU (host-clock timings) the refutation's absolute margin is this many times larger, and no record is
labelled ``timing-unconfirmed``: a time slice of the host's scheduler is milliseconds, where a GPU's launch
overhead is microseconds, and a loaded host slows a batch by more than the label's margin."""


def _beyond(outer: OuterTiming, limit: tuple[float, float, float], host: bool) -> bool:
    factor, ms, share = limit
    ms *= HOST_SLACK if host else 1.0
    return outer.per_call_ms > factor * outer.reported_ms + ms + share * outer.overhead_ms / outer.calls


def _host(outcome: CandidateOutcome) -> bool:
    return outcome.timing is not None and outcome.timing.method == "host_clock"


def _judged_text(judgement: Judgement, outcome: CandidateOutcome) -> str:
    n = sum(1 for r in judgement.rulings if not r.missing)
    return (f"{n} of {len(outcome.correctness)} trials' outputs judged in a process that never imported the candidate, "
            "on inputs it drew itself" + ("" if n == len(outcome.correctness) else
                                          f" (the rest did not fit the {judgement.trials_room}-trial evidence file)"))


def _outer_text(outer: OuterTiming | None) -> str:
    if outer is None:
        return "no outside batch"
    return (f"{outer.calls} answers on fresh inputs ({outer.method} calls) took {outer.wall_ms:.3f} ms on the runner's "
            f"clock, {outer.overhead_ms:.3f} ms of it drawing and fingerprinting: {outer.per_call_ms:.4g} ms per answer "
            f"against {outer.reported_ms:.4g} ms reported")


def prepare_job(job: Any, build_dir: Path, tag: str) -> tuple[Any, Path]:
    """The evaluation job with the evidence file's path and a base seed the runner chose (so the judge can draw
    the same trials), and that path, cleared of anything an earlier attempt left. Each evaluation's file is in a
    folder of its own, the only one of the evidence folder its worker may write (``_worker.writable_folders``)."""
    evidence = build_dir.absolute() / "evidence" / tag / "outputs.pt"  # the worker works in a folder of its own
    shutil.rmtree(evidence.parent, ignore_errors=True)
    evidence.parent.mkdir(parents=True, exist_ok=True)
    options = {**job.options, "evidence": str(evidence)}
    options.setdefault("seed", secrets.randbelow(2**31 - 2**20) + 2**20)
    return replace(job, options=options), evidence


def judge_outcome(isolated: Callable[[str, Any, str], Any], job: Any, outcome: CandidateOutcome, clock: OuterClock,
                  evidence: Path, tag: str) -> None:
    """Have a fresh judge worker rule on a ``correct`` report (``isolated(target, payload, tag)`` runs it) and
    reconcile the outcome with its findings; the evidence file is removed either way."""
    try:
        if outcome.status != "correct":
            return
        request = JudgeRequest(job=job, reported=list(outcome.correctness), evidence=str(evidence),
                               outer_plan=clock.plan, fingerprints=clock.fingerprints)
        result = isolated("evaluations.worker._worker:judge_job", request, "judge-" + tag.removeprefix("eval-"))
        if result.ok and isinstance(result.value, Judgement):
            judgement = result.value
        else:
            why = result.failure.message if result.failure is not None else "it returned no judgement"
            judgement = Judgement(error=f"the judge's worker failed: {why[:300]}")
        from schemas import pinned

        outcome.judged = reconcile(outcome, clock, judgement, pinned(job.protocol))
    finally:
        shutil.rmtree(evidence.parent, ignore_errors=True)
