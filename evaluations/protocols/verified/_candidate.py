"""Evaluation of one candidate under the verified protocol (inside a worker process).

Order: snapshots of functions, global state, algorithm-choice flags and threads; candidate import and
construction; correctness trials over the hidden distributions, each with a fresh draw, the allocator
poisoned, the candidate run *before* the reference, and the tensor checks; two calls on one input;
timing on rotated, refreshed inputs; re-check of the timed calls' outputs; the held-out shape re-check;
final snapshots; roofline; precision class and labels.

Output contract: every output must be a tensor (anything else, ``None`` or an int, is a
``runtime_error``: the candidate does not produce an answer at all) with the reference's dtype and
shape (else the trial fails and the candidate is ``incorrect``, the reason in its message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from schemas import AlgorithmFlag, CorrectnessCheck, pinned

from ...core import (
    DISTRIBUTIONS,
    CandidateOutcome,
    Distribution,
    Job,
    draw,
    fresh_seeds,
    gpulock,
    prefill_allocator,
    sentinel_count,
    to_device,
)
from ...timing import TimingRun, time_calls
from ...worker import Exhibits, ProblemModule, load_candidate, load_problem, outer_batch
from . import VERSION, _provenance
from . import _integrity as ig
from ._checklog import CheckLog
from ._granted import GrantedState
from ._precision import PrecisionVerdict, Tolerance, judge_precision, precision_class_of, tolerance_for
from ._reference import ReferenceOutputs, References
from ._scan import scan
from ._setup import Settings, build_reference, configure, seed_all, timing_sets
from ._shapes import LABEL as SHAPE_LABEL
from ._shapes import check_shapes
from ._sol import sol_evidence
from ._verdict import Verdict, verdict

PIN = pinned("verified", VERSION)
"""What the version this module runs pins: its tolerances, which checks find a wrong answer, the granted settings."""
NEAR_LIMIT = 1e-2
"""A failing output whose worst error is under this share of the reference's largest magnitude is the right answer
computed below float32 accuracy (a precision shortcut), not a wrong answer."""


class OutputContractError(Exception):
    """The candidate returned something other than tensors: it produced no answer (a ``runtime_error``)."""


@dataclass
class Trial:
    """One correctness trial's record entry and the verdicts behind it."""

    check: CorrectnessCheck
    near: bool
    """Passed, or missed only by arithmetic below float32 accuracy."""


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


