"""The verified protocol: fair baselines, hidden inputs, a precision policy and integrity checks.

Baselines: eager with TF32 allowed, ``torch.compile`` of the reference, and eager float32 with TF32
off (to split the standard -> verified drop), each timed in its own worker process. Candidates:
hidden distributions D1 x1, D2 x3, D3 x0.01, D4 x(-1) under fresh seeds, float64 reference,
atol = rtol = 1e-3 judged by the precision policy, and the integrity checks of
``evaluations._verified``. Timing: L2 flush, rotated fresh inputs, device spin, median with IQR and
a 95% CI over at least 100 calls and 0.5 s, until the CI half-width is under 0.5% or a time cap;
the module's weights rotated over sixteen places (the time: the mean of their medians); replays of
captured CUDA graphs where the call is under 0.1 ms or the eager call is host-bound
(``evaluations.timing``); a candidate of a problem whose eager calls follow the host's own speed is timed
in turns with fresh timings of the baselines, every turn on one host core (``TURNS_WHEN_HOST_BOUND``).
A candidate that sets algorithm-choice flags (``cudnn.benchmark``, ``cudnn.deterministic``) is judged on
its merits, labelled ``sets:<flag>``, and compared with baselines timed with the same flags
(``Job.algorithm_flags``). Every passing candidate gets a precision class, and a held-out shape re-check.
See the methodology page (site_src/methodology.md), "Protocols".
"""

from __future__ import annotations

import torch

from schemas import PROTOCOLS, TimingStats, protocol_info

from .. import _gpulock
from .._judge import Judgement, JudgeRequest
from .._outcomes import BaselineOutcome, CandidateOutcome
from .._types import Job
from .._verified import _candidate, _judging
from .._verified._distributions import DISTRIBUTIONS, draw
from .._verified._reference import float32_mode
from .._verified._setup import (
    Settings,
    build_reference,
    configure,
    seed_all,
    set_algorithm_flags,
    timing_sets,
    to_device,
)
from .._worker import ProblemModule, load_candidate, load_problem
from ..timing import time_calls

VERSION = PROTOCOLS["verified"]["versions"][-1]
"""The version this module runs (what changed from one to the next: ``CHANGELOG.md``). Records and cached
baselines of another version are redone, and a record of another version is not reproduced by this one."""
INFO = protocol_info("verified", VERSION)
"""Its parameters and its records' ``protocol`` block, from the protocols' one table (``schemas.PROTOCOLS``): seeds
are drawn fresh for every evaluation, and each correctness check in a record names its seed. The distributions
(``DISTRIBUTIONS``) and the timing plan's defaults (``TimingPlan``) are what the table pins, as a test checks."""
BASELINE_KINDS: tuple[str, ...] = PROTOCOLS["verified"]["baseline_kinds"]
SPEEDUP_BASELINE: dict[str, str] = dict(PROTOCOLS["verified"]["speedups"])
PACED_BY_EAGER_BASELINE = True
"""The eager baseline's calls per event pair and timing method (eager calls, or CUDA graph replays for a
host-bound problem) are reused by the other baselines and every candidate."""
TURNS_WHEN_HOST_BOUND = True
"""Where the eager baseline is host-bound and timed as eager calls (no CUDA graph could hold the call), every
candidate is timed in turns with fresh timings of all baseline kinds, each in its own worker, a batch of
samples a turn (``Runner.timed_in_turns``): the host's own speed, which sets such times and drifts, then
weighs on candidate and baselines alike, and each speedup is the median of the per-round ratios."""


def run_candidate(job: Job) -> CandidateOutcome:
    """Correctness over the hidden distributions, integrity checks and timing (inside a worker)."""
    return _candidate.run_candidate(job)


def judge(request: JudgeRequest) -> Judgement:
    """The judge's ruling on a reported evaluation (inside a worker that never imported the candidate)."""
    return _judging.judge(request)


