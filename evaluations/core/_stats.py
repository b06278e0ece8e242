"""Pure statistics of per-call times: mean, median, quartiles, and a distribution-free 95% CI of the median.

The confidence interval uses order statistics: the number of samples below the true median is
Binomial(n, 1/2), so the interval between the l-th and (n - l + 1)-th smallest samples covers the
median with probability at least 95%. No assumption about the shape of the timing distribution.
"""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

from schemas import TimingMethod, TimingStats


def mean(samples: list[float]) -> float:
    """Arithmetic mean of a non-empty list."""
    if not samples:
        raise ValueError("no samples")
    return math.fsum(samples) / len(samples)


def median(samples: list[float]) -> float:
    """Median of a non-empty list (mean of the two middle values for an even count)."""
    if not samples:
        raise ValueError("no samples")
    return statistics.median(samples)


def std(samples: list[float]) -> float:
    """Sample standard deviation (n - 1); 0.0 for a single sample."""
    return statistics.stdev(samples) if len(samples) > 1 else 0.0


def quantile(samples: list[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) by linear interpolation between order statistics."""
    if not samples:
        raise ValueError("no samples")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    ordered = sorted(samples)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize(samples_ms: list[float], method: TimingMethod, *, l2_flush: bool = False,
              calls_per_sample: int = 1, note: str | None = None) -> TimingStats:
    """Timing statistics of per-call times in milliseconds (no confidence interval: standard protocol)."""
    clean = [float(s) for s in samples_ms]
    if any(not math.isfinite(s) or s < 0 for s in clean):
        raise ValueError("per-call times must be finite and non-negative")
    return TimingStats(
        method=method, calls=len(clean), calls_per_sample=calls_per_sample,
        mean_ms=mean(clean), median_ms=median(clean), min_ms=min(clean), max_ms=max(clean),
        std_ms=std(clean), q1_ms=quantile(clean, 0.25), q3_ms=quantile(clean, 0.75),
        l2_flush=l2_flush, note=note,
    )


CONFIDENCE = 0.95
"""Coverage of the confidence interval of the median."""
_NORMAL_LIMIT = 2000
"""Above this many samples the binomial tail is taken from its normal approximation."""


class Interval(NamedTuple):
    """A closed interval ``[low, high]``."""

    low: float
    high: float


def _binomial_cdf_half(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_half_n = -n * math.log(2.0)
    return math.fsum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half_n)
                     for i in range(k + 1))


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (l, u) of the order statistics bounding the median's CI; ``None`` if n is too small."""
    alpha = (1.0 - confidence) / 2.0
    if n < 1 or 2.0 * 0.5**n > 1.0 - confidence:
        return None
    if n > _NORMAL_LIMIT:
        z = 1.959963984540054 if confidence == CONFIDENCE else _z(confidence)
        half = z * math.sqrt(n) / 2.0
        low = max(1, math.floor(n / 2.0 - half))
        return low, n - low + 1
    low = 1
    while _binomial_cdf_half(low, n) <= alpha:  # P(B <= low - 1 + 1) still inside the tail
        low += 1
    return low, n - low + 1


def _z(confidence: float) -> float:
    lo, hi = 0.0, 10.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if math.erf(mid / math.sqrt(2.0)) < confidence:
            lo = mid
        else:
            hi = mid
    return hi


def median_ci(samples: list[float], confidence: float = CONFIDENCE) -> Interval:
    """Distribution-free confidence interval of the median; ``(min, max)`` when too few samples."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    ranks = median_ci_ranks(len(ordered), confidence)
    if ranks is None:
        return Interval(ordered[0], ordered[-1])
    return Interval(ordered[ranks[0] - 1], ordered[ranks[1] - 1])


def ci_half_width_rel(samples: list[float], confidence: float = CONFIDENCE) -> float:
    """Half-width of the median's CI as a fraction of the median (``inf`` for a zero median)."""
    ci = median_ci(samples, confidence)
    mid = median(samples)
    if mid <= 0:
        return math.inf
    return (ci.high - ci.low) / 2.0 / mid


def grouped_median(groups: list[list[float]], confidence: float = CONFIDENCE) -> tuple[float, Interval]:
    """Mean of the groups' medians, and its CI from theirs (half-widths added as independent errors).

    Groups are samples taken under different conditions that the timing rotates over on purpose
    (places of the weights in memory). Pooled, tight groups a few percent apart make a multimodal
    mix whose median falls in a gap between them and moves with a few samples; the mean of the
    groups' own medians does not. One group: its median and CI.
    """
    filled = [g for g in groups if g]
    if not filled:
        raise ValueError("no samples")
    if len(filled) == 1:
        return median(filled[0]), median_ci(filled[0], confidence)
    centre = mean([median(g) for g in filled])
    halves = [(ci.high - ci.low) / 2.0 for ci in (median_ci(g, confidence) for g in filled)]
    half = math.sqrt(math.fsum(h * h for h in halves)) / len(filled)
    return centre, Interval(centre - half, centre + half)


def grouped_half_width_rel(groups: list[list[float]], confidence: float = CONFIDENCE) -> float:
    """Half-width of :func:`grouped_median`'s CI as a fraction of its centre (``inf`` for a zero centre)."""
    centre, ci = grouped_median(groups, confidence)
    return (ci.high - ci.low) / 2.0 / centre if centre > 0 else math.inf


def iqr(samples: list[float]) -> float:
    """Interquartile range q3 - q1."""
    return quantile(samples, 0.75) - quantile(samples, 0.25)


def summarize_verified(samples_ms: list[float], method: TimingMethod, *, calls_per_sample: int = 1,
                       l2_flush: bool = True, host_bound: bool | None = None,
                       note: str | None = None, sm_clock_mhz: float | None = None,
                       groups: list[list[float]] | None = None, host_enqueue_ms: float | None = None,
                       round_medians_ms: list[float] | None = None) -> TimingStats:
    """Timing statistics with quartiles and the 95% CI of the median (per-call milliseconds).

    ``groups`` splits the same samples by the condition rotated over (places of the weights): the
    median and its CI are then :func:`grouped_median`'s; quartiles, mean and extremes stay pooled.
    """
    clean = [float(s) for s in samples_ms]
    if not clean or any(not math.isfinite(s) or s < 0 for s in clean):
        raise ValueError("per-call times must be a non-empty list of finite, non-negative numbers")
    centre, ci = grouped_median([[float(s) for s in g] for g in groups]) if groups else (median(clean), median_ci(clean))
    return TimingStats(
        method=method, calls=len(clean), calls_per_sample=calls_per_sample,
        mean_ms=mean(clean), median_ms=centre, min_ms=min(clean), max_ms=max(clean),
        std_ms=std(clean), q1_ms=quantile(clean, 0.25), q3_ms=quantile(clean, 0.75),
        ci95_low_ms=ci.low, ci95_high_ms=ci.high, l2_flush=l2_flush, host_bound=host_bound, note=note,
        sm_clock_mhz=sm_clock_mhz, host_enqueue_ms=host_enqueue_ms, round_medians_ms=round_medians_ms,
    )


def round_medians(samples_ms: list[float], rounds: list[int]) -> list[float] | None:
    """The median of each round's samples, by round (``rounds[i]`` is the round of ``samples_ms[i]``,
    counted from 0); ``None`` where a round has no sample or a median that is not positive (a speedup
    then falls back to the ratio of the timings' medians)."""
    by_round: dict[int, list[float]] = {}
    for sample, r in zip(samples_ms, rounds, strict=True):
        by_round.setdefault(r, []).append(sample)
    if not by_round or sorted(by_round) != list(range(len(by_round))):
        return None
    medians = [median(by_round[r]) for r in range(len(by_round))]
    return medians if all(m > 0 and math.isfinite(m) for m in medians) else None
