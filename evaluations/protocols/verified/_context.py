"""What the steps of one candidate's evaluation under the verified protocol share: the evaluation's context, a
checked call of the candidate and the comparison of its outputs with the references (the judge's process compares
with :func:`verdict_of` too).

Output contract: every output must be a tensor (anything else, ``None`` or an int, is a
``runtime_error``: the candidate does not produce an answer at all) with the reference's dtype and
shape (else the trial fails and the candidate is ``incorrect``, the reason in its message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ...core import Distribution, Job, sentinel_count
from ...worker import Exhibits, ProblemModule
from . import _integrity as ig
from ._checklog import CheckLog
from ._granted import GrantedState
from ._precision import PrecisionVerdict, Tolerance, judge_precision
from ._reference import ReferenceOutputs, References


class OutputContractError(Exception):
    """The candidate returned something other than tensors: it produced no answer (a ``runtime_error``)."""


@dataclass
class Context:
    """Everything the phases of one evaluation share."""

    job: Job
    device: torch.device
    tol: Tolerance
    problem: ProblemModule
    refs: References
    candidate: Any
    log: CheckLog = field(default_factory=CheckLog)
    previous: list[Any] = field(default_factory=list)
    """Copy of the previous trial's outputs (cached-output check)."""
    previous_draw: tuple[Distribution, int, bool] | None = None
    """The previous trial's distribution and seed, and whether its output was right for them (cached-output check)."""
    exhibits: Exhibits = field(default_factory=lambda: Exhibits(None))
    """CPU copies of the trials' outputs for the judge (``_judge``)."""
    structure: list[str] = field(default_factory=list)
    """Why the candidate is ``structure-specific`` (wrong only on the timing's rolled inputs), if it is."""
    granted: GrantedState = field(default_factory=lambda: GrantedState(()))
    """Global settings the candidate may change (those the baselines run with): kept for its calls alone."""
    draws_random: bool = False
    """Whether a call moved torch's random generators on without re-seeding them (label ``draws-random``)."""

    def call(self, *inputs: Any) -> Any:
        """One call of the candidate, with the granted settings it chose in effect for it alone."""
        with self.granted.applied():
            return self.candidate(*inputs)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def clone(values: list[Any]) -> list[Any]:
    """Copies of the tensors among ``values``, the other values as they are."""
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def call_checked(ctx: Context, inputs: list[Any]) -> tuple[list[Any], int]:
    """Call the candidate once, watching global state, RNG, inputs and the output's storage: its outputs, and how
    many of their elements hold the allocator's poison (memory it never wrote)."""
    copies = clone(inputs)
    state, rng = ig.snapshot_state(), ig.rng_snapshot()
    outs = tensors(ig.outputs_of(ctx.call(*inputs)))
    _sync(ctx.device)
    ctx.log.check("global-state", ig.changed_state(state))
    moved, reseeded = ig.rng_change(rng)
    ctx.log.check("global-state", reseeded)
    ctx.draws_random = ctx.draws_random or (moved and reseeded is None)
    ctx.log.check("output-type", ig.output_type(outs, ctx.device))
    ctx.log.check("output-aliasing", ig.storage_overlap(outs, inputs))
    ctx.log.check("input-mutation", ig.mutated_inputs(inputs, copies))
    stale = sum(sentinel_count(o) for o in outs if isinstance(o, torch.Tensor))
    if stale:
        ctx.log.check("stale-memory", f"{stale} output elements hold the allocator poison: memory the candidate never wrote")
    return outs, stale


def tensors(outs: list[Any]) -> list[Any]:
    """``outs``, once every one is a tensor (a subclass included: the ``output-type`` check judges those)."""
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise OutputContractError(f"output {i} is {type(o).__module__}.{type(o).__qualname__}, not a tensor: "
                                      "the candidate returned no answer")
    return outs


def compare(ctx: Context, outs: list[Any], inputs: list[Any], tol: Tolerance) -> PrecisionVerdict:
    """Worst verdict over the outputs, judged against the references of ``inputs``."""
    ref = ctx.refs.run(inputs)
    if len(outs) == len(ref.ref64):
        for o, r64, s in zip(outs, ref.ref64, ref.strict32, strict=True):
            if isinstance(o, torch.Tensor) and o.dtype == s.dtype:
                plain = o.as_subclass(torch.Tensor) if type(o) is not torch.Tensor else o
                ctx.log.check("constant-output", ig.constant_output(plain, r64))
    return verdict_of(outs, ref, tol)


def same_answer(a: ReferenceOutputs, b: ReferenceOutputs, tol: Tolerance) -> bool:
    """Whether two draws' right answers agree to within the tolerance (``a``'s float32 reference judged against
    ``b``'s references): where they do, an output that matches one is no evidence that it is the other's."""
    return verdict_of(list(a.strict32), b, tol).passed


def verdict_of(outs: list[Any], ref: ReferenceOutputs, tol: Tolerance) -> PrecisionVerdict:
    """Worst verdict over the outputs against one draw's references (the judge's process uses it too)."""
    if len(outs) != len(ref.ref64):
        return PrecisionVerdict(False, None, None, None, None, f"{len(outs)} outputs, reference has {len(ref.ref64)}")
    verdicts: list[PrecisionVerdict] = []
    for o, r64, s, t in zip(outs, ref.ref64, ref.strict32, ref.tf32, strict=True):
        if not isinstance(o, torch.Tensor):
            return PrecisionVerdict(False, None, None, None, None, f"output is {type(o).__name__}, not a tensor")
        if o.dtype != s.dtype:
            return PrecisionVerdict(False, None, None, None, None,
                                    f"output dtype {o.dtype} differs from the reference's {s.dtype}")
        plain = o.as_subclass(torch.Tensor) if type(o) is not torch.Tensor else o
        verdicts.append(judge_precision(plain, r64, s, t, tol))
    failed = [v for v in verdicts if not v.passed]
    return failed[0] if failed else max(verdicts, key=lambda v: v.budget or 0.0)


