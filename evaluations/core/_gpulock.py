"""One GPU shared by concurrent evaluations, with every timing holding it alone.

``kverdict eval --concurrent N`` (N > 1, CUDA) runs several workers at once: their process start-up,
imports, extension loading, correctness trials and integrity checks overlap, but a timing never
shares the device. The runner names a lock file in ``KVERDICT_GPU_LOCK``; a worker holds the lock
*shared* while it uses the device and *exclusively* while it times. A worker first waits until all
its own queued device work is done before it lets go of the shared lock, so nothing of it runs
inside another worker's timing. A gate file gives a waiting timing priority: while one waits, no
worker newly takes the device. Timings that queue behind it go first too: each timing holds a third file,
``<lock>.timings``, shared from the moment it wants the device until it is done, and a worker takes the device
shared again only once no timing holds that file. So every worker that yielded waits for all queued timings,
and those run back to back rather than each waiting anew for the steps of workers that slipped back in.

A worker holds the shared lock for its whole job, so a timing would otherwise wait for every other job in
flight to end or reach its own timing. Between the steps of its harness (a correctness trial, a check) a
worker calls :func:`yield_to_timing`: where a timing waits, it finishes its queued device work, lets go and
takes the device again after that timing, so timings wait for a step, not for whole jobs.

A worker records how long it has waited for the lock in ``<lock>.d/wait-<pid>``; the runner extends
that worker's deadline by the most it has read there (at most doubling it), so waiting for the GPU is never a
timeout, even after the worker lets go of the lock and removes the file.
Without the environment variable (one evaluation at a time, or the CPU) every function is a no-op.

Where ``KVERDICT_GPU_TRACE`` names a folder, each worker also appends every step of its use of the lock (taking
it shared, waiting for and holding it alone, yielding, letting go) with the time and the harness line it came
from to ``trace-<pid>.txt`` there; ``benchmarks/lock_trace.py`` reads them back to tell which steps keep
timings waiting. A trace is a diagnostic of the run: candidate code can write into it, and no verdict reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

GPU_LOCK_ENV = "KVERDICT_GPU_LOCK"
"""Environment variable naming the lock file; set by the runner for concurrent CUDA runs."""
TRACE_ENV = "KVERDICT_GPU_TRACE"
"""Environment variable naming a folder for the workers' lock traces (off by default; see the module's text)."""

_flock = fcntl.flock  # bound at import, before any candidate code runs
_state: dict[str, object] = {"main": None, "gate": None, "timings": None, "depth": 0, "waited": 0.0}


def _path() -> str | None:
    return os.environ.get(GPU_LOCK_ENV) or None


def wait_folder(lock: str | os.PathLike[str]) -> Path:
    """The lock's own folder, ``<lock>.d``: the one place beside the lock that a confined worker may write (its wait
    file), whatever folder the lock file lies in. The lock files themselves are opened read-only (``flock`` needs no
    more), so the lock may be named in a folder that holds anything else."""
    return Path(f"{os.fspath(lock)}.d")


def wait_file(lock: str | os.PathLike[str], pid: int) -> Path:
    """Where worker ``pid`` records its cumulative wait for the lock."""
    return wait_folder(lock) / f"wait-{pid}"


def prepare(lock: str | os.PathLike[str]) -> None:
    """Make the lock's files and its folder (:func:`wait_folder`): called by a worker before it confines itself
    (``_worker.writable_folders``), since a confined worker opens the files read-only and may create nothing beside
    them. An unconfined worker makes them as it takes the lock (:func:`shared`)."""
    wait_folder(lock).mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".gate", ".timings"):
        os.close(os.open(f"{os.fspath(lock)}{suffix}", os.O_RDONLY | os.O_CREAT, 0o644))


def waited_s(lock: str | os.PathLike[str] | None, pid: int) -> float:
    """Seconds worker ``pid`` has spent waiting for the GPU lock so far, a wait in progress included."""
    if not lock:
        return 0.0
    try:
        total, since = (float(v) for v in wait_file(lock, pid).read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return 0.0
    return max(0.0, total + (time.monotonic() - since if since >= 0 else 0.0))


def _site() -> str:
    """``file:line:function`` of the harness code that called into this module (past ``contextlib``)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in (__file__, contextlib.__file__):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "?"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}:{frame.f_code.co_name}"


