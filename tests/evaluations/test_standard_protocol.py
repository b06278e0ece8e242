"""The standard protocol's parts, run in-process: seeds, the correctness comparison, the timer."""

from __future__ import annotations

import pytest
import torch

from evaluations.protocols import PROTOCOLS, ProtocolUnavailable, get_protocol, standard


def test_trial_seeds_follow_kernelbench():
    torch.manual_seed(42)
    expected = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(5)]
    assert standard.trial_seeds() == expected
    assert standard.INFO.seeds == expected and len(set(expected)) == 5


def test_protocol_parameters_are_the_documented_ones():
    info = standard.INFO
    assert (info.atol, info.rtol, info.tf32_baseline) == (1e-2, 1e-2, False)
    assert (info.timing.warmup_calls, info.timing.timed_calls, info.timing.statistic, info.timing.l2_flush) == \
        (3, 100, "mean", False)
    assert standard.BASELINE_KINDS == ("eager_fp32",)


def test_compare_accepts_within_tolerance_and_reports_the_budget():
    ref = torch.ones(4, 4)
    ok = standard.compare(ref + 0.005, ref, seed=1, index=0)
    assert ok.passed and ok.error_budget_used == pytest.approx(0.25, rel=1e-3)
    bad = standard.compare(ref + 0.5, ref, seed=1, index=0)
    assert not bad.passed and bad.max_abs_error == pytest.approx(0.5) and "error budget" in bad.message


def test_compare_rejects_shape_and_non_tensors_and_nan():
    ref = torch.zeros(3)
    assert "shape" in standard.compare(torch.zeros(4), ref, 0, 0).message
    assert "not a tensor" in standard.compare([1.0, 2.0, 3.0][0], ref, 0, 0).message
    nan = standard.compare(torch.full((3,), float("nan")), ref, 0, 0)
    assert not nan.passed and nan.error_budget_used is None


def test_host_clock_collects_one_sample_per_call():
    calls = []
    samples = standard.collect_times_ms(lambda: calls.append(1), "cpu", warmup=2, calls=7)
    assert len(samples) == 7 and len(calls) == 9 and all(s >= 0 for s in samples)


def test_registry(monkeypatch):
    assert get_protocol("standard") is standard
    with pytest.raises(ProtocolUnavailable, match="unknown protocol"):
        get_protocol("fastest")
    monkeypatch.setitem(PROTOCOLS, "verified", "evaluations.protocols._absent_for_test")
    with pytest.raises(ProtocolUnavailable, match="not available"):
        get_protocol("verified")
