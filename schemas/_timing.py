"""Pydantic models of a record's timings: how a protocol times, one timing's statistics, the speedups between
timings, and the outside clock's check of a candidate's answers."""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import Field, model_validator

from ._base import Strict, finite_non_negative

TimingMethod = Literal["cuda_events", "cuda_graph", "host_clock"]
"""How a timing was taken: CUDA events per call, replays of a captured CUDA graph, or a monotonic host clock."""



TIMING_NOTE_MAX = 1000
"""Longest timing note: room for a host-bound eager timing's note with the host's own speed before and after."""



ROUNDS_MAX = 5000
"""Most rounds a timing in turns records (the timing stops there; four such timings stay far below
the record size limit)."""



class TimingConfig(Strict):
    """How the protocol times a callable."""

    warmup_calls: int = Field(ge=0)
    """Untimed calls before timing (minimum, when warm-up is by time)."""
    timed_calls: int = Field(ge=1)
    """Timed calls (minimum, when the protocol stops on a confidence target)."""
    statistic: Literal["mean", "median"]
    """Which statistic of the per-call times the speedup uses."""
    l2_flush: bool
    """Whether the L2 cache is flushed before each timed call."""
    ci_target_rel: float | None = None
    """Stop once the 95% CI half-width of the median is below this fraction of it (verified only)."""
    time_cap_s: float | None = None
    """Upper bound on timing time per callable, seconds (verified only)."""



class TimingStats(Strict):
    """Statistics of per-call times of one callable."""

    method: TimingMethod
    """How times were taken."""
    calls: int = Field(ge=1)
    """Number of timed calls (for graphs: replays; each may hold several calls)."""
    calls_per_sample: int = Field(default=1, ge=1)
    """Calls between one pair of timers; per-call times are divided by it."""
    mean_ms: float
    """Mean time per call, milliseconds."""
    median_ms: float
    """Median time per call, milliseconds. Under the verified protocol with the weights rotated over
    places in memory (the note says so), the mean of the per-place medians."""
    min_ms: float
    """Fastest call, milliseconds."""
    max_ms: float
    """Slowest call, milliseconds."""
    std_ms: float
    """Standard deviation of per-call times, milliseconds."""
    q1_ms: float | None = None
    """First quartile, milliseconds."""
    q3_ms: float | None = None
    """Third quartile, milliseconds."""
    ci95_low_ms: float | None = None
    """Lower end of the 95% confidence interval of the median (of ``median_ms``), milliseconds."""
    ci95_high_ms: float | None = None
    """Upper end of the 95% confidence interval of the median, milliseconds."""
    l2_flush: bool = False
    """Whether L2 was flushed before each call."""
    host_bound: bool | None = None
    """True when the host's launch speed, not the device, set the time (``None`` if not judged)."""
    host_enqueue_ms: float | None = Field(default=None, ge=0)
    """Host time to enqueue one eager call, the device spinning meanwhile (median of a few), milliseconds
    (``None`` where not measured)."""
    sm_clock_mhz: float | None = Field(default=None, gt=0)
    """Median SM clock while timing, megahertz: a fixed count of device clock cycles spun after each
    batch of samples, divided by its event time (``None`` where not measured). Two timings of the same
    kernel at different clocks differ by about the clock ratio where the kernel is compute-bound."""
    note: str | None = Field(default=None, max_length=TIMING_NOTE_MAX)
    """Anything a reader needs to interpret the timing."""
    round_medians_ms: list[float] | None = Field(default=None, min_length=1, max_length=ROUNDS_MAX)
    """Timed in turns with the other timings of the same problem (the note says so): the median per-call
    time of each round's batch of samples, by round, milliseconds (``None`` when timed alone). A speedup
    between two timings that both have them is the median of the per-round ratios over their common rounds
    (:func:`speedup_between`): a drift of the host's speed weighs on both sides of each ratio alike."""

    @model_validator(mode="after")
    def _finite(self) -> TimingStats:
        for name in ("mean_ms", "median_ms", "min_ms", "max_ms", "std_ms", "q1_ms", "q3_ms", "ci95_low_ms", "ci95_high_ms"):
            finite_non_negative(getattr(self, name), name)
        if self.min_ms > self.max_ms:
            raise ValueError("min_ms exceeds max_ms")
        for i, value in enumerate(self.round_medians_ms or []):
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"round_medians_ms[{i}] must be finite and positive, got {value}")
        return self



