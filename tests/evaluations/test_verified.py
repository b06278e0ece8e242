"""Pure pieces of the verified protocol: statistics, precision policy, distributions, scan, checks."""

from __future__ import annotations

import math
import random
from statistics import median

import pytest
import torch

from evaluations.protocols.verified import (
    CHECKS,
    DISTRIBUTIONS,
    SEED_FLOOR,
    CheckLog,
    Tolerance,
    changed_state,
    ci_half_width_rel,
    constant_output,
    draw,
    flags_set,
    fresh_seeds,
    judge_precision,
    median_ci,
    median_ci_ranks,
    mutated_inputs,
    output_type,
    refresh_in_place,
    replaced_functions,
    scan,
    snapshot_flags,
    snapshot_functions,
    snapshot_state,
    storage_overlap,
    summarize_verified,
)
from evaluations.timing import TimingPlan, time_calls

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


# integrity helpers -------------------------------------------------------------------------------

def test_function_patching_is_named_and_restoring_clears_it():
    before = snapshot_functions()
    original = torch.allclose
    torch.allclose = lambda *a, **k: True
    try:
        assert replaced_functions(before) == "torch.allclose was replaced"
    finally:
        torch.allclose = original
    assert replaced_functions(before) is None


def test_global_state_change_is_reported_with_old_and_new_value():
    before = snapshot_state()
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = not old
    try:
        assert f"torch.backends.cudnn.allow_tf32 {old} -> {not old}" in changed_state(before)
    finally:
        torch.backends.cudnn.allow_tf32 = old
    assert changed_state(before) is None


def test_algorithm_choice_flags_are_not_global_state_but_are_reported_as_set():
    state, flags = snapshot_state(), snapshot_flags()
    old = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = not old
    try:
        assert changed_state(state) is None
        assert flags_set(flags) == (("cudnn.benchmark", not old),)
    finally:
        torch.backends.cudnn.benchmark = old
    assert flags_set(flags) == ()


def test_tensor_checks_catch_aliasing_mutation_subclass_and_constant_output():
    x = torch.randn(8, 8)
    assert storage_overlap([x[2:4]], [x]) == "output 0 storage overlaps input 0"
    assert storage_overlap([x.clone()], [x]) is None
    copy = x.clone()
    x[0, 0] += 1
    assert mutated_inputs([x], [copy]) == "the call changed input 0"

    class Sub(torch.Tensor):
        pass

    assert "not exactly torch.Tensor" in output_type([x.as_subclass(Sub)], torch.device("cpu"))
    assert output_type([x], torch.device("cpu")) is None
    ref = torch.randn(8, dtype=torch.float64) * 1e-3
    assert "constant" in constant_output(torch.zeros(8), ref)
    assert constant_output(ref.float(), ref) is None
    assert constant_output(torch.zeros(8), torch.zeros(8, dtype=torch.float64)) is None


def test_check_log_lists_every_check_once_with_evidence_on_failures():
    log = CheckLog()
    log.check("output-aliasing", "output 0 storage overlaps input 0")
    log.check("output-aliasing", "a later, different message")
    log.skip("faster-than-sol", "no roofline floor")
    results = {c.name: c for c in log.results()}
    assert list(results) == list(CHECKS)
    assert not results["output-aliasing"].passed
    assert results["output-aliasing"].evidence == "output 0 storage overlaps input 0"
    assert results["faster-than-sol"].passed and results["faster-than-sol"].evidence.startswith("skipped")
    with pytest.raises(ValueError):
        log.check("no-such-check", "x")


# timing ------------------------------------------------------------------------------------------

def test_host_timing_rotates_refreshed_sets_and_keeps_last_outputs():
    sets = [[torch.randn(64, 64)] for _ in range(3)]
    seen_ptrs: set[int] = set()

    def call(k: int) -> torch.Tensor:
        seen_ptrs.add(sets[k][0].data_ptr())
        return sets[k][0] * 2

    plan = TimingPlan(warmup_s=0.0, min_calls=50, ci_target_rel=0.5, time_cap_s=2.0)
    run = time_calls(call, sets, torch.device("cpu"), plan)
    assert run.stats.method == "host_clock" and run.stats.calls >= 50
    assert run.stats.ci95_low_ms <= run.stats.median_ms <= run.stats.ci95_high_ms
    assert len(seen_ptrs) == 3 and sorted(run.last_outputs) == [0, 1, 2]
    for k, out in run.last_outputs.items():  # each kept output matches its set's current contents
        assert torch.equal(out, sets[k][0] * 2)


