"""The runner's state and how it runs one isolated job: what its stages (prepare, turns, evaluation) share."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import schemas
from schemas import BaselineRecord, Environment, Manifest, ProtocolInfo, Record

from .. import Loaded
from ..core import AlgorithmFlags, Candidate, CandidateOutcome, Job, Problem, gpulock, pacing_of
from ..worker import IsolatedResult, Spare, SparePool, run_isolated, start_spare
from ._admission import Admission, budget_of, device_bytes
from ._config import RunConfig, RunSummary, default_prewarm
from ._paths import effective_info, existing_record, same_environment
from ._phases import Phase, Span


class RunnerBase:
    """A run's problems, candidates, protocols and records so far, and its isolated jobs (:class:`Runner`)."""

    def __init__(self, loaded: Loaded, config: RunConfig, env: Environment, summary: RunSummary | None = None) -> None:
        from ..protocols import get_protocol

        self.config, self.env = config, env
        self.problems = {p.key: p for p in loaded.problems}
        self.candidates = [c for c in loaded.candidates if c.problem_key in self.problems]
        self.protocols = {name: get_protocol(name) for name in config.protocols}
        self.infos = {name: effective_info(m, config.overrides) for name, m in self.protocols.items()}
        self.summary = summary if summary is not None else RunSummary()
        self.manifest = Manifest(config.out_dir)
        self.cancel = threading.Event()
        self._baselines: dict[tuple[str, str, str], BaselineRecord | None] = {}
        self._baseline_failures: dict[tuple[str, str, str], str] = {}  # why a baseline of ``_baselines`` is None
        """(protocol, problem key, ``flag_tag`` of kind and flags) -> baseline record, or None where it failed."""
        self._build_errors: dict[str, CandidateOutcome] = {}
        """Candidate sha256 -> its ``compile_error``, where its preparation failed (its evaluation is that outcome)."""
        self._building: dict[str, threading.Event] = {}
        """Candidate sha256 -> set once its build, running beside its own chunk's baselines (``build_beside``), ended."""
        self._prewarm = (default_prewarm(config.device, False, config.concurrent) if config.prewarm is None
                         else config.prewarm)
        self._spare: Spare | None = None
        self._pool: SparePool | None = None
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        shared_gpu = config.device == "cuda" and (config.concurrent > 1 or bool(os.environ.get(gpulock.GPU_LOCK_ENV)))
        self._concurrency_note = (
            f"evaluated while other workers shared this GPU ({config.concurrent} at once in this run); every timing "
            "held the GPU alone, but other workers' start-up and host work (extension builds included) could run "
            "beside it" if shared_gpu else None)
        self.again_alone: list[tuple[str, Candidate, Path]] = []
        self._alone_reasons: dict[tuple[str, str], str] = {}  # (protocol, candidate sha256): why it waits for that
        """Evaluations that ran out of memory while others were in flight: evaluated again, alone, once the rest of
        their chunk has ended."""
        self._deferred_baselines: set[tuple[str, str, str]] = set()
        """Baselines (keys of ``_baselines``) that ran out of device memory while others were in flight: measured
        again alone with their problem's candidates, never counted as failed meanwhile."""
        self.alone = False
        """Set while the evaluations in ``again_alone`` run one at a time with nothing else in flight."""
        self.admission = Admission(budget_of(device_bytes() if config.device == "cuda" else None, config.concurrent),
                                   config.concurrent)
        """How much of the device the workers in flight may hold (``_admission``); no limit one at a time."""
        self._peaks: dict[str, int] = {}
        """Problem key -> the largest peak bytes of one call its baselines measured: its workers' footprint."""
        self.say: Callable[[str], None] = lambda _: None
        """Where the run tells what it cannot wait to tell (a failed baseline, an evaluation put off): its console."""

    def job_of(self, protocol: str, problem: Problem, candidate: Candidate | None = None, kind: str | None = None,
               pacer: BaselineRecord | None = None, flags: AlgorithmFlags = ()) -> Job:
        """A worker's job: a candidate's or a baseline's, timed like ``pacer`` (its problem's eager baseline)."""
        options: dict[str, Any] = dict(self.config.options)
        if pacer is not None:  # one timing method per problem; options given on the command line win
            for name, value in pacing_of(pacer.timing).items():
                options.setdefault(name, value)
        return Job(problem=problem, protocol=protocol, device=self.config.device, candidate=candidate,
                   baseline_kind=kind, build_dir=str(self.config.build_dir.resolve()), options=options,
                   algorithm_flags=flags, overrides=self.config.overrides)

    def _isolated(self, target: str, job: Any, tag: str, timeout_s: float, phase: Phase, spare: bool = True,
                  cancel: Any = None, answer: Any = None, admit: bool = True) -> IsolatedResult:
        """Run ``job`` in a fresh worker (``_isolation``), its output logged under ``tag``, its span kept by phase;
        a worker that holds device memory first waits for room for its problem's footprint (``admission``), except
        where ``admit`` is off (workers that must run at the same time, as parties of turns do)."""
        log = self.config.build_dir / "logs" / f"{tag}.log"
        inner = getattr(job, "job", job)  # a judge's request holds the job it rules on
        problem = getattr(inner, "problem", None)
        need = (self.admission.need(self._peaks.get(problem.key), phase, getattr(inner, "protocol", "verified"),
                                    problem.meta.min_bytes) if admit and not self.alone and problem is not None else 0)
        start = self.summary.phases.now()
        with self.admission.hold(need, phase) as admitted_s:
            result = run_isolated(target, job, timeout_s=timeout_s, log_path=log, cancel=cancel or self.cancel,
                                  spare=self._next_spare() if spare else None, answer=answer)
        timing = getattr(result.value, "timing", None) if result.ok else None
        timed_ms = timing.mean_ms * timing.calls * timing.calls_per_sample if timing is not None else None
        status, error = _ended(result, phase)
        self.summary.phases.add(Span(phase, tag, start, self.summary.phases.now(), result.ok, timed_ms, result.waited_s,
                                     status, error, admitted_s))
        return result

    def _write(self, path: Path, record: Record | BaselineRecord) -> None:
        with self.summary.phases.span("write", path.name):
            text = schemas.validated_text(record)
            schemas.write_text(path, text)
            self.manifest.add(path, text)

    def _next_spare(self) -> Spare | None:
        """A worker that has imported ahead, where prewarming is on: one at a time, the spare started during the
        previous call (None at first, which starts the one for the next call); several in flight, one of a pool
        as large as the run's concurrency."""
        if not self._prewarm:
            return None
        # each protocol's code: the module of its entry point (the verified package's face imports it on first use)
        code = (self.protocols[name].run_candidate.__module__ for name in self.config.protocols)
        preload = ("evaluations.worker._worker", *code)
        if self.config.concurrent > 1:
            with self._locks_guard:
                if self._pool is None:
                    self._pool = SparePool(preload, self.config.build_dir / "logs", self.config.concurrent)
            return self._pool.take()
        spare = self._spare
        self._spare = start_spare(preload, self.config.build_dir / "logs")
        return spare

    def close(self) -> None:
        """Stop the spare workers nobody will use."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.discard()
        if self._pool is not None:
            self._pool.close()

    def _reuse_baseline(self, path: Path, problem: Problem, info: ProtocolInfo) -> BaselineRecord | None:
        """The baseline record at ``path`` when it is of this problem source, protocol (this version, or one whose
        baselines it reuses: ``schemas.baseline_versions``) and environment, and untampered."""
        existing = existing_record(path)
        same = (isinstance(existing, BaselineRecord) and existing.problem.source_sha256 == problem.sha256
                and existing.protocol.version in schemas.baseline_versions(info.name, info.version)
                and existing.protocol.model_copy(update={"version": info.version}) == info
                and same_environment(existing.environment, self.env))
        if same and self.manifest.contradicts(path):
            if path not in self.summary.tampered:
                self.summary.tampered.append(path)
            return None
        return existing if same else None

    def _stamped(self) -> Environment:
        return self.env.model_copy(update={"timestamp": datetime.now(UTC)})


def _ended(result: IsolatedResult, phase: Phase) -> tuple[str, str | None]:
    """(how an isolated job ended, the start of its error where it was a baseline's) for its span."""
    if not result.ok:
        failure = result.failure
        message = failure.message[:300] if failure is not None and phase == "baseline" else None
        return f"failed:{failure.kind if failure is not None else 'unknown'}", message
    status = getattr(result.value, "status", None)
    return (status if isinstance(status, str) else "ok"), None
