"""Integrity checks that look at the process and at tensors: patched functions, global torch state,
threads, output type, storage overlap, input mutation, constant output, stale memory.

Each function returns ``None`` when all is well, or a short evidence string for the record. Patches
and threads that torch itself makes (a candidate that calls ``torch.compile``) are told apart by where
their code comes from (``_provenance``), never by their names. Algorithm-choice flags
(``ALGORITHM_FLAGS``) are not part of the watched state: a candidate may set them, its record names
them, and its speedups are taken against baselines timed with the same flags.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import torch

from ...core import outputs_of, tensor_bytes  # noqa: F401 - part of this module's checks
from ._granted import matmul_settings, other_precision_settings
from ._provenance import torch_function, torch_thread

WATCHED_FUNCTIONS: tuple[tuple[Any, str, str], ...] = (
    (time, "perf_counter", "time.perf_counter"), (time, "perf_counter_ns", "time.perf_counter_ns"),
    (time, "monotonic", "time.monotonic"), (time, "monotonic_ns", "time.monotonic_ns"), (time, "time", "time.time"),
    (torch, "allclose", "torch.allclose"), (torch, "isclose", "torch.isclose"), (torch, "equal", "torch.equal"),
    (torch, "isfinite", "torch.isfinite"), (torch, "abs", "torch.abs"), (torch, "max", "torch.max"),
    (torch, "manual_seed", "torch.manual_seed"), (torch.testing, "assert_close", "torch.testing.assert_close"),
    (torch.Tensor, "__sub__", "torch.Tensor.__sub__"), (torch.Tensor, "abs", "torch.Tensor.abs"),
    (torch.Tensor, "max", "torch.Tensor.max"), (torch.Tensor, "double", "torch.Tensor.double"),
    (torch.Tensor, "to", "torch.Tensor.to"), (torch.Tensor, "clone", "torch.Tensor.clone"),
    (torch.Tensor, "copy_", "torch.Tensor.copy_"), (torch.Tensor, "data_ptr", "torch.Tensor.data_ptr"),
    (torch.Tensor, "untyped_storage", "torch.Tensor.untyped_storage"), (torch.nn.Module, "__call__", "torch.nn.Module.__call__"),
    (torch.cuda, "synchronize", "torch.cuda.synchronize"), (torch.cuda, "current_stream", "torch.cuda.current_stream"),
    (torch.cuda.Event, "elapsed_time", "torch.cuda.Event.elapsed_time"), (torch.cuda.Event, "record", "torch.cuda.Event.record"),
    (torch.cuda.Event, "synchronize", "torch.cuda.Event.synchronize"), (torch.cuda.Event, "query", "torch.cuda.Event.query"),
    (torch.cuda.Event, "__init__", "torch.cuda.Event.__init__"), (torch.cuda, "Event", "torch.cuda.Event"),
    (torch.cuda, "max_memory_allocated", "torch.cuda.max_memory_allocated"),
    (torch.cuda, "reset_peak_memory_stats", "torch.cuda.reset_peak_memory_stats"),
    (threading.Thread, "start", "threading.Thread.start"),
)
"""Timing and evaluator functions whose identity must not change while a candidate runs."""


def snapshot_functions() -> dict[str, Any]:
    """Every watched function (the objects themselves: their identity is what is compared)."""
    return {name: getattr(owner, attr, None) for owner, attr, name in WATCHED_FUNCTIONS}


def replaced_functions(before: dict[str, Any]) -> str | None:
    """Evidence naming the watched functions replaced since ``before`` by anything but torch's own wrapper of
    the very function replaced (``_provenance.torch_function``: dynamo wraps ``torch.manual_seed``)."""
    now = snapshot_functions()
    changed = [name for name, old in before.items()
               if now.get(name) is not old and not torch_function(now.get(name), replaced=old)]
    return f"{', '.join(changed)} was replaced" if changed else None


ALGORITHM_FLAGS: dict[str, Any] = {
    "cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
    "cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
}
"""Flags that choose among algorithms computing the same arithmetic (``torch.backends.<name>``): a
candidate may set them; the baselines it is compared with are then timed with the same flags."""


def snapshot_flags() -> dict[str, bool]:
    """The algorithm-choice flags now."""
    return {name: bool(get()) for name, get in ALGORITHM_FLAGS.items()}


def flags_set(before: dict[str, bool]) -> tuple[tuple[str, bool], ...]:
    """(flag, value) of each algorithm-choice flag that differs from ``before``, in ``ALGORITHM_FLAGS`` order."""
    now = snapshot_flags()
    return tuple((name, now[name]) for name in ALGORITHM_FLAGS if now[name] != before[name])


def snapshot_state() -> dict[str, str]:
    """Global torch settings a candidate must leave alone (precision flags under either API, cuDNN on/off, dtype,
    threads); the algorithm-choice flags are apart (``snapshot_flags``), and a setting this PyTorch refuses to read
    is named so (``_granted``)."""
    state = {
        **matmul_settings(),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        **other_precision_settings(),
        "torch.backends.cudnn.enabled": torch.backends.cudnn.enabled,
        "default dtype": torch.get_default_dtype(),
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "grad mode": torch.is_grad_enabled(),
        "intra-op threads": torch.get_num_threads(),
    }
    return {k: str(v) for k, v in state.items()}


def rng_snapshot() -> list[tuple[str, int, torch.Tensor]]:
    """Each of torch's default generators in use, before a call: its device, seed and state (CUDA's once CUDA is
    initialised)."""
    gens = [("cpu", torch.initial_seed(), torch.random.get_rng_state())]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        gens.append(("cuda", torch.cuda.initial_seed(), torch.cuda.get_rng_state()))
    return gens


def _fresh_state(seed: int, device: str) -> torch.Tensor:
    return torch.Generator(device=device).manual_seed(seed).get_state()


def rng_change(before: list[tuple[str, int, torch.Tensor]]) -> tuple[bool, str | None]:
    """Whether a call moved torch's generators from ``before`` (``rng_snapshot``), and evidence that it re-seeded
    them (the next draws predictable), or ``None``.

    Each generator is judged on its own. One that only drew random numbers (warm-up data, dropout) moved on from
    where it was: its seed stays, and its state is not the one its seed starts from. A re-seeding changes the seed,
    or puts a generator that moved back at the start of its seed (``torch.manual_seed`` with the seed already in
    use). A generator the call did not touch is no evidence, even where it still stands at the start of its seed
    (a CUDA draw leaves a CPU generator that never drew where it was)."""
    was = {device: (seed, state) for device, seed, state in before}
    moved = False
    for device, seed, state in rng_snapshot():
        if device not in was:  # CUDA initialised by the call: its generator starts at its seed
            moved = moved or not bool(torch.equal(state, _fresh_state(seed, device)))
            continue
        old_seed, old_state = was[device]
        if seed != old_seed:
            return True, "torch random generator re-seeded during a call (its seed changed)"
        if bool(torch.equal(state, old_state)):
            continue
        moved = True
        if bool(torch.equal(state, _fresh_state(seed, device))):
            return True, "torch random generator re-seeded during a call (its state put back at the start of its seed)"
    return moved, None


def changed_state(before: dict[str, str]) -> str | None:
    """Evidence naming global settings that differ from ``before``."""
    now = snapshot_state()
    diffs = [f"{k} {before[k]} -> {now.get(k)}" for k in before if now.get(k) != before[k]]
    return "changed " + "; ".join(diffs) if diffs else None


def python_threads() -> set[int]:
    """Identifiers of the live Python threads."""
    return {t.ident or 0 for t in threading.enumerate()}


def new_threads(before: set[int]) -> str | None:
    """Evidence of threads started since ``before`` that are still alive, torch's own excepted
    (``_provenance.torch_thread``: started by torch's code, running only torch's and library code)."""
    extra = [t for t in threading.enumerate()
             if (t.ident or 0) not in before and t.is_alive() and not torch_thread(t)]
    if not extra:
        return None
    names = ", ".join(t.name for t in extra[:5])
    return f"{len(extra)} thread(s) started by the candidate still running after its calls: {names}"


def output_type(values: Iterable[Any], device: torch.device) -> str | None:
    """Evidence when an output is not exactly a materialised, strided ``torch.Tensor`` on the device."""
    for i, v in enumerate(values):
        if type(v) is not torch.Tensor:
            return f"output {i} is {type(v).__module__}.{type(v).__qualname__}, not exactly torch.Tensor"
        if v.layout != torch.strided or v.device.type != device.type or v.is_meta:
            return f"output {i} is not a materialised strided tensor on {device.type} ({v.layout}, {v.device})"
    return None


def _span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    start = storage.data_ptr()
    return start, start + storage.nbytes()


def storage_overlap(outs: list[Any], inputs: list[Any]) -> str | None:
    """Evidence when an output's storage overlaps an input's storage."""
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor) or o.numel() == 0:
            continue
        o_lo, o_hi = _span(o)
        for j, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and x.numel() and x.device == o.device:
                x_lo, x_hi = _span(x)
                if o_lo < x_hi and x_lo < o_hi:
                    return f"output {i} storage overlaps input {j}"
    return None


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return bool((a == b).all())


def mutated_inputs(inputs: list[Any], copies: list[Any]) -> str | None:
    """Evidence when an input differs from the copy taken before the call."""
    changed = [str(j) for j, (x, c) in enumerate(zip(inputs, copies, strict=True))
               if isinstance(x, torch.Tensor) and not _same(x, c)]
    return f"the call changed input {', '.join(changed)}" if changed else None


def constant_output(out: torch.Tensor, ref: torch.Tensor) -> str | None:
    """Evidence when the output is constant (e.g. all zeros) while the reference is not."""
    if out.numel() < 2 or out.shape != ref.shape or not out.is_floating_point():
        return None
    finite = torch.isfinite(ref)
    if not bool(finite.any()):
        return None
    r = ref.double()[finite]
    ref_range = float(r.max() - r.min())
    scale = float(r.abs().max())
    if ref_range <= 1e-9 * max(scale, 1e-30):
        return None
    o = out.detach()
    if bool((o == o.reshape(-1)[0]).all()):
        return f"output is constant ({float(o.reshape(-1)[0]):.3g}) while the reference spans {ref_range:.3g}"
    return None