def test_weights_rotate_over_placements_with_the_same_values_and_come_back():
    from evaluations.timing.placements import _Placements

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8)).eval()  # buffers in use
    own = {id(t): t.data_ptr() for t in (*model.parameters(), *model.buffers()) if t.numel()}
    x = torch.randn(4, 8)
    expected = model(x)
    places = _Placements(model, 4)
    assert places.count == 4 and len(places.tensors) == len(own)
    seen = set()
    for j in range(4):
        places.use(j)
        seen.add(model[0].weight.data_ptr())
        assert torch.equal(model(x), expected)  # another place, the same values
    assert len(seen) == 4
    places.restore()
    assert {id(t): t.data_ptr() for t in (*model.parameters(), *model.buffers()) if t.numel()} == own
    assert places.count == 1 and len(places.places) == 1


def test_placements_fit_the_memory_budget_and_need_tensors(monkeypatch):
    from evaluations.timing import placements

    model = torch.nn.Linear(256, 256)  # ~257 KiB of weights
    monkeypatch.setattr(placements, "PLACEMENT_BYTES_BUDGET", 600 << 10)  # where _Placements looks it up
    assert placements._Placements(model, 4).count == 3  # itself and two copies within 600 KiB
    assert placements._Placements(model, 1).count == 1
    assert placements._Placements(torch.nn.ReLU(), 4).count == 1  # no weights: nothing to move
    assert placements._Placements(None, 4).count == 1  # a plain function
    assert TimingPlan().placements == 16 and TimingPlan.of({"placements": 1}).placements == 1


def test_timing_options_override_the_plan():
    plan = TimingPlan.of({"min_calls": 40, "time_cap_s": 1, "unrelated": 3})
    assert plan.min_calls == 40 and plan.time_cap_s == 1.0 and plan.ci_target_rel == 0.005
    assert plan.flush == "write" and TimingPlan.of({"flush": "read"}).flush == "read"  # the protocol zeroes


# baselines ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["eager_tf32", "eager_fp32"])
def test_baseline_is_timed_with_median_and_ci(kind, tmp_path):
    from evaluations.protocols import verified
    from evaluations.zoo import load_manifest, zoo_job

    entry = next(e for e in load_manifest() if e.problem == "6_row_sum.py")
    job = zoo_job(entry, "verified", "cpu", {"time_cap_s": 0.3, "warmup_s": 0.01, "min_calls": 20}, str(tmp_path))
    job = type(job)(problem=job.problem, protocol="verified", device="cpu", baseline_kind=kind,
                    build_dir=str(tmp_path), options=job.options)
    outcome = verified.run_baseline(job)
    assert outcome.kind == kind and outcome.timing.calls >= 20
    assert outcome.timing.ci95_low_ms <= outcome.timing.median_ms <= outcome.timing.ci95_high_ms
    assert verified.measure_memory(job) is None  # no device memory on the CPU
    assert verified.SPEEDUP_BASELINE == {"vs_eager": "eager_tf32", "vs_compile": "compile", "vs_eager_fp32": "eager_fp32"}
    with pytest.raises(ValueError):
        verified.run_baseline(type(job)(problem=job.problem, protocol="verified", device="cpu", baseline_kind="eager_fp16"))


class _StandInGraph:
    """Replays what it was given: the call's work (a graph that holds it) or nothing (a graph whose
    work ran outside the capturing stream)."""

    def __init__(self, replay: object) -> None:
        self.replay = replay


def _capture_case(after_capture: str, replay_does: str) -> str | None:
    """``work_outside_capture`` on two input sets whose 'graph' outputs are static tensors, as a real capture
    leaves them: ``after_capture`` ``unset`` (a capture records work without running it) or ``computed`` (a kernel
    on the legacy default stream ran during capture, on the values of then); a replay does the call's work
    (``work``), nothing (a pure ``<<<>>>`` kernel: nothing was captured) or zeroes the outputs (a captured
    ``torch::zeros`` around an uncaptured kernel). ``_synchronize`` is a no-op on the CPU."""
    from evaluations.timing import graphs

    sets = [[torch.arange(6, dtype=torch.float32) + 10 * k] for k in range(2)]

    def call(k: int) -> torch.Tensor:
        return sets[k][0] * 2 + 1

    outs = {k: torch.full((6,), float("nan")) if after_capture == "unset" else call(k) for k in range(2)}

    def replay() -> None:
        for k, out in outs.items():
            if replay_does == "work":
                out.copy_(call(k))
            elif replay_does == "zeros":
                out.zero_()

    return graphs.work_outside_capture(_StandInGraph(replay), outs, call, sets)  # type: ignore[arg-type]


