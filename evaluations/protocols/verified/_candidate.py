"""Evaluation of one candidate under the verified protocol (inside a worker process).

Order: snapshots of functions, global state, algorithm-choice flags and threads; candidate import and
construction; correctness trials over the hidden distributions (``_trials``); two calls on one input;
timing on rotated, refreshed inputs; re-check of the timed calls' outputs (``_recheck``); the held-out shape
re-check; final snapshots; roofline; precision class and labels. What the steps share, and the output
contract: ``_context``.
"""

from __future__ import annotations

from typing import Any

import torch

from schemas import AlgorithmFlag, pinned

from ...core import DISTRIBUTIONS, CandidateOutcome, Job, Verdict, draw, gpulock, no_answer, to_device, verdict
from ...timing import TimingRun, time_calls
from ...worker import Exhibits, load_candidate, load_problem, outer_batch
from . import VERSION, _provenance
from . import _integrity as ig
from ._context import Context, OutputContractError
from ._granted import GrantedState
from ._precision import Tolerance, precision_class_of, tolerance_for
from ._recheck import recheck
from ._reference import References
from ._scan import scan
from ._setup import Settings, build_reference, configure, seed_all, timing_sets
from ._shapes import LABEL as SHAPE_LABEL
from ._shapes import check_shapes
from ._sol import sol_evidence
from ._trials import Trial, classify, determinism, trial

PIN = pinned("verified", VERSION)
"""What the version this module runs pins: its tolerances, which checks find a wrong answer, the granted settings."""


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
    recheck(ctx, run, sets, settings)
    return run


def run_candidate(job: Job) -> CandidateOutcome:
    """Evaluate ``job.candidate``: ``hacked`` on evidence that it defeats the measurement, ``incorrect`` (with its
    reason) for a wrong answer, however it shows (``core.verdict``)."""
    try:
        return _evaluate(job)
    except OutputContractError as exc:
        return no_answer("run", str(exc))


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
            trials.append(trial(ctx, d, settings.trial_seeds[i * per + j]))
    ctx.exhibits.save()
    wrong = classify(ctx, trials)
    gpulock.yield_to_timing()
    determinism(ctx, settings.extra_seeds[0])
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
