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