def _clone(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def _call_checked(ctx: Context, inputs: list[Any]) -> tuple[list[Any], int]:
    """Call the candidate once, watching global state, RNG, inputs and the output's storage: its outputs, and how
    many of their elements hold the allocator's poison (memory it never wrote)."""
    copies = _clone(inputs)
    state, rng = ig.snapshot_state(), ig.rng_snapshot()
    outs = _tensors(ig.outputs_of(ctx.call(*inputs)))
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


def _tensors(outs: list[Any]) -> list[Any]:
    """``outs``, once every one is a tensor (a subclass included: the ``output-type`` check judges those)."""
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise OutputContractError(f"output {i} is {type(o).__module__}.{type(o).__qualname__}, not a tensor: "
                                      "the candidate returned no answer")
    return outs


def _compare(ctx: Context, outs: list[Any], inputs: list[Any], tol: Tolerance) -> PrecisionVerdict:
    """Worst verdict over the outputs, judged against the references of ``inputs``."""
    ref = ctx.refs.run(inputs)
    if len(outs) == len(ref.ref64):
        for o, r64, s in zip(outs, ref.ref64, ref.strict32, strict=True):
            if isinstance(o, torch.Tensor) and o.dtype == s.dtype:
                plain = o.as_subclass(torch.Tensor) if type(o) is not torch.Tensor else o
                ctx.log.check("constant-output", ig.constant_output(plain, r64))
    return verdict_of(outs, ref, tol)


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


def _differential(ctx: Context, inputs: list[Any]) -> str | None:
    """On CUDA: does the output's finiteness depend on what the allocator's memory held before?"""
    if ctx.device.type != "cuda":
        return None
    counts = []
    for zero in (False, True):
        x = _clone(inputs)
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


def trial_name(dist: Distribution, seed: int) -> str:
    """A trial's name in the record (and the judge's key for its outputs)."""
    return f"{dist.label} seed {seed}"


def _trial(ctx: Context, dist: Distribution, seed: int) -> Trial:
    inputs = draw(ctx.problem.get_inputs, dist, seed, ctx.device)
    pristine = _clone(inputs)
    prefill_allocator(ctx.device)
    outs, unwritten = _call_checked(ctx, inputs)
    gpulock.yield_to_timing()  # the candidate's call and the references' are steps of their own
    ctx.exhibits.add(trial_name(dist, seed), outs)
    repeated = _repeats_previous(ctx, outs)
    verdict = _compare(ctx, outs, pristine, ctx.tol)
    if not verdict.passed and repeated and not unwritten:  # unwritten memory that held the last answer is no store
        ctx.log.check("cached-output", f"{dist.label} seed {seed}: output is bit-identical to the previous trial's "
                      f"output on different inputs ({verdict.message}): a stored result")
    if not verdict.passed and verdict.message and "not finite" in verdict.message:
        ctx.log.check("stale-memory", _differential(ctx, pristine))
    check = CorrectnessCheck(
        name=trial_name(dist, seed), distribution=dist.label, seed=seed, passed=verdict.passed,
        max_abs_error=verdict.max_abs_error, error_budget_used=verdict.budget,
        fp32_strict_budget_used=verdict.strict_budget, fp32_tf32_budget_used=verdict.tf32_budget,
        message=verdict.message)
    return Trial(check, _near(verdict))


def _near(verdict: PrecisionVerdict) -> bool:
    """Passed, or wrong but right to within :data:`NEAR_LIMIT` of the output's scale (imprecise, not another answer)."""
    return verdict.passed or (verdict.relative_error is not None and verdict.relative_error <= NEAR_LIMIT)


def _classify(ctx: Context, trials: list[Trial]) -> bool:
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


def _determinism(ctx: Context, seed: int) -> None:
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


def _storages(value: Any) -> set[int]:
    return {o.untyped_storage().data_ptr() for o in ig.outputs_of(value) if type(o) is torch.Tensor}


def _recheck(ctx: Context, run: TimingRun, sets: list[list[Any]], settings: Settings) -> None:
    latest = _storages(run.last_outputs.get(run.last_set))
    for k, out in sorted(run.last_outputs.items()):
        if k != run.last_set and _storages(out) & latest:
            continue  # one output buffer reused by every call: only the latest call's contents are current
        outs = _tensors(ig.outputs_of(out))
        ctx.log.check("output-type", ig.output_type(outs, ctx.device))
        v = _compare(ctx, outs, sets[k], ctx.tol)
        if not v.passed:
            _timed_output_wrong(ctx, outs, sets, k, v, settings)


def _timed_output_wrong(ctx: Context, outs: list[Any], sets: list[list[Any]], k: int, v: PrecisionVerdict,
                        settings: Settings) -> None:
    """A timed call's output is wrong for its (refreshed) inputs: a stale answer, a kernel broken after timing, or a
    kernel that relies on the structure of the problem's inputs, which rolling the values by one element between
    uses (``refresh_in_place``) does not keep (``torch.triu`` inputs are no longer triangular). Stale: the output
    matches the reference of the set's earlier contents (its first draw, or its values before the last roll), or
    the candidate called again on a copy of the same values is right (the timed calls skipped the work: a graph
    capture that launched nothing, a cache keyed on the input buffers). Broken: wrong on a fresh draw now. Both
    are ``recheck-after-timing``; the rest is labelled ``structure-specific``, its timing kept. A candidate whose
    trials already failed ``precision`` and whose timed answer is wrong by no more than imprecision is none of
    these: the trials' check holds that finding, and repeating it here would read as a change after timing."""
    if "precision" in ctx.log.failed and _near(v):
        return
    evidence = f"output of a timed call on input set {k}: {v.message}"
    first = draw(ctx.problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[1 + k], ctx.device)
    before = [x.reshape(-1).roll(-1).reshape(x.shape) if isinstance(x, torch.Tensor) and x.is_floating_point()
              and x.numel() > 1 else x for x in sets[k]]
    for label, earlier in (("its first draw", first), ("its values before the last refresh", before)):
        if verdict_of(outs, ctx.refs.run(earlier), ctx.tol).passed:
            ctx.log.check("recheck-after-timing", f"{evidence}; it is the answer for {label}: a stale answer")
            return
    now = verdict_of(_tensors(ig.outputs_of(ctx.call(*_clone(sets[k])))), ctx.refs.run(sets[k]), ctx.tol)
    if now.passed:
        ctx.log.check("recheck-after-timing", f"{evidence}; called again on a copy of the same inputs it is right: "
                                              "the timed call did not compute its answer (a stale answer)")
        return
    fresh = draw(ctx.problem.get_inputs, DISTRIBUTIONS[0], fresh_seeds(1)[0], ctx.device)
    again = verdict_of(_tensors(ig.outputs_of(ctx.call(*_clone(fresh)))), ctx.refs.run(fresh), ctx.tol)
    if not again.passed:
        ctx.log.check("recheck-after-timing", f"{evidence}; after timing it is wrong on a fresh draw too: {again.message}")
        return
    ctx.structure.append(f"input set {k} of the timing, its values rolled by one element between uses, no longer has "
                         f"the structure of the problem's own draws; there the candidate's output is wrong ({v.message}), "
                         "while it is right on every fresh draw: it relies on that structure")


def _timing(ctx: Context, settings: Settings) -> TimingRun:
    # the last trial's outputs (the reference's shapes and dtypes, by the output contract) size the output kept
    # for each input set; the trials are over, so their copy is let go before the sets are drawn
    output_bytes, ctx.previous = ig.tensor_bytes(ctx.previous), []
    sets = timing_sets(ctx.problem.get_inputs, settings, ctx.device, output_bytes)
    with ctx.granted.applied():  # once around the timing, not around each timed call
        run = time_calls(lambda k: ctx.candidate(*sets[k]), sets, ctx.device, settings.plan, module=ctx.candidate)
    ctx.log.check("unsynchronised-work", run.unsynchronised)
    if ctx.device.type != "cuda":
        ctx.log.skip("unsynchronised-work", "no CUDA device: host clock covers all work")
    _recheck(ctx, run, sets, settings)
    return run


def run_candidate(job: Job) -> CandidateOutcome:
    """Evaluate ``job.candidate``: ``hacked`` on evidence that it defeats the measurement, ``incorrect`` (with its
    reason) for a wrong answer, however it shows (``_verdict``)."""
    try:
        return _evaluate(job)
    except OutputContractError as exc:
        return CandidateOutcome(status="runtime_error", error=str(exc))


STRUCTURE_LABEL = "structure-specific"
"""Label of a candidate right on every fresh draw but wrong on the timing's rolled inputs (``_timed_output_wrong``)."""
DRAWS_RANDOM_LABEL = "draws-random"
"""Label of a candidate whose calls draw from torch's random generators (not a finding: a re-seeding is)."""
LEGACY_STREAM_LABEL = "legacy-stream"
"""Label of a candidate whose work a CUDA graph captured on another stream does not hold (a kernel launched with
``<<<grid, block>>>`` on the legacy default stream): timed and re-checked as eager calls on the default stream."""


def _labels(ctx: Context, scanned: list[str], flags: tuple[tuple[str, bool], ...], shapes: Any,
            run: TimingRun | None) -> list[str]:
    flag_labels = [f"sets:{AlgorithmFlag(name=name, value=value).token}" for name, value in flags]  # type: ignore[arg-type]
    shape = [SHAPE_LABEL] if shapes is not None and shapes.passed is False else []
    legacy = [LEGACY_STREAM_LABEL] if run is not None and run.graph_unsafe else []
    return [*scanned, *flag_labels, *ctx.granted.labels, *shape, *legacy, *([STRUCTURE_LABEL] if ctx.structure else []),
            *([DRAWS_RANDOM_LABEL] if ctx.draws_random else [])]


def _start(job: Job, settings: Settings, device: torch.device) -> tuple[Context, Any, dict[str, Any]]:
    """The problem and its references, the snapshots, then the candidate imported and built: the evaluation's
    context, the candidate's class and the snapshots taken before its code ran."""
    problem = load_problem(job)
    seed_all(settings.init_seed)
    init = to_device(problem.get_init_inputs(), device)
    reference = build_reference(problem.model, init, device)
    gpulock.yield_to_timing()
    refs = References(reference)
    refs.run(draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[0], device))  # warm torch up
    gpulock.yield_to_timing()
    _provenance.watch_thread_starts()
    before = {"functions": ig.snapshot_functions(), "state": ig.snapshot_state(), "threads": ig.python_threads(),
              "flags": ig.snapshot_flags()}
    granted = GrantedState(PIN.granted_state)
    model_new = load_candidate(job)
    gpulock.yield_to_timing()
    seed_all(settings.init_seed)
    candidate = model_new(*init).to(device)
    granted.settle()  # a granted setting its import or construction changed: kept for its calls alone
    gpulock.yield_to_timing()
    tol = tolerance_for(job.problem.meta.dtype, Tolerance(PIN.atol, PIN.rtol))
    ctx = Context(job, device, tol, problem, refs, candidate, exhibits=Exhibits(job.options.get("evidence")),
                  granted=granted)
    return ctx, model_new, before


