"""The precision policy: a candidate is never held to more than PyTorch's own float32 achieves.

Errors are measured as an *error budget used*: max over elements of |out - ref| / (atol + rtol |ref|)
against a float64 reference (1.0 = exactly at the tolerance). PyTorch's float32 output, strict (TF32
off) and with TF32 on, is measured the same way. A candidate passes when its budget is <= 1, or,
where PyTorch's float32 itself exceeds the budget, when it is at most twice the worse of the two.
Where PyTorch's float32 output is not finite (overflow) the candidate must not be finite either.

The same three errors name a passing candidate's precision class (``precision_class_of``):
``float32-like``, ``TF32-like`` or ``reduced`` (less precise than PyTorch's TF32 path).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from schemas import CorrectnessCheck, PrecisionClass

from ...core import Maximum, error_maxima, pieces

ALLOWANCE = 2.0
"""How many times PyTorch's own worse float32 error a candidate may use when that exceeds the budget."""


@dataclass(frozen=True)
class Tolerance:
    """Absolute and relative tolerance of one comparison."""

    atol: float
    rtol: float


@dataclass(frozen=True)
class PrecisionVerdict:
    """Outcome of comparing one output tensor under the policy; budgets are ``None`` when undefined."""

    passed: bool
    budget: float | None
    strict_budget: float | None
    tf32_budget: float | None
    max_abs_error: float | None
    message: str | None = None
    relative_error: float | None = None
    """max |out - ref| over max |ref|: how far off the answer is at the scale of the output."""


def tolerance_for(dtype: str, default: Tolerance) -> Tolerance:
    """Tolerance for a problem dtype: the protocol's for float32 (and wider), looser for half types."""
    if dtype in ("float16", "half"):
        return Tolerance(1e-2, 1e-2)
    if dtype in ("bfloat16",):
        return Tolerance(2e-2, 2e-2)
    return default


def budget_used(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, mask: torch.Tensor | None = None) -> float:
    """max |out - ref| / (atol + rtol |ref|) over the elements selected by ``mask`` (all by default), in float64 a
    piece at a time."""
    return _errors(out, ref, tol, mask)[1]


def _errors(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, mask: torch.Tensor | None) -> tuple[float, float]:
    """(max |out - ref|, :func:`budget_used`) in one pass, 0 for both where ``mask`` selects nothing."""
    max_abs, budget = error_maxima(out, ref, tol.atol, tol.rtol, mask)
    return 0.0 if max_abs is None else max_abs, 0.0 if budget is None else budget


def _scale(ref: torch.Tensor, mask: torch.Tensor) -> float:
    """The largest |ref| over the elements ``mask`` selects (0 when it selects none)."""
    worst = Maximum()
    for r, m in pieces(ref, mask):
        worst.add(r.double()[m].abs())
    return 0.0 if worst.value is None else worst.value


def _finite_or_none(value: float) -> float | None:
    return value if value == value and abs(value) != float("inf") else None


def judge_precision(out: torch.Tensor, ref64: torch.Tensor, strict32: torch.Tensor, tf32: torch.Tensor,
                    tol: Tolerance) -> PrecisionVerdict:
    """Judge one candidate output against the float64 reference and PyTorch's two float32 outputs."""
    if tuple(out.shape) != tuple(ref64.shape):
        return PrecisionVerdict(False, None, None, None, None,
                                f"output shape {tuple(out.shape)} differs from reference shape {tuple(ref64.shape)}")
    out, ref64 = out.detach().to(ref64.device), ref64.detach()
    strict32, tf32 = strict32.detach().to(ref64.device), tf32.detach().to(ref64.device)
    torch_finite = torch.isfinite(strict32) & torch.isfinite(tf32) & torch.isfinite(ref64)
    torch_overflow = ~torch.isfinite(strict32) & ~torch.isfinite(tf32)
    out_finite = torch.isfinite(out)
    strict_b = budget_used(strict32, ref64, tol, torch_finite)
    tf32_b = budget_used(tf32, ref64, tol, torch_finite)
    worse = max(strict_b, tf32_b)
    bad_nonfinite = int((torch_finite & ~out_finite).sum())
    if bad_nonfinite:
        return PrecisionVerdict(False, None, _finite_or_none(strict_b), _finite_or_none(tf32_b), None,
                                f"output is not finite at {bad_nonfinite} elements where PyTorch float32 is finite")
    compared = torch_finite
    max_abs, budget = _errors(out, ref64, tol, compared)
    missing_overflow = int((torch_overflow & out_finite).sum())
    allowed = 1.0 if worse <= 1.0 else ALLOWANCE * worse
    message = None
    if missing_overflow:
        message = f"output is finite at {missing_overflow} elements where PyTorch float32 overflows"
    elif budget > allowed:
        message = f"error budget {budget:.3g} used of {allowed:.3g}"
        if worse > 1.0:
            message += f" (PyTorch float32 itself uses {worse:.3g})"
    scale = _scale(ref64, compared)
    relative = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    return PrecisionVerdict(message is None, _finite_or_none(budget), _finite_or_none(strict_b),
                            _finite_or_none(tf32_b), _finite_or_none(max_abs), message, _finite_or_none(relative))


CLASS_MARGIN = 3.0
"""How many times PyTorch's own error a candidate may use and still be classed with that arithmetic. Two
implementations of one precision differ in their worst element by up to about twice (honest float32
reductions were seen at 1.9x strict float32); bfloat16 arithmetic is about 8x TF32's (3 bits fewer)."""
CLASS_FLOOR = 0.01
"""An error budget under which a candidate is float32-like whatever PyTorch's own errors are: 1% of the
tolerance is hundreds of float32 rounding steps, far below TF32's rounding (about half the tolerance)."""


def precision_class(budget: float, strict: float | None, tf32: float | None) -> PrecisionClass:
    """The precision class of one check: the candidate's error budget against PyTorch's strict float32 and
    TF32 budgets on the same inputs (``None``: not measured, taken as 0)."""
    s, t = strict or 0.0, tf32 or 0.0
    if budget <= max(CLASS_MARGIN * s, CLASS_FLOOR):
        return "float32-like"
    if budget <= max(CLASS_MARGIN * max(s, t), CLASS_FLOOR):
        return "TF32-like"
    return "reduced"


def precision_class_of(checks: list[CorrectnessCheck]) -> PrecisionClass | None:
    """The class of a candidate: that of its worst check (the largest candidate error budget). ``None`` when a
    check failed (the candidate is not within the policy, so it has no class) or no check has a budget."""
    if not checks or any(not c.passed for c in checks):
        return None
    measured = [c for c in checks if c.error_budget_used is not None]
    if not measured:
        return None
    worst = max(measured, key=lambda c: c.error_budget_used or 0.0)
    return precision_class(worst.error_budget_used or 0.0, worst.fp32_strict_budget_used, worst.fp32_tf32_budget_used)
