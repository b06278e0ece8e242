"""The verified protocol's code: its entry points (a candidate's evaluation, the judge's re-run), the baselines'
timing and the peak memory of one call. Its figures and its description: the package's face (``__init__``)."""

from __future__ import annotations

import contextlib

import torch

from schemas import TimingStats

from ...core import (
    DISTRIBUTIONS,
    BaselineOutcome,
    CandidateOutcome,
    Job,
    Judgement,
    JudgeRequest,
    check_reproducible,
    draw,
    gpulock,
    outputs_of,
    signature,
    tensor_bytes,
)
from ...timing import time_calls
from ...worker import ProblemModule, load_candidate, load_problem
from . import BASELINE_KINDS, SPEEDUP_BASELINE, _candidate, _judging
from ._compiling import device_let_go_while_compiling
from ._reference import float32_mode
from ._setup import (
    Settings,
    build_reference,
    configure,
    seed_all,
    set_algorithm_flags,
    timing_sets,
    to_device,
)


def run_candidate(job: Job) -> CandidateOutcome:
    """Correctness over the hidden distributions, integrity checks and timing (inside a worker)."""
    return _candidate.run_candidate(job)


def judge(request: JudgeRequest) -> Judgement:
    """The judge's ruling on a reported evaluation (inside a worker that never imported the candidate)."""
    return _judging.judge(request)


def _baseline_model(job: Job, device: torch.device) -> tuple[torch.nn.Module, Settings, ProblemModule]:
    problem = load_problem(job)
    settings = Settings.of(job.options, job.overrides)
    set_algorithm_flags(job.algorithm_flags)  # a candidate's flags: before the model and its algorithms are chosen
    seed_all(settings.init_seed)
    model = build_reference(problem.model, to_device(problem.get_init_inputs(), device), device)
    if job.baseline_kind == "compile":
        with gpulock.released():  # torch.compile imports dynamo and Inductor (seconds of host work), compiles nothing
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
    serves both figures; the timing's input sets are drawn after it. The eager baseline, the first of a problem's
    jobs, also draws its inputs twice under one seed (not its re-timings with a candidate's flags or in turns): a
    problem whose draws differ (:class:`NotReproducible`) fails it, with its reason, rather than its candidates'
    judges finding honest outputs wrong."""
    device = configure(job.device)
    gpulock.yield_to_timing()  # a timing of another worker that waits goes first, between every two steps
    with float32_mode(tf32=_tf32_allowed(job.baseline_kind)), torch.no_grad():
        model, settings, problem = _baseline_model(job, device)
        gpulock.yield_to_timing()
        seed = settings.extra_seeds[0]
        inputs = draw(problem.get_inputs, DISTRIBUTIONS[0], seed, device)
        # once a problem, in its first job (not in a re-timing with a candidate's flags or in turns); before any call
        first = job.baseline_kind == SPEEDUP_BASELINE["vs_eager"] and not job.algorithm_flags
        drawn = signature(inputs) if first and "party" not in job.options else None
        # a compile baseline compiles in its first call: from the prepare stage's caches, with the device let go
        with device_let_go_while_compiling() if job.baseline_kind == "compile" else contextlib.nullcontext():
            peak, output_bytes = _peak_of_one_call(model, inputs, device)
        del inputs  # compilation and autotuning happened in the warm-up call, before the timing holds the GPU alone
        if drawn is not None:
            check_reproducible(problem.get_inputs, seed, device, drawn)
        gpulock.yield_to_timing()
        sets = timing_sets(problem.get_inputs, settings, device, output_bytes)
        model(*sets[0])
        gpulock.yield_to_timing()
        return time_calls(lambda k: model(*sets[k]), sets, device, settings.plan, module=model).stats, peak


def run_baseline(job: Job) -> BaselineOutcome:
    """Time one baseline kind of the problem and measure its peak memory (inside its own worker process)."""
    timing, peak = time_baseline(job)
    return BaselineOutcome(kind=str(job.baseline_kind), timing=timing, peak_memory_bytes=peak)


def _peak_of_one_call(model: torch.nn.Module, inputs: list, device: torch.device) -> tuple[int | None, int]:
    """Peak device bytes allocated during one call, after a warm-up call (lazy initialisation is not the call's;
    None off the GPU), and the bytes of that call's outputs."""
    warm = model(*inputs)
    if device.type != "cuda":
        return None, tensor_bytes(outputs_of(warm))
    del warm
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    output_bytes = tensor_bytes(outputs_of(model(*inputs)))
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated()), output_bytes


def measure_memory(job: Job) -> int | None:
    """Peak device bytes of one call (candidate, or the job's baseline kind) in a fresh process; None on CPU."""
    if job.device != "cuda":
        return None
    device = configure(job.device)
    gpulock.yield_to_timing()  # a timing of another worker that waits goes first, between every two steps
    tf32 = True if job.candidate is not None else _tf32_allowed(job.baseline_kind)
    with float32_mode(tf32=tf32), torch.no_grad():
        if job.candidate is not None:
            settings = Settings.of(job.options, job.overrides)
            problem = load_problem(job)
            seed_all(settings.init_seed)
            cls = load_candidate(job)
            gpulock.yield_to_timing()
            model = cls(*to_device(problem.get_init_inputs(), device)).to(device)
        else:
            model, settings, problem = _baseline_model(job, device)
        gpulock.yield_to_timing()
        inputs = draw(problem.get_inputs, DISTRIBUTIONS[0], settings.extra_seeds[0], device)
        return _peak_of_one_call(model, inputs, device)[0]
