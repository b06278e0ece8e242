"""A run from start to end: its chunks in turn, each prepared then evaluated, one evaluation at a time or several
at once on a shared GPU, then again alone what of the chunk ran out of memory beside others."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from schemas import Environment, Record

from .. import Loaded
from ..core import Candidate, Job, gpulock
from ..worker import confined
from ._config import RunConfig, RunSummary
from ._gpubusy import BusySampler
from ._runner import Runner
from ._schedule import Work, after_builds


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
    with confined():
        return _run(loaded, config, env, summary)


def _run(loaded: Loaded, config: RunConfig, env: Environment, summary: RunSummary | None = None) -> RunSummary:
    """The run inside its confinement; an interrupt stops every worker in flight and keeps what was written."""
    runner = Runner(loaded, config, env, summary)
    todo = runner.pending()
    if config.device == "cuda":
        runner.summary.gpu = BusySampler(runner.summary.phases.origin).start()
    with progress_bar(config.progress) as progress:
        try:
            plan = _plan(runner, todo)
            bars = _Bars(progress, plan, len(todo), config.concurrent)
            runner.say = bars.say
            _evaluate_chunks(runner, plan, bars)
        except BaseException:
            runner.cancel.set()
            raise
        finally:
            runner.close()
            if runner.summary.gpu is not None:
                runner.summary.gpu.stop()
    return runner.summary


@dataclass(frozen=True)
class _Plan:
    """A run's work, chunk by chunk (``Runner.chunks``)."""

    chunks: list[list[tuple[str, Candidate, Path]]]
    prepared: list[list[Job]]
    """Each chunk's prepare jobs: its candidates' builds and warm-ups and, on CUDA, its compile baselines' warm-ups."""
    schedules: list[list[Work]]
    """Each chunk's baselines and candidates in the order they start, several at once; none for one at a time."""
    ahead: bool
    """Whether extension builds run beside the timings (``RunConfig.prepare_ahead``)."""


def _plan(runner: Runner, todo: list[tuple[str, Candidate, Path]]) -> _Plan:
    config = runner.config
    chunks = runner.chunks(todo)
    pairs = [[(p, c) for p, c, _ in chunk] for chunk in chunks]
    warm_compile = runner.compile_warmups if config.device == "cuda" else lambda _: []
    prepared = [runner.preparations(each) + warm_compile(each) for each in pairs]
    schedules = [runner.schedule(chunk) for chunk in chunks] if config.concurrent > 1 else []
    ahead = bool(schedules) and (config.device == "cuda" if config.prepare_ahead is None else config.prepare_ahead)
    return _Plan(chunks, prepared, schedules, ahead)


class _Bars:
    """The run's progress display: prepare jobs, evaluations and (several at once) baselines done."""

    def __init__(self, progress: Any, plan: _Plan, evaluations: int, concurrent: int) -> None:
        self.progress = progress
        self.builds = (progress.add_task("building and warming up candidates and compile baselines",
                                         total=sum(map(len, plan.prepared)))
                       if any(plan.prepared) else None)
        self.evaluations = progress.add_task("evaluating", total=evaluations)
        if plan.schedules:
            progress.update(self.evaluations, description=f"candidates, {concurrent} at once")
        self.baselines = progress.add_task("baselines", total=sum(isinstance(w[2], str) for ws in plan.schedules
                                                                  for w in ws)) if plan.schedules else None

    def built(self) -> None:
        """One prepare job ended."""
        self.progress.advance(self.builds)

    def measured(self) -> None:
        """One baseline measured or reused."""
        self.progress.advance(self.baselines)

    def evaluated(self) -> None:
        """One evaluation ended."""
        self.progress.advance(self.evaluations)

    def written(self, record: Record, what: str, count: int) -> None:
        """Where the display is off (a log), one line per record written: ``what`` it was (problem and sample), what
        the record says, and ``count``, the records written so far."""
        if self.progress.disable:
            vs = record.speedup.vs_eager if record.speedup is not None else None
            speed = f", {vs:.3g}x vs eager" if vs is not None else ""
            self.say(f"[{count}] {record.protocol.name} {what}: {record.status}{speed}")

    def say(self, text: str) -> None:
        """Print one line above the display (printed as is, also where the display is off)."""
        self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def show(self, description: str) -> None:
        """Say what is being evaluated now."""
        self.progress.update(self.evaluations, description=description)


class _Ahead(NamedTuple):
    """The next chunk's extension builds, started while this chunk is evaluated."""

    future: Future[None]
    jobs: set[int]
    """``id`` of each of its jobs: the rest of that chunk's prepare jobs are left to do."""


