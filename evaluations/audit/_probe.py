"""What the audit measures about one problem's reference, run inside an audit worker process.

``probe_problem`` builds the reference, calls it on several input draws, redraws each input alone,
perturbs the weights, repeats a call, and (on a GPU) times it; it returns plain numbers
(``Probe``), so the findings are pure functions of them (``evaluations.audit._findings``).
Every comparison is made twice: bitwise, and within the standard protocol's tolerance (a
difference inside it is one a candidate could ignore and still pass).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

MODEL_SEED = 42
"""Seed before building the model, as KernelBench does."""
DRAW_SEEDS = (1001, 1002, 1003, 1004, 1005)
"""Seeds of the input draws (``draws`` of them are used)."""
CALL_SEED = 7
"""Seed set before every reference call, so random ops (dropout) repeat unless reseeded on purpose."""
TIMED_CALLS = 20
SCALING_MAX_INPUT_BYTES = 2 * 1024**3
"""Inputs larger than this are not doubled for the scaling check (it would risk running out of memory)."""


@dataclass(frozen=True)
class Same:
    """Whether two outputs agree bitwise and within tolerance, and by how much they differ."""

    exact: bool
    close: bool
    max_diff: float


@dataclass
class Probe:
    """Measurements of one reference, all plain numbers."""

    output_shapes: list[list[int]] = field(default_factory=list)
    draw_max_abs: list[float] = field(default_factory=list)
    draw_all_zero: list[bool] = field(default_factory=list)
    draw_finite: list[bool] = field(default_factory=list)
    draw_uniform: list[Same] = field(default_factory=list)
    """Each draw's output against its own first element broadcast (only for outputs of more than one element)."""
    across_draws: list[Same] = field(default_factory=list)
    """Draw k's output against draw 0's."""
    inputs: dict[int, Same] = field(default_factory=dict)
    """Float input index -> output with only that input redrawn, against draw 0."""
    weights: Same | None = None
    """Output with every parameter perturbed, against draw 0 (``None``: the model has no parameters)."""
    repeat: Same | None = None
    """Draw 0 called again with the same seed."""
    reseeded: Same | None = None
    """Draw 0 called again after a different seed (random ops such as dropout)."""
    eager_ms: float | None = None
    doubled_ms: float | None = None
    timing_note: str | None = None
    timed_on: str = "cpu"


def _flat(out: Any) -> list[Any]:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [torch.as_tensor(out)]


def compare(a: list[Any], b: list[Any], atol: float) -> Same:
    """Bitwise and tolerance comparison of two flattened outputs (NaN equals NaN)."""
    import torch

    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b, strict=True)):
        return Same(exact=False, close=False, max_diff=float("inf"))
    exact, close, worst = True, True, 0.0
    for x, y in zip(a, b, strict=True):
        if not x.is_floating_point():
            x, y = x.double(), y.double()
        exact = exact and bool(torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(), y.nan_to_num()))
        close = close and bool(torch.allclose(x, y, atol=atol, rtol=atol, equal_nan=True))
        if x.numel():
            diff = (x.float() - y.float()).abs().nan_to_num(nan=0.0, posinf=float("inf"))
            worst = max(worst, float(diff.max()))
    return Same(exact=exact, close=close, max_diff=worst)


def _uniform(outs: list[Any], atol: float) -> Same | None:
    if sum(o.numel() for o in outs) <= 1:
        return None
    return compare(outs, [o.flatten()[0].expand_as(o) if o.numel() else o for o in outs], atol)


def _load(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "kv_audit_problem"}
    exec(compile(source, "<problem>", "exec"), namespace)  # noqa: S102 - problem sources are trusted suite inputs
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in namespace:
            raise ValueError(f"problem defines no {name}")
    return namespace


def _call(model: Any, inputs: list[Any], seed: int = CALL_SEED) -> list[Any]:
    import torch

    torch.manual_seed(seed)
    with torch.no_grad():
        return _flat(model(*inputs))


