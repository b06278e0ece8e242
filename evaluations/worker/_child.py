"""The child's side of an isolated call (``_isolation.run_isolated``): it confines its signals, leads its own process
group, sends its output to the call's log, watches that its parent lives, serves one call and exits at once. A spare
child imports what its job will need before it has one.
"""

from __future__ import annotations

import faulthandler
import importlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from . import _confine

TAIL_BYTES = 3000
"""How much of the end of the child's output is kept for the record's ``error``."""
PARENT_WATCH_S = 1.0
"""How often a child checks that its parent is still alive (it exits when orphaned)."""

WATCH_THREAD = "kverdict-parent-watch"
"""Name of the worker's own thread that exits the worker when its parent is gone."""
_WATCH_TASKS: list[Callable[[], None]] = []
"""Work the parent-watch thread does on itself before its next look at the parent (:func:`in_every_thread`)."""
_WATCH_WAKE = threading.Event()


def _watch_parent(parent_pid: int) -> None:
    def loop() -> None:
        while True:
            _WATCH_WAKE.wait(PARENT_WATCH_S)
            _WATCH_WAKE.clear()
            while _WATCH_TASKS:
                _WATCH_TASKS.pop(0)()
            if os.getppid() != parent_pid:
                os._exit(70)  # orphaned: the runner is gone, nobody will read the result

    threading.Thread(target=loop, name=WATCH_THREAD, daemon=True).start()


def in_every_thread(apply: Callable[[], None], timeout_s: float = 10.0) -> None:
    """Run ``apply`` in this thread and in the worker's own parent-watch thread (Landlock restricts one thread at a
    time, and a thread candidate code could reach through patched functions must not keep rights the rest lost).
    Its exception, from either thread, is raised here; other Python threads are named on the worker's output."""
    apply()
    watcher = next((t for t in threading.enumerate() if t.name == WATCH_THREAD), None)
    others = [t.name for t in threading.enumerate() if t not in (threading.current_thread(), watcher)]
    if others:
        print(f"kverdict worker: threads started before confinement keep their rights: {', '.join(others)}",
              file=sys.stderr)
    if watcher is None:
        return
    done, failed = threading.Event(), []

    def task() -> None:
        try:
            apply()
        except BaseException as exc:  # noqa: B036 - handed to the caller
            failed.append(exc)
        done.set()

    _WATCH_TASKS.append(task)
    _WATCH_WAKE.set()
    if not done.wait(timeout_s):
        raise OSError(f"the parent-watch thread did not confine itself within {timeout_s:g} s")
    if failed:
        raise failed[0]


def _redirect(log_path: str) -> None:
    """Point this process's stdout and stderr file descriptors at ``log_path`` (appending)."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


_CONVERSATION: list[Any] = []
"""The child's end of its result pipe, while it serves its call (for :func:`ask`)."""


class NoAnswer(Exception):
    """The parent had nothing to answer (it gave the call no ``answer``), or the pipe is gone."""


def ask(question: Any) -> Any:
    """From inside an isolated call: put ``question`` to the parent and wait for its answer.

    The parent answers with the ``answer`` function it gave :func:`run_isolated`, on its own side of the
    process boundary (its clock, its state), before the call's result comes back."""
    if not _CONVERSATION:
        raise NoAnswer("not inside an isolated call")
    conn = _CONVERSATION[0]
    try:
        conn.send(("ask", question))
        reply = conn.recv()
    except (EOFError, OSError) as exc:
        raise NoAnswer(f"the parent is gone: {exc}") from exc
    if reply[0] != "answer":
        raise NoAnswer(str(reply[1]))
    return reply[1]


def _serve(target: str, payload: Any, conn: Any) -> None:
    """Call ``module:function`` on ``payload``, send what came of it through ``conn`` and exit at once."""
    module_name, func_name = target.split(":")
    _CONVERSATION.append(conn)
    try:
        value = getattr(importlib.import_module(module_name), func_name)(payload)
        message: tuple[Any, ...] = ("ok", value)
    except BaseException as exc:  # noqa: B036 - every escape must be reported, SystemExit included
        message = ("raised", type(exc).__qualname__, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    try:
        conn.send(message)
    except Exception as exc:  # an unpicklable value
        conn.send(("raised", type(exc).__qualname__, f"result could not be sent: {exc}", traceback.format_exc()))
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: candidate atexit hooks must not change the result


def _child_main(target: str, payload: Any, log_path: str, conn: Any, parent_pid: int) -> None:
    _confine.unblock_in_child()
    os.setpgrp()
    _redirect(log_path)
    faulthandler.enable(file=sys.stderr)
    _watch_parent(parent_pid)
    _serve(target, payload, conn)


def _spare_main(preload: tuple[str, ...], spare_log: str, jobs: Any, conn: Any, parent_pid: int) -> None:
    """A spare child: import ``preload`` (no job code yet), then wait for exactly one job and serve it."""
    _confine.unblock_in_child()
    os.setpgrp()
    _redirect(spare_log)
    faulthandler.enable(file=sys.stderr)
    _watch_parent(parent_pid)
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S112 - the job imports it again and reports the failure in its own log
            continue
    try:
        target, payload, log_path = jobs.recv()
    except (EOFError, OSError):
        os._exit(0)  # never used: the run ended or the spare was discarded
    jobs.close()
    _redirect(log_path)
    try:  # what the imports printed belongs to the job's output, as it would in a cold start
        with open(spare_log, "rb") as fh:
            os.write(2, fh.read(TAIL_BYTES))
        os.unlink(spare_log)
    except OSError:
        pass
    _serve(target, payload, conn)
