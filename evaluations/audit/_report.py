"""``kverdict audit``: run every reference of a suite and flag problems that cannot measure a kernel.

References run in a spawned worker process with a deadline per problem. The worker is reused from
problem to problem (starting torch and CUDA costs seconds, and a suite has hundreds of problems),
and replaced as soon as a reference crashes it or overruns its deadline: a crashing or hanging
reference becomes a finding, never the end of the run.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas import AuditFinding, AuditReport, ProblemAudit, pinned

from ..core import Problem
from ._findings import findings_for
from ._probe import Probe, probe_problem

ATOL = pinned("standard").atol
"""The standard protocol's atol (= its rtol, the protocols' table's): differences inside it are ones a candidate may
ignore."""
DRAWS = 3
GRACE_S = 5.0
"""Seconds a stopped worker gets to exit after SIGTERM before SIGKILL."""
STARTUP_S = 120.0
"""Seconds a fresh worker may take to import torch before its first problem is sent."""


@dataclass(frozen=True)
class AuditOptions:
    """How to audit: device, draws, tolerance, deadline per problem, and where worker output goes."""

    device: str
    draws: int = DRAWS
    atol: float = ATOL
    timeout_s: float = 300.0
    log_path: str | None = None


def _worker_main(conn: Any, log_path: str | None) -> None:
    """Worker loop: receive (source, device, draws, atol, timing), send ("ok", Probe) or ("error", type, message)."""
    if log_path:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    import torch  # noqa: F401 - imported before "ready" so start-up time never counts against a problem

    conn.send(("ready",))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            conn.send(("ok", probe_problem(*job)))
        except Exception as exc:  # noqa: BLE001 - any failure of a reference is reported, typed
            conn.send(("error", type(exc).__name__, str(exc)[:400]))
        finally:
            _release(job[1])


def _release(device: str) -> None:
    import gc

    gc.collect()
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


class _Worker:
    """One spawned worker process and its pipe."""

    def __init__(self, log_path: str | None) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, log_path), name="kverdict-audit", daemon=True)
        self.proc.start()
        child.close()
        self.started = False

    def _receive(self, timeout_s: float) -> tuple[Any, ...]:
        """The worker's next message, ("timeout",) after ``timeout_s``, or ("crash", exit code)."""
        try:
            if not self.conn.poll(timeout_s):
                self.stop()
                return ("timeout",)
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(GRACE_S)
            return ("crash", self.proc.exitcode)

    def ask(self, job: tuple[Any, ...], timeout_s: float) -> tuple[Any, ...]:
        """Send one job; the reply, or ("timeout",) / ("crash", exit code) when the worker failed."""
        if not self.started:
            ready = self._receive(STARTUP_S)
            if ready[0] != "ready":
                return ("crash", f"{self.proc.exitcode} (worker did not start)")
            self.started = True
        try:
            self.conn.send(job)
        except (OSError, BrokenPipeError):
            self.proc.join(GRACE_S)
            return ("crash", self.proc.exitcode)
        return self._receive(timeout_s)

    def stop(self) -> None:
        """Ask the worker to stop; SIGTERM, then SIGKILL after the grace period."""
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(GRACE_S)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _failure_finding(reply: tuple[Any, ...], timeout_s: float) -> AuditFinding:
    if reply[0] == "timeout":
        return AuditFinding(code="reference-timeout", severity="exclude",
                            message=f"the reference did not finish within {timeout_s:g} s", evidence=None)
    if reply[0] == "crash":
        return AuditFinding(code="reference-error", severity="exclude", message="the reference crashed its process",
                            evidence=f"exit code {reply[1]}")
    return AuditFinding(code="reference-error", severity="exclude", message="the reference raised an exception",
                        evidence=f"{reply[1]}: {reply[2]}")


def audit_one(problem: Problem, probe: Probe | None, findings: list[AuditFinding]) -> ProblemAudit:
    """The audit entry of one problem from its findings (and probe, when the reference ran)."""
    excluding = [f for f in findings if f.severity == "exclude"]
    return ProblemAudit(
        key=problem.key, name=problem.name, level=problem.level, id=problem.id, source_sha256=problem.sha256,
        findings=findings, excluded=bool(excluding), reason="; ".join(f.message for f in excluding) or None,
        eager_ms=probe.eager_ms if probe else None, output_shapes=probe.output_shapes if probe else [],
    )


def audit_problems(problems: Iterable[Problem], options: AuditOptions,
                   on_done: Callable[[ProblemAudit], None] | None = None) -> list[ProblemAudit]:
    """Audit each problem in a worker process; a crash or a hang is a finding, and the run goes on."""
    timing = options.device == "cuda"
    results: list[ProblemAudit] = []
    worker: _Worker | None = None
    try:
        for problem in problems:
            worker = worker or _Worker(options.log_path)
            reply = worker.ask((problem.source, options.device, options.draws, options.atol, timing), options.timeout_s)
            if reply[0] == "ok":
                entry = audit_one(problem, reply[1], findings_for(reply[1], options.atol))
            else:
                entry = audit_one(problem, None, [_failure_finding(reply, options.timeout_s)])
                if reply[0] in ("timeout", "crash"):
                    worker = None  # stopped or dead: the next problem gets a fresh one
            results.append(entry)
            if on_done:
                on_done(entry)
    finally:
        if worker is not None:
            worker.stop()
    return results


def build_report(entries: list[ProblemAudit], *, suite: str, source: str, hardware: str, device: str,
                 options: AuditOptions) -> AuditReport:
    """The audit report of a finished run."""
    import torch

    from .. import harness_version

    device_name = torch.cuda.get_device_name(0) if device == "cuda" else _cpu_name()
    notes = [] if device == "cuda" else [
        "launch-overhead findings were not checked: they need a GPU (on a CPU there is no launch overhead to measure)"]
    return AuditReport(
        suite=suite, source=source, hardware=hardware, device_name=device_name, torch=torch.__version__,
        harness_version=harness_version(), timestamp=datetime.now(UTC), atol=options.atol, draws=options.draws,
        timing_checked=device == "cuda", notes=notes, problems=entries,
    )


def _cpu_name() -> str:
    from .. import cpu_name

    return cpu_name()


def default_report_path(hardware: str, suite: str, records_dir: Path = Path("records")) -> Path:
    """``records/_audits/<hardware>/<suite>.json``."""
    from schemas import slug

    return records_dir / "_audits" / hardware / f"{slug(suite)}.json"


def write_report(report: AuditReport, path: Path) -> Path:
    """Write the report atomically (same writer as records)."""
    from schemas import write_record

    return write_record(path, report)