def _baseline_model(job: Job, device: torch.device) -> tuple[torch.nn.Module, Settings, ProblemModule]:
    problem = load_problem(job)
    settings = Settings.of(job.options)
    set_algorithm_flags(job.algorithm_flags)  # a candidate's flags: before the model and its algorithms are chosen
    seed_all(settings.init_seed)
    model = build_reference(problem.model, to_device(problem.get_init_inputs(), device), device)
    if job.baseline_kind == "compile":
        with _gpulock.released():  # torch.compile imports dynamo and Inductor (seconds of host work), compiles nothing
            model = torch.compile(model)
    return model, settings, problem


def warm_baseline(job: Job) -> None:
    """The ``compile`` baseline's compilation ahead of its timed worker (``_worker.warm_baseline``, in the
    runner's prepare stage): the reference compiled as :func:`time_baseline` compiles it, with the same float32
    mode, called once on a draw of the inputs' shapes. Other kinds compile nothing."""
    if job.baseline_kind != "compile":
        return
    device = configure(job.device)
    with float32_mode(tf32=_tf32_allowed(job.baseline_kind)), torch.no_grad():
        model, settings, problem = _baseline_model(job, device)
        model(*draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[0], device))
        if device.type == "cuda":
            torch.cuda.synchronize()


def _tf32_allowed(kind: str | None) -> bool:
    if kind not in BASELINE_KINDS:
        raise ValueError(f"the verified protocol has no {kind!r} baseline")
    return kind != "eager_fp32"


def time_baseline(job: Job) -> tuple[TimingStats, int | None]:
    """Peak memory of one call, then the timing, of the problem's own model as baseline ``job.baseline_kind``.

    The process is fresh and the memory is measured first, exactly as :func:`measure_memory` does in a
    process of its own (the model, one input draw, a warm-up call, then one measured call), so one process
    serves both figures; the timing's input sets are drawn after it."""
    device = configure(job.device)
    _gpulock.yield_to_timing()  # a timing of another worker that waits goes first, between every two steps
    with float32_mode(tf32=_tf32_allowed(job.baseline_kind)), torch.no_grad():
        model, settings, problem = _baseline_model(job, device)
        _gpulock.yield_to_timing()
        inputs = draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[0], device)
        peak = _peak_of_one_call(model, inputs) if device.type == "cuda" else None
        del inputs  # compilation and autotuning happened in the warm-up call, before the timing holds the GPU alone
        _gpulock.yield_to_timing()
        sets = timing_sets(problem.get_inputs, settings, device)
        model(*sets[0])
        _gpulock.yield_to_timing()
        return time_calls(lambda k: model(*sets[k]), sets, device, settings.plan, module=model).stats, peak


def run_baseline(job: Job) -> BaselineOutcome:
    """Time one baseline kind of the problem and measure its peak memory (inside its own worker process)."""
    timing, peak = time_baseline(job)
    return BaselineOutcome(kind=str(job.baseline_kind), timing=timing, peak_memory_bytes=peak)


def _peak_of_one_call(model: torch.nn.Module, inputs: list) -> int:
    """Peak device bytes allocated during one call, after a warm-up call (lazy initialisation is not the call's)."""
    model(*inputs)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    model(*inputs)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())


def measure_memory(job: Job) -> int | None:
    """Peak device bytes of one call (candidate, or the job's baseline kind) in a fresh process; None on CPU."""
    if job.device != "cuda":
        return None
    device = configure(job.device)
    _gpulock.yield_to_timing()  # a timing of another worker that waits goes first, between every two steps
    tf32 = True if job.candidate is not None else _tf32_allowed(job.baseline_kind)
    with float32_mode(tf32=tf32), torch.no_grad():
        if job.candidate is not None:
            settings = Settings.of(job.options)
            problem = load_problem(job)
            seed_all(settings.init_seed)
            cls = load_candidate(job)
            _gpulock.yield_to_timing()
            model = cls(*to_device(problem.get_init_inputs(), device)).to(device)
        else:
            model, settings, problem = _baseline_model(job, device)
        _gpulock.yield_to_timing()
        inputs = draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[0], device)
        return _peak_of_one_call(model, inputs)
