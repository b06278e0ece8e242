"""The verified protocol's correctness trials on the CPU, with the protocol's own trial code and a zoo problem: what
a repeated output says. A kernel that returns a stored answer repeats a right answer on inputs whose answer differs
(``cached-output``, hacked); a kernel whose output stops depending on its input repeats a wrong one, which is a
wrong answer (``incorrect``), not a store (CUDA-L1's MobileNetV1, whose convolutions skip the batch norm, repeats
the fully connected layer's bias on small inputs)."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from evaluations.core import DISTRIBUTIONS, draw
from evaluations.protocols.verified._context import Context, compare
from evaluations.protocols.verified._precision import Tolerance
from evaluations.protocols.verified._recheck import _timed_output_wrong
from evaluations.protocols.verified._reference import References
from evaluations.protocols.verified._trials import classify, trial
from evaluations.suite import load_problem_module
from evaluations.zoo import ZOO_DIR

TOL = Tolerance(1e-3, 1e-3)
SEEDS = (11, 12, 13)


def _trials(make_candidate):
    problem = load_problem_module(ZOO_DIR / "problems" / "5_bias_gelu_residual.py")
    torch.manual_seed(0)
    model = problem.Model(*problem.get_init_inputs())
    ctx = Context(job=None, device=torch.device("cpu"), tol=TOL, problem=problem, refs=References(model),
                  candidate=make_candidate(model))
    with torch.no_grad():
        trials = [trial(ctx, d, seed) for d in DISTRIBUTIONS for seed in SEEDS]
    return ctx, trials


def _quantised(model):
    """The problem computed on its input rounded to steps of 0.5: wrong on every draw, and on the small inputs of
    D3 (x0.01) every value rounds to zero, so the output is the same, bit for bit, whatever the draw."""
    def call(x):
        q = torch.round(x * 2) / 2
        return torch.nn.functional.gelu(q * model.weight + model.bias) * 0.5 + q
    return call


def _shape_cache(model):
    """The right answer on the first call, then that answer again for every input of its shape: a stored result."""
    stored = {}

    def call(x):
        if x.shape not in stored:
            stored[x.shape] = model(x).detach().clone()
        return stored[x.shape].clone()
    return call


def test_a_wrong_output_that_repeats_on_small_inputs_is_a_wrong_answer_not_a_stored_result():
    ctx, trials = _trials(_quantised)
    assert not any(t.check.passed for t in trials)
    d3 = [t for t in trials if t.check.distribution == "D3 x0.01"]
    assert len(d3) == 3 and len({t.check.max_abs_error for t in d3}) == 3  # wrong on each draw, by its own margin
    assert "cached-output" not in ctx.log.failed, ctx.log.failed
    assert classify(ctx, trials)  # plainly wrong: the verdict is incorrect (wrong-answer)


def test_a_stored_right_answer_repeated_on_other_inputs_is_still_a_cached_output():
    ctx, trials = _trials(_shape_cache)
    assert trials[0].check.passed and not trials[1].check.passed
    assert "cached-output" in ctx.log.failed
    assert "was the right answer for that trial's inputs" in ctx.log.failed["cached-output"]


# the re-check after timing: an earlier answer is evidence of staleness only where it is not also the present one

class _Affine(torch.nn.Module):
    def __init__(self, slope: float) -> None:
        super().__init__()
        self.slope = slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1.0 + self.slope * x


def _recheck_evidence(slope: float, offset: float) -> str:
    """The re-check's finding for a timed output equal to the first draw's answer plus ``offset``, on a problem
    ``1 + slope * x`` whose input set 0 was refreshed (rolled by one element) since that draw."""
    problem = SimpleNamespace(get_inputs=lambda: [torch.randn(64, 32)])
    model = _Affine(slope)
    settings = SimpleNamespace(extra_seeds=[5, 6, 7])
    first = draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[1], torch.device("cpu"))
    stored = [model(first[0]) + offset]
    ctx = Context(job=None, device=torch.device("cpu"), tol=TOL, problem=problem, refs=References(model),
                  candidate=lambda x: stored[0].clone())
    sets = [[first[0].reshape(-1).roll(1).reshape(first[0].shape)]]
    v = compare(ctx, stored, sets[0], TOL)
    assert not v.passed
    _timed_output_wrong(ctx, stored, sets, 0, v, settings)
    return ctx.log.failed["recheck-after-timing"]


def test_a_timed_output_that_is_the_first_draws_answer_is_a_stale_answer():
    assert _recheck_evidence(slope=1.0, offset=0.0).endswith("it is the answer for its first draw: a stale answer")


def test_an_earlier_answer_the_present_one_shares_is_no_evidence_of_staleness():
    """The problem's answer hardly depends on its input (as a softmax over nearly constant rows): the output, just
    outside the tolerance of the present answer and inside that of the first draw's, is wrong, and it is wrong on a
    fresh draw too, but nothing shows it is the first draw's answer rather than the present one's."""
    evidence = _recheck_evidence(slope=1e-6, offset=2e-3 - 4e-7)
    assert "stale" not in evidence and "wrong on a fresh draw too" in evidence, evidence