def _born() -> float:
    """When this process started, on the monotonic clock (Linux: the start time ``/proc`` gives, from boot)."""
    try:
        stat = Path("/proc/self/stat").read_text(encoding="ascii")
        return int(stat.rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic()


def trace(event: str, where: str | None = None) -> None:
    """Append ``event`` to this worker's lock trace, where one is asked for (``TRACE_ENV``); else nothing."""
    folder = os.environ.get(TRACE_ENV)
    if not folder or _path() is None:
        return
    at = _born() if event == "born" else time.monotonic()
    line = f"{at:.6f} {event} {(where or _site()).replace(' ', '_')}\n"
    with contextlib.suppress(OSError):
        fd = os.open(os.path.join(folder, f"trace-{os.getpid()}.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def _note_wait(since: float) -> None:
    path = _path()
    if path:
        target = wait_file(path, os.getpid())
        scratch = target.with_name(f"{target.name}.new")
        with contextlib.suppress(OSError):  # written aside and renamed: the runner never reads a half-written file
            scratch.write_text(f"{_state['waited']:.3f} {since:.6f}", encoding="ascii")
            os.replace(scratch, target)


def _take(fd: int, op: int) -> None:
    try:  # uncontended: no wait to note
        _flock(fd, op | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    t0 = time.monotonic()
    _note_wait(t0)  # the runner sees a wait in progress and extends this worker's deadline meanwhile
    _flock(fd, op)
    _state["waited"] = float(_state["waited"]) + time.monotonic() - t0  # type: ignore[arg-type]
    _note_wait(-1.0)


def _sync_device() -> None:
    torch = sys.modules.get("torch")  # a worker that never imported torch has no device work
    if torch is None:
        return
    try:
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except Exception:  # noqa: S110 - a broken context: the worker's own failure, reported by the job
        pass


def _enter_shared(main: int, gate: int) -> None:
    timings = _state["timings"]
    if isinstance(timings, int):  # no timing queued or in progress: taken and let go at once
        _take(timings, fcntl.LOCK_EX)
        _flock(timings, fcntl.LOCK_UN)
    _take(gate, fcntl.LOCK_EX)
    try:
        _take(main, fcntl.LOCK_SH)
    finally:
        _flock(gate, fcntl.LOCK_UN)


def _timing_queued() -> bool:
    """Whether another worker's timing waits for the device or is in progress (it holds ``<lock>.timings``)."""
    timings = _state["timings"]
    if not isinstance(timings, int):
        return False
    try:
        _flock(timings, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    _flock(timings, fcntl.LOCK_UN)
    return False


def _between_steps() -> tuple[int, int] | None:
    """(main, gate) descriptors where this worker holds the device shared and is not timing (inside :func:`shared`,
    outside :func:`exclusive`): where :func:`exclusive`, :func:`let_go` and :func:`yield_to_timing` act; else None."""
    main, gate = _state["main"], _state["gate"]
    if not isinstance(main, int) or not isinstance(gate, int) or int(_state["depth"]) > 0:  # type: ignore[call-overload]
        return None
    return main, gate


@contextlib.contextmanager
def shared(label: str = "job") -> Iterator[None]:
    """Hold the device shared for the duration (a worker's whole job, named ``label`` in a trace); a no-op
    without the lock."""
    path = _path()
    if path is None or _state["main"] is not None:
        yield
        return
    with contextlib.suppress(OSError):  # made by prepare() where the worker is confined
        wait_folder(path).mkdir(exist_ok=True)
    main = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # flock needs no write access
    gate = os.open(f"{path}.gate", os.O_RDONLY | os.O_CREAT, 0o644)
    timings = os.open(f"{path}.timings", os.O_RDONLY | os.O_CREAT, 0o644)
    _state.update(main=main, gate=gate, timings=timings)
    trace("born", label)  # the process's start: what came before its job (imports, confinement) shows in a trace
    trace("begin", label)
    try:
        _enter_shared(main, gate)
        trace("in")
        yield
    finally:
        _sync_device()
        _flock(main, fcntl.LOCK_UN)
        trace("end")
        os.close(main)
        os.close(gate)
        os.close(timings)
        _state.update(main=None, gate=None, timings=None)
        with contextlib.suppress(OSError):
            wait_file(path, os.getpid()).unlink()


def shared_on(device: str, label: str = "job") -> contextlib.AbstractContextManager[None]:
    """:func:`shared` for a job on ``device``; nothing to hold off the GPU."""
    return shared(label) if device == "cuda" else contextlib.nullcontext()


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """Hold the device alone for the duration (a timing); a no-op outside :func:`shared` or without the lock."""
    held = _between_steps()
    if held is None:
        yield
        return
    main, gate = held
    _sync_device()  # none of this worker's earlier work may run inside another's timing
    _flock(main, fcntl.LOCK_UN)
    trace("want")
    timings = _state["timings"]
    assert isinstance(timings, int)
    _take(timings, fcntl.LOCK_SH)  # queued: from now no worker takes the device shared again until it is done
    _take(gate, fcntl.LOCK_EX)
    try:
        _take(main, fcntl.LOCK_EX)
        trace("alone")
        _state["depth"] = 1
        try:
            yield
        finally:
            _sync_device()
            _state["depth"] = 0
            _flock(main, fcntl.LOCK_SH)  # back to shared while still holding the gate: no one slips in
            trace("in")
    finally:
        _flock(gate, fcntl.LOCK_UN)
        _flock(timings, fcntl.LOCK_UN)


def let_go() -> bool:
    """Let go of the device entirely (this worker's queued device work finished first) until :func:`take_back`;
    True where it did, False (nothing done) outside :func:`shared`, inside :func:`exclusive` or without the lock.
    :func:`released` as two calls, for host work that starts and ends in callbacks."""
    held = _between_steps()
    if held is None:
        return False
    main, _ = held
    _sync_device()
    _flock(main, fcntl.LOCK_UN)
    trace("out")
    return True


def take_back() -> None:
    """Hold the device shared again after :func:`let_go` let go of it (after every timing queued meanwhile)."""
    main, gate = _state["main"], _state["gate"]
    assert isinstance(main, int) and isinstance(gate, int), "take_back() outside shared()"
    _enter_shared(main, gate)
    trace("in")


@contextlib.contextmanager
def released() -> Iterator[None]:
    """Let go of the device entirely for the duration (waiting for another process's turn to time), then
    hold it shared again; a no-op outside :func:`shared` or without the lock."""
    if not let_go():
        yield
        return
    try:
        yield
    finally:
        take_back()


def yield_to_timing() -> None:
    """Between two steps of a job: if another worker's timing waits for the device or runs (it holds
    ``<lock>.timings``), let it and every timing queued with it go first (this worker's queued device work is
    finished before it lets go); else nothing. A no-op outside :func:`shared`, inside :func:`exclusive`, or
    without the lock."""
    if _between_steps() is None:
        return
    if _timing_queued():  # a timing waits or runs: it and every timing queued behind it go first
        with released():
            pass
        return
    trace("pass")
