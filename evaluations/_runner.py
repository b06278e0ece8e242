"""The evaluation run: prepare candidates (builds, warm-up calls), measure or reuse baselines, evaluate, write records.

Every candidate and every baseline runs in its own spawned process (``_isolation``); records are
written atomically the moment they are finished, so an interrupted run keeps all of them, and a
re-run of the same command skips records already written for the same kernel and protocol version.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic

import schemas
from schemas import BaselineRecord, BaselineTiming, Environment, ProtocolInfo, Record
from schemas._manifest import Manifest

from . import _confine, _extensions, _gpulock, _judge, _turns
from ._gpubusy import BusySampler
from ._isolation import IsolatedResult, Spare, SparePool, run_isolated, start_spare
from ._loaders import Loaded
from ._outcomes import BaselineOutcome, CandidateOutcome, host_speed_bound, pacing_of
from ._phases import Phase, PhaseLog, Span
from ._types import AlgorithmFlags, Candidate, Job, Problem, sha256_text

MAX_ERROR_CHARS = 4000
"""Length limit of a record's ``error`` (the schema's)."""
DEFAULT_BUILD_TIMEOUT_S = 900.0
"""Deadline of one job of the prepare stage (a candidate's builds and its warm-up call)."""
PREPARE_CHUNK_WINDOWS = 3
"""A concurrent run prepares and evaluates its problems this many scheduling windows at a time (``Runner.chunks``)."""
PREPARE_CHUNK_PROBLEMS = 16
"""Problems per chunk for a run of one evaluation at a time."""
PREWARM_MIN_CPUS = 4
"""Fewest CPU cores on which spare workers may import ahead (they must not compete with timing)."""


def default_prewarm(device: str, requested: bool, concurrent: int = 1) -> bool:
    """Whether spare workers import ahead: on CUDA (device-timed) with cores to spare, when asked for or when
    several evaluations are in flight anyway (their start-up and host work already run beside every timing).

    One at a time it stays off unless requested. On the CPU the host clock times the calls and torch uses
    every core, so nothing may run beside them.
    """
    return (requested or concurrent > 1) and device == "cuda" and (os.cpu_count() or 1) >= PREWARM_MIN_CPUS


@dataclass(frozen=True)
class RunConfig:
    """How to run: where records go, which protocols, device, deadlines, parallelism, knobs."""

    out_dir: Path
    protocols: tuple[str, ...]
    device: str
    timeout_s: float = 300.0
    jobs: int = 1
    build_dir: Path = Path(".kv-cache/build")
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    options: dict[str, Any] = field(default_factory=dict)
    """Protocol knobs (``trials``, ``warmup_calls``, ``timed_calls``) recorded in the protocol info."""
    progress: bool = True
    prewarm: bool | None = None
    """Keep one spare worker importing torch and the protocols ahead of the next isolated call (each worker
    still serves exactly one job). True/False force it; None: :func:`default_prewarm`'s choice."""
    concurrent: int = 1
    """Evaluations in flight at once. Above 1 on CUDA, workers share the GPU through ``_gpulock``: every
    timing holds the device alone; start-up, loading, correctness and integrity work overlap."""
    prepare_ahead: bool | None = None
    """Build the next chunk's extensions while this chunk is evaluated, and a chunk's extensions that are not built
    yet (the first chunk's) while its baselines are timed (``Runner.beside``). None: on CUDA with
    several evaluations in flight, where workers share the device through ``_gpulock`` and builds let go of it."""
    in_turns: bool = False
    """Time every candidate of a protocol that takes turns (verified) in turns with fresh timings of its problem's
    baselines (``Runner.timed_in_turns``); otherwise only where that protocol asks for it (a host-bound eager
    baseline)."""


Work = tuple[str, str, str] | tuple[str, Candidate, Path]
"""One unit of a concurrent run: a baseline (protocol, problem key, kind) or a candidate (protocol, candidate, path)."""


@dataclass
class RunSummary:
    """What a run did: records written, records skipped as already done, and every record's status."""

    written: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    reference_failures: dict[str, str] = field(default_factory=dict)
    """Problem key -> why its reference could not be timed (its candidates get no record)."""
    phases: PhaseLog = field(default_factory=PhaseLog)
    """Every isolated job and record write of the run, by phase, with its wall time."""
    gpu: BusySampler | None = None
    """The GPU's busy share over the run (CUDA runs only)."""
    tampered: list[Path] = field(default_factory=list)
    """Records whose file differs from the digest the manifest lists: changed after they were written, redone."""
    lost: dict[str, str] = field(default_factory=dict)
    """Problem key -> why its batch did not finish (its lane or cluster task failed every go; re-run to resume)."""

    def absorb(self, written: list[tuple[Path, Record | BaselineRecord]], skipped: list[Path], tampered: list[Path],
               reference_failures: dict[str, str]) -> None:
        """Add what a batch run elsewhere (a lane, a cluster task) finished: the records it wrote, each with its
        parsed content (a baseline is a file of the run, not counted, as in a run in this process), and those it
        skipped as finished, read back from their files."""
        for path, record in written:
            if isinstance(record, Record):
                self.written.append(path)
                self.records.append(record)
        for path in skipped:
            self.skipped.append(path)
            record = schemas.load_record(path)
            if isinstance(record, Record):
                self.records.append(record)
        self.tampered.extend(tampered)
        self.reference_failures.update(reference_failures)

    def status_counts(self, protocol: str) -> Counter[str]:
        """How many records of ``protocol`` have each status."""
        return Counter(r.status for r in self.records if r.protocol.name == protocol)

    def geomean_speedup(self, protocol: str) -> float | None:
        """Geometric mean of ``vs_eager`` over correct records of ``protocol``."""
        values = [r.speedup.vs_eager for r in self.records
                  if r.protocol.name == protocol and r.status == "correct" and r.speedup.vs_eager]
        return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else None


def effective_info(protocol: ModuleType, options: dict[str, Any]) -> ProtocolInfo:
    """The protocol's info with the counts actually used (reduced counts are recorded, never hidden)."""
    info: ProtocolInfo = protocol.INFO
    timing = info.timing.model_copy(update={k: int(options[k]) for k in ("warmup_calls", "timed_calls") if k in options})
    seeds = info.seeds[: int(options["trials"])] if "trials" in options else info.seeds
    return info.model_copy(update={"timing": timing, "seeds": seeds})


def problem_ref(problem: Problem) -> schemas.ProblemRef:
    """The record's reference to a problem."""
    return schemas.ProblemRef(suite=problem.suite, level=problem.level, id=problem.id, name=problem.name,
                              source_sha256=problem.sha256)


def record_path(out_dir: Path, env: Environment, info: ProtocolInfo, problem: Problem, candidate: Candidate) -> Path:
    """Where the record of ``candidate`` under ``info`` goes (``schemas.record_relpath``'s layout)."""
    stub = Record.model_construct(
        model=schemas.ModelInfo.model_construct(name=candidate.model, sample=candidate.sample),
        problem=problem_ref(problem), environment=env, protocol=info, reproduces=None)
    return out_dir / schemas.record_relpath(stub)


def baseline_path(out_dir: Path, env: Environment, info: ProtocolInfo, problem: Problem, kind: str,
                  flags: AlgorithmFlags = ()) -> Path:
    """Where a baseline record goes (``schemas.baseline_relpath``'s layout; one file per algorithm-flag set)."""
    stub = BaselineRecord.model_construct(problem=problem_ref(problem), protocol=info, kind=kind, environment=env,
                                          algorithm_flags=_flag_models(flags))
    return out_dir / schemas.baseline_relpath(stub)


def _flag_models(flags: AlgorithmFlags) -> list[schemas.AlgorithmFlag]:
    return [schemas.AlgorithmFlag(name=name, value=value) for name, value in flags]  # type: ignore[arg-type]


def flag_tag(kind: str, flags: AlgorithmFlags) -> str:
    """A baseline kind with the algorithm-choice flags it is timed with, as its file name has it (``eager_tf32+cudnn.benchmark``)."""
    return "+".join([kind, *(f.token for f in _flag_models(flags))])


def _existing(path: Path) -> Record | BaselineRecord | None:
    """The valid record already at ``path``, if any (an invalid or missing one is redone)."""
    if not path.is_file():
        return None
    try:
        return schemas.load_record(path)
    except schemas.RecordError:
        return None


def _finished(path: Path, candidate: Candidate, problem: Problem, info: ProtocolInfo, env: Environment,
              tampered: bool) -> Record | None:
    """The record at ``path`` when it is this run's finished work: the same kernel, problem source, protocol
    parameters (all of them: tolerances, seeds, distributions, timing, trial counts) and environment, and
    byte for byte what a run wrote (``tampered``: its file contradicts the manifest). Anything else is redone."""
    existing = None if tampered else _existing(path)
    if isinstance(existing, Record) and existing.kernel.sha256 == candidate.sha256 \
            and existing.problem.source_sha256 == problem.sha256 and existing.protocol == info \
            and _same_environment(existing.environment, env):
        return existing
    return None


def _same_environment(a: Environment, b: Environment) -> bool:
    return (a.device_name, a.torch, a.hardware) == (b.device_name, b.torch, b.hardware)


def _error_text(message: str | None, tail: str) -> str | None:
    parts = [p.strip() for p in (message, tail) if p and p.strip()]
    if not parts:
        return None
    text = parts[0] if len(parts) == 1 or parts[1] in parts[0] else f"{parts[0]}\n--- output ---\n{parts[1]}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS // 2 - 5] + "\n...\n" + text[-MAX_ERROR_CHARS // 2 + 5:]


def failed_outcome(result: IsolatedResult, *, building: bool = False) -> CandidateOutcome:
    """The outcome of a worker that returned nothing: classified by how it ended, not by its text."""
    assert result.failure is not None
    failure = result.failure
    if failure.kind == "timeout":
        status = "timeout"
    elif failure.kind == "exception" and building:
        status = "compile_error"
    else:
        status = "runtime_error"
    message = failure.message if failure.traceback is None else failure.traceback
    return CandidateOutcome(status=status, error=_error_text(message, result.output_tail))


class Runner:
    """One ``kverdict eval`` run over loaded problems and candidates."""

    def __init__(self, loaded: Loaded, config: RunConfig, env: Environment, summary: RunSummary | None = None) -> None:
        from .protocols import get_protocol

        self.config, self.env = config, env
        self.problems = {p.key: p for p in loaded.problems}
        self.candidates = [c for c in loaded.candidates if c.problem_key in self.problems]
        self.protocols = {name: get_protocol(name) for name in config.protocols}
        self.infos = {name: effective_info(m, config.options) for name, m in self.protocols.items()}
        self.summary = summary if summary is not None else RunSummary()
        self.manifest = Manifest(config.out_dir)
        self.cancel = threading.Event()
        self._baselines: dict[tuple[str, str, str], BaselineRecord | None] = {}
        """(protocol, problem key, ``flag_tag`` of kind and flags) -> baseline record, or None where it failed."""
        self._build_errors: dict[str, CandidateOutcome] = {}
        self._building: dict[str, threading.Event] = {}
        """Candidate sha256 -> set once its build, running beside its own chunk's baselines (``build_beside``), ended."""
        self._prewarm = (default_prewarm(config.device, False, config.concurrent) if config.prewarm is None
                         else config.prewarm)
        self._spare: Spare | None = None
        self._pool: SparePool | None = None
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        shared_gpu = config.device == "cuda" and (config.concurrent > 1 or bool(os.environ.get(_gpulock.ENV)))
        self._concurrency_note = (
            f"evaluated while other workers shared this GPU ({config.concurrent} at once in this run); every timing "
            "held the GPU alone, but other workers' start-up and host work (extension builds included) could run "
            "beside it" if shared_gpu else None)
        self.again_alone: list[tuple[str, Candidate, Path]] = []
        """Evaluations that ran out of memory while others were in flight: evaluated again, alone, after the rest."""

    def _job(self, protocol: str, problem: Problem, candidate: Candidate | None = None, kind: str | None = None,
             pacer: BaselineRecord | None = None, flags: AlgorithmFlags = ()) -> Job:
        options: dict[str, Any] = dict(self.config.options)
        if pacer is not None:  # one timing method per problem; options given on the command line win
            for name, value in pacing_of(pacer.timing).items():
                options.setdefault(name, value)
        return Job(problem=problem, protocol=protocol, device=self.config.device, candidate=candidate,
                   baseline_kind=kind, build_dir=str(self.config.build_dir.resolve()), options=options,
                   algorithm_flags=flags)

    def _pacer(self, protocol: str, problem: Problem, kind: str | None = None) -> tuple[bool, BaselineRecord | None]:
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

    def _isolated(self, target: str, job: Any, tag: str, timeout_s: float, phase: Phase, spare: bool = True,
                  cancel: Any = None, answer: Any = None) -> IsolatedResult:
        log = self.config.build_dir / "logs" / f"{tag}.log"
        start = self.summary.phases.now()
        result = run_isolated(target, job, timeout_s=timeout_s, log_path=log, cancel=cancel or self.cancel,
                              spare=self._next_spare() if spare else None, answer=answer)
        timing = getattr(result.value, "timing", None) if result.ok else None
        timed_ms = timing.mean_ms * timing.calls * timing.calls_per_sample if timing is not None else None
        self.summary.phases.add(Span(phase, tag, start, self.summary.phases.now(), result.ok, timed_ms, result.waited_s))
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
        from .protocols import PROTOCOLS

        preload = ("evaluations._worker", *(PROTOCOLS[name] for name in self.config.protocols))
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

    def pending(self) -> list[tuple[str, Candidate, Path]]:
        """(protocol, candidate, record path) still to evaluate; finished ones go to the summary."""
        todo = []
        for name, info in self.infos.items():
            for c in self.candidates:
                path = record_path(self.config.out_dir, self.env, info, self.problems[c.problem_key], c)
                tampered = self.manifest.contradicts(path)
                if tampered:
                    self.summary.tampered.append(path)
                done = _finished(path, c, self.problems[c.problem_key], info, self.env, tampered)
                if done is not None:
                    self.summary.skipped.append(path)
                    self.summary.records.append(done)
                else:
                    todo.append((name, c, path))
        return todo

    def chunks(self, todo: list[tuple[str, Candidate, Path]]) -> list[list[tuple[str, Candidate, Path]]]:
        """``todo`` in chunks of whole problems, in order, each prepared just before it is evaluated: a run stopped
        after some chunks (a sitting's time limit) has built only what it evaluated, and its first records come
        after one chunk's builds rather than the whole set's. A chunk is ``PREPARE_CHUNK_WINDOWS`` windows of
        ``config.concurrent`` problems (``PREPARE_CHUNK_PROBLEMS`` problems for a run of one at a time)."""
        size = (PREPARE_CHUNK_WINDOWS * self.config.concurrent if self.config.concurrent > 1
                else PREPARE_CHUNK_PROBLEMS)
        order = {key: i // size for i, key in enumerate(dict.fromkeys(c.problem_key for _, c, _ in todo))}
        chunks: list[list[tuple[str, Candidate, Path]]] = [[] for _ in range(max(order.values(), default=-1) + 1)]
        for item in todo:
            chunks[order[item[1].problem_key]].append(item)
        return chunks

    def preparations(self, todo: list[tuple[str, Candidate]]) -> list[Job]:
        """The prepare stage's jobs: one per candidate that compiles (an extension, or Triton kernels), for all
        protocols at once."""
        jobs: dict[str, Job] = {}
        for name, c in todo:
            if c.sha256 not in jobs and _extensions.kernel_language(c.source) != "pytorch":
                jobs[c.sha256] = self._job(name, self.problems[c.problem_key], c)
        return list(jobs.values())

    def compile_warmups(self, todo: list[tuple[str, Candidate]]) -> list[Job]:
        """The prepare stage's compile warm-ups: one per problem of ``todo`` whose ``compile`` baseline (PyTorch's
        default flags) is still to be measured under a protocol that has one (see ``_worker.warm_baseline``)."""
        jobs: dict[str, Job] = {}
        for protocol, c in todo:
            problem = self.problems[c.problem_key]
            if c.problem_key in jobs or "compile" not in self.protocols[protocol].BASELINE_KINDS:
                continue
            path = baseline_path(self.config.out_dir, self.env, self.infos[protocol], problem, "compile")
            if (protocol, problem.key, "compile") not in self._baselines and \
                    self._reuse_baseline(path, problem, self.infos[protocol]) is None:
                jobs[c.problem_key] = self._job(protocol, problem, kind="compile")
        return list(jobs.values())

    def beside(self, jobs: list[Job]) -> list[Job]:
        """Those of a chunk's prepare jobs that may run while the chunk before it is evaluated (``prepare_ahead``):
        candidates whose custom code is a C++/CUDA extension, whose builds (minutes of host work) let go of the device
        (``_extensions``). A Triton candidate's compilations and a compile baseline's warm-up hold the device shared
        while they compile, so they stay in the stage that runs with nothing timed."""
        return [job for job in jobs if job.candidate is not None
                and _extensions.kernel_language(job.candidate.source) in ("cuda", "cpp")]

    def prepare(self, jobs: list[Job], advance: Any, beside: bool = False) -> None:
        """Run the prepare stage's jobs, ``config.jobs`` at once, each in a fresh process (see
        ``_worker.warm_candidate``), before anything is timed: candidate code (an import, a constructor) may use the
        device, and none may run beside a timing (but see ``beside``). An import that fails is the candidate's ``compile_error``. The
        compile warm-ups (jobs with no candidate) share their processes, several problems one after the other in
        each (``_worker.warm_baselines``): no candidate code runs there, and each process would otherwise spend
        most of its time importing torch and Inductor. With ``beside`` (jobs of :meth:`beside`, while other
        workers time: the next chunk's, or this chunk's own beside its baselines), half as many at once, each at a lower CPU priority and holding the device shared like an
        evaluation's worker (``_worker.warm_candidate_beside``)."""
        target = "evaluations._worker:warm_candidate_beside" if beside else "evaluations._worker:warm_candidate"

        workers = max(1, self.config.jobs // 2 if beside else self.config.jobs)
        warms = [job for job in jobs if job.candidate is None]
        groups = [warms[i::workers] for i in range(min(workers, len(warms)))]

        def warm(group: list[Job]) -> None:  # compile warm-ups: a failure is each baseline's to meet, when timed
            first = group[0]
            self._isolated("evaluations._worker:warm_baselines", group,
                           f"warm-{first.protocol}-{first.problem.sha256[:12]}-{first.baseline_kind}-{len(group)}",
                           self.config.build_timeout_s, "build", spare=False)
            for _ in group:
                advance()

        def one(job: Job | list[Job]) -> None:
            if isinstance(job, list):
                warm(job)
                return
            c = job.candidate
            assert c is not None
            try:
                build(job, c)
            finally:
                if c.sha256 in self._building:  # an evaluation of it may wait for this (build_beside)
                    self._building[c.sha256].set()
            advance()

        def build(job: Job, c: Candidate) -> None:
            marker = self._prepared_marker(c)
            if marker.exists():  # prepared in an earlier run with this build folder: its caches are there
                return
            result = self._isolated(target, job, f"build-{c.sha256[:16]}",
                                    self.config.build_timeout_s, "build", spare=False)  # parallel: cold workers
            if not result.ok and not (result.failure and result.failure.kind == "cancelled"):
                self._build_errors[c.sha256] = failed_outcome(result, building=True)
            elif result.ok and result.value.error is not None:
                self._build_errors[c.sha256] = CandidateOutcome(
                    status="compile_error", error=_error_text(result.value.error, result.output_tail))
            elif result.ok:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(f"{c.sha256}\n", encoding="ascii")

        with ThreadPoolExecutor(max_workers=workers) as pool:
            try:
                list(pool.map(one, [*(job for job in jobs if job.candidate is not None), *groups]))  # builds first
            except BaseException:
                self.cancel.set()
                raise

    def build_beside(self, jobs: list[Job]) -> None:
        """Mark ``jobs`` (of :meth:`beside`) as building beside their own chunk's baselines: an evaluation of one of
        their candidates waits for its build (:meth:`built`) before it starts."""
        for job in jobs:
            if job.candidate is not None:
                self._building.setdefault(job.candidate.sha256, threading.Event())

    def built(self, candidate: Candidate) -> bool:
        """Wait until the candidate's build beside the timings (:meth:`build_beside`) ended, if it has one; False if
        the run was interrupted meanwhile."""
        event = self._building.get(candidate.sha256)
        while event is not None and not event.wait(0.5):
            if self.cancel.is_set():
                return False
        return not self.cancel.is_set()

    def _prepared_marker(self, candidate: Candidate) -> Path:
        """Marks a candidate whose import, construction and warm-up call succeeded with this build folder, torch
        and device, so a later run (a resumed sitting on a warm machine) does not prepare it again: its extension
        builds and compiler caches are in the folder. Removing the build folder removes the marks."""
        env = self.env
        tag = sha256_text(f"{candidate.sha256}\0{env.torch}\0{env.triton}\0{env.device_name}\0{self.config.device}")
        return self.config.build_dir / "prepared" / f"{tag[:32]}.ok"

    def schedule(self, todo: list[tuple[str, Candidate, Path]]) -> list[Work]:
        """Every baseline the candidates in ``todo`` need and the candidates themselves, in the order a concurrent
        run starts them: problems in windows of ``config.concurrent``, and in each window the baselines that pace
        the others, then the paced ones, then the candidates. Records thus
        complete window by window (an interrupted run keeps whole problems), and no worker sits waiting for a
        baseline started long after it."""
        order = {key: i for i, key in enumerate(dict.fromkeys(c.problem_key for _, c, _ in todo))}
        window = max(1, self.config.concurrent)
        keys = {(p, c.problem_key, kind) for p, c, _ in todo for kind in self.protocols[p].BASELINE_KINDS}
        work: list[tuple[tuple[int, int, str], Work]] = []
        for key in keys:
            pacer = self.protocols[key[0]].SPEEDUP_BASELINE["vs_eager"]
            work.append(((order[key[1]] // window, 0 if key[2] == pacer else 1, "/".join(key)), key))
        for item in todo:
            protocol, c, _ = item
            work.append(((order[c.problem_key] // window, 2, f"{protocol}/{c.sha256}"), item))
        return [w for _, w in sorted(work, key=lambda pair: pair[0])]

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
        info, module = self.infos[protocol], self.protocols[protocol]
        path = baseline_path(self.config.out_dir, self.env, info, problem, kind, flags)
        record = self._reuse_baseline(path, problem, info)
        if record is None:
            # paced like the candidate: by the eager baseline of PyTorch's default flags, itself included when flagged
            needed, pacer = self._pacer(protocol, problem, None if flags else kind)
            if needed and pacer is None:
                return None  # the eager baseline failed (already reported) or was interrupted
            job = self._job(protocol, problem, kind=kind, pacer=pacer, flags=flags)
            tag = flag_tag(kind, flags)
            result = self._isolated("evaluations._worker:run_job", job, f"baseline-{protocol}-{problem.sha256[:12]}-{tag}",
                                    self.config.timeout_s, "baseline")
            if not result.ok:
                if result.failure is not None and result.failure.kind == "cancelled":
                    return None  # interrupted, not failed: measured again by the re-run
                reason = result.failure.message if result.failure else "no result"
                self.summary.reference_failures[problem.key] = f"{kind} baseline: {reason}"
                self._baselines[key] = None
                return None
            outcome: BaselineOutcome = result.value  # its peak memory was measured first in the same fresh process
            peak = outcome.peak_memory_bytes
            missing = None if peak is not None else self._memory_missing(module, job)
            record = BaselineRecord(problem=problem_ref(problem), protocol=info, kind=kind,
                                    environment=self._stamped(), timing=outcome.timing, peak_memory_bytes=peak,
                                    peak_memory_missing=missing, algorithm_flags=_flag_models(flags))
            self._write(path, record)
        self._baselines[key] = record
        return record

    def _reuse_baseline(self, path: Path, problem: Problem, info: ProtocolInfo) -> BaselineRecord | None:
        existing = _existing(path)
        same = (isinstance(existing, BaselineRecord) and existing.problem.source_sha256 == problem.sha256
                and existing.protocol == info and _same_environment(existing.environment, self.env))
        if same and self.manifest.contradicts(path):
            if path not in self.summary.tampered:
                self.summary.tampered.append(path)
            return None
        return existing if same else None

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
        result = self._isolated("evaluations._worker:memory_job", job, tag, self.config.timeout_s, "memory")
        if result.ok and result.value is not None:
            return result.value, None
        why = result.failure.message if result.failure is not None else "the measurement returned nothing"
        return None, f"the measurement in a fresh worker failed: {why[:300]}"

    def _stamped(self) -> Environment:
        return self.env.model_copy(update={"timestamp": datetime.now(UTC)})

    def evaluate(self, protocol: str, candidate: Candidate, path: Path, alone: bool = False) -> Record | None:
        """Evaluate one candidate under one protocol and write its record; None if its reference failed, or if
        it ran out of memory while other evaluations shared the device (then it waits in ``again_alone`` to be
        evaluated ``alone`` once the rest are done: the memory others held is no verdict on it)."""
        module, problem = self.protocols[protocol], self.problems[candidate.problem_key]
        baselines = {kind: self.baseline(protocol, problem, kind) for kind in module.BASELINE_KINDS}
        if any(b is None for b in baselines.values()):
            return None
        if not self.built(candidate):  # its build, beside this chunk's baselines, did not end: interrupted
            return None
        tag = f"eval-{protocol}-{candidate.sha256[:16]}"
        job, evidence = _judge.prepare_job(self._job(protocol, problem, candidate, pacer=self._pacer(protocol, problem)[1]),
                                           self.config.build_dir, tag)
        outcome = self._build_errors.get(candidate.sha256)
        in_turns: dict[str, BaselineRecord] = {}
        if outcome is None:
            clock = _judge.OuterClock()
            if self._in_turns(module, baselines):  # type: ignore[arg-type]
                result, in_turns, turn_notes = self.timed_in_turns(job, baselines, tag, clock.answer)  # type: ignore[arg-type]
            else:
                result, turn_notes = self._isolated("evaluations._worker:run_job", job, tag, self.config.timeout_s,
                                                    "candidate", answer=clock.answer), []
            if result.failure is not None and result.failure.kind == "cancelled":
                return None  # the run was interrupted: no verdict, and a re-run evaluates it again
            outcome = _reported(result)
            if result.ok and outcome.error and result.output_tail.strip() and outcome.status != "incorrect":
                outcome.error = _error_text(outcome.error, result.output_tail)
            outcome.notes = [*outcome.notes, *turn_notes]
            _judge.judge_outcome(lambda target, request, t: self._isolated(target, request, t, self.config.timeout_s,
                                                                           "judge"), job, outcome, clock, evidence, tag)
            if not alone and self.config.concurrent > 1 and out_of_memory(outcome):
                self.again_alone.append((protocol, candidate, path))
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
        outcome.notes = [*outcome.notes, *flag_notes]
        if self.cancel.is_set():
            return None  # interrupted during the memory measurement: leave the whole evaluation to the re-run
        if alone:
            outcome.notes = [*outcome.notes, f"its evaluation or its judge ran out of device memory while other "
                             f"evaluations shared the device ({self.config.concurrent} at once in this run); "
                             "evaluated again alone, after the rest"]
        elif self._concurrency_note:
            outcome.notes = [*outcome.notes, self._concurrency_note]
        try:
            record = assemble_record(self, protocol, problem, candidate, outcome,
                                     {**baselines, **in_turns}, in_turns=set(in_turns))  # type: ignore[dict-item]
        except pydantic.ValidationError as exc:  # the worker's report breaks the schema: it is no verdict
            outcome = CandidateOutcome(status="runtime_error",
                                       error=f"its worker's report is not a valid record: {str(exc)[:1500]}")
            record = assemble_record(self, protocol, problem, candidate, outcome, baselines)  # type: ignore[arg-type]
        self._write(path, record)
        return record

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
                             f"({', '.join(f.token for f in _flag_models(outcome.algorithm_flags))}); its speedup is "
                             "against PyTorch's default flags")
        return flagged, notes

    def _in_turns(self, module: ModuleType, baselines: dict[str, BaselineRecord]) -> bool:
        """Whether a candidate is timed in turns with its baselines: when asked for, or where the protocol
        does so for a problem whose eager baseline follows the host's own speed (``host_speed_bound``: a
        graph could not hold the call), as that speed then sets every timing of the problem."""
        if not getattr(module, "TURNS_WHEN_HOST_BOUND", False):
            return False  # a protocol whose timing takes no turns (the standard one)
        eager = baselines[module.SPEEDUP_BASELINE["vs_eager"]].timing
        return self.config.in_turns or (self.config.device == "cuda" and host_speed_bound(eager))

    def timed_in_turns(self, job: Job, baselines: dict[str, BaselineRecord], tag: str,
                       answer: Any = None) -> tuple[IsolatedResult, dict[str, BaselineRecord], list[str]]:
        """The candidate's worker, with every baseline kind timed anew beside it in a worker of its own, the
        timings taking turns of a batch of samples each (``_turns``), every turn on the same host core.

        Returns the candidate's result, the baselines timed in turns and notes: a baseline whose timing in
        turns fails keeps its earlier timing, and a note says so. Deadlines are twice the run's, as each
        timing waits for the others' turns."""
        kinds = list(baselines)
        path = _turns.create(self.config.build_dir / "turns" / f"{tag}.json", 1 + len(kinds))
        eager = baselines[self.protocols[job.protocol].SPEEDUP_BASELINE["vs_eager"]]
        shared = {"turns": str(path), "turn_cpu": _turns.round_core()}
        jobs = [replace(job, options={**job.options, **shared, "party": 0})]
        for party, kind in enumerate(kinds, 1):
            own = self._job(job.protocol, self.problems[job.problem.key], kind=kind, pacer=eager)
            jobs.append(replace(own, options={**own.options, **shared, "party": party}))
        untimed = threading.Event()
        cancel = _AnySet(self.cancel, untimed)  # baselines stop once the candidate ended without a timing

        def run(party: int) -> IsolatedResult:
            result = None
            try:
                result = self._isolated("evaluations._worker:run_job", jobs[party],
                                        tag if party == 0 else f"{tag}-turns-{kinds[party - 1]}",
                                        2 * self.config.timeout_s, "candidate" if party == 0 else "baseline",
                                        spare=False, cancel=self.cancel if party == 0 else cancel,
                                        answer=answer if party == 0 else None)
                return result
            finally:
                _turns.mark_gone(path, party)
                if party == 0 and not _timed(result):
                    untimed.set()

        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            results = list(pool.map(run, range(len(jobs))))
        lead = results[0]
        if not _timed(lead):
            return lead, {}, []
        timed, notes = {}, []
        for kind, result in zip(kinds, results[1:], strict=True):
            if result.ok:
                timed[kind] = baselines[kind].model_copy(update={"timing": result.value.timing})
            else:
                reason = result.failure.message if result.failure else "no result"
                notes.append(f"the {kind} baseline timed in turns beside this candidate failed ({reason[:200]}); "
                             "its earlier timing, taken alone, is used")
        return lead, timed, notes


OUT_OF_MEMORY = ("OutOfMemoryError", "CUDA out of memory", "CUDA error: out of memory")
"""How a worker's error names running out of device memory (torch's exception, the CUDA error)."""


def out_of_memory(outcome: CandidateOutcome) -> bool:
    """Whether an evaluation failed, or its judge could not rule, by running out of device memory (the
    candidate's or the harness's own allocations: while other workers hold memory, either can fail where it
    would not alone)."""
    texts = [outcome.error or ""] if outcome.status == "runtime_error" else []
    texts += [note for note in outcome.notes if note.startswith(_judge.NOT_JUDGED)]
    return any(m in text for text in texts for m in OUT_OF_MEMORY)


def _reported(result: IsolatedResult) -> CandidateOutcome:
    """The worker's outcome as reported, or the failure's; a value that is no outcome at all is a ``runtime_error``."""
    if not result.ok:
        return failed_outcome(result)
    if not isinstance(result.value, CandidateOutcome) or result.value.status not in schemas.STATUSES:
        return CandidateOutcome(status="runtime_error", error="its worker returned something other than an outcome")
    return result.value


def _kernel_source(candidate: Candidate) -> schemas.KernelSource:
    o = candidate.origin
    return schemas.KernelSource(sha256=candidate.sha256, language=_extensions.kernel_language(candidate.source),
                                path=o.path, url=o.url, commit=o.commit, row=o.row)


def _claimed(candidate: Candidate) -> schemas.Claimed | None:
    """The source dataset's own claim for the kernel, as the record carries it."""
    c = candidate.claimed
    return None if c is None else schemas.Claimed(speedup=c.speedup, baseline=c.baseline, ms=c.ms,
                                                  source_field=c.source_field)


def _roofline(problem: Problem, hardware: str, candidate_ms: float, baseline_ms: float) -> schemas.Roofline | None:
    from .suite import roofline_for

    return roofline_for(problem, hardware, candidate_ms, baseline_ms)


def _timed(result: IsolatedResult | None) -> bool:
    """Whether an isolated candidate call came back with a timing."""
    return result is not None and result.ok and getattr(result.value, "timing", None) is not None


class _AnySet:
    """Set when any of its events is (the ``cancel`` of an isolated call that more than one thing may stop)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


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
            speedup = schemas.speedup_between(outcome.timing, baselines[kind].timing, stat)
            if speedup is not None and speedup > 0:  # per-round ratios for timings taken in the same turns
                speedups[field_name] = speedup
        eager = baselines[module.SPEEDUP_BASELINE["vs_eager"]]
        roofline = _roofline(problem, runner.env.hardware, cand_ms, schemas.statistic_ms(eager.timing, stat))
    memory = _memory_stats(outcome, baselines[module.SPEEDUP_BASELINE["vs_eager"]])
    return Record(
        model=schemas.ModelInfo(name=candidate.model, provider=candidate.provider, sample=candidate.sample),
        problem=problem_ref(problem), kernel=_kernel_source(candidate), protocol=info,
        environment=runner._stamped(), status=outcome.status, error=outcome.error,
        correctness=outcome.correctness, timing=outcome.timing, baselines=timings,
        speedup=schemas.Speedups(**speedups),
        memory=memory, integrity=outcome.integrity, labels=outcome.labels, roofline=roofline, notes=outcome.notes,
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


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    """A rich progress display (silent when not ``enabled``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=not enabled, transient=False) as progress:
        yield progress


def run(loaded: Loaded, config: RunConfig, env: Environment, summary: RunSummary | None = None) -> RunSummary:
    """Evaluate every candidate under every protocol of ``config``; returns what was done (``summary``, when
    given, is filled as the run goes, so an interrupted run's caller still has it). The run's workers are
    confined (``_confine``): allowlisted environment, no survivor, a signal from a candidate fails only it."""
    with _confine.confined():
        return _run(loaded, config, env, summary)


def _run(loaded: Loaded, config: RunConfig, env: Environment, summary: RunSummary | None = None) -> RunSummary:
    runner = Runner(loaded, config, env, summary)
    todo = runner.pending()
    if config.device == "cuda":
        runner.summary.gpu = BusySampler(runner.summary.phases.origin).start()
    with progress_bar(config.progress) as progress:
        try:
            chunks = runner.chunks(todo)
            pairs = [[(p, c) for p, c, _ in chunk] for chunk in chunks]
            warm_compile = runner.compile_warmups if config.device == "cuda" else lambda _: []
            prepared = [runner.preparations(each) + warm_compile(each) for each in pairs]
            builds = (progress.add_task("building and warming up candidates and compile baselines",
                                        total=sum(map(len, prepared)))
                      if any(prepared) else None)
            task = progress.add_task("evaluating", total=len(todo))
            schedules = [runner.schedule(chunk) for chunk in chunks] if config.concurrent > 1 else []
            if schedules:
                progress.update(task, description=f"candidates, {config.concurrent} at once")
            bases = progress.add_task("baselines", total=sum(isinstance(w[2], str) for ws in schedules for w in ws)) \
                if schedules else None

            def one(item: tuple[str, Candidate, Path], alone: bool = False) -> None:
                protocol, candidate, path = item
                if config.concurrent <= 1:
                    progress.update(task, description=f"{protocol}: {candidate.problem_key} s{candidate.sample}")
                record = runner.evaluate(protocol, candidate, path, alone=alone)
                if record is not None:
                    runner.summary.written.append(path)
                    runner.summary.records.append(record)
                if not alone:  # its first go advanced the bar already
                    progress.advance(task)

            def do(item: Work) -> None:
                if isinstance(item[2], str):  # (protocol, problem key, kind): a baseline
                    runner.baseline(item[0], runner.problems[item[1]], item[2])
                    progress.advance(bases)
                else:
                    one(item)  # type: ignore[arg-type]

            shared = _shared_gpu(config) if schedules else nullcontext()
            ahead_on = bool(schedules) and (config.device == "cuda" if config.prepare_ahead is None
                                            else config.prepare_ahead)

            def advance() -> None:
                progress.advance(builds)

            with shared, ThreadPoolExecutor(max_workers=max(1, config.concurrent)) as pool, \
                    ThreadPoolExecutor(max_workers=1) as builder:
                ahead: tuple[Future[None], set[int]] | None = None  # the next chunk's extensions, building
                for i, (chunk, jobs) in enumerate(zip(chunks, prepared, strict=True)):
                    if ahead is not None:  # built while the chunk before was evaluated: the rest is left to do
                        ahead[0].result()
                        jobs = [job for job in jobs if id(job) not in ahead[1]]
                    # this chunk's own extension builds (the first chunk's, or those the chunk before left) run
                    # beside its baselines; its Triton candidates and compile warm-ups first, while nothing is timed
                    late = runner.beside(jobs) if ahead_on else []
                    now = [job for job in jobs if id(job) not in set(map(id, late))]
                    if now:
                        runner.prepare(now, advance)
                    if not schedules:
                        for item in chunk:
                            one(item)
                        continue
                    runner.build_beside(late)
                    own = builder.submit(runner.prepare, late, advance, True) if late else None
                    early = runner.beside(prepared[i + 1]) if ahead_on and i + 1 < len(prepared) else []
                    ahead = (builder.submit(runner.prepare, early, advance, True), set(map(id, early))) if early \
                        else None
                    futures = [pool.submit(do, item) for item in after_builds(schedules[i], late)]
                    try:
                        for future in [*futures, *([own] if own is not None else [])]:
                            future.result()
                    except BaseException:
                        runner.cancel.set()
                        pool.shutdown(wait=True, cancel_futures=True)
                        raise
                again = runner.again_alone
                if again:  # nothing else is in flight now: each has the device to itself
                    progress.update(task, description=f"{len(again)} out of memory beside others, again alone")
                for item in again:
                    one(item, alone=True)
        except BaseException:
            runner.cancel.set()
            raise
        finally:
            runner.close()
            if runner.summary.gpu is not None:
                runner.summary.gpu.stop()
    return runner.summary


def after_builds(work: list[Work], building: list[Job]) -> list[Work]:
    """``work`` with the candidates whose builds run beside it (``Runner.build_beside``) moved to its end, in their
    order: the baselines and the other candidates are timed while those build, and no worker waits on a build
    while work that could run stands in line behind it."""
    waiting = {job.candidate.sha256 for job in building if job.candidate is not None}

    def waits(w: Work) -> bool:
        return not isinstance(w[2], str) and w[1].sha256 in waiting  # type: ignore[union-attr]
    return [w for w in work if not waits(w)] + [w for w in work if waits(w)]


@contextmanager
def _shared_gpu(config: RunConfig) -> Iterator[None]:
    """Name a fresh GPU lock file for the workers of a concurrent CUDA run (``_gpulock``)."""
    if config.device != "cuda" or os.environ.get(_gpulock.ENV):
        if config.device == "cuda":  # an outer run's lock: its files made here, by the runner
            _gpulock.prepare(os.environ[_gpulock.ENV])
        yield  # CPU timings are host-clock and not shared; or an outer run already set a lock
        return
    with tempfile.TemporaryDirectory(prefix="kv-gpulock-") as folder:
        os.environ[_gpulock.ENV] = str(Path(folder) / "gpu.lock")
        _gpulock.prepare(os.environ[_gpulock.ENV])
        try:
            yield
        finally:
            os.environ.pop(_gpulock.ENV, None)
