"""Automatic FLOP and byte counts of KernelBench-format problems, for the roofline of imported suites.

Hand-written counts exist only for the own suite (``_suite_counts``); a public suite's problems are
counted by running each once on PyTorch's meta device, where tensors have shapes and dtypes but no
storage, so even a problem of many gigabytes allocates nothing and computes nothing:

- FLOPs: what ``torch.utils.flop_counter.FlopCounterMode`` counts, that is matrix products,
  convolutions and attention, 2 per multiply-add; elementwise and reduction arithmetic count 0;
- bytes: every input tensor, parameter and buffer that some operation of the forward reads, once,
  plus every output tensor, once.

The bytes are a lower bound of what a kernel must move (unless the output ignores an input's values). The
FLOPs are those of the reference's own algorithm: they leave out elementwise work, but may exceed what the
problem needs where the inputs have structure (``torch.diag(A) @ B``), so ``_roofline`` keeps them out of
the floor a time is held to.

A problem asking for a device (``device="cuda"``, ``.cuda()``, ``.to(...)``) stays on the meta device.
Where the meta device cannot run the problem (an operation without a shape function, a value read back
with ``.item()``), the problem gets no counts and a one-line reason instead.
"""

from __future__ import annotations

import contextlib
import io
import time
import types
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..core import Problem

MAX_REASON_CHARS = 300
"""Length limit of a "not counted" reason (it names the exception and its first line)."""
TIME_CAP_S = 20.0
"""Longest a count may take at load time; meta tensors cost about 0.1 ms an operation, so only networks of
tens of thousands of operations (long recurrent ones) reach it: the committed KernelBench index holds their
counts, taken without the cap."""


@dataclass(frozen=True)
class Count:
    """The automatic count of one problem: figures, or why there are none."""

    flops: float | None
    min_bytes: float | None
    dtype: str | None
    """The problem's floating dtype as its tensors show it (``bfloat16``, ``float16``, else ``float32``)."""
    reason: str | None = None
    """Why nothing was counted (``None`` when counted)."""


def _meta_mode() -> Any:
    """A torch-function mode that keeps every new tensor and every device move on the meta device."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._device import _device_constructors

    constructors = _device_constructors()
    moves = {torch.Tensor.cuda, torch.Tensor.cpu}

    class _OnMeta(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = dict(kwargs or {})
            if func in constructors:
                kwargs["device"] = "meta"
                kwargs.pop("pin_memory", None)
            elif func in moves:
                return args[0]
            elif func is torch.Tensor.to:
                return _cast_only(args, kwargs)
            return func(*args, **kwargs)

    return _OnMeta()


def _cast_only(args: tuple, kwargs: dict) -> Any:
    """``Tensor.to`` without its device: only a dtype change is kept."""
    import torch

    tensor, rest = args[0], args[1:]
    dtype = kwargs.get("dtype")
    for a in rest:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, torch.Tensor):
            dtype = a.dtype
    return tensor if dtype is None or dtype == tensor.dtype else tensor.to(dtype=dtype)


def _tensors(value: Any) -> Iterator[Any]:
    """Tensors inside nested lists, tuples and dicts (the shapes ``get_inputs`` and ``forward`` return)."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _storage(t: Any) -> int:
    return t.untyped_storage()._cdata


class CountTimeout(Exception):
    """The count ran past its time cap."""


def _read_tracker(time_cap_s: float | None) -> Any:
    """A dispatch mode that records the storage of every tensor an operation receives, and stops the count
    once it runs past ``time_cap_s``."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    deadline = None if time_cap_s is None else time.monotonic() + time_cap_s

    class _Reads(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.read: set[int] = set()

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            if deadline is not None and time.monotonic() > deadline:
                raise CountTimeout(f"counting stopped after {time_cap_s:g} s")
            for leaf in tree_leaves((args, kwargs or {})):
                if hasattr(leaf, "untyped_storage"):
                    self.read.add(_storage(leaf))
            return func(*args, **(kwargs or {}))

    return _Reads()


def _dtype_of(tensors: list[Any]) -> str:
    import torch

    floats = {t.dtype for t in tensors if t.is_floating_point()}
    for dtype, name in ((torch.bfloat16, "bfloat16"), (torch.float16, "float16")):
        if dtype in floats:
            return name
    return "float32"


def _nbytes(tensors: Iterator[Any]) -> int:
    """Bytes of the tensors, each once, and none beyond its storage (an expanded view holds fewer)."""
    seen: dict[tuple[int, int, tuple], int] = {}
    for t in tensors:  # the same tensor twice (an input returned as is, a shared parameter) counts once
        seen[(_storage(t), t.storage_offset(), tuple(t.shape))] = min(t.numel() * t.element_size(),
                                                                     t.untyped_storage().nbytes())
    return sum(seen.values())


def _load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - a problem file, not a candidate
    return module


def count_source(source: str, name: str = "problem", time_cap_s: float | None = TIME_CAP_S) -> Count:
    """FLOPs, fewest bytes and dtype of one forward call of a KernelBench-format problem's source
    (``time_cap_s`` bounds the forward call; ``None``: no bound)."""
    try:
        import torch
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return Count(None, None, None, reason="torch is not installed")
    try:
        with _meta_mode(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            module = _load(source, f"kv_count_{name}")
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
            weights = [*model.parameters(), *model.buffers()]
            reads, counter = _read_tracker(time_cap_s), FlopCounterMode(display=False)
            with counter, reads:
                output = model(*inputs)
    except Exception as exc:  # noqa: BLE001 - any failure of the problem's own code means "not counted"
        first = (str(exc).strip().splitlines() or [""])[0]
        return Count(None, None, None, reason=f"{type(exc).__name__}: {first}"[:MAX_REASON_CHARS])
    read = [t for t in [*_tensors(inputs), *weights] if _storage(t) in reads.read]
    moved = _nbytes(iter(read)) + _nbytes(_tensors(output))  # an input updated in place is read and written
    return Count(flops=float(counter.get_total_flops()), min_bytes=float(moved),
                 dtype=_dtype_of([*_tensors(inputs), *weights]))


def with_automatic_counts(problems: list[Problem]) -> list[Problem]:
    """The problems, each without hand-written counts given automatic ones (or the reason it has none)."""
    out = []
    for p in problems:
        if p.meta.counted is not None or p.meta.not_counted is not None:
            out.append(p)
            continue
        count = count_source(p.source, f"{p.level}_{p.id}")
        if count.reason is not None:
            meta = replace(p.meta, not_counted=count.reason)
        else:
            meta = replace(p.meta, flops=count.flops, min_bytes=count.min_bytes, counted="automatic",
                           dtype=count.dtype or p.meta.dtype, not_counted=None)
        out.append(replace(p, meta=meta))
    return out