def statistic_ms(timing: TimingStats, name: str) -> float:
    """The named statistic (``mean`` or ``median``) of a timing, the value speedups are computed from."""
    if name not in ("mean", "median"):
        raise ValueError(f"unknown statistic {name!r}")
    return timing.mean_ms if name == "mean" else timing.median_ms



def speedup_between(candidate: TimingStats, baseline: TimingStats, statistic: str = "median") -> float | None:
    """The baseline's time over the candidate's: the median of the per-round ratios where both were timed
    in the same turns (both have ``round_medians_ms``), else the ratio of their ``statistic`` (``median``
    or ``mean``). ``None`` where the candidate's time is not positive."""
    if candidate.round_medians_ms and baseline.round_medians_ms:
        return statistics.median(b / c for b, c in zip(baseline.round_medians_ms, candidate.round_medians_ms,
                                                       strict=False))
    cand = statistic_ms(candidate, statistic)
    return statistic_ms(baseline, statistic) / cand if cand > 0 else None



class Speedups(Strict):
    """Baseline time over candidate time, with the protocol's statistic."""

    vs_eager: float | None = None
    """Against the protocol's eager baseline (fp32 without TF32 for standard, TF32 for verified)."""
    vs_eager_fp32: float | None = None
    """Against eager float32 with TF32 off, under this protocol's timing (splits the standard → verified drop)."""
    vs_compile: float | None = None
    """Against ``torch.compile`` of the reference (verified only)."""

    @model_validator(mode="after")
    def _positive(self) -> Speedups:
        for name in ("vs_eager", "vs_eager_fp32", "vs_compile"):
            v = getattr(self, name)
            if v is not None and (not math.isfinite(v) or v <= 0):
                raise ValueError(f"{name} must be a positive finite number, got {v}")
        return self



class OuterTiming(Strict):
    """The candidate's answers timed from outside its process: a batch of calls on fresh inputs drawn from a seed
    the runner handed over, on the runner's own clock, each answer checked by fingerprint."""

    calls: int = Field(ge=1, le=1000)
    """Calls in the batch."""
    method: Literal["eager", "cuda_graph"]
    """How the batch called the candidate (CUDA graph replays where its own timing replayed graphs)."""
    wall_ms: float = Field(ge=0)
    """The runner's clock from handing over the seed to receiving the fingerprints."""
    overhead_ms: float = Field(ge=0)
    """What drawing the inputs and fingerprinting the outputs cost, timed in the judge's process."""
    per_call_ms: float = Field(ge=0)
    """(wall - overhead) / calls: the time per answer seen from outside."""
    reported_ms: float = Field(ge=0)
    """The candidate process's own reported time per call (its timing's median, or mean)."""

    @model_validator(mode="after")
    def _finite(self) -> OuterTiming:
        for name in ("wall_ms", "overhead_ms", "per_call_ms", "reported_ms"):
            finite_non_negative(getattr(self, name), name)
        return self



class Judged(Strict):
    """What the runner checked outside the candidate's process (records from the judge on; see the threat model)."""

    trials: int = Field(ge=0, le=1000)
    """Correctness trials whose outputs a process that never imported the candidate judged, on inputs it drew."""
    trials_reported: int = Field(ge=0, le=1000)
    """Correctness trials the candidate's worker reported."""
    outer: OuterTiming | None = None
    """The outside timing of the candidate's answers."""