def _draw(ns: dict[str, Any], seed: int, device: str) -> list[Any]:
    import torch

    torch.manual_seed(seed)
    with torch.device(device):
        return list(ns["get_inputs"]())


def _time_ms(model: Any, inputs: list[Any], device: str) -> float:
    """Median of per-call times: CUDA events on a GPU, the host clock on a CPU."""
    import torch

    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        samples = []
        for _ in range(TIMED_CALLS if device == "cuda" else 3):
            if device == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                model(*inputs)
                end.record()
                torch.cuda.synchronize()
                samples.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                model(*inputs)
                samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def _doubled(inputs: list[Any]) -> list[Any] | None:
    import torch

    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    if not tensors or any(x.dim() == 0 for x in tensors) or sum(x.nbytes for x in tensors) > SCALING_MAX_INPUT_BYTES:
        return None
    return [torch.cat([x, x]) if isinstance(x, torch.Tensor) else x for x in inputs]


def probe_problem(source: str, device: str, draws: int, atol: float, timing: bool) -> Probe:
    """Run every audit measurement of one problem's reference on ``device``."""
    import torch

    ns = _load(source)
    torch.manual_seed(MODEL_SEED)
    with torch.device(device):
        model = ns["Model"](*ns["get_init_inputs"]())
    probe = Probe(timed_on=device)
    base_inputs = _draw(ns, DRAW_SEEDS[0], device)
    base = _call(model, base_inputs)
    probe.output_shapes = [list(o.shape) for o in base]
    for k in range(draws):
        outs = base if k == 0 else _call(model, _draw(ns, DRAW_SEEDS[k], device))
        floats = [o.float() for o in outs]
        probe.draw_max_abs.append(max((float(o.abs().nan_to_num(nan=float("inf")).max()) for o in floats if o.numel()), default=0.0))
        probe.draw_all_zero.append(all(bool((o == 0).all()) for o in floats))
        probe.draw_finite.append(all(bool(torch.isfinite(o).all()) for o in floats))
        uniform = _uniform(outs, atol)
        if uniform is not None:
            probe.draw_uniform.append(uniform)
        if k:
            probe.across_draws.append(compare(base, outs, atol))
        del outs, floats
    other = _draw(ns, DRAW_SEEDS[1], device)
    for i, x in enumerate(base_inputs):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 0:
            mixed = list(base_inputs)
            mixed[i] = other[i]
            probe.inputs[i] = compare(base, _call(model, mixed), atol)
    del other
    probe.repeat = compare(base, _call(model, base_inputs), atol)
    probe.reseeded = compare(base, _call(model, base_inputs, seed=CALL_SEED + 1), atol)
    if timing:
        _measure(probe, model, base_inputs, device)
    params = [p for p in model.parameters() if p.is_floating_point()]
    if params:
        torch.manual_seed(MODEL_SEED + 1)
        with torch.no_grad():
            for p in params:
                p.add_(torch.randn_like(p) * (0.1 * p.abs().mean() + 0.1))
        probe.weights = compare(base, _call(model, base_inputs), atol)
    return probe


def _measure(probe: Probe, model: Any, inputs: list[Any], device: str) -> None:
    import torch

    probe.eager_ms = _time_ms(model, inputs, device)
    if device != "cuda":
        return
    doubled = _doubled(inputs)
    if doubled is None:
        probe.timing_note = "inputs not doubled for the scaling check (scalar inputs or over 2 GiB)"
        return
    try:
        probe.doubled_ms = _time_ms(model, doubled, device)
    except torch.cuda.OutOfMemoryError:
        probe.timing_note = "doubling the batch ran out of memory; scaling not checked"
    except Exception as exc:  # noqa: BLE001 - a model that refuses another batch size is not an error
        probe.timing_note = f"model does not accept a doubled first dimension ({type(exc).__name__}); scaling not checked"
    finally:
        del doubled
        torch.cuda.empty_cache()
