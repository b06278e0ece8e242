"""Functions that worker-isolation tests run in a child process (importable by name, no torch)."""

from __future__ import annotations

import ctypes
import os
import sys
import time


def double(x: int) -> int:
    print("doubling", x)
    os.write(2, b"from C level\n")
    return 2 * x


def fail(message: str) -> None:
    raise ValueError(message)


def segfault(_: object) -> None:
    ctypes.string_at(0)


def abort(_: object) -> None:
    os.abort()


def exit_early(code: int) -> None:
    sys.stdout.flush()
    os._exit(code)


def hang(_: object) -> None:
    while True:
        time.sleep(0.05)


def flood(_: object) -> None:
    line = b"x" * 4096 + b"\n"
    while True:
        os.write(1, line)



def _wait_for(path: str, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def hold_shared(args: tuple[str, str, str | None]) -> tuple[float, float]:
    """Touch ``dir/name.trying``, take the GPU lock shared, touch ``dir/name.held``, hold it until
    ``dir/release`` exists (when named), and return (start, end) of the hold on the monotonic clock."""
    from evaluations import _gpulock

    folder, name, release = args
    open(os.path.join(folder, f"{name}.trying"), "w").close()
    with _gpulock.shared():
        start = time.monotonic()
        open(os.path.join(folder, f"{name}.held"), "w").close()
        if release:
            _wait_for(os.path.join(folder, release))
        return start, time.monotonic()


def time_exclusive(args: tuple[str, str, str | None]) -> tuple[float, float, float]:
    """Hold the lock shared, touch ``dir/name.trying``, then take it alone for 0.3 s:
    (start, end of the exclusive hold, seconds this worker waited for the lock)."""
    from evaluations import _gpulock

    folder, name, _ = args
    with _gpulock.shared():
        open(os.path.join(folder, f"{name}.trying"), "w").close()
        with _gpulock.exclusive():
            start = time.monotonic()
            time.sleep(0.3)
            end = time.monotonic()
        return start, end, _gpulock.waited_s(os.environ[_gpulock.ENV], os.getpid())


def signal_parent(_: object) -> int:
    """Send SIGINT to the runner, then return as if nothing happened."""
    import signal

    os.kill(os.getppid(), signal.SIGINT)
    return 1
