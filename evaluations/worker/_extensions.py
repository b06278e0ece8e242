"""Compiled extensions of candidates: built once, cached by a hash of their source, never colliding.

Candidates call ``torch.utils.cpp_extension.load_inline`` (or ``load``), usually at import time and
often with a generic name such as ``"fused_kernel"``. Inside a worker, :func:`install` wraps both so
the extension name gets a hash of everything that defines the build appended and the build lands
in its own folder of a shared build directory: two candidates with one name never load each
other's binary, and the runner's parallel prepare stage leaves a warm cache for the timed run.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemas import KernelLanguage

from . import _gpulock

_IGNORED_ARGS = ("build_directory", "verbose", "name")
"""Arguments that do not change the binary (the name is replaced by the hashed one)."""
_installed: list[str] = []
BUILD_FAILED = "Error building extension"
"""How torch's message begins where the compiler or the linker failed: the same sources fail again."""
FAILED_MARK = "kverdict-build-failed.txt"
"""In an extension's folder: the message of its failed build, raised again at once by later processes of the
candidate (they would run the same failing compiler for as long again; removing the build folder removes it)."""


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


def hashed_loader(original: Callable[..., Any], build_dir: Path, hash_files: bool) -> Callable[..., Any]:
    """Wrap ``load_inline`` (or ``load``, ``hash_files=True``) to build under a hashed name in ``build_dir``, with
    the device let go meanwhile (``_gpulock.released``); a build that failed is not tried again (``FAILED_MARK``)."""
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
        failed = folder / FAILED_MARK
        if failed.is_file():  # the same build failed in an earlier process of this candidate: it would fail again
            print(f"kverdict worker: extension {unique} failed to build in an earlier process; not built again",
                  file=sys.stderr, flush=True)
            raise RuntimeError(failed.read_text(encoding="utf-8", errors="replace"))
        before = _binaries(folder)
        _gpulock.trace("pass", f"extension {unique} wanted")
        start = time.perf_counter()
        try:
            with _gpulock.released():  # host work (a compiler, or loading a library): timings go on meanwhile
                loaded = original(**arguments)
        except RuntimeError as exc:
            if str(exc).startswith(BUILD_FAILED):
                with contextlib.suppress(OSError):
                    failed.write_text(str(exc), encoding="utf-8")
            raise
        took = time.perf_counter() - start
        how = "loaded from the build cache" if before and _binaries(folder) == before else "built"
        _gpulock.trace("pass", f"extension {unique} {how.split()[0]} in {took:.1f} s")
        print(f"kverdict worker: extension {unique} {how} in {took:.1f} s", file=sys.stderr, flush=True)
        return loaded

    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper.__doc__ = original.__doc__
    return wrapper


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
