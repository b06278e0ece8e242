"""Where a function or a thread comes from: torch's own code, or the candidate's.

A candidate may call ``torch.compile``, and torch then does things a hostile kernel also does: dynamo
wraps ``torch.manual_seed``, inductor starts threads (``InductorSubproc``, a progress monitor). The
integrity checks must tell those apart from a candidate's own patches and threads, and must not
trust names, ``__module__``, ``__qualname__`` or ``__wrapped__``, which any code can set. So a piece
of code counts as torch's only when its code object is one the Python compiler makes from the file
under torch's installed package directory that it names (the file is compiled and its code objects
compared: a code object with a borrowed file name but other bytecode, constants or names is not
found there), and a function counts as torch's only when, besides, its globals are that module's
own and everything callable it holds (closure cells, defaults) is the function it replaced or, again,
torch's.

Threads are judged by who started them: ``watch_thread_starts`` wraps ``threading.Thread.start``
(before the candidate is imported) to keep the code objects of the frames that called it. Walking
out from ``start``, frames of verified library code (the standard library, installed packages other
than torch) are passed over; the first other frame decides: torch's code, or anything else (the
candidate's module, code claiming a file it does not come from). A thread started by torch is torch's
unless a frame of its live stack is neither torch's nor library code (torch's thread running the
candidate's work).
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FunctionType, MethodType
from typing import Any, Literal

import torch

TORCH_DIR = str(Path(torch.__file__).resolve().parent)
"""torch's installed package directory: code under it, verified, is torch's own."""
LIBRARY_DIRS = tuple(sorted({str(Path(p).resolve()) for k, p in sysconfig.get_paths().items()
                             if k in ("stdlib", "platstdlib", "purelib", "platlib")}))
"""The standard library and installed packages: verified code there is passed over when finding who
started a thread (``threading``, ``concurrent.futures``, a progress-bar package torch uses)."""
STACK_DEPTH = 64
"""Frames kept of the stack that started a thread."""
CLOSURE_DEPTH = 4
"""How deep callables held by a torch wrapper are followed."""

Origin = Literal["torch", "library", "other"]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _walk(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _walk(const)


@functools.lru_cache(maxsize=512)
def _codes_of(path: str) -> frozenset[CodeType]:
    """Every code object the compiler makes of the source file at ``path`` (empty if it cannot be read)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        return frozenset(_walk(compile(text, path, "exec", dont_inherit=True)))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return frozenset()


def origin(code: CodeType) -> Origin:
    """``torch`` or ``library`` for code verified against the file it names under those folders, else ``other``."""
    path = os.path.realpath(code.co_filename)
    inside = "torch" if _under(path, TORCH_DIR) else ("library" if any(_under(path, d) for d in LIBRARY_DIRS) else None)
    if inside is None or code not in _codes_of(path):
        return "other"
    return inside


def _module_file(globals_: dict[str, Any]) -> str | None:
    module = sys.modules.get(str(globals_.get("__name__")))
    if module is None or module.__dict__ is not globals_ or not getattr(module, "__file__", None):
        return None
    return os.path.realpath(module.__file__)  # type: ignore[arg-type]


def torch_function(fn: Any, replaced: Any = None, depth: int = CLOSURE_DEPTH) -> bool:
    """Whether ``fn`` is torch's own function (a wrapper torch put in place of ``replaced`` included)."""
    if isinstance(fn, MethodType):
        fn = fn.__func__
    if not isinstance(fn, FunctionType) or depth < 0 or origin(fn.__code__) != "torch":
        return False
    if _module_file(fn.__globals__) != os.path.realpath(fn.__code__.co_filename):
        return False
    held = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
    held += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    return all(v is replaced or not callable(v) or isinstance(v, type) or torch_function(v, replaced, depth - 1)
               for v in held)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


_started: weakref.WeakKeyDictionary[threading.Thread, tuple[CodeType, ...]] = weakref.WeakKeyDictionary()
_original_start = threading.Thread.start


def _recording_start(self: threading.Thread) -> None:
    frame, codes = sys._getframe(1), []
    while frame is not None and len(codes) < STACK_DEPTH:
        codes.append(frame.f_code)
        frame = frame.f_back
    _started[self] = tuple(codes)
    _original_start(self)


def watch_thread_starts() -> None:
    """Record the starting stack of every thread started from now on (in this process)."""
    threading.Thread.start = _recording_start  # type: ignore[method-assign]


def _decider(codes: tuple[CodeType, ...]) -> Origin:
    for code in codes:
        where = origin(code)
        if where != "library":
            return where
    return "other"


def torch_thread(thread: threading.Thread) -> bool:
    """Whether ``thread`` was started by torch's code and runs nothing but torch's and library code."""
    codes = _started.get(thread)
    if codes is None or _decider(codes) != "torch":
        return False
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if origin(frame.f_code) == "other":
            return False
        frame = frame.f_back
    return True
