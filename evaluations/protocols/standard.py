"""The standard protocol: KernelBench as it is commonly run, so published numbers can be checked.

Baseline PyTorch eager float32 with TF32 matmul off; reference and candidate built after the same
seed; 5 correctness trials with seeds drawn from 42; ``allclose`` with atol = rtol = 1e-2; 3
warm-up calls then 100 timed calls, each between two CUDA events on the current stream with a
synchronise after each call (as KernelBench does), no L2 flush; the mean per-call time counts.
On the CPU calls are timed with a monotonic clock and memory is not measured.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from schemas import PROTOCOLS, CorrectnessCheck, pinned, protocol_info
from schemas import TimingStats as _TimingStats

from ..core import (
    BaselineOutcome,
    CandidateOutcome,
    Job,
    Judgement,
    JudgeRequest,
    Piecewise,
    allclose,
    error_maxima,
    gpulock,
    outputs_of,
    piecewise,
    summarize,
    verdict,
)
from ..worker import Exhibits, judge_outer, load_candidate, load_problem, outer_batch, rule_trials

SEED = 42
"""Seed of model construction, of the timing inputs, and of the trial-seed generator."""
INFO = protocol_info("standard")
"""Its parameters and its records' ``protocol`` block, from the protocols' one table (``schemas.PROTOCOLS``)."""
PIN = pinned("standard", INFO.version)
"""What its version pins: no failed check is a wrong answer's (every one would be ``hacked``)."""
TRIALS = len(INFO.seeds)
DISTRIBUTION = INFO.distributions[0]
"""The label of its one input distribution (the problem's own ``get_inputs()``), as its records name it."""
BASELINE_KINDS: tuple[str, ...] = PROTOCOLS["standard"]["baseline_kinds"]
SPEEDUP_BASELINE: dict[str, str] = dict(PROTOCOLS["standard"]["speedups"])


def trial_seeds(n: int = TRIALS) -> list[int]:
    """KernelBench's correctness-trial seeds: ``n`` draws of ``torch.randint`` after ``manual_seed(42)`` (the first
    five are the table's, as a test checks)."""
    generator = torch.Generator().manual_seed(SEED)
    return [int(torch.randint(0, 2**32 - 1, (1,), generator=generator).item()) for _ in range(n)]


@dataclass(frozen=True)
class Settings:
    """Trial and call counts in effect: the protocol's, or those a run overrides (``job.overrides``)."""

    trials: int
    warmup_calls: int
    timed_calls: int

    @classmethod
    def of(cls, job: Job) -> Settings:
        """Settings for a job: every override applied."""
        o = job.overrides
        return cls(TRIALS if o.trials is None else o.trials,
                   INFO.timing.warmup_calls if o.warmup_calls is None else o.warmup_calls,
                   INFO.timing.timed_calls if o.timed_calls is None else o.timed_calls)


def set_seed(seed: int) -> None:
    """Seed torch's CPU and CUDA generators, as KernelBench does before each draw."""
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def _to(values: Any, device: torch.device) -> Any:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def host_inputs(get_inputs: Callable[[], Any], device: torch.device) -> Any:
    """The problem's inputs drawn on the host, then moved to ``device``. The draw (the problem's own code, seconds
    for large inputs) lets go of the GPU lock: another worker's timing may go meanwhile."""
    with gpulock.released():
        values = get_inputs()
    return _to(values, device)


def build_reference(cls: type, init_inputs: list[Any], device: torch.device) -> Any:
    """The problem's own model, as :func:`_build` makes it, constructed on the host without the GPU lock (the
    problem's code: seconds for large layers' initialisation) and then moved to ``device`` holding it."""
    set_seed(SEED)
    with gpulock.released():
        model = cls(*init_inputs)
    return model.to(device)


def _configure(device: str) -> torch.device:
    torch.backends.cuda.matmul.allow_tf32 = False
    if device == "cuda":
        torch.cuda.set_device(0)
    return torch.device(device)


def collect_times_ms(fn: Callable[[], Any], device: str, warmup: int, calls: int,
                     sync_each_call: bool = True) -> list[float]:
    """Raw per-call times in ms: CUDA events on the current stream on a GPU, else a monotonic clock."""
    if device == "cuda":
        with gpulock.exclusive():  # concurrent workers: nothing else runs on the GPU while this one times
            return _collect_cuda(fn, warmup, calls, sync_each_call)
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def _collect_cuda(fn: Callable[[], Any], warmup: int, calls: int, sync_each_call: bool) -> list[float]:
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends, strict=True):
        start.record()
        fn()
        end.record()
        if sync_each_call:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in zip(starts, ends, strict=True)]


