"""Run one function in a fresh spawned process with a deadline and captured, size-capped output.

A candidate may segfault, hang, call ``os._exit``, corrupt the CUDA context or print without end;
none of that may reach the runner. The child's stdout and stderr are redirected at the file
descriptor level (so C++ and CUDA output is caught too) into a log file whose size the parent
watches; the child runs in its own process group so its own children die with it. During a run,
``_confine`` tracks every child, kills what it leaves behind and fails a child whose candidate
signalled the runner.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import pickle
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import connection
from pathlib import Path
from typing import Any, Literal

from ..core import gpulock
from . import _confine
from ._child import (  # noqa: F401 - the child's side, re-exported: workers ask and confine through this module
    _WATCH_TASKS,
    _WATCH_WAKE,
    PARENT_WATCH_S,
    TAIL_BYTES,
    WATCH_THREAD,
    NoAnswer,
    _child_main,
    _spare_main,
    ask,
    in_every_thread,
)

GRACE_S = 5.0
"""Seconds between SIGTERM and SIGKILL when a child must be stopped."""
POLL_S = 0.05
"""How often the parent checks the deadline and output size (a result or an exit wakes it at once)."""
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
"""A child that writes more than this to stdout/stderr is killed (an output flood)."""

FailureKind = Literal["timeout", "signal", "exit", "output_flood", "exception", "cancelled", "signalled_runner"]
"""Why no value came back: deadline passed, killed by a signal, exited early, too much output, raised, the run
stopped, or the child (or a process it started) sent a signal to the runner."""


@dataclass(frozen=True)
class Failure:
    """Why an isolated call produced no value."""

    kind: FailureKind
    message: str
    """One line, e.g. ``killed by signal SIGSEGV`` or ``RuntimeError: CUDA error: ...``."""
    exception_type: str | None = None
    """Qualified type name of the exception, for ``kind == "exception"``."""
    traceback: str | None = None
    """Formatted traceback of the exception, for ``kind == "exception"``."""


@dataclass(frozen=True)
class IsolatedResult:
    """What came back from a child: its return value or a failure, plus the tail of its output."""

    value: Any
    failure: Failure | None
    output_tail: str
    wall_s: float
    waited_s: float = 0.0
    """Seconds the child waited for the shared GPU lock (``gpulock``; 0 where there is none)."""

    @property
    def ok(self) -> bool:
        """Whether the function returned a value."""
        return self.failure is None


def _stop(proc: Any) -> None:
    """SIGTERM the child's process group, then SIGKILL it after ``GRACE_S``."""
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        if not proc.is_alive():
            break
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            proc.kill() if sig == signal.SIGKILL else proc.terminate()
        proc.join(wait)
    try:  # grandchildren (compilers, helpers) of a child that already exited
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _confine.finished(proc.pid)  # what left the group (a new session, a double fork) dies too


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _exit_failure(exitcode: int | None) -> Failure:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return Failure("signal", f"worker killed by signal {name}")
    return Failure("exit", f"worker exited with code {exitcode} before returning a result")


@dataclass
class Spare:
    """A spawned child that has imported the run's modules and waits for the one job it will ever serve."""

    proc: Any
    jobs: Any
    """Parent's sending end of the job pipe."""
    results: Any
    """Parent's receiving end of the result pipe."""
    log: str
    """Where the child's output goes until it gets a job (then moved into the job's log)."""

    def usable(self) -> bool:
        """Whether the child is still alive to take a job."""
        return self.proc.is_alive()

    def discard(self) -> None:
        """Stop the child without giving it a job."""
        self.jobs.close()
        _stop(self.proc)
        self.results.close()
        Path(self.log).unlink(missing_ok=True)


def start_spare(preload: tuple[str, ...], log_dir: str | os.PathLike[str]) -> Spare:
    """Spawn a spare child that imports ``preload`` now and serves one :func:`run_isolated` call later.

    The child is as fresh as a cold one for its job: only the named modules ran in it before.
    """
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    fd, spare_log = tempfile.mkstemp(prefix="spare-", suffix=".log", dir=folder)
    os.close(fd)
    ctx = mp.get_context("spawn")
    job_reader, job_writer = ctx.Pipe(duplex=False)
    reader, writer = ctx.Pipe(duplex=True)  # results, and the answers to the call's questions (``ask``)
    proc = ctx.Process(target=_spare_main, args=(tuple(preload), spare_log, job_reader, writer, os.getpid()),
                       name="kverdict-worker")
    _confine.spawn(proc)
    job_reader.close()
    writer.close()
    return Spare(proc, job_writer, reader, spare_log)


