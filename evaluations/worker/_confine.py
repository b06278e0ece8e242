"""What confines candidate workers during a run, on the runner's side: environment, survivors, signals.

:func:`confined` wraps a run. Inside it:

- every worker starts with an allowlisted environment (:func:`worker_environment`): nothing else the
  runner was given, tokens and secrets in particular, reaches candidate code;
- the runner is a child subreaper, so a process a candidate detaches (a new session, a double fork)
  becomes the runner's child when its parent dies, and every child that is not a tracked worker is
  killed when an isolated call ends and when the run ends: nothing a candidate started survives it;
- the signals a candidate could use to stop the run (``WATCHED``) are blocked in the runner's threads
  and taken by one watcher thread: one sent by a worker or another descendant of the runner fails that
  worker's job (:func:`signalled`), one sent by anyone else interrupts the run as before.

:mod:`evaluations.worker._isolation` calls :func:`spawn`, :func:`signalled` and :func:`finished` around each
worker; outside :func:`confined` they do nothing beyond starting the process.
"""

from __future__ import annotations

import _thread
import ctypes
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

WORKER_ENV_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP",
    "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONNOUSERSITE",
    "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "MAX_JOBS", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "CUBLAS_WORKSPACE_CONFIG",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR",
})
"""Variables a worker keeps by exact name: paths, locale, Python, compilers."""
WORKER_ENV_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "NVCC_", "CUDNN_", "CUBLASLT_", "TORCH_", "PYTORCH_", "TRITON_",
                       "TORCHINDUCTOR_", "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "NCCL_", "NVSHMEM_",
                       "KVERDICT_")
"""Variables a worker keeps by prefix: CUDA, compilers' and libraries' knobs, torch, Triton, this harness."""
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|API_?KEY|PRIVATE|AUTH|COOKIE", re.IGNORECASE)
"""A name that looks like it holds a secret is dropped even where its prefix is allowed."""
WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
"""Signals whose default action or handler would end the run; SIGKILL and SIGSTOP cannot be watched."""
WATCH_POLL_S = 0.2
"""How often the watcher thread looks up from waiting to see whether the run has ended."""
SETTLE_S = 0.005
"""Pause before a worker's verdict is read, so a signal the watcher has just taken is counted first."""
MAX_REAP_ROUNDS = 50
"""Rounds of killing orphans (each can free grandchildren that become orphans in turn) before giving up."""
_PR_SET_CHILD_SUBREAPER = 36


def worker_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The part of ``env`` a worker may see: allowlisted names (``WORKER_ENV_*``) not named like secrets."""
    return {k: v for k, v in env.items()
            if (k in WORKER_ENV_NAMES or k.startswith(WORKER_ENV_PREFIXES)) and not SECRET_NAME.search(k)}


@contextmanager
def allowlisted_environ() -> Iterator[None]:
    """Keep only :func:`worker_environment` in ``os.environ`` (which spawned workers inherit), then restore it.

    The run's own process needs nothing that is dropped: it read its inputs before the run began.
    """
    saved = dict(os.environ)
    kept = worker_environment(saved)
    for name in set(saved) - set(kept):
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _set_subreaper(on: bool) -> bool:
    libc = _libc()
    return libc is not None and libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a process from ``/proc``, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[19])


def _children(parent: int) -> dict[int, int]:
    """Child pid -> start time of every process whose parent is ``parent``."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[0] == parent:
                found[int(entry.name)] = stat[1]
    return found


def _helper_pids() -> set[int]:
    """Processes multiprocessing itself starts for the runner (its resource tracker, a fork server)."""
    from multiprocessing import forkserver, resource_tracker

    pids = {getattr(resource_tracker._resource_tracker, "_pid", None),
            getattr(forkserver._forkserver, "_forkserver_pid", None)}
    return {p for p in pids if p}


def _ancestor_in(pid: int, wanted: set[int], stop: int) -> int | None:
    """The first of ``pid`` and its ancestors that is in ``wanted``; ``stop`` too when reached; else None."""
    seen = 0
    while pid > 1 and seen < 512:
        if pid in wanted or pid == stop:
            return pid
        stat = _stat(pid)
        if stat is None:
            return None
        pid, seen = stat[0], seen + 1
    return None


def private_folders(pid: int) -> list[Path]:
    """Temporary folders a worker made for itself (``kv-*-PID-*``), removed when it has ended."""
    return list(Path(tempfile.gettempdir()).glob(f"kv-*-{pid}-*"))