def _budget(out: torch.Tensor, ref: torch.Tensor) -> tuple[float | None, float | None]:
    """(max |out - ref|, the largest share of the tolerance used), in float64 a piece at a time; (None, None)
    where either is not finite."""
    max_abs, budget = (0.0 if v is None else v for v in error_maxima(out, ref, INFO.atol, INFO.rtol))
    finite = math.isfinite(budget) and math.isfinite(max_abs)
    return (max_abs, budget) if finite else (None, None)


def compare(output: Any, reference: Any, seed: int, index: int) -> CorrectnessCheck:
    """One trial's verdict: same shape and ``allclose`` at the protocol's tolerances."""
    name = f"trial {index}"
    outs = list(output) if isinstance(output, list | tuple) else [output]
    refs = list(reference) if isinstance(reference, list | tuple) else [reference]
    if len(outs) != len(refs):
        return CorrectnessCheck(name=name, distribution=DISTRIBUTION, seed=seed, passed=False,
                                message=f"output has {len(outs)} values, reference {len(refs)}")
    worst_abs, worst_budget, message = 0.0, 0.0, None
    for o, r in zip(outs, refs, strict=True):
        if not isinstance(o, torch.Tensor):
            message = f"output is {type(o).__name__}, not a tensor"
            worst_abs = worst_budget = None
            break
        if o.shape != r.shape:
            message = f"output shape {tuple(o.shape)} differs from reference shape {tuple(r.shape)}"
            worst_abs = worst_budget = None
            break
        o = o.to(r.device)
        max_abs, budget = _budget(o, r)
        if max_abs is None or worst_abs is None:
            worst_abs = worst_budget = None
        else:
            worst_abs, worst_budget = max(worst_abs, max_abs), max(worst_budget, budget)
        if not allclose(o, r, atol=INFO.atol, rtol=INFO.rtol):
            detail = f": max |out - ref| = {max_abs:.4g}, error budget {budget:.4g} used of 1.0" if max_abs is not None else \
                " (non-finite values)"
            message = message or f"output differs from the reference beyond atol = rtol = {INFO.atol:g}{detail}"
    return CorrectnessCheck(name=name, distribution=DISTRIBUTION, seed=seed, passed=message is None,
                            max_abs_error=worst_abs, error_budget_used=worst_budget, message=message)


def _build(cls: type, init_inputs: list[Any], device: torch.device) -> Any:
    set_seed(SEED)
    return cls(*init_inputs).to(device)


def _time(job: Job, model: Any, problem_get_inputs: Any, device: torch.device) -> _TimingStats:
    settings = Settings.of(job)
    set_seed(SEED)
    inputs = host_inputs(problem_get_inputs, device)
    samples = collect_times_ms(lambda: model(*inputs), job.device, settings.warmup_calls, settings.timed_calls)
    method = "cuda_events" if job.device == "cuda" else "host_clock"
    return summarize(samples, method)


def run_candidate(job: Job) -> CandidateOutcome:
    """Correctness trials, then timing of the candidate (inside a worker process)."""
    device = _configure(job.device)
    gpulock.yield_to_timing()  # between every two steps from here: a timing of another worker that waits goes first
    problem = load_problem(job)
    model_new = load_candidate(job)
    gpulock.yield_to_timing()
    settings = Settings.of(job)
    with torch.no_grad():
        set_seed(SEED)
        init_inputs = _to(problem.get_init_inputs(), device)
        reference = build_reference(problem.model, init_inputs, device)
        gpulock.yield_to_timing()
        candidate = _build(model_new, init_inputs, device)
        checks = []
        exhibits = Exhibits(job.options.get("evidence"))
        for index, seed in enumerate(trial_seeds(settings.trials)):
            gpulock.yield_to_timing()  # a timing of another worker that waits goes first
            set_seed(seed)
            inputs = host_inputs(problem.get_inputs, device)
            expected = reference(*inputs)
            if job.device == "cuda":
                torch.cuda.synchronize()
            gpulock.yield_to_timing()  # the reference's call and the candidate's are steps of their own
            output = candidate(*inputs)
            exhibits.add(f"trial {index}", outputs_of(output))
            checks.append(compare(output, expected, seed, index))
            if not checks[-1].passed:
                status, reason = verdict((), True, PIN)
                return CandidateOutcome(status=status, correctness=checks, error=checks[-1].message, reason=reason)
            del inputs, expected, output  # the next draw, the timing and the outside batch need the room
        exhibits.save()
        gpulock.yield_to_timing()
        timing = _time(job, candidate, problem.get_inputs, device)
        if job.options.get("evidence"):  # the runner's outside clock
            outer_batch(lambda x: candidate(*x), problem.get_inputs, device, timing.median_ms, graphs=False)
    return CandidateOutcome(status=verdict((), False, PIN).status, correctness=checks, timing=timing)