def test_a_graph_is_used_only_where_its_replays_do_the_call_s_work_as_an_eager_call_does(monkeypatch):
    """An honest capture leaves its outputs unwritten until a replay fills them: its graph is used (verified 1.3
    compared the outputs right after capture too, and refused the graphs of plain PyTorch baselines). A kernel on
    the legacy default stream runs outside the capture: its outputs are right once and then stay (a pure ``<<<>>>``
    kernel), or a replay runs only the captured torch ops around it. Neither graph is timed: eager calls on the
    default stream are, and their re-check finds a stale answer where there is one (1.2 kept the graph whose
    outputs were wrong right after capture without replaying it, and called its replays' stale outputs a hack)."""
    from evaluations.timing import graphs

    monkeypatch.setattr(graphs, "_synchronize", lambda: None)
    assert _capture_case("unset", "work") is None  # an honest capture: graph used
    assert _capture_case("computed", "work") is None  # right after capture and at every replay: graph used
    for after_capture, replay_does in (("computed", "nothing"), ("computed", "zeros"), ("unset", "zeros"),
                                       ("unset", "nothing")):
        evidence = _capture_case(after_capture, replay_does)
        assert evidence is not None and "a replay on new values of input set 0" in evidence, (after_capture, replay_does)
        assert "differs from an eager call's" in evidence


def test_graph_outputs_are_compared_within_float_noise_by_shape_and_exactly_for_integers():
    from evaluations.timing import output_mismatch

    x = torch.linspace(-1, 1, 50)
    assert output_mismatch([x + 1e-6], [x]) is None
    assert output_mismatch([x + 0.01], [x]) == "output 0 differs from an eager call's on the same inputs"
    assert output_mismatch([x, x[:3]], [x, x]) == "output 1 has shape (3,), an eager call's (50,)"
    nan = torch.tensor([float("nan"), 1.0])
    assert output_mismatch([nan], [nan.clone()]) is None and output_mismatch([nan], [torch.tensor([0.0, 1.0])]) is not None
    inf = torch.tensor([float("inf"), -float("inf"), 1.0])  # an overflow the graph and the eager call share
    assert output_mismatch([inf], [inf.clone()]) is None and output_mismatch([inf], [-inf]) is not None
    assert output_mismatch([torch.tensor([1, 2])], [torch.tensor([1, 3])]) is not None
    assert output_mismatch(["not a tensor"], [x]) is None


def test_a_graph_reusing_one_output_buffer_is_judged_by_the_last_calls_answer(monkeypatch):
    from evaluations.timing import graphs

    monkeypatch.setattr(graphs, "_synchronize", lambda: None)
    sets = [[torch.arange(6, dtype=torch.float32) + 10 * k] for k in range(3)]
    buffer = torch.empty(6)

    def call(k: int) -> torch.Tensor:
        return torch.mul(sets[k][0], 2, out=buffer)

    outs = {k: call(k) for k in range(3)}  # all three are the buffer, holding set 2's answer

    def replay() -> None:
        for k in outs:
            call(k)

    assert graphs.work_outside_capture(_StandInGraph(replay), outs, call, sets) is None  # type: ignore[arg-type]
    evidence = graphs.work_outside_capture(_StandInGraph(lambda: None), outs, call, sets)  # type: ignore[arg-type]
    assert evidence is not None and "input set 2" in evidence


def test_the_output_kept_for_each_timing_set_counts_toward_their_number():
    """KernelBench's current L1/9 multiplies 8 MB of inputs into a 4 GiB output: sized by its inputs alone, its
    timing rotated 16 sets and kept 16 outputs (a worker held 124 GiB of an H200); with the outputs counted, it
    rotates the fewest sets, while a problem whose sets are small still gets the most."""
    from evaluations.protocols.verified import Settings, set_count

    settings = Settings.of({"seed": 3})
    inputs = [torch.empty(32768, 32, device="meta"), torch.empty(32, 32768, device="meta")]
    assert set_count(inputs, settings) == 16
    assert set_count(inputs, settings, output_bytes=32768 * 32768 * 4) == 2
    assert set_count(inputs, settings, output_bytes=4096 * 4) == 16


def test_a_call_that_draws_random_numbers_is_told_from_one_that_re_seeds_the_generator():
    """Drawing moves the generator on (label draws-random, not a finding); a new seed, or the state put back at
    the start of the seed in use, makes the next draws predictable (global-state)."""
    from evaluations.protocols import verified as ig

    torch.manual_seed(1234)
    torch.rand(3)
    before = ig.rng_snapshot()
    assert ig.rng_change(before) == (False, None)  # nothing happened
    torch.randn(100)
    assert ig.rng_change(before) == (True, None)  # a draw
    before = ig.rng_snapshot()
    torch.manual_seed(42)
    moved, evidence = ig.rng_change(before)
    assert moved and "its seed changed" in (evidence or "")
    torch.rand(5)
    before = ig.rng_snapshot()
    torch.manual_seed(torch.initial_seed())
    moved, evidence = ig.rng_change(before)
    assert moved and "put back at the start of its seed" in (evidence or "")