@dataclass
class Confinement:
    """The state of one confined run: tracked workers, orphans killed, signals taken from candidates."""

    runner: int
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Held while a worker is spawned and while orphans are looked for: a worker is tracked before any reap."""
    workers: set[int] = field(default_factory=set)
    """Workers alive now (spawned, not yet finished)."""
    history: set[int] = field(default_factory=set)
    """Every worker of the run, so a signal from one that has already ended is still known as a candidate's."""
    killed: set[int] = field(default_factory=set)
    """Orphans killed, for the same reason."""
    exempt: dict[int, int] = field(default_factory=dict)
    """Children the runner had before the run (pid -> start time): not the candidates'."""
    flagged: dict[int, str] = field(default_factory=dict)
    """Worker pid -> why its job fails (the signal its candidate sent)."""
    interrupted: threading.Event = field(default_factory=threading.Event)
    """Set when a signal from outside interrupts the run: every isolated call in flight stops (:func:`cancelled`)."""
    watched: bool = False
    """Whether the watched signals are blocked in the run's threads and taken by the watcher."""

    def reap(self) -> None:
        """Kill and reap every child of the runner that is not a worker, a helper or there before the run."""
        with self.lock:
            for _ in range(MAX_REAP_ROUNDS):
                keep = self.workers | _helper_pids()
                orphans = [pid for pid, start in _children(self.runner).items()
                           if pid not in keep and self.exempt.get(pid) != start]
                if not orphans:
                    return
                for pid in orphans:
                    self.killed.add(pid)
                    try:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                    except (ProcessLookupError, ChildProcessError):
                        pass

    def take(self, info: Any) -> None:
        """Judge one signal the runner received: a candidate's fails its job, anyone else's interrupts the run."""
        sender, name = info.si_pid, signal.Signals(info.si_signo).name
        with self.lock:
            source = sender in self.history or sender in self.killed or (
                sender not in (0, self.runner) and _ancestor_in(sender, self.history, self.runner) is not None)
            if not source:
                self.interrupted.set()  # wakes a main thread that waits on evaluations in flight
                _external(info.si_signo)
                return
            worker = _ancestor_in(sender, self.history, self.runner) if sender not in self.history else sender
            if worker in (None, self.runner) and len(self.workers) == 1:
                worker = next(iter(self.workers))  # a detached process of the only worker in flight
            if worker in (None, self.runner):
                print(f"kverdict: ignored {name} from pid {sender}, a process a candidate started", file=sys.stderr)
                return
            self.flagged.setdefault(worker, f"the candidate sent {name} to the runner (from pid {sender}); "
                                            "a candidate may not signal the harness, so its job is failed")

    def drain(self) -> None:
        """Judge every watched signal pending now."""
        with self.lock:
            while (info := signal.sigtimedwait(WATCHED, 0)) is not None:
                self.take(info)


_P = TypeVar("_P")
_ACTIVE: list[Confinement] = []
"""The confinement of the run in progress in this process (at most one)."""


def spawn(proc: Any) -> None:
    """Start ``proc`` (a multiprocessing process) and track it as a worker, under the reaper's lock."""
    def start() -> Any:
        proc.start()
        return proc

    started(start)


def started(start: Callable[[], _P]) -> _P:
    """Call ``start`` (it starts a process and returns it: a multiprocessing process, a ``Popen``) and track the
    process as a worker of the run's confinement, under the reaper's lock, so no reap sees it untracked."""
    if not _ACTIVE:
        return start()
    state = _ACTIVE[0]
    with state.lock:
        proc = start()
        state.workers.add(proc.pid)
        state.history.add(proc.pid)
    if state.watched:  # multiprocessing's resource tracker unblocks SIGINT and SIGTERM after starting itself
        signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    return proc


def signalled(pid: int | None, settle: bool = False) -> str | None:
    """Why the job of worker ``pid`` fails, when its candidate signalled the runner (None otherwise).

    With ``settle`` (the worker has ended), signals still pending are judged first.
    """
    if not _ACTIVE or pid is None:
        return None
    state = _ACTIVE[0]
    if settle and state.watched:
        time.sleep(SETTLE_S)  # let the watcher finish a signal it has just taken
        state.drain()
    return state.flagged.get(pid)


def finished(pid: int | None) -> None:
    """Worker ``pid`` has ended: stop tracking it, kill what it left behind, remove its private folders."""
    if pid is None:
        return
    for folder in private_folders(pid):
        shutil.rmtree(folder, ignore_errors=True)
    if not _ACTIVE:
        return
    state = _ACTIVE[0]
    with state.lock:
        state.workers.discard(pid)
        state.reap()


