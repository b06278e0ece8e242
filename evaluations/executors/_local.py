"""The local executor: one lane per GPU of this host (or per slice of CPU cores), one batch per lane at a time.

Each lane is a process of its own (:mod:`._lane`) that sees one GPU (``CUDA_VISIBLE_DEVICES``) or only its
own CPU cores, with its own GPU lock, so every timing still holds its device alone. Lanes write their
records into the run's folder as they make them (atomic writes; the manifest is merged under a file lock),
and share the build cache: a candidate's extension is built once, keyed by its source's hash. A lane that
dies or passes its batch's deadline is killed whole (its process group), replaced, and its batch run again;
the re-run skips the records already written. A batch whose lane fails ``MAX_ATTEMPTS`` times is reported,
never dropped silently.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from schemas import Environment

from .. import Loaded
from ..run import RunConfig, Runner, RunSummary, progress_bar
from ..worker import confined, finished, started
from ._batches import Batch, BatchReport, LaneSpec, batches

MAX_ATTEMPTS = 3
"""Lanes a batch may use up (die or pass its deadline) before it is reported as failed."""
BASELINES_PER_PROBLEM = 4
"""Baseline jobs a batch's deadline allows for per protocol (eager, TF32, compile, a flags variant)."""
STOP_GRACE_S = 30.0
"""How long an interrupted lane has to stop its worker and keep its records before it is killed."""
LANE_ENV = "KVERDICT_LANE_CPUS"
"""CPU cores a CPU lane keeps to (``0,1``); set by the executor, read by the lane at start."""


@dataclass(frozen=True)
class Lane:
    """One place a batch runs: a GPU of this host, or a slice of its CPU cores."""

    index: int
    name: str
    env: dict[str, str]
    """Variables the lane's process gets on top of the run's environment."""


def lanes_for(device: str, count: int | None) -> list[Lane]:
    """``count`` lanes (default: one per visible GPU on CUDA, one on the CPU).

    CUDA lanes each see one GPU, taken in order from ``CUDA_VISIBLE_DEVICES`` or all devices; CPU lanes
    each keep to a disjoint share of this process's cores, so their host-clock timings do not share a core.
    """
    if device == "cuda":
        visible = _visible_gpus()
        count = len(visible) if count is None else count
        if count > len(visible):
            raise ValueError(f"--lanes {count} needs {count} GPUs; {len(visible)} visible ({', '.join(visible)})")
        return [Lane(i, f"gpu {gpu}", {"CUDA_VISIBLE_DEVICES": gpu}) for i, gpu in enumerate(visible[:count])]
    cores = sorted(os.sched_getaffinity(0))
    count = 1 if count is None else count
    if count > len(cores):
        raise ValueError(f"--lanes {count} on the CPU needs {count} cores; this process may use {len(cores)}")
    shares = [cores[i::count] for i in range(count)]
    return [Lane(i, f"cpu {','.join(map(str, s))}", {LANE_ENV: ",".join(map(str, s)), "OMP_NUM_THREADS": str(len(s))})
            for i, s in enumerate(shares)]


def _visible_gpus() -> list[str]:
    named = os.environ.get("CUDA_VISIBLE_DEVICES")
    if named is not None:
        return [g.strip() for g in named.split(",") if g.strip() and not g.strip().startswith("-")]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


def batch_deadline_s(config: RunConfig, batch: Batch) -> float:
    """The longest a lane may take over ``batch`` before it is taken for hung: every job at twice its deadline."""
    jobs = len(config.protocols) * (batch.size + BASELINES_PER_PROBLEM)
    return config.build_timeout_s + 2.0 * config.timeout_s * jobs


