"""Pure pieces of the verified protocol: statistics, precision policy, distributions and the static scan."""

from __future__ import annotations

import math
import random
from statistics import median

import pytest
import torch

from evaluations.protocols.verified import (
    DISTRIBUTIONS,
    SEED_FLOOR,
    Tolerance,
    ci_half_width_rel,
    draw,
    fresh_seeds,
    judge_precision,
    median_ci,
    median_ci_ranks,
    refresh_in_place,
    scan,
    summarize_verified,
)

TOL = Tolerance(1e-3, 1e-3)


# statistics -------------------------------------------------------------------------------------

def test_median_ci_ranks_match_the_binomial_table():
    assert median_ci_ranks(100) == (40, 61)  # the textbook 95% interval for n = 100
    assert median_ci_ranks(10) == (2, 9)
    assert median_ci_ranks(5) is None  # 2 * 0.5**5 = 6.25% > 5%: no 95% interval exists


def test_median_ci_covers_the_true_median_about_95_percent_of_the_time():
    rng = random.Random(7)
    hits = 0
    for _ in range(400):
        samples = [rng.expovariate(1.0) for _ in range(101)]
        ci = median_ci(samples)
        hits += ci.low <= math.log(2) <= ci.high
    assert 0.93 <= hits / 400 <= 0.995


def test_summary_reports_quartiles_and_ci_in_milliseconds():
    stats = summarize_verified([1.0, 2.0, 3.0, 4.0, 100.0] * 20, "host_clock")
    assert stats.median_ms == 3.0 and stats.q1_ms == 2.0 and stats.q3_ms == 4.0
    assert stats.ci95_low_ms <= stats.median_ms <= stats.ci95_high_ms
    assert stats.max_ms == 100.0 and stats.calls == 100
    with pytest.raises(ValueError):
        summarize_verified([1.0, float("nan")], "host_clock")


def test_ci_half_width_shrinks_with_more_samples():
    rng = random.Random(1)
    few = [1.0 + rng.gauss(0, 0.05) for _ in range(30)]
    many = few + [1.0 + rng.gauss(0, 0.05) for _ in range(3000)]
    assert ci_half_width_rel(many) < ci_half_width_rel(few)


def test_grouped_median_is_steady_where_the_pooled_median_jumps_between_groups():
    from evaluations.protocols.verified import grouped_half_width_rel, grouped_median

    rng = random.Random(3)

    def groups(extra: int) -> list[list[float]]:  # four tight places 1% apart; one place gets a few more samples
        return [[c + rng.gauss(0, 0.0005) for _ in range(50 + (extra if i == 1 else 0))]
                for i, c in enumerate((1.00, 1.01, 1.02, 1.03))]

    a, b = groups(0), groups(6)
    pooled = [median([x for g in a for x in g]), median([x for g in b for x in g])]
    grouped = [grouped_median(a)[0], grouped_median(b)[0]]
    assert abs(pooled[0] - pooled[1]) > 0.004  # six more samples of one place move the pooled median by > 0.4%
    assert abs(grouped[0] - grouped[1]) < 0.0005 and abs(grouped[0] - 1.015) < 0.0005
    centre, ci = grouped_median(a)
    assert ci.low < centre < ci.high and grouped_half_width_rel(a) < 0.002
    assert grouped_median([[2.0, 1.0, 3.0]]) == (2.0, median_ci([1.0, 2.0, 3.0]))  # one group: its own median
    stats = summarize_verified([x for g in a for x in g], "cuda_events", groups=a)
    assert stats.median_ms == centre and stats.calls == 200 and stats.ci95_low_ms == ci.low
    with pytest.raises(ValueError):
        grouped_median([[], []])


# precision policy --------------------------------------------------------------------------------

def test_candidate_within_budget_passes_and_beyond_fails():
    ref = torch.linspace(-2, 2, 101, dtype=torch.float64)
    ok = judge_precision((ref + 5e-4).float(), ref, ref.float(), ref.float(), TOL)
    bad = judge_precision((ref + 5e-2).float(), ref, ref.float(), ref.float(), TOL)
    assert ok.passed and ok.budget < 1
    assert not bad.passed and bad.budget > 10 and "error budget" in bad.message


def test_fp32_overflow_on_x3_inputs_must_be_matched_not_avoided():
    ref = torch.tensor([1e39, 2.0, -1e39], dtype=torch.float64)  # beyond float32's range
    fp32 = ref.float()  # inf, 2, -inf: PyTorch's own float32 overflows
    honest = torch.tensor([float("inf"), 2.0, float("-inf")])
    clipped = torch.tensor([3.4e38, 2.0, -3.4e38])
    assert judge_precision(honest, ref, fp32, fp32, TOL).passed
    verdict = judge_precision(clipped, ref, fp32, fp32, TOL)
    assert not verdict.passed and "overflows" in verdict.message
    nan_where_finite = judge_precision(torch.tensor([float("inf"), float("nan"), float("-inf")]), ref, fp32, fp32, TOL)
    assert not nan_where_finite.passed and "not finite" in nan_where_finite.message


def test_long_reduction_is_held_to_twice_pytorchs_own_float32_error():
    # Sums of 2**24 positive terms: float32 accumulation drifts by ~0.3%, PyTorch's own result included.
    ref = torch.full((16,), float(1 << 24), dtype=torch.float64)
    pytorch32 = (ref * (1 - 3e-3)).float()
    near = judge_precision((ref * (1 - 5e-3)).float(), ref, pytorch32, pytorch32, TOL)
    far = judge_precision((ref * (1 - 7e-3)).float(), ref, pytorch32, pytorch32, TOL)
    assert near.strict_budget == pytest.approx(3.0, rel=1e-3)  # PyTorch float32 itself exceeds the budget
    assert near.passed and near.budget == pytest.approx(5.0, rel=1e-3)  # within 2 x 3.0
    assert not far.passed and "PyTorch float32 itself uses 3" in far.message