def unblock_in_child() -> None:
    """First thing in a spawned worker: take back the signals the runner blocked (its mask is inherited)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)


def cancelled() -> bool:
    """Whether a signal from outside has interrupted the run: isolated calls in flight stop, as on a cancel."""
    return bool(_ACTIVE) and _ACTIVE[0].interrupted.is_set()


_WATCHING: list[threading.Event] = []
"""The stop event of this process's watcher thread, while one runs."""
_LATE: list[int] = []
"""Signals from outside taken while the watcher stops, raised again once they are unblocked."""


def _external(signo: int) -> None:
    """A signal from outside: what it would have done without the watcher (interrupt, or end the process)."""
    handler = signal.getsignal(signo)
    if handler == signal.SIG_IGN:
        return
    if _WATCHING and _WATCHING[0].is_set():
        _LATE.append(signo)
    elif callable(handler):
        _thread.interrupt_main(signo)
    elif _ACTIVE:
        _thread.interrupt_main(signal.SIGINT)  # a run ends as on Ctrl-C: its finished records are kept
    else:
        os._exit(128 + signo)


def _watch(stop: threading.Event) -> None:
    while not stop.is_set():
        info = signal.sigtimedwait(WATCHED, WATCH_POLL_S)
        if info is None:
            continue
        if _ACTIVE and _ACTIVE[0].watched:
            _ACTIVE[0].take(info)
        else:
            _external(info.si_signo)


@contextmanager
def watching() -> Iterator[bool]:
    """Block ``WATCHED`` in this (the main) thread and take them on one watcher thread; yields whether it does.

    Entered before anything starts a thread (before torch is imported: its threads inherit the mask),
    every thread of the process leaves the watched signals to the watcher, so :func:`confined` can tell a
    candidate's signal from anyone else's. Signals from outside act as they would without it. Not in the
    main thread, or inside another such block, it does nothing.
    """
    if _WATCHING or threading.current_thread() is not threading.main_thread() or not sys.platform.startswith("linux"):
        yield bool(_WATCHING)
        return
    stop = threading.Event()
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    watcher = threading.Thread(target=_watch, args=(stop,), name="kverdict-signal-watch", daemon=True)
    watcher.start()
    _WATCHING.append(stop)
    try:
        yield True
    finally:
        stop.set()
        watcher.join()
        while (info := signal.sigtimedwait(WATCHED, 0)) is not None:
            (_ACTIVE[0].take if _ACTIVE and _ACTIVE[0].watched else lambda i: _external(i.si_signo))(info)
        _WATCHING.clear()
        late, _LATE[:] = list(_LATE), []
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)
        for signo in late:
            signal.raise_signal(signo)


@contextmanager
def confined() -> Iterator[Confinement | None]:
    """Confine the workers of the run in this block (see the module's docstring); yields its state.

    Signals are told apart only under :func:`watching` (entered here when it is not already, which is
    reliable only where no thread started before it: the command line enters it first); a nested block
    leaves the outer one in charge.
    """
    if _ACTIVE or not sys.platform.startswith("linux"):
        with allowlisted_environ() if not _ACTIVE else _nothing():
            yield _ACTIVE[0] if _ACTIVE else None
        return
    _start_resource_tracker()
    with watching() as watched:
        state = Confinement(runner=os.getpid(), exempt=_children(os.getpid()), watched=watched)
        subreaper = _set_subreaper(True)
        _ACTIVE.append(state)
        try:
            with allowlisted_environ():
                yield state
        finally:
            state.reap()
            if watched:
                state.drain()  # signals candidates sent before they were killed are still theirs
            _ACTIVE.clear()
            if subreaper:
                _set_subreaper(False)


TRACKER_WARNINGS = "ignore:resource_tracker:UserWarning"
"""The resource tracker's own warnings, left out of the run's output: workers end with ``os._exit`` (a candidate's
exit hooks must not change its result) or are killed with their process group, so the semaphores their libraries
made (``torch.compile``'s compile pools) are freed by multiprocessing's resource tracker when the run ends, which
then warns of "leaked semaphore objects", on the terminal after the run's summary. Freeing them is its job here."""


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, as starting it unblocks SIGINT and SIGTERM in the calling
    thread, with :data:`TRACKER_WARNINGS` among its options (it takes this interpreter's ``-W`` options)."""
    from multiprocessing import resource_tracker

    if TRACKER_WARNINGS not in sys.warnoptions:
        sys.warnoptions.append(TRACKER_WARNINGS)
    resource_tracker.ensure_running()


@contextmanager
def _nothing() -> Iterator[None]:
    yield
