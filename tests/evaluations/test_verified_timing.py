"""The verified protocol's timing on the CPU: rotated input sets and weights, the plan's options, the baselines'
statistics, and where a CUDA graph's replays stand for the eager call."""

from __future__ import annotations

import pytest
import torch

from evaluations.timing import TimingPlan, time_calls

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
