"""The verified protocol's judge (in a worker that never imported candidate code): the reported trials' outputs
ruled on against references of inputs it draws itself, and the outside batch's fingerprints."""

from __future__ import annotations

from typing import Any

import torch

from schemas import CorrectnessCheck, pinned

from ...core import DISTRIBUTIONS, Judgement, JudgeRequest, Piecewise, draw, gpulock, piecewise, to_device
from ...worker import judge_outer, load_problem, rule_trials
from ._context import verdict_of
from ._precision import Tolerance, tolerance_for
from ._reference import References
from ._setup import Settings, build_reference, configure, seed_all

TOLERANCE = Tolerance(pinned("verified").atol, pinned("verified").rtol)
"""The newest version's tolerances (the protocol table's)."""


def _expected(settings: Settings) -> list[tuple[str, int]]:
    per = len(settings.trial_seeds) // len(DISTRIBUTIONS)
    return [(d.label, settings.trial_seeds[i * per + j]) for i, d in enumerate(DISTRIBUTIONS) for j in range(per)]


def judge(request: JudgeRequest) -> Judgement:
    """Rule on a verified evaluation's reported trials and its outside batch."""
    job = request.job
    device = configure(job.device)
    gpulock.yield_to_timing()  # a timing of another worker that waits goes first
    settings = Settings.of(job.options, job.overrides)
    problem = load_problem(job)
    seed_all(settings.init_seed)
    refs = References(build_reference(problem.model, to_device(problem.get_init_inputs(), device), device))
    tol = tolerance_for(job.problem.meta.dtype, TOLERANCE)
    out = Judgement()
    reported, expected = [(c.distribution, c.seed) for c in request.reported], _expected(settings)
    if reported != expected:
        out.seeds_fault = (f"{len(reported)} trials under seeds {[s for _, s in reported][:4]}..., where this evaluation "
                           f"draws {len(expected)} under the seeds the runner gave it")
    dists = {d.label: d for d in DISTRIBUTIONS}

    def rule(_: int, check: CorrectnessCheck) -> tuple[list[Any], Any] | None:
        dist = dists.get(check.distribution)
        if dist is None:
            return None
        ref = refs.run(draw(problem.get_inputs, dist, check.seed, device))

        def decide(outs: list[torch.Tensor]) -> tuple[bool, float | None, str | None]:
            v = verdict_of([o.to(device) for o in outs], ref, tol)
            return v.passed, v.budget, v.message

        return ref.strict32, decide

    rule_trials(out, request.reported, request.evidence, rule)
    if request.outer_plan is not None and request.fingerprints is not None:
        out.outer_mismatch, out.outer_overhead_s = judge_outer(
            lambda x: _reference(refs, x, tol), problem.get_inputs, device, request.outer_plan, request.fingerprints,
            graphs=request.outer_plan.get("method") == "cuda_graph")
    return out


def _reference(refs: References, inputs: list[Any], tol: Tolerance) -> tuple[list[torch.Tensor], list[Piecewise]]:
    """float64 reference outputs and each element's allowed error: the tolerance, or three times what PyTorch's
    own float32 arithmetic (strict or TF32) misses by, whichever is larger."""
    ref = refs.run(inputs)

    def allowed(r64: torch.Tensor, s: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        base = tol.atol + tol.rtol * r64.abs()
        return torch.maximum(base, 3 * torch.maximum((s.double() - r64).abs(), (t.double() - r64).abs()))

    # made a piece at a time as the fingerprints' bounds are summed: a whole-size float64 tolerance (and its
    # temporaries) of a large output would crowd the device
    return list(ref.ref64), [piecewise(allowed, r64, s, t) for r64, s, t in zip(ref.ref64, ref.strict32, ref.tf32, strict=True)]