def test_tf32_reference_error_is_the_allowance_when_it_is_the_worse_one():
    ref = torch.full((10,), 100.0, dtype=torch.float64)
    strict = ref.float()
    tf32 = (ref * (1 + 2e-3)).float()  # TF32 matmul off by 0.2%: budget ~2
    candidate = (ref * (1 + 3e-3)).float()  # 1.5x TF32's error
    verdict = judge_precision(candidate, ref, strict, tf32, TOL)
    assert verdict.passed and verdict.tf32_budget > 1 and verdict.strict_budget < 1e-3


def test_shape_mismatch_fails_with_both_shapes_named():
    v = judge_precision(torch.zeros(3), torch.zeros(4, dtype=torch.float64), torch.zeros(4), torch.zeros(4), TOL)
    assert not v.passed and "(3,)" in v.message and "(4,)" in v.message


# distributions -----------------------------------------------------------------------------------

def test_distributions_scale_float_inputs_only_under_fresh_seeds():
    assert [d.label for d in DISTRIBUTIONS] == ["D1 x1", "D2 x3", "D3 x0.01", "D4 x(-1)"]
    seeds = fresh_seeds(12)
    assert len(set(seeds)) == 12 and min(seeds) >= SEED_FLOOR
    assert fresh_seeds(5, base=3) == fresh_seeds(5, base=3)

    def get_inputs():
        return [torch.rand(4, 4), torch.randint(0, 10, (4,)), 2.5]

    d1 = draw(get_inputs, DISTRIBUTIONS[0], 11, torch.device("cpu"))
    d4 = draw(get_inputs, DISTRIBUTIONS[3], 11, torch.device("cpu"))
    assert torch.equal(d4[0], -d1[0]) and torch.equal(d4[1], d1[1]) and d4[2] == 2.5


def test_every_draw_is_made_on_the_device_and_one_that_needs_the_host_is_drawn_there_and_moved():
    made_on: list[str] = []

    def get_inputs():
        made_on.append(torch.empty(1).device.type)
        return [torch.ones(4, 4), 3]

    meta = torch.device("meta")  # stands for a GPU: tensors without data, made where asked
    drawn = draw(get_inputs, DISTRIBUTIONS[1], 11, meta)
    assert made_on == ["meta"] and drawn[0].device == meta and drawn[1] == 3
    assert draw(get_inputs, DISTRIBUTIONS[0], 11, torch.device("cpu"))[0].device.type == "cpu"

    def host_only():
        made_on.append(torch.empty(1).device.type)
        return [torch.from_numpy(torch.ones(3).numpy())]  # .numpy() needs a host tensor

    assert draw(host_only, DISTRIBUTIONS[0], 11, meta)[0].device == meta  # drawn on the host, moved
    assert made_on[-2:] == ["meta", "cpu"]


def test_a_seeded_draw_is_reproducible_and_an_unseeded_one_is_refused():
    from evaluations.protocols.verified import NotReproducible, check_reproducible, signature

    def seeded():
        return [torch.randn(5, 3), torch.randint(0, 9, (4,)), torch.tensor([float("nan")]), 2.5]

    cpu = torch.device("cpu")
    first = signature(draw(seeded, DISTRIBUTIONS[0], 11, cpu))
    check_reproducible(seeded, 11, cpu, first)  # NaN counts as equal to NaN
    with pytest.raises(NotReproducible, match="two draws under seed 12 differ in input 0"):
        check_reproducible(seeded, 12, cpu, first)
    assert signature([torch.zeros(0), torch.ones(2, dtype=torch.bool)])[0] == "(0,) torch.float32"
    growing = iter(range(2, 10))
    with pytest.raises(NotReproducible, match="differ in input 1 .*no such input"):  # a draw of another length
        check_reproducible(lambda: [1.0] * next(growing), 5, cpu, ["1.0"])


def test_refresh_keeps_pointer_and_values_but_changes_layout():
    x = torch.arange(12.0).reshape(3, 4)
    ptr, total = x.data_ptr(), float(x.sum())
    refresh_in_place([x])
    assert x.data_ptr() == ptr and float(x.sum()) == total
    assert x[0, 0] == 11.0 and x[0, 1] == 0.0


# static scan -------------------------------------------------------------------------------------

def test_scan_labels_fallback_streams_threads_ctypes_and_patching():
    plain = scan("import torch\nclass ModelNew:\n    def forward(self, x):\n        return torch.relu(x)\n")
    assert plain.language == "pytorch" and plain.labels == ["pytorch-fallback"]
    src = ("import ctypes, threading, torch\nfrom torch.utils.cpp_extension import load_inline\n"
           "s = torch.cuda.Stream()\ntorch.cuda.Event.elapsed_time = lambda a, b: 0.0\n"
           "m = load_inline(name='x', cpp_sources='', cuda_sources='__global__ void k(){}')\n")
    found = scan(src)
    assert found.language == "cuda"
    assert set(found.labels) == {"custom-stream", "threads", "ctypes", "monkey-patching"}
    assert scan("import triton\n@triton.jit\ndef k(x): pass\n").language == "triton"
