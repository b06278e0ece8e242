"""Pure statistics of per-call times."""

from __future__ import annotations

import statistics

import pytest

from evaluations.protocols import mean, median, quantile, std, summarize
from schemas import statistic_ms


def test_statistics_match_hand_values():
    samples = [4.0, 1.0, 3.0, 2.0]
    assert mean(samples) == 2.5
    assert median(samples) == 2.5
    assert median([5.0, 1.0, 3.0]) == 3.0
    assert std(samples) == pytest.approx(statistics.stdev(samples))
    assert std([7.0]) == 0.0
    assert quantile(samples, 0.0) == 1.0 and quantile(samples, 1.0) == 4.0
    assert quantile(samples, 0.25) == pytest.approx(1.75)


def test_empty_and_out_of_range_are_refused():
    with pytest.raises(ValueError):
        mean([])
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)


def test_summarize_gives_valid_timing_and_the_protocol_statistic():
    stats = summarize([1.0, 2.0, 3.0, 10.0], "host_clock")
    assert (stats.calls, stats.min_ms, stats.max_ms) == (4, 1.0, 10.0)
    assert statistic_ms(stats, "mean") == 4.0
    assert statistic_ms(stats, "median") == 2.5
    assert stats.q1_ms <= stats.median_ms <= stats.q3_ms


def test_summarize_refuses_impossible_times():
    with pytest.raises(ValueError):
        summarize([1.0, -0.5], "host_clock")
    with pytest.raises(ValueError):
        summarize([float("nan")], "cuda_events")


def test_the_sm_clock_reading_is_kept_with_the_timing_and_bad_readings_are_dropped():
    from evaluations.protocols.verified import summarize_verified
    from evaluations.timing import clock_median

    stats = summarize_verified([1.0, 1.1, 0.9], "cuda_events", sm_clock_mhz=clock_median([1980.0, float("nan"), 1965.0, 0.0]))
    assert stats.sm_clock_mhz == 1972.5
    assert summarize_verified([1.0], "host_clock").sm_clock_mhz is None
    assert clock_median([float("nan")]) is None