class SparePool:
    """Up to ``size`` spares importing ahead, for runs with several isolated calls in flight at once.

    Each spare still serves exactly one call (it is as fresh as a cold start for it: only ``preload`` ran in
    it); :meth:`take` hands out a ready one, or None when none is, and starts its replacement.
    """

    def __init__(self, preload: tuple[str, ...], log_dir: str | os.PathLike[str], size: int) -> None:
        self.preload, self.log_dir, self.size = preload, log_dir, size
        self._ready: list[Spare] = []
        self._guard = threading.Lock()
        self._closed = False
        for _ in range(size):
            self._ready.append(start_spare(preload, log_dir))

    @property
    def waiting(self) -> list[Spare]:
        """The spares started and not yet handed out, next first (a copy)."""
        with self._guard:
            return list(self._ready)

    def take(self) -> Spare | None:
        """A spare that is still alive (None if none is), and a new one started in its place."""
        with self._guard:
            if self._closed:
                return None
            spare = None
            while self._ready and spare is None:
                candidate = self._ready.pop(0)
                if candidate.usable():
                    spare = candidate
                else:
                    candidate.discard()
            while len(self._ready) < self.size:
                self._ready.append(start_spare(self.preload, self.log_dir))
            return spare

    def close(self) -> None:
        """Stop every spare nobody took."""
        with self._guard:
            self._closed = True
            spares, self._ready = self._ready, []
        for spare in spares:
            spare.discard()


def _dispatch(spare: Spare | None, target: str, payload: Any, log: Path) -> tuple[Any, Any]:
    """(process, result pipe) running ``target``: on ``spare`` when it takes the job, else a cold spawn."""
    if spare is not None:
        try:
            if spare.usable():
                spare.jobs.send((target, payload, str(log)))
                spare.jobs.close()
                return spare.proc, spare.results
        except (OSError, ValueError):  # the spare died while importing: fall back to a cold start
            pass
        spare.discard()
    ctx = mp.get_context("spawn")
    reader, writer = ctx.Pipe(duplex=True)  # results, and the answers to the call's questions (``ask``)
    proc = ctx.Process(target=_child_main, args=(target, payload, str(log), writer, os.getpid()),
                       name="kverdict-worker")
    _confine.spawn(proc)
    writer.close()
    return proc, reader


SAFE_MODULES = ("evaluations.core._outcomes", "evaluations.core._judgement", "evaluations.worker._worker",
                "evaluations.zoo._check", "schemas._record", "schemas._evidence", "schemas._timing",
                "schemas._audit")
"""Modules whose classes a child's message may hold: the outcomes, judgements and schema models it returns."""
SAFE_GLOBALS = frozenset({("builtins", n) for n in ("set", "frozenset", "complex", "bytearray", "range", "slice")}
                         | {("copyreg", "_reconstructor"), ("builtins", "object"), ("collections", "OrderedDict")})
"""Other globals a plain value needs (sets, pydantic's pickled state)."""


class _Unpickler(pickle.Unpickler):
    """Unpickles only plain values and the classes of :data:`SAFE_MODULES`: a child's message is the
    candidate's to write, and an arbitrary pickle runs code in the process that loads it."""

    def find_class(self, module: str, name: str) -> Any:
        if (module in SAFE_MODULES and not name.startswith("_")) or (module, name) in SAFE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a worker's message may not hold {module}.{name}")


def _receive(conn: Any) -> tuple[Any, ...]:
    """The child's next message, unpickled safely; a message of the wrong form is a ``raised`` one."""
    data = conn.recv_bytes()
    try:
        message = _Unpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 - anything but a well-formed message is the worker's failure
        return ("raised", "MalformedMessage", f"the worker sent a message the runner refuses: {exc}"[:500], "")
    if not (isinstance(message, tuple) and len(message) >= 2 and message[0] in ("ok", "raised", "ask")):
        return ("raised", "MalformedMessage", "the worker sent a message that is not a result", "")
    if message[0] == "raised" and not (len(message) == 4 and all(isinstance(m, str) for m in message[1:])):
        return ("raised", "MalformedMessage", "the worker sent a malformed error report", "")
    return message


def _reply(conn: Any, answer: Callable[[Any], Any] | None, question: Any) -> None:
    """Answer one question of the child (an error answer when ``answer`` is None or raises)."""
    try:
        reply: tuple[str, Any] = ("answer", answer(question)) if answer is not None else ("error", "no answers here")
    except Exception as exc:  # noqa: BLE001 - the parent's answer failed: the child hears why
        reply = ("error", f"{type(exc).__name__}: {exc}")
    try:
        conn.send(reply)
    except (OSError, ValueError):
        pass  # the child is gone; its exit is seen next