def judge(request: JudgeRequest) -> Judgement:
    """The judge's ruling on a reported evaluation (inside a worker that never imported the candidate): each
    reported trial's outputs against the reference on inputs it draws itself, and the outside batch."""
    job = request.job
    device = _configure(job.device)
    gpulock.yield_to_timing()  # a timing of another worker that waits goes first
    problem = load_problem(job)
    settings = Settings.of(job)
    out = Judgement()
    seeds = trial_seeds(settings.trials)
    if [c.seed for c in request.reported] != seeds:
        out.seeds_fault = f"trials under seeds {[c.seed for c in request.reported]}, where the protocol's are {seeds}"
    with torch.no_grad():
        set_seed(SEED)
        reference = build_reference(problem.model, _to(problem.get_init_inputs(), device), device)

        def rule(index: int, check: CorrectnessCheck) -> tuple[list[Any], Any]:
            set_seed(check.seed)
            expected = reference(*host_inputs(problem.get_inputs, device))

            def decide(outs: list[torch.Tensor]) -> tuple[bool, float | None, str | None]:
                v = compare([o.to(device) for o in outs], expected, check.seed, index)
                return v.passed, v.error_budget_used, v.message

            return outputs_of(expected), decide

        rule_trials(out, request.reported, request.evidence, rule)
        if request.outer_plan is not None and request.fingerprints is not None:
            def ref_of(x: list[Any]) -> tuple[list[torch.Tensor], list[Piecewise]]:
                rs = [t.detach() for t in outputs_of(reference(*x))]
                return rs, [piecewise(lambda r: INFO.atol + INFO.rtol * r.double().abs(), t) for t in rs]

            out.outer_mismatch, out.outer_overhead_s = judge_outer(ref_of, problem.get_inputs, device,
                                                                   request.outer_plan, request.fingerprints, False)
    return out


def run_baseline(job: Job) -> BaselineOutcome:
    """Time the problem's own ``Model`` in eager float32 with TF32 matmul off (inside a worker)."""
    if job.baseline_kind not in BASELINE_KINDS:
        raise ValueError(f"the standard protocol has no {job.baseline_kind!r} baseline")
    device = _configure(job.device)
    gpulock.yield_to_timing()  # between every two steps from here: a timing of another worker that waits goes first
    problem = load_problem(job)
    with torch.no_grad():
        set_seed(SEED)
        model = build_reference(problem.model, _to(problem.get_init_inputs(), device), device)
        gpulock.yield_to_timing()
        peak = _peak_of_first_call(model, problem.get_inputs, device) if job.device == "cuda" else None
        gpulock.yield_to_timing()
        timing = _time(job, model, problem.get_inputs, device)
    return BaselineOutcome(kind="eager_fp32", timing=timing, peak_memory_bytes=peak)


def _peak_of_first_call(model: Any, get_inputs: Any, device: torch.device) -> int:
    """Peak device bytes of the model's first call on the timing's inputs, in this fresh process (as
    :func:`measure_memory` measures it in a process of its own); the timing's warm-ups follow it."""
    set_seed(SEED)
    inputs = host_inputs(get_inputs, device)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    model(*inputs)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())


def measure_memory(job: Job) -> int | None:
    """Peak device bytes of one call of the candidate (or of the reference for a baseline job); None on CPU."""
    if job.device != "cuda":
        return None
    device = _configure(job.device)
    gpulock.yield_to_timing()  # a timing of another worker that waits goes first, between every two steps
    problem = load_problem(job)
    cls = load_candidate(job) if job.candidate is not None else problem.model
    gpulock.yield_to_timing()
    with torch.no_grad():
        set_seed(SEED)
        model = _build(cls, _to(problem.get_init_inputs(), device), device)
        gpulock.yield_to_timing()
        return _peak_of_first_call(model, problem.get_inputs, device)