def _evaluate_chunks(runner: Runner, plan: _Plan, bars: _Bars) -> None:
    """Prepare and evaluate each chunk in turn, with the next chunk's extensions building meanwhile where
    ``plan.ahead``, and, once a chunk's evaluations have ended, evaluate again alone those that ran out of memory
    beside others (a run stopped after some chunks has finished them). Several at once (``plan.schedules``), the
    workers share the GPU through a lock."""
    config = runner.config
    shared = _shared_gpu(config) if plan.schedules else nullcontext()
    with shared, ThreadPoolExecutor(max_workers=max(1, config.concurrent)) as pool, \
            ThreadPoolExecutor(max_workers=1) as builder:
        ahead: _Ahead | None = None
        for i, (chunk, jobs) in enumerate(zip(plan.chunks, plan.prepared, strict=True)):
            if ahead is not None:  # built while the chunk before was evaluated: the rest is left to do
                ahead.future.result()
                jobs = [job for job in jobs if id(job) not in ahead.jobs]
            late = _prepare_first(runner, plan, jobs, bars)
            if not plan.schedules:
                for item in chunk:
                    _evaluate(runner, bars, item)
                continue
            ahead = _evaluate_concurrently(runner, plan, i, late, bars, pool, builder)
            _again_alone(runner, bars)  # still under the run's GPU lock; only extension builds may run beside it


def _prepare_first(runner: Runner, plan: _Plan, jobs: list[Job], bars: _Bars) -> list[Job]:
    """Run a chunk's prepare jobs that end before anything of it is timed; return its extension builds left to run
    beside its baselines (with ``plan.ahead``: the first chunk's, or those the chunk before left). Its Triton
    candidates and compile warm-ups come first, while nothing is timed."""
    late = runner.beside(jobs) if plan.ahead else []
    now = [job for job in jobs if id(job) not in set(map(id, late))]
    if now:
        runner.prepare(now, bars.built)
    return late


def _evaluate_concurrently(runner: Runner, plan: _Plan, i: int, late: list[Job], bars: _Bars, pool: ThreadPoolExecutor,
                           builder: ThreadPoolExecutor) -> _Ahead | None:
    """Evaluate chunk ``i``'s schedule on ``pool`` while ``builder`` builds its ``late`` extensions, then starts on
    the next chunk's; returns those, still building."""
    runner.build_beside(late)
    own = builder.submit(runner.prepare, late, bars.built, True) if late else None
    early = runner.beside(plan.prepared[i + 1]) if plan.ahead and i + 1 < len(plan.prepared) else []
    ahead = _Ahead(builder.submit(runner.prepare, early, bars.built, True), set(map(id, early))) if early else None
    futures = [pool.submit(_do, runner, bars, item) for item in after_builds(plan.schedules[i], late)]
    try:
        for future in [*futures, *([own] if own is not None else [])]:
            future.result()
    except BaseException:
        runner.cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    return ahead


def _do(runner: Runner, bars: _Bars, item: Work) -> None:
    """One unit of a concurrent run: a baseline measured (or reused), or a candidate evaluated."""
    if isinstance(item[2], str):  # (protocol, problem key, kind): a baseline
        runner.baseline(item[0], runner.problems[item[1]], item[2])
        bars.measured()
    else:
        _evaluate(runner, bars, item)  # type: ignore[arg-type]


def _evaluate(runner: Runner, bars: _Bars, item: tuple[str, Candidate, Path]) -> None:
    """Evaluate one candidate (``Runner.evaluate``; again alone where ``runner.alone`` is set) and keep its record in
    the run's summary."""
    protocol, candidate, path = item
    if runner.config.concurrent <= 1:
        bars.show(f"{protocol}: {candidate.problem_key} s{candidate.sample}")
    record = runner.evaluate(protocol, candidate, path)
    if record is not None:
        runner.summary.written.append(path)
        runner.summary.records.append(record)
        bars.written(record, f"{candidate.problem_key} s{candidate.sample}", len(runner.summary.written))
    if not runner.alone:  # its first go advanced the bar already
        bars.evaluated()


def _again_alone(runner: Runner, bars: _Bars) -> None:
    """Evaluate again, one at a time, what was put off while others shared the device (out of memory, or out of
    time after waiting for their timings), with any baseline of its problem put off likewise: no other evaluation is
    in flight now (at most the next chunk's extension builds, on the host), so each has the device to itself."""
    again, runner.again_alone = runner.again_alone, []
    if not again:
        return
    bars.show(f"{len(again)} put off while others shared the device, again alone")
    runner.alone = True
    try:
        for item in again:
            if runner.cancel.is_set():
                return
            _evaluate(runner, bars, item)
    finally:
        runner.alone = False
    bars.show(f"candidates, {runner.config.concurrent} at once")


@contextmanager
def _shared_gpu(config: RunConfig) -> Iterator[None]:
    """Name a fresh GPU lock file for the workers of a concurrent CUDA run (``gpulock``)."""
    if config.device != "cuda" or os.environ.get(gpulock.GPU_LOCK_ENV):
        yield  # CPU timings are host-clock and not shared; or an outer run already set a lock
        return
    with tempfile.TemporaryDirectory(prefix="kv-gpulock-") as folder:
        os.environ[gpulock.GPU_LOCK_ENV] = str(Path(folder) / "gpu.lock")
        try:
            yield
        finally:
            os.environ.pop(gpulock.GPU_LOCK_ENV, None)
