"""A candidate's schema record, assembled from its outcome and its problem's baselines."""

from __future__ import annotations

from typing import TYPE_CHECKING

import schemas
from schemas import BaselineRecord, BaselineTiming, Record

from ..core import Candidate, CandidateOutcome, Problem
from ..worker import kernel_language
from ._failures import WRITE_REFUSED, refused_write
from ._paths import problem_ref

if TYPE_CHECKING:
    from ._runner import Runner


def assemble_record(runner: Runner, protocol: str, problem: Problem, candidate: Candidate,
                    outcome: CandidateOutcome, baselines: dict[str, BaselineRecord],
                    in_turns: set[str] | frozenset[str] = frozenset()) -> Record:
    """A schema record from a candidate outcome and the problem's baselines (those of ``in_turns`` timed in
    turns beside the candidate: no baseline record holds their timing, so they name none)."""
    module, info = runner.protocols[protocol], runner.infos[protocol]
    stat = info.timing.statistic
    timings = [BaselineTiming(kind=b.kind, timing=b.timing, peak_memory_bytes=b.peak_memory_bytes,
                              peak_memory_missing=b.peak_memory_missing, algorithm_flags=b.algorithm_flags,
                              baseline_id=None if b.kind in in_turns else schemas.baseline_relpath(b).as_posix())
               for b in baselines.values()]
    speedups: dict[str, float] = {}
    roofline = None
    if outcome.status == "correct" and outcome.timing is not None:
        cand_ms = schemas.statistic_ms(outcome.timing, stat)
        for field_name, kind in module.SPEEDUP_BASELINE.items():
            if kind not in baselines:  # its measurement failed: the record's notes say so
                continue
            speedup = schemas.speedup_between(outcome.timing, baselines[kind].timing, stat)
            if speedup is not None and speedup > 0:  # per-round ratios for timings taken in the same turns
                speedups[field_name] = speedup
        eager = baselines[module.SPEEDUP_BASELINE["vs_eager"]]
        roofline = _roofline(problem, runner.env.hardware, cand_ms, schemas.statistic_ms(eager.timing, stat))
    memory = _memory_stats(outcome, baselines[module.SPEEDUP_BASELINE["vs_eager"]])
    labels, notes = list(outcome.labels), list(outcome.notes)
    refused = refused_write(outcome)
    if refused is not None:
        labels.append(WRITE_REFUSED)
        notes.append(f"a write to {refused!r} was refused: a candidate's worker may write only its own folders (its "
                     "home, working directory, temporary files and builds), so this failure may be that rule's, not "
                     "the kernel's")
    return Record(
        model=schemas.ModelInfo(name=candidate.model, provider=candidate.provider, sample=candidate.sample),
        problem=problem_ref(problem), kernel=_kernel_source(candidate), protocol=info,
        environment=runner._stamped(), status=outcome.status, error=outcome.error,
        reason=outcome.reason if outcome.status == "incorrect" else None,
        correctness=outcome.correctness, timing=outcome.timing, baselines=timings,
        speedup=schemas.Speedups(**speedups),
        memory=memory, integrity=outcome.integrity, labels=labels, roofline=roofline, notes=notes,
        precision_class=outcome.precision_class, shape_check=outcome.shape_check, claimed=_claimed(candidate),
        judged=outcome.judged,
    )


def _memory_stats(outcome: CandidateOutcome, eager: BaselineRecord) -> schemas.MemoryStats:
    """Peak memory of the candidate and its eager baseline, each figure measured or its absence explained."""
    why = outcome.peak_memory_missing or ("not measured" if outcome.status == "correct" else
                                          f"not measured: memory is measured for correct candidates only ({outcome.status})")
    return schemas.MemoryStats(
        candidate_peak_bytes=outcome.peak_memory_bytes, baseline_peak_bytes=eager.peak_memory_bytes,
        candidate_peak_missing=None if outcome.peak_memory_bytes is not None else why,
        baseline_peak_missing=None if eager.peak_memory_bytes is not None else eager.peak_memory_missing
        or "not measured (its baseline record predates reasons being kept)")


def _kernel_source(candidate: Candidate) -> schemas.KernelSource:
    o = candidate.origin
    return schemas.KernelSource(sha256=candidate.sha256, language=kernel_language(candidate.source),
                                path=o.path, url=o.url, commit=o.commit, row=o.row)


def _claimed(candidate: Candidate) -> schemas.Claimed | None:
    """The source dataset's own claim for the kernel, as the record carries it."""
    c = candidate.claimed
    return None if c is None else schemas.Claimed(speedup=c.speedup, baseline=c.baseline, ms=c.ms,
                                                  source_field=c.source_field)


def _roofline(problem: Problem, hardware: str, candidate_ms: float, baseline_ms: float) -> schemas.Roofline | None:
    from ..suite import roofline_for

    return roofline_for(problem, hardware, candidate_ms, baseline_ms)