def lane_config(config: RunConfig, lanes: int) -> RunConfig:
    """A lane's share of the run's settings: no progress bar of its own, the build jobs split across lanes."""
    return replace(config, progress=False, jobs=max(1, config.jobs // max(1, lanes)))


@dataclass
class Outcome:
    """How one lane's go at a batch ended."""

    report: BatchReport | None
    why: str = ""


@dataclass
class _Dispatch:
    """The run's shared state between lane threads: the queue, attempts, what has failed, the progress bar."""

    todo: queue.Queue[Batch]
    remaining: int
    attempts: dict[int, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cancel: threading.Event = field(default_factory=threading.Event)


class LocalExecutor:
    """Runs a loaded set's batches on ``lanes`` (see the module's docstring)."""

    def __init__(self, config: RunConfig, lanes: list[Lane], workdir: Path | None = None) -> None:
        self.config, self.lanes = config, lanes
        self.workdir = workdir or config.build_dir / "lanes" / f"run-{os.getpid()}-{int(time.time())}"
        self.stats_dir: Path | None = None
        """Where each lane's run writes its phase spans (``batch-N.stats.json``), when set."""

    def run(self, loaded: Loaded, env: Environment, summary: RunSummary | None = None) -> RunSummary:
        """Evaluate every candidate of ``loaded``; finished records are skipped before any lane starts."""
        summary = summary if summary is not None else RunSummary()
        pending = Runner(loaded, self.config, env, summary).pending()  # finished ones go to the summary now
        keys = {c.problem_key for _, c, _ in pending}
        work = [b for b in batches(loaded) if b.key in keys]
        if not work:
            return summary
        self.workdir.mkdir(parents=True, exist_ok=True)
        state = _Dispatch(todo=queue.Queue(), remaining=len(work))
        for b in work:
            state.todo.put(b)
        with confined(), progress_bar(self.config.progress) as progress:
            task = progress.add_task(f"problems on {len(self.lanes)} lanes", total=len(work))
            threads = [threading.Thread(target=self._serve, args=(lane, state, summary, progress, task),
                                        name=f"kverdict-lane-{lane.index}", daemon=True) for lane in self.lanes]
            for t in threads:
                t.start()
            try:
                for t in threads:
                    while t.is_alive():
                        t.join(0.2)
            except BaseException:
                state.cancel.set()
                for t in threads:
                    t.join()
                raise
        summary.tampered = list(dict.fromkeys(summary.tampered))
        summary.lost.update(state.failed)
        return summary

    def _serve(self, lane: Lane, state: _Dispatch, summary: RunSummary, progress, task) -> None:
        while not state.cancel.is_set():
            try:
                batch = state.todo.get(timeout=0.2)
            except queue.Empty:
                with state.lock:
                    if state.remaining == 0:
                        return
                continue
            outcome = self.run_batch(lane, batch, state.cancel)
            with state.lock:
                if outcome.report is not None:
                    _merge(summary, outcome.report)
                    state.remaining -= 1
                    progress.advance(task)
                    continue
                if state.cancel.is_set():
                    return
                tries = state.attempts[batch.index] = state.attempts.get(batch.index, 0) + 1
                if tries < MAX_ATTEMPTS:
                    print(f"kverdict eval: lane {lane.name}: {batch.key}: {outcome.why}; running it again "
                          f"(attempt {tries + 1} of {MAX_ATTEMPTS})", file=sys.stderr)
                    state.todo.put(batch)
                else:
                    state.failed[batch.key] = f"its lane failed {tries} times, last: {outcome.why}"
                    state.remaining -= 1
                    progress.advance(task)

    def run_batch(self, lane: Lane, batch: Batch, cancel: threading.Event) -> Outcome:
        """One go of ``batch`` on ``lane``: a lane process started, waited for under the batch's deadline."""
        attempt = len(list(self.workdir.glob(f"batch-{batch.index}.*.log")))
        stem = self.workdir / f"batch-{batch.index}"
        spec_path, report_path = stem.with_suffix(".spec"), stem.with_suffix(f".{attempt}.report.json")
        log_path = stem.with_suffix(f".{attempt}.log")
        stats = self.stats_dir / f"batch-{batch.index}.stats.json" if self.stats_dir else None
        spec_path.write_bytes(pickle.dumps(LaneSpec(batch, lane_config(self.config, len(self.lanes)), stats)))
        env = {**os.environ, **lane.env}
        env.pop("KVERDICT_GPU_LOCK", None)  # each lane names its own lock, for its own GPU
        with open(log_path, "wb") as log:
            proc = _start(spec_path, report_path, env, log)
            why = self._wait(proc, batch, cancel)
        if why is None and report_path.is_file():
            try:
                return Outcome(BatchReport.from_json(report_path.read_text(encoding="utf-8")))
            except ValueError as exc:
                why = f"its report could not be read ({exc})"
        return Outcome(None, why or f"the lane exited with status {proc.returncode} without a report (log: {log_path})")

    def _wait(self, proc: subprocess.Popen[bytes], batch: Batch, cancel: threading.Event) -> str | None:
        deadline = time.monotonic() + batch_deadline_s(self.config, batch)
        try:
            while proc.poll() is None:
                if cancel.is_set():
                    _stop(proc, signal.SIGTERM, STOP_GRACE_S)
                    return "interrupted"
                if time.monotonic() > deadline:
                    _stop(proc, signal.SIGKILL, 0.0)
                    return f"the lane passed its batch deadline ({batch_deadline_s(self.config, batch):.0f} s) and was killed"
                time.sleep(0.2)
        finally:
            finished(proc.pid)  # kills whatever the lane's workers left behind
        if proc.returncode < 0:
            return f"the lane was killed by {signal.Signals(-proc.returncode).name}"
        return None if proc.returncode == 0 else f"the lane exited with status {proc.returncode}"


def _start(spec: Path, report: Path, env: dict[str, str], log) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "evaluations.executors._lane", str(spec), str(report)]
    return started(lambda: subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                     start_new_session=True))


def _stop(proc: subprocess.Popen[bytes], first: signal.Signals, grace_s: float) -> None:
    """Stop a lane: ``first`` to the lane, then SIGKILL to its whole process group after ``grace_s``."""
    try:
        os.kill(proc.pid, first)
        proc.wait(timeout=grace_s) if grace_s else None
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _merge(summary: RunSummary, report: BatchReport) -> None:
    """Add a lane's records to the run's summary, read back from the files the lane wrote."""
    import schemas

    written = [(Path(p), schemas.load_record(Path(p))) for p in report.written]
    summary.absorb(written, [Path(p) for p in report.skipped], [Path(p) for p in report.tampered],
                   report.reference_failures)