def run_isolated(target: str, payload: Any, *, timeout_s: float, log_path: str | os.PathLike[str],
                 max_output_bytes: int = MAX_OUTPUT_BYTES, cancel: threading.Event | None = None,
                 spare: Spare | None = None, answer: Callable[[Any], Any] | None = None) -> IsolatedResult:
    """Call ``module:function`` with ``payload`` in a fresh spawned process; never raises for child failures.

    ``cancel``, when set by another thread, stops the child early (a run being interrupted). ``spare``, a
    child from :func:`start_spare` not used before, saves the start-up; the deadline counts from here.
    ``answer`` answers the questions the child puts with :func:`ask`, in this process, as they arrive (its
    exception is the child's :class:`NoAnswer`); without it every question gets :class:`NoAnswer`.
    """
    log = Path(log_path)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")
    start = time.monotonic()
    limits = _Limits(start, timeout_s, max_output_bytes, cancel, os.environ.get(gpulock.GPU_LOCK_ENV))
    proc, reader = _dispatch(spare, target, payload, log)
    try:
        watched = _watch(proc, reader, log, limits, answer)
    finally:
        _stop(proc)
        reader.close()
    wall = time.monotonic() - start
    tail = _tail(log)
    failure = _settled_failure(proc, watched)
    message = watched.message
    value = message[1] if failure is None and message is not None else None
    return IsolatedResult(value=value, failure=failure, output_tail=tail, wall_s=wall, waited_s=watched.waited_s)


@dataclass(frozen=True)
class _Limits:
    """What ends a child's watch early: its deadline (from ``start``, extended by its waits for the GPU lock named
    ``lock``), its output's size, and the run's interruption."""

    start: float
    timeout_s: float
    max_output_bytes: int
    cancel: threading.Event | None
    lock: str | None


@dataclass(frozen=True)
class _Watched:
    """How a child's watch ended: the message it sent (or None), the failure seen meanwhile (or None), and the
    seconds it waited for the GPU lock."""

    message: tuple[Any, ...] | None
    failure: Failure | None
    waited_s: float


def _watch(proc: Any, reader: connection.Connection, log: Path, limits: _Limits,
           answer: Callable[[Any], Any] | None) -> _Watched:
    """Wait for the child's result, answering its questions, until it sends one, exits, or breaks a limit."""
    message: tuple[Any, ...] | None = None
    pipe_open = True
    waited = 0.0
    while True:
        ready = connection.wait([reader, proc.sentinel] if pipe_open else [proc.sentinel], POLL_S)
        if pipe_open and reader in ready:  # a result, or the pipe closed: wakes at once
            try:
                message = _receive(reader)
            except (EOFError, OSError):
                pipe_open = False
            if message is not None and message[0] == "ask":
                _reply(reader, answer, message[1])
                message = None
                continue
        if message is not None:
            proc.join(GRACE_S)  # the child exits right after sending
            return _Watched(message, None, waited)
        if proc.sentinel in ready and not (pipe_open and reader.poll(0)):
            return _Watched(None, None, waited)  # exited without a result (a descendant may still hold the pipe open)
        failure = _limit_broken(log, limits)
        if failure is not None or _confine.signalled(proc.pid):
            return _Watched(None, failure, waited)
        waited = max(waited, gpulock.waited_s(limits.lock, proc.pid))  # kept once read: the file goes with the lock
        if time.monotonic() - limits.start > limits.timeout_s + min(limits.timeout_s, waited):
            return _Watched(None, Failure("timeout", f"worker exceeded its {limits.timeout_s:g} s deadline and was "
                                                     "killed"), waited)


def _limit_broken(log: Path, limits: _Limits) -> Failure | None:
    """An output flood or the run's interruption, checked in that order on each wake of the watch."""
    if log.stat().st_size > limits.max_output_bytes:
        return Failure("output_flood", f"worker wrote more than {limits.max_output_bytes} bytes of output and was killed")
    if (limits.cancel is not None and limits.cancel.is_set()) or _confine.cancelled():
        return Failure("cancelled", "the run was interrupted")
    return None


def _settled_failure(proc: Any, watched: _Watched) -> Failure | None:
    """The child's failure once it is stopped: a signal it sent the runner outweighs whatever it returned (it
    attacked the harness), then the watch's own failure, an exit without a result, or an exception it raised."""
    failure, message = watched.failure, watched.message
    sent = _confine.signalled(proc.pid, settle=True)
    if sent is not None and (failure is None or failure.kind != "cancelled"):
        failure = Failure("signalled_runner", sent)  # whatever it returned: it attacked the harness
    if failure is None and message is None:
        failure = _exit_failure(proc.exitcode)
    if failure is None and message is not None and message[0] == "raised":
        failure = Failure("exception", message[2], exception_type=message[1], traceback=message[3])
    return failure