def _final_checks(ctx: Context, before: dict[str, Any], run: TimingRun | None) -> None:
    ctx.log.check("function-patching", ig.replaced_functions(before["functions"]))
    ctx.log.check("global-state", ig.changed_state(before["state"]))
    ctx.log.check("threads", ig.new_threads(before["threads"]))
    if run is not None:
        ctx.log.check("faster-than-sol", sol_evidence(ctx.job.problem, ctx.device, run.stats, ctx.log))


def _evaluate(job: Job) -> CandidateOutcome:
    device = configure(job.device)
    gpulock.yield_to_timing()  # between every two steps from here: a timing of another worker that waits goes first
    settings = Settings.of(job.options, job.overrides)
    assert job.candidate is not None
    scanned = scan(job.candidate.source)
    ctx, model_new, before = _start(job, settings, device)
    ctx.log.check("function-patching", ig.replaced_functions(before["functions"]))
    ctx.log.check("global-state", ig.changed_state(before["state"]))
    per = len(settings.trial_seeds) // len(DISTRIBUTIONS)
    trials = []
    for i, d in enumerate(DISTRIBUTIONS):
        for j in range(per):
            gpulock.yield_to_timing()  # a timing of another worker that waits goes first
            trials.append(_trial(ctx, d, settings.trial_seeds[i * per + j]))
    ctx.exhibits.save()
    wrong = _classify(ctx, trials)
    gpulock.yield_to_timing()
    _determinism(ctx, settings.extra_seeds[0])
    gpulock.yield_to_timing()
    # a wrong answer, however it shows, is not timed; evidence of a hack is, where more of it may show
    timed = verdict(ctx.log.failed, wrong, PIN).status != "incorrect"
    run = _timing(ctx, settings) if timed else None
    gpulock.yield_to_timing()
    shapes = None
    if timed:
        with ctx.granted.applied():  # a fresh candidate, built and called at another size
            shapes = check_shapes(job, model_new, ctx.tol, settings.extra_seeds[0], settings.init_seed, device)
    gpulock.yield_to_timing()
    if run is not None and not ctx.log.failed and job.options.get("evidence"):  # the runner's outside clock
        with ctx.granted.applied():
            outer_batch(lambda x: ctx.candidate(*x), ctx.problem.get_inputs, device, run.stats.median_ms,
                        graphs=run.stats.method == "cuda_graph")
    _final_checks(ctx, before, run)
    return _outcome(ctx, trials, verdict(ctx.log.failed, wrong, PIN), run, shapes,
                    _labels(ctx, scanned.labels, ig.flags_set(before["flags"]), shapes, run),
                    ig.flags_set(before["flags"]))


def _outcome(ctx: Context, trials: list[Trial], found: Verdict, run: TimingRun | None, shapes: Any,
             labels: list[str], flags_left: tuple[tuple[str, bool], ...]) -> CandidateOutcome:
    notes = [n for n in (ctx.refs.note, run.stats.note if run and run.stats.host_bound else None) if n]
    notes += [f"{STRUCTURE_LABEL}: {why}" for why in ctx.structure[:1]]
    checks = [t.check for t in trials]
    error = None
    if found.status == "incorrect":
        finding = {reason: check for check, reason in PIN.incorrect_checks}.get(found.reason or "")
        error = ctx.log.failed.get(finding or "") or next((c.message for c in checks if not c.passed), None)
    return CandidateOutcome(status=found.status, reason=found.reason, error=error, correctness=checks,
                            timing=run.stats if run else None, integrity=ctx.log.results(), labels=labels,
                            notes=notes, algorithm_flags=flags_left,
                            precision_class=precision_class_of(checks) if found.status == "correct" else None,
                            shape_check=shapes)
