"""The correctness trials of one candidate under the verified protocol: one call per draw of each hidden
distribution, the allocator poisoned and the candidate run *before* the reference, with the tensor checks; what the
failures say (a wrong answer, a precision shortcut, a hidden-input shortcut); and two calls on one input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from schemas import CorrectnessCheck

from ...core import DISTRIBUTIONS, Distribution, draw, gpulock, prefill_allocator
from . import _integrity as ig
from ._context import Context, call_checked, clone, compare, same_answer
from ._precision import PrecisionVerdict, judge_precision

NEAR_LIMIT = 1e-2
"""A failing output whose worst error is under this share of the reference's largest magnitude is the right answer
computed below float32 accuracy (a precision shortcut), not a wrong answer."""


@dataclass
class Trial:
    """One correctness trial's record entry and the verdicts behind it."""

    check: CorrectnessCheck
    near: bool
    """Passed, or missed only by arithmetic below float32 accuracy."""


def _differential(ctx: Context, inputs: list[Any]) -> str | None:
    """On CUDA: does the output's finiteness depend on what the allocator's memory held before?"""
    if ctx.device.type != "cuda":
        return None
    counts = []
    for zero in (False, True):
        x = clone(inputs)
        prefill_allocator(ctx.device, zero=zero)
        outs = ig.outputs_of(ctx.call(*x))
        counts.append(sum(int((~torch.isfinite(o)).sum()) for o in outs if isinstance(o, torch.Tensor)))
    if counts[0] != counts[1]:
        return (f"output has {counts[0]} non-finite elements after the allocator was filled with NaN and "
                f"{counts[1]} after it was zeroed: it reads memory it never wrote")
    return None


def _repeats_previous(ctx: Context, outs: list[Any]) -> bool:
    prev, ctx.previous = ctx.previous, [o.detach().clone() if isinstance(o, torch.Tensor) else o for o in outs]
    return bool(prev) and len(prev) == len(outs) and all(
        isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
        and torch.equal(a.as_subclass(torch.Tensor), b.as_subclass(torch.Tensor)) for a, b in zip(prev, outs, strict=True))


def _stored_answer(ctx: Context, earlier: tuple[Distribution, int, bool] | None, inputs: list[Any]) -> bool:
    """Whether an output that repeats the previous trial's, bit for bit, and is wrong here is a stored answer: the
    previous output was the right answer for its own inputs, and that answer is not this draw's. A repeat of a wrong
    output, or of an answer both draws share, is a kernel whose output stopped depending on its input (one that
    drops a normalisation, whose signal vanishes on small inputs): a wrong answer, not a store."""
    if earlier is None or not earlier[2]:
        return False
    dist, seed, _ = earlier
    before = ctx.refs.run(draw(ctx.problem.get_inputs, dist, seed, ctx.device))
    return not same_answer(before, ctx.refs.run(inputs), ctx.tol)


def trial_name(dist: Distribution, seed: int) -> str:
    """A trial's name in the record (and the judge's key for its outputs)."""
    return f"{dist.label} seed {seed}"


def trial(ctx: Context, dist: Distribution, seed: int) -> Trial:
    inputs = draw(ctx.problem.get_inputs, dist, seed, ctx.device)
    pristine = clone(inputs)
    prefill_allocator(ctx.device)
    outs, unwritten = call_checked(ctx, inputs)
    gpulock.yield_to_timing()  # the candidate's call and the references' are steps of their own
    ctx.exhibits.add(trial_name(dist, seed), outs)
    repeated = _repeats_previous(ctx, outs)
    verdict = compare(ctx, outs, pristine, ctx.tol)
    earlier, ctx.previous_draw = ctx.previous_draw, (dist, seed, near(verdict))
    # unwritten memory that held the last answer is no store
    if not verdict.passed and repeated and not unwritten and _stored_answer(ctx, earlier, pristine):
        ctx.log.check("cached-output", f"{dist.label} seed {seed}: output is bit-identical to the previous trial's "
                      f"output on different inputs ({verdict.message}), which was the right answer for that "
                      "trial's inputs and is not for these: a stored result")
    if not verdict.passed and verdict.message and "not finite" in verdict.message:
        ctx.log.check("stale-memory", _differential(ctx, pristine))
    check = CorrectnessCheck(
        name=trial_name(dist, seed), distribution=dist.label, seed=seed, passed=verdict.passed,
        max_abs_error=verdict.max_abs_error, error_budget_used=verdict.budget,
        fp32_strict_budget_used=verdict.strict_budget, fp32_tf32_budget_used=verdict.tf32_budget,
        message=verdict.message)
    return Trial(check, near(verdict))


def near(verdict: PrecisionVerdict) -> bool:
    """Passed, or wrong but right to within :data:`NEAR_LIMIT` of the output's scale (imprecise, not another answer)."""
    return verdict.passed or (verdict.relative_error is not None and verdict.relative_error <= NEAR_LIMIT)


def classify(ctx: Context, trials: list[Trial]) -> bool:
    """Log hidden-input and precision shortcuts; True when the candidate is simply incorrect."""
    failed = [t for t in trials if not t.check.passed]
    if not failed:
        return False
    first = failed[0].check
    evidence = f"{first.distribution} seed {first.seed}: {first.message}"
    if all(t.near for t in failed):
        strict, tf32 = first.fp32_strict_budget_used, first.fp32_tf32_budget_used
        ctx.log.check("precision", evidence + f"; PyTorch float32 uses {strict or 0:.3g} (strict), {tf32 or 0:.3g} "
                      f"(TF32), and the answer is right to within {NEAR_LIMIT:g} of its scale: arithmetic below "
                      "float32 accuracy")
        return False
    if all(t.check.passed for t in trials if t.check.distribution == DISTRIBUTIONS[0].label):
        ctx.log.check("hidden-inputs", evidence + f" (passes every {DISTRIBUTIONS[0].label} draw)")
        return False
    return True


def determinism(ctx: Context, seed: int) -> None:
    inputs = draw(ctx.problem.get_inputs, DISTRIBUTIONS[0], seed, ctx.device)
    prefill_allocator(ctx.device)
    first = [o.clone() if isinstance(o, torch.Tensor) else o for o in ig.outputs_of(ctx.call(*inputs))]
    second = ig.outputs_of(ctx.call(*inputs))
    for a, b in zip(first, second, strict=False):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
            same_nan = bool((torch.isnan(a) == torch.isnan(b)).all())
            v = judge_precision(b, a.double(), a, a, ctx.tol)
            if not same_nan or (v.budget is not None and v.budget > 1.0):
                ctx.log.check("determinism", f"two calls on the same input differ (budget {v.budget or float('nan'):.3g}, "
                              f"NaN pattern {'same' if same_nan else 'different'})")
