"""Static scan of a candidate's source: labels a reader should know about, never failures by themselves.

Labels: ``pytorch-fallback`` (no custom kernel at all), ``custom-stream``, ``threads``, ``ctypes``,
``monkey-patching`` (assigning attributes of torch, time, triton or builtins modules),
``uses-torch-compile`` (the candidate compiles its own code with ``torch.compile``: honest, and judged
like any other; what torch does for it at run time is told apart from the candidate's own doing by
``_provenance``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_CUDA = re.compile(r"load_inline|cpp_extension|__global__|cuda_sources\s*=")
_TRITON = re.compile(r"@\s*triton\.(jit|autotune)|\bimport\s+triton\b|\bfrom\s+triton\b")
_STREAM = re.compile(r"torch\.cuda\.(Stream|stream|ExternalStream)\s*\(|cudaStreamCreate|getStreamFromPool|"
                     r"at::cuda::CUDAStream\b")
_COMPILE = re.compile(r"\btorch\s*\.\s*compile\b|\bfrom\s+torch\s+import\s+[^\n]*\bcompile\b|\btorch\._dynamo\b|"
                      r"\btorch\._inductor\b")
_NATIVE_THREADS = re.compile(r"std::thread|pthread_create|std::async")
_THREAD_MODULES = {"threading", "_thread", "concurrent", "multiprocessing"}
_CTYPES_MODULES = {"ctypes", "cffi"}
_PATCHED_ROOTS = {"torch", "time", "triton", "builtins", "F", "nn", "np", "numpy"}


@dataclass(frozen=True)
class ScanResult:
    """What the static scan found: the custom code's language and the labels."""

    language: str
    labels: list[str]


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _imported_roots(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _patches_modules(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and _root_name(target) in _PATCHED_ROOTS:
                # flags such as torch.backends.cudnn.benchmark are state, caught at run time
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if node.args and _root_name(node.args[0]) in _PATCHED_ROOTS:
                return True
    return False


def scan(source: str) -> ScanResult:
    """Language of the custom code and the labels of a candidate source."""
    cuda, triton = bool(_CUDA.search(source)), bool(_TRITON.search(source))
    if cuda and triton:
        language = "mixed"
    elif cuda:
        language = "cuda" if re.search(r"cuda_sources|__global__", source) else "cpp"
    elif triton:
        language = "triton"
    else:
        language = "pytorch"
    labels = []
    if language == "pytorch":
        labels.append("pytorch-fallback")
    if _STREAM.search(source):
        labels.append("custom-stream")
    imported = _imported_roots(source)
    if imported & _THREAD_MODULES or _NATIVE_THREADS.search(source):
        labels.append("threads")
    if imported & _CTYPES_MODULES:
        labels.append("ctypes")
    if _patches_modules(source):
        labels.append("monkey-patching")
    if _COMPILE.search(source):
        labels.append("uses-torch-compile")
    return ScanResult(language, labels)
