"""Compiled extensions of candidates: built once, cached by a hash of their source, never colliding.

Candidates call ``torch.utils.cpp_extension.load_inline`` (or ``load``), usually at import time and
often with a generic name such as ``"fused_kernel"``. Inside a worker, :func:`install` wraps both so
the extension name gets a hash of everything that defines the build appended and the build lands
in its own folder of a shared build directory: two candidates with one name never load each
other's binary, and the runner's parallel prepare stage leaves a warm cache for the timed run.

torch guards a build folder with a bare file (``lock``, its ``FileBaton``) that only the process that made it
removes, and any other process waits on it without end. A worker killed mid-build (a deadline, a run cut off)
leaves it behind for good. So each build also holds a lock of the kernel's (``flock`` on ``NAME.lock`` beside the
folder), released when its holder dies however it dies: whoever holds that lock and still finds torch's file
knows its builder is dead, moves the half-built folder aside and builds anew.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from schemas import KernelLanguage

from ..core import gpulock

_IGNORED_ARGS = ("build_directory", "verbose", "name")
"""Arguments that do not change the binary (the name is replaced by the hashed one)."""
_installed: list[str] = []
BUILD_FAILED = "Error building extension"
"""How torch's message begins where the compiler or the linker failed: the same sources fail again."""
FAILED_MARK = "kverdict-build-failed.txt"
"""In an extension's folder: the message of its failed build, raised again at once by later processes of the
candidate (they would run the same failing compiler for as long again; removing the build folder removes it)."""
TORCH_LOCK = "lock"
"""The file torch's build makes in an extension's folder while it builds (its ``FileBaton``)."""
STALE_DIR = ".stale"
"""Where the folders of builds cut off mid-way are moved before they are removed (a compiler orphaned by the
killed build may still write into its folder; it never writes into the new one)."""


def build_key(name: str, arguments: dict[str, Any]) -> str:
    """A short hash of an extension's defining arguments, the torch build and the interpreter."""
    import torch

    digest = hashlib.sha256()
    digest.update(f"{name}\0{torch.__version__}\0{sys.version_info[:2]}\0".encode())
    for key in sorted(arguments):
        if key not in _IGNORED_ARGS:
            digest.update(f"{key}={arguments[key]!r}\0".encode())
    return digest.hexdigest()[:16]


def _file_contents(sources: Any) -> list[str]:
    paths = [sources] if isinstance(sources, str | os.PathLike) else list(sources)
    return [Path(p).read_text(encoding="utf-8", errors="replace") for p in paths]


def _binaries(folder: Path) -> dict[str, int]:
    """The built libraries in an extension's folder and their modification times."""
    return {p.name: p.stat().st_mtime_ns for p in folder.glob("*.so")}


def _say(message: str) -> None:
    print(f"kverdict worker: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Hold the extension's own lock (``NAME.lock`` beside its folder) while it is built and loaded; wait for a
    live holder (its worker's deadline bounds the wait), saying so first."""
    path = folder.with_name(f"{folder.name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip() or "unknown"
            _say(f"extension {folder.name} is being built by process {owner}; waiting for that build")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def clear_stale_build(folder: Path) -> bool:
    """With the extension's own lock held: where torch's lock is still in its folder, the build that made it is
    dead (it held the lock this process now holds). Move the folder aside, remove it, and start an empty one, so
    the build is redone from nothing; whether there was one to clear."""
    if not (folder / TORCH_LOCK).exists():
        return False
    aside = folder.parent / STALE_DIR / f"{folder.name}-{os.getpid()}-{time.time_ns()}"
    aside.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.rename(aside)
    except OSError:  # cannot move it: build in place, without the dead build's lock
        (folder / TORCH_LOCK).unlink(missing_ok=True)
    else:
        shutil.rmtree(aside, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    _say(f"extension {folder.name}: a stale build lock was left by a build that was cut off; building it again")
    return True


def hashed_loader(original: Callable[..., Any], build_dir: Path, hash_files: bool) -> Callable[..., Any]:
    """Wrap ``load_inline`` (or ``load``, ``hash_files=True``) to build under a hashed name in ``build_dir``, with
    the device let go meanwhile (``gpulock.released``) and the extension's own lock held (``_build_lock``); a
    build cut off in a dead process is redone (``clear_stale_build``); a build that failed is not tried again
    (``FAILED_MARK``)."""
    signature = inspect.signature(original)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        arguments = dict(bound.arguments)
        keyed = dict(arguments)
        if hash_files:
            keyed["sources"] = _file_contents(arguments.get("sources", []))
        name = str(arguments["name"])
        unique = f"{name}_{build_key(name, keyed)}"
        folder = build_dir / unique
        folder.mkdir(parents=True, exist_ok=True)
        arguments["name"] = unique
        arguments["build_directory"] = str(folder)
        gpulock.trace("pass", f"extension {unique} wanted")
        # host work (waiting for another build, a compiler, loading a library): timings go on meanwhile
        with gpulock.released(), _build_lock(folder):
            clear_stale_build(folder)
            return _load(original, arguments, folder)

    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper.__doc__ = original.__doc__
    return wrapper


def _load(original: Callable[..., Any], arguments: dict[str, Any], folder: Path) -> Any:
    """Build (or load from the cache) one extension in its folder, with its lock held; a failure of the compiler or
    the linker is marked for later processes (``FAILED_MARK``)."""
    unique = folder.name
    failed = folder / FAILED_MARK
    if failed.is_file():  # the same build failed in an earlier process of this candidate: it would fail again
        _say(f"extension {unique} failed to build in an earlier process; not built again")
        raise RuntimeError(failed.read_text(encoding="utf-8", errors="replace"))
    before = _binaries(folder)
    start = time.perf_counter()
    try:
        loaded = original(**arguments)
    except RuntimeError as exc:
        if str(exc).startswith(BUILD_FAILED):
            with contextlib.suppress(OSError):
                failed.write_text(str(exc), encoding="utf-8")
        raise
    took = time.perf_counter() - start
    how = "loaded from the build cache" if before and _binaries(folder) == before else "built"
    gpulock.trace("pass", f"extension {unique} {how.split()[0]} in {took:.1f} s")
    _say(f"extension {unique} {how} in {took:.1f} s")
    return loaded


def install(build_dir: str | os.PathLike[str]) -> None:
    """Route every ``load_inline``/``load`` call of this process through the hashed build cache."""
    import torch.utils.cpp_extension as cpp_extension

    if _installed:
        return
    folder = Path(build_dir).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    cpp_extension.load_inline = hashed_loader(cpp_extension.load_inline, folder, hash_files=False)
    cpp_extension.load = hashed_loader(cpp_extension.load, folder, hash_files=True)
    _installed.append(str(folder))


def needs_build(source: str) -> bool:
    """Whether a candidate compiles a C++/CUDA extension (``load_inline`` or ``load``)."""
    return "cpp_extension" in source or "load_inline" in source


_TRITON_RE = re.compile(r"@\s*triton\.(jit|autotune)|import\s+triton|from\s+triton")
_CUDA_RE = re.compile(r"cuda_sources\s*=|__global__|\.cu\b")


def kernel_language(source: str) -> KernelLanguage:
    """The language of a candidate's custom code, from a static look at its source."""
    triton = bool(_TRITON_RE.search(source))
    compiled = needs_build(source)
    cuda = compiled and bool(_CUDA_RE.search(source))
    if triton and compiled:
        return "mixed"
    if triton:
        return "triton"
    if cuda:
        return "cuda"
    if compiled:
        return "cpp"
    return "pytorch"
