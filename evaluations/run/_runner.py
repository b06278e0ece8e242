"""The :class:`Runner`: which evaluations are still to do, their problems' baselines (reused or measured), and
each candidate's evaluation, judged and written as a record the moment it is finished."""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

import pydantic

from schemas import BaselineRecord, Record

from ..core import AlgorithmFlags, BaselineOutcome, Candidate, CandidateOutcome, Job, Problem, no_answer
from . import _judge, _schedule
from ._failures import error_text, names_out_of_memory, out_of_memory, reported_outcome
from ._in_turns import TakingTurns
from ._paths import baseline_path, finished_record, flag_models, flag_tag, problem_ref, record_path
from ._prepare import Preparing
from ._records import assemble_record
from ._schedule import Work


class Runner(Preparing, TakingTurns):
    """One ``kverdict eval`` run over loaded problems and candidates: its state and isolated jobs
    (``RunnerBase``), its prepare stage (``Preparing``), its timings in turns (``TakingTurns``) and, here, its
    baselines and evaluations."""

    def pending(self) -> list[tuple[str, Candidate, Path]]:
        """(protocol, candidate, record path) still to evaluate; finished ones go to the summary."""
        todo = []
        for name, info in self.infos.items():
            for c in self.candidates:
                path = record_path(self.config.out_dir, self.env, info, self.problems[c.problem_key], c)
                tampered = self.manifest.contradicts(path)
                if tampered:
                    self.summary.tampered.append(path)
                done = finished_record(path, c, self.problems[c.problem_key], info, self.env, tampered)
                if done is not None:
                    self.summary.skipped.append(path)
                    self.summary.records.append(done)
                else:
                    todo.append((name, c, path))
        return todo

    def chunks(self, todo: list[tuple[str, Candidate, Path]]) -> list[list[tuple[str, Candidate, Path]]]:
        """``todo`` in chunks of whole problems, each prepared just before it is evaluated (``_schedule.chunks``)."""
        return _schedule.chunks(todo, self.config.concurrent)

    def schedule(self, todo: list[tuple[str, Candidate, Path]]) -> list[Work]:
        """The baselines and candidates of ``todo`` in the order a concurrent run starts them (``_schedule.schedule``)."""
        return _schedule.schedule(todo, self.protocols, self.config.concurrent)

    def baseline(self, protocol: str, problem: Problem, kind: str, flags: AlgorithmFlags = ()) -> BaselineRecord | None:
        """The baseline record of (problem, protocol, kind, algorithm flags) here: reused from disk, or measured now."""
        key = (protocol, problem.key, flag_tag(kind, flags))
        with self._locks_guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # concurrent candidates of one problem measure its baseline once
            return self._baseline(protocol, problem, kind, key, flags)

    def _baseline(self, protocol: str, problem: Problem, kind: str, key: tuple[str, str, str],
                  flags: AlgorithmFlags = ()) -> BaselineRecord | None:
        if key in self._baselines:
            return self._baselines[key]
        if key in self._deferred_baselines and not self.alone:
            return None  # put off until nothing else is in flight: its problem's candidates wait with it
        info, module = self.infos[protocol], self.protocols[protocol]
        path = baseline_path(self.config.out_dir, self.env, info, problem, kind, flags)
        record = self._reuse_baseline(path, problem, info)
        too_large = self._too_large(problem, protocol) if record is None and not flags else None
        if too_large:
            self._deferred_baselines.add(key)
            self.say(f"{problem.key}: its {protocol} {flag_tag(kind, flags)} baseline {too_large}; "
                     "measured alone, with its candidates, once its chunk has ended")
            return None
        if record is None:
            # paced like the candidate: by the eager baseline of PyTorch's default flags, itself included when flagged
            needed, pacer = self.pacer_of(protocol, problem, None if flags else kind)
            if needed and pacer is None:
                return None  # the eager baseline failed (already reported) or was interrupted
            job = self.job_of(protocol, problem, kind=kind, pacer=pacer, flags=flags)
            tag = flag_tag(kind, flags)
            result = self._isolated("evaluations.worker._worker:run_job", job, f"baseline-{protocol}-"
                                    f"{problem.sha256[:12]}-{tag}", self.config.timeout_s, "baseline")
            if not result.ok:
                if result.failure is not None and result.failure.kind == "cancelled":
                    return None  # interrupted, not failed: measured again by the re-run
                reason = result.failure.message if result.failure else "no result"
                if not flags and self._shared_out_of_memory(reason):
                    self._deferred_baselines.add(key)
                    self.say(f"{problem.key}: its {protocol} {tag} baseline ran out of device memory beside other "
                             "evaluations; measured again alone, with its candidates, once its chunk has ended")
                    return None
                self.say(f"{problem.key}: the {protocol} {tag} baseline failed: {reason[:300]}")
                failures = self.summary.reference_failures
                failed = f"{protocol} {tag} baseline: {reason}"
                failures[problem.key] = f"{failures[problem.key]}; {failed}" if problem.key in failures else failed
                self._baseline_failures[key] = reason
                self._baselines[key] = None
                return None
            outcome: BaselineOutcome = result.value  # its peak memory was measured first in the same fresh process
            peak = outcome.peak_memory_bytes
            missing = None if peak is not None else self._memory_missing(module, job)
            record = BaselineRecord(problem=problem_ref(problem), protocol=info, kind=kind,
                                    environment=self._stamped(), timing=outcome.timing, peak_memory_bytes=peak,
                                    peak_memory_missing=missing, algorithm_flags=flag_models(flags))
            self._write(path, record)
        self.note_peak(problem.key, record.peak_memory_bytes)
        self._baselines[key] = record
        return record

    def note_peak(self, problem_key: str, peak_bytes: int | None) -> None:
        """Keep the largest peak of one call measured for a problem (a baseline's): its workers' footprint."""
        if peak_bytes is not None:
            self._peaks[problem_key] = max(self._peaks.get(problem_key, 0), peak_bytes)

    def _too_large(self, problem: Problem, protocol: str) -> str | None:
        """Why ``problem``'s workers under ``protocol`` cannot share the device with any other (their estimated
        footprint exceeds what all workers may hold together), or None; never while the run evaluates alone."""
        peak = self._peaks.get(problem.key)
        need = self.admission.largest_need(peak, protocol)
        if self.alone or peak is None or not self.admission.fits_beside_none(need):
            return None
        return (f"needs about {need / 2**30:.0f} GiB of the device ({peak / 2**30:.1f} GiB at the peak of one call), "
                f"more than the {(self.admission.budget or 0) / 2**30:.0f} GiB that the evaluations in flight may hold")

    def pacer_of(self, protocol: str, problem: Problem, kind: str | None = None) -> tuple[bool, BaselineRecord | None]:
        """(whether a pacer is needed, the pacer): the baseline whose calls per event pair and method
        (eager calls or CUDA graph replays) every other timing of the problem reuses (the eager one).
        Not needed for the pacer itself, nor where the protocol times one call per pair anyway (the
        standard one); when needed but missing (failed or interrupted), nothing of the problem may be
        timed."""
        module = self.protocols[protocol]
        pacer_kind = module.SPEEDUP_BASELINE["vs_eager"]
        if kind == pacer_kind or not getattr(module, "PACED_BY_EAGER_BASELINE", False):
            return False, None
        return True, self.baseline(protocol, problem, pacer_kind)

    def _memory_missing(self, module: ModuleType, job: Job) -> str:
        """Why a worker measured no peak memory (the record says so rather than leave a silent gap)."""
        if not hasattr(module, "measure_memory"):
            return f"not measured: the {job.protocol} protocol measures no memory"
        if job.device != "cuda":
            return f"not measured: no device allocator on {job.device}"
        return "the worker that timed it returned no peak memory"

    def _memory(self, module: ModuleType, job: Job, tag: str) -> tuple[int | None, str | None]:
        """(peak bytes of one call, measured in a fresh worker; or None and why not)."""
        if not hasattr(module, "measure_memory") or job.device != "cuda":
            return None, self._memory_missing(module, job)
        result = self._isolated("evaluations.worker._worker:memory_job", job, tag, self.config.timeout_s, "memory")
        if result.ok and result.value is not None:
            return result.value, None
        why = result.failure.message if result.failure is not None else "the measurement returned nothing"
        return None, f"the measurement in a fresh worker failed: {why[:300]}"

    def evaluate(self, protocol: str, candidate: Candidate, path: Path) -> Record | None:
        """Evaluate one candidate under one protocol and write its record; None if its reference failed, or if
        it ran out of memory while other evaluations shared the device (then it waits in ``again_alone`` to be
        evaluated once the rest are done, with ``alone`` set: the memory others held is no verdict on it)."""
        module, problem = self.protocols[protocol], self.problems[candidate.problem_key]
        measured = {kind: self.baseline(protocol, problem, kind) for kind in module.BASELINE_KINDS}
        too_large = self._too_large(problem, protocol)
        if too_large:
            self._put_off(protocol, candidate, path, f"its problem {too_large}")
            return None
        put_off = [kind for kind in module.BASELINE_KINDS if (protocol, problem.key, kind) in self._deferred_baselines]
        if put_off and not self.alone:
            self._put_off(protocol, candidate, path, f"its problem's {' and '.join(put_off)} baseline ran out of device "
                          "memory while other evaluations shared the device")
            return None
        if measured[module.SPEEDUP_BASELINE["vs_eager"]] is None or self.cancel.is_set():
            return None  # no eager baseline (failed, already reported), or interrupted: nothing to pace or compare
        baselines, missing_notes = self._without_failed(protocol, problem, measured)
        if baselines is None:
            return None
        if not self.built(candidate):  # its build, beside this chunk's baselines, did not end: interrupted
            return None
        tag = f"eval-{protocol}-{candidate.sha256[:16]}"
        job, evidence = _judge.prepare_job(self.job_of(protocol, problem, candidate, pacer=self.pacer_of(protocol, problem)[1]),
                                           self.config.build_dir, tag)
        outcome = self._build_errors.get(candidate.sha256)
        in_turns: dict[str, BaselineRecord] = {}
        if outcome is None:
            judged = self._judged(module, job, baselines, tag, evidence)  # type: ignore[arg-type]
            if judged is None:
                return None  # the run was interrupted: no verdict, and a re-run evaluates it again
            outcome, in_turns, waited_s = judged
            why = self._shared_failure(outcome, waited_s) if not self.alone and self.config.concurrent > 1 else None
            if why is not None:
                self._put_off(protocol, candidate, path, why)
                return None
            if self.cancel.is_set():
                return None
        if outcome.status == "correct" and outcome.peak_memory_bytes is None:
            outcome.peak_memory_bytes, outcome.peak_memory_missing = self._memory(
                module, job, f"mem-{protocol}-{candidate.sha256[:16]}")
        flagged, flag_notes = self.flagged_baselines(protocol, problem, outcome)
        if flagged and in_turns:
            flag_notes.append("the baselines with the candidate's flags were timed alone, not in turns beside it: "
                              "its speedups are ratios of medians")
        if flagged:
            baselines, in_turns = {**baselines, **flagged}, {k: b for k, b in in_turns.items() if k not in flagged}
        outcome.notes = [*outcome.notes, *missing_notes, *flag_notes]
        if self.cancel.is_set():
            return None  # interrupted during the memory measurement: leave the whole evaluation to the re-run
        if self.alone:
            why = self._alone_reasons.get((protocol, candidate.sha256), "its evaluation or its judge ran out of device "
                                          "memory while other evaluations shared the device")
            outcome.notes = [*outcome.notes, f"{why} ({self.config.concurrent} at once in this run); evaluated again "
                             "alone, once the evaluations beside it had ended"]
        elif self._concurrency_note:
            outcome.notes = [*outcome.notes, self._concurrency_note]
        record = self._record(protocol, problem, candidate, outcome, baselines, in_turns)  # type: ignore[arg-type]
        self._write(path, record)
        return record

    def _without_failed(self, protocol: str, problem: Problem, measured: dict[str, BaselineRecord | None]
                        ) -> tuple[dict[str, BaselineRecord] | None, list[str]]:
        """The baselines measured, less those whose measurement failed (a failure of PyTorch's own code, such as a
        ``torch.compile`` that crashes on the problem, is no verdict on a candidate: it is compared with the other
        kinds, and a note names the one missing and why); None where one is missing for want of a measurement
        (an interrupted run), as a re-run measures it."""
        baselines: dict[str, BaselineRecord] = {}
        notes: list[str] = []
        for kind, record in measured.items():
            if record is not None:
                baselines[kind] = record
                continue
            if (protocol, problem.key, kind) not in self._baselines:
                return None, []
            reason = self._baseline_failures.get((protocol, problem.key, kind), "no result")
            notes.append(f"its problem's {kind} baseline failed, so it has no speedup against that baseline: "
                         f"{reason[:300]}")
        return baselines, notes

    def _put_off(self, protocol: str, candidate: Candidate, path: Path, why: str) -> None:
        """Leave an evaluation to ``again_alone`` (``why``: what the shared device may have done to it)."""
        self.again_alone.append((protocol, candidate, path))
        self._alone_reasons[(protocol, candidate.sha256)] = why
        self.say(f"{candidate.problem_key} s{candidate.sample} ({protocol}): {why}; evaluated again alone once the "
                 "evaluations beside it have ended")

    def _shared_out_of_memory(self, reason: str) -> bool:
        """Whether a baseline's failure ran out of device memory while other evaluations held some (then it is no
        failure of PyTorch's code on the problem, and is measured again alone)."""
        return not self.alone and self.config.concurrent > 1 and names_out_of_memory(reason)

    @staticmethod
    def _shared_failure(outcome: CandidateOutcome, waited_s: float) -> str | None:
        """Why an evaluation's failure may be the shared device's rather than the candidate's (then it is evaluated
        again alone, after the rest), or None: it ran out of device memory while others held some, or it ran past
        its deadline after waiting for other workers' timings (the wait extends a deadline only so far)."""
        if out_of_memory(outcome):
            return ("its evaluation or its judge ran out of device memory while other evaluations shared the device")
        if outcome.status == "timeout" and waited_s > 0:
            return (f"its worker ran past its deadline after waiting {waited_s:.0f} s for other evaluations' timings "
                    "on the shared device")
        return None

    def _judged(self, module: ModuleType, job: Job, baselines: dict[str, BaselineRecord], tag: str,
                evidence: Path) -> tuple[CandidateOutcome, dict[str, BaselineRecord], float] | None:
        """The candidate's outcome as its worker reported it and the judge ruled, with the baselines timed in turns
        beside it (none where it was timed alone) and the seconds its worker waited for the GPU lock; None if the
        run was interrupted meanwhile."""
        clock = _judge.OuterClock()
        in_turns: dict[str, BaselineRecord] = {}
        if self.takes_turns(module, baselines):
            result, in_turns, turn_notes = self.timed_in_turns(job, baselines, tag, clock.answer)
        else:
            result, turn_notes = self._isolated("evaluations.worker._worker:run_job", job, tag, self.config.timeout_s,
                                                "candidate", answer=clock.answer), []
        if result.failure is not None and result.failure.kind == "cancelled":
            return None
        outcome = reported_outcome(result)
        if result.ok and outcome.error and result.output_tail.strip() and outcome.status != "incorrect":
            outcome.error = error_text(outcome.error, result.output_tail)
        outcome.notes = [*outcome.notes, *turn_notes]
        _judge.judge_outcome(lambda target, request, t: self._isolated(target, request, t, self.config.timeout_s,
                                                                       "judge"), job, outcome, clock, evidence, tag)
        return outcome, in_turns, result.waited_s

    def _record(self, protocol: str, problem: Problem, candidate: Candidate, outcome: CandidateOutcome,
                baselines: dict[str, BaselineRecord], in_turns: dict[str, BaselineRecord]) -> Record:
        """The candidate's record; a worker's report that breaks the schema is no verdict but a ``runtime_error``."""
        try:
            return assemble_record(self, protocol, problem, candidate, outcome,
                                   {**baselines, **in_turns}, in_turns=set(in_turns))
        except pydantic.ValidationError as exc:
            outcome = no_answer("run", f"its worker's report is not a valid record: {str(exc)[:1500]}")
            return assemble_record(self, protocol, problem, candidate, outcome, baselines)

    def flagged_baselines(self, protocol: str, problem: Problem,
                          outcome: CandidateOutcome) -> tuple[dict[str, BaselineRecord], list[str]]:
        """Baselines of every kind timed with the algorithm-choice flags a correct candidate set (each in its own
        worker, cached per flag set like any baseline), for its speedups; notes where one could not be timed
        (that kind keeps PyTorch's default flags). Nothing for a candidate that set none."""
        if not outcome.algorithm_flags or outcome.status != "correct":
            return {}, []
        flagged, notes = {}, []
        for kind in self.protocols[protocol].BASELINE_KINDS:
            record = self.baseline(protocol, problem, kind, outcome.algorithm_flags)
            if record is not None:
                flagged[kind] = record
            else:
                notes.append(f"the {kind} baseline could not be timed with the candidate's flags "
                             f"({', '.join(f.token for f in flag_models(outcome.algorithm_flags))}); its speedup is "
                             "against PyTorch's default flags")
        return flagged, notes

