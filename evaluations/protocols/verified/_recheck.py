"""The re-check after timing under the verified protocol: the outputs of the timed calls judged against the
references of their inputs, and what a wrong one says (a stale answer, a kernel broken after timing, or one that
relies on the structure of the problem's own draws)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from ...core import DISTRIBUTIONS, draw, fresh_seeds
from ...timing import TimingRun
from . import _integrity as ig
from ._context import Context, clone, compare, same_answer, tensors, verdict_of
from ._precision import PrecisionVerdict
from ._setup import Settings
from ._trials import near


def _storages(value: Any) -> set[int]:
    return {o.untyped_storage().data_ptr() for o in ig.outputs_of(value) if type(o) is torch.Tensor}


def recheck(ctx: Context, run: TimingRun, sets: list[list[Any]], settings: Settings) -> None:
    """Judge each timed call's output that still holds its own call's answer. A buffer the most recent call
    returned holds that call's answer, and is judged as the answer for its set (``last_set``). A buffer several
    earlier calls returned but the most recent call did not (a kernel that stopped reusing it, e.g. one whose own
    CUDA graph gave way to fresh outputs) holds the answer of whichever call wrote it last. That is no evidence
    either way, so it is not read as a stale answer."""
    after = run.latest_output is not None  # the most recent call came after the timed ones
    latest = _storages(run.latest_output if after else run.last_outputs.get(run.last_set))
    seen: Counter[int] = Counter()
    for out in run.last_outputs.values():
        seen.update(_storages(out))
    reused = {p for p, n in seen.items() if n > 1}
    for k, out in sorted(run.last_outputs.items()):
        storages = _storages(out)
        if storages & latest and (after or k != run.last_set):
            continue  # the most recent call wrote this buffer since: its contents are that call's
        if storages & reused and not storages & latest:
            continue  # a buffer several calls returned and the most recent did not: whose answer it holds is unknown
        _judge(ctx, out, sets, k, settings, "a timed call")
    if after and latest & seen.keys():  # the buffers the timed calls returned now hold the most recent call's answer
        _judge(ctx, run.latest_output, sets, run.last_set, settings, "the last call, after timing, in a buffer the timed calls returned,")


def _judge(ctx: Context, out: Any, sets: list[list[Any]], k: int, settings: Settings, what: str) -> None:
    outs = tensors(ig.outputs_of(out))
    ctx.log.check("output-type", ig.output_type(outs, ctx.device))
    v = compare(ctx, outs, sets[k], ctx.tol)
    if not v.passed:
        _timed_output_wrong(ctx, outs, sets, k, v, settings, what)


def _timed_output_wrong(ctx: Context, outs: list[Any], sets: list[list[Any]], k: int, v: PrecisionVerdict,
                        settings: Settings, what: str = "a timed call") -> None:
    """A timed call's output is wrong for its (refreshed) inputs: a stale answer, a kernel broken after timing, or a
    kernel that relies on the structure of the problem's inputs, which rolling the values by one element between
    uses (``refresh_in_place``) does not keep (``torch.triu`` inputs are no longer triangular). Stale: the output
    matches the reference of the set's earlier contents (its first draw, or its values before the last roll) where
    that answer is not also the present one, or the candidate called again on a copy of the same values is right
    (the timed calls skipped the work: a graph capture that launched nothing, a cache keyed on the input buffers).
    Broken: wrong on a fresh draw now. Both
    are ``recheck-after-timing``; the rest is labelled ``structure-specific``, its timing kept. A candidate whose
    trials already failed ``precision`` and whose timed answer is wrong by no more than imprecision is none of
    these: the trials' check holds that finding, and repeating it here would read as a change after timing."""
    if "precision" in ctx.log.failed and near(v):
        return
    evidence = f"output of {what} on input set {k}: {v.message}"
    first = draw(ctx.problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[1 + k], ctx.device)
    before = [x.reshape(-1).roll(-1).reshape(x.shape) if isinstance(x, torch.Tensor) and x.is_floating_point()
              and x.numel() > 1 else x for x in sets[k]]
    current = ctx.refs.run(sets[k])  # the present answer: beside the earlier ones, and for the call on a copy
    for label, earlier in (("its first draw", first), ("its values before the last refresh", before)):
        then = ctx.refs.run(earlier)
        # an earlier answer that is also (to within the tolerance) this one's is no evidence of staleness: the problem's
        # output hardly depends on these inputs, and a wrong output near it is wrong, not stale
        if verdict_of(outs, then, ctx.tol).passed and not same_answer(then, current, ctx.tol):
            ctx.log.check("recheck-after-timing", f"{evidence}; it is the answer for {label}: a stale answer")
            return
    now = verdict_of(tensors(ig.outputs_of(ctx.call(*clone(sets[k])))), current, ctx.tol)
    if now.passed:
        ctx.log.check("recheck-after-timing", f"{evidence}; called again on a copy of the same inputs it is right: "
                                              "the timed call did not compute its answer (a stale answer)")
        return
    fresh = draw(ctx.problem.get_inputs, DISTRIBUTIONS[0], fresh_seeds(1)[0], ctx.device)
    again = verdict_of(tensors(ig.outputs_of(ctx.call(*clone(fresh)))), ctx.refs.run(fresh), ctx.tol)
    if not again.passed:
        ctx.log.check("recheck-after-timing", f"{evidence}; after timing it is wrong on a fresh draw too: {again.message}")
        return
    ctx.structure.append(f"input set {k} of the timing, its values rolled by one element between uses, no longer has "
                         f"the structure of the problem's own draws; there the candidate's output is wrong ({v.message}), "
                         "while it is right on every fresh draw: it relies on that structure")
