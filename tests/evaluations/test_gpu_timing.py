"""The verified timing on a CUDA GPU: weights rotated over places in memory, timing sets drawn on the device.

These tests run only where torch sees a GPU.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.gpu


class _Scaled(torch.nn.Module):
    """``steps`` tiny kernels, each reading a weight: host-bound, so timed as graph replays."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps
        self.w = torch.nn.Parameter(torch.full((4096,), 0.999))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            x = x * self.w + 0.001
        return x


def _own_places(model: torch.nn.Module) -> list[int]:
    return [t.data_ptr() for t in (*model.parameters(), *model.buffers())]


def test_weights_rotate_over_places_and_come_back_with_the_same_answers():
    from evaluations.timing import PLACEMENTS, TimingPlan, time_calls

    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda()
    own = _own_places(model)
    sets = [[torch.randn(512, 1024, device="cuda")] for _ in range(6)]
    seen: set[int] = set()

    def call(k: int) -> torch.Tensor:
        seen.add(model[0].weight.data_ptr())
        return model(*sets[k])

    # eager calls (a call this short is otherwise a graph replay): the weights move sample by sample
    plan = TimingPlan(warmup_s=0.05, min_calls=60, time_cap_s=2.0, min_time_s=0.1, graph_short=False)
    run = time_calls(call, sets, torch.device("cuda"), plan, module=model)
    note = run.stats.note or ""
    assert run.stats.method == "cuda_events" and f"weights rotated over {PLACEMENTS} places in memory" in note
    per_place = [float(m) for m in note.split("mean of their medians (")[1].split(" ms)")[0].split(", ")]
    assert len(per_place) == PLACEMENTS
    assert abs(run.stats.median_ms - sum(per_place) / PLACEMENTS) < 1e-3 * run.stats.median_ms
    assert len(seen) == PLACEMENTS and _own_places(model) == own  # all places used, the model's own back at the end
    with torch.no_grad():
        for k, out in run.last_outputs.items():
            torch.testing.assert_close(out, model(*sets[k]), rtol=1e-5, atol=1e-5)
    fixed = time_calls(call, sets, torch.device("cuda"), dataclasses.replace(plan, placements=1), module=model)
    assert "rotated" not in (fixed.stats.note or "")


def test_a_host_bound_graph_timing_rotates_one_graph_per_place_and_gives_the_weights_back():
    from evaluations.timing import PLACEMENTS, TimingPlan, time_calls

    model = _Scaled(300).cuda()
    own = _own_places(model)
    sets = [[torch.randn(4096, device="cuda")] for _ in range(4)]
    plan = TimingPlan(warmup_s=0.05, min_calls=30, time_cap_s=2.0, min_time_s=0.1)
    with torch.no_grad():
        run = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"), plan, module=model)
        note = run.stats.note or ""
        assert run.stats.method == "cuda_graph" and "host-bound" in note
        assert f"weights rotated over {PLACEMENTS} places" in note
        assert _own_places(model) == own  # the copies are gone, the model's own tensors back
        for k, out in run.last_outputs.items():
            torch.testing.assert_close(out, model(*sets[k]), rtol=1e-5, atol=1e-5)
        earlier = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"),
                             dataclasses.replace(plan, graph_short=False), module=model)
        assert earlier.stats.method == "cuda_graph" and "rotated" not in (earlier.stats.note or "")
        assert _own_places(model) == own  # one graph at the module's own place: nothing swapped in


def test_timing_sets_are_drawn_on_the_device():
    from evaluations.protocols.verified import Settings, timing_sets

    made_on: list[str] = []

    def get_inputs() -> list[torch.Tensor]:
        made_on.append(torch.empty(1).device.type)
        return [torch.randn(1 << 20)]

    sets = timing_sets(get_inputs, Settings.of({"seed": 5, "input_sets": 3}), torch.device("cuda"))
    assert len(sets) == 3 and made_on == ["cuda"] * 3
    assert all(s[0].is_cuda for s in sets) and not torch.equal(sets[0][0], sets[1][0])
    again = timing_sets(get_inputs, Settings.of({"seed": 5, "input_sets": 3}), torch.device("cuda"))
    assert all(torch.equal(a[0], b[0]) for a, b in zip(sets, again, strict=True))  # seeded: reproducible


def test_short_calls_are_timed_as_graphs_one_per_place():
    from evaluations.protocols import pacing_of
    from evaluations.timing import PLACEMENTS, TimingPlan, time_calls

    model = torch.nn.Linear(64, 32).cuda()
    own = _own_places(model)
    sets = [[torch.randn(128, 64, device="cuda")] for _ in range(16)]
    plan = TimingPlan(warmup_s=0.05, min_calls=60, time_cap_s=2.0, min_time_s=0.1, graph_short=True)
    with torch.no_grad():
        run = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"), plan, module=model)
        note = run.stats.note or ""
        assert run.stats.method == "cuda_graph" and run.stats.calls_per_sample > 1
        assert "one graph per place" in note and f"weights rotated over {PLACEMENTS} places" in note
        assert _own_places(model) == own
        for k, out in run.last_outputs.items():  # each kept output answers its set's current contents
            torch.testing.assert_close(out, model(*sets[k]), rtol=1e-5, atol=1e-5)
        paced = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"),
                           dataclasses.replace(plan, **pacing_of(run.stats)), module=model)
        assert paced.stats.method == "cuda_graph" and paced.stats.calls_per_sample == run.stats.calls_per_sample
    default = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"),
                         dataclasses.replace(plan, graph_short=False), module=model)
    assert default.stats.method == "cuda_events"  # the earlier way, kept for benchmarks: short calls eager
    assert TimingPlan().graph_short  # the protocol's: short calls as graph replays


def test_a_call_paced_onto_graphs_is_labelled_by_its_own_probe():
    """A candidate told to use graphs by a short (or host-bound) eager baseline, but itself a long call
    with a quick host, is timed as graph replays and not called host-bound or short."""
    from evaluations.timing import TimingPlan, time_calls

    model = torch.nn.Linear(4096, 4096).cuda()
    sets = [[torch.randn(2048, 4096, device="cuda")] for _ in range(4)]
    plan = TimingPlan(warmup_s=0.05, min_calls=30, time_cap_s=2.0, min_time_s=0.1, cuda_graph=1, calls_per_sample=1)
    with torch.no_grad():
        run = time_calls(lambda k: model(*sets[k]), sets, torch.device("cuda"), plan, module=model)
    note = run.stats.note or ""
    assert run.stats.method == "cuda_graph" and run.stats.median_ms > 0.1, note
    assert not run.stats.host_bound and "neither short nor host-bound" in note, note
    assert "short call" not in note and "method set by the problem's eager baseline" in note


def test_a_trial_drawn_on_the_device_is_the_same_in_the_worker_and_in_its_judge(tmp_path):
    """Every draw of the verified protocol is made on the device: the judge, a process that never saw the
    candidate, must draw the very inputs the candidate's worker drew from the same seed."""
    from evaluations.run import run_isolated

    def drawn(tag: str, seed: int) -> list[float]:
        result = run_isolated("isolation_targets:draw_on_cuda", seed, timeout_s=120, log_path=tmp_path / f"{tag}.log")
        assert result.ok, (result.failure, result.output_tail)
        return result.value

    worker, judge, other = drawn("worker", 10_000_019), drawn("judge", 10_000_019), drawn("other", 10_000_020)
    assert worker == judge
    assert worker != other


def test_inputs_left_uninitialised_are_found_not_reproducible_on_the_device():
    """A get_inputs() with torch.empty reads whatever the allocator held: another process (the judge) would read
    other values. The eager baseline's second draw under the seed fills the free memory first, so it shows."""
    from evaluations.protocols.verified import (
        DISTRIBUTIONS,
        NotReproducible,
        check_reproducible,
        draw,
        prefill_allocator,
        signature,
    )

    def uninitialised() -> list[torch.Tensor]:
        return [torch.empty(1 << 20)]

    def seeded() -> list[torch.Tensor]:
        return [torch.randn(1 << 20)]

    cuda = torch.device("cuda")
    check_reproducible(seeded, 7, cuda, signature(draw(seeded, DISTRIBUTIONS[0], 7, cuda)))
    prefill_allocator(cuda, zero=True)  # the first draw reads zeros
    first = signature(draw(uninitialised, DISTRIBUTIONS[0], 7, cuda))
    with pytest.raises(NotReproducible, match="not a function of its seed on cuda"):
        check_reproducible(uninitialised, 7, cuda, first)


_LEGACY_SRC = r"""
#include <torch/extension.h>
__global__ void add_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
torch::Tensor add_one_legacy(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    add_one<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""


def test_a_kernel_on_the_legacy_default_stream_is_timed_eagerly_and_plain_torch_as_graphs(tmp_path):
    """A ``<<<grid, block>>>`` kernel with no stream is not in a graph captured on another stream: eager calls on
    the default stream are timed, with the evidence (``graph_unsafe``), and their outputs are right. A plain
    PyTorch call of the same size keeps its graph: its outputs are not compared right after capture, when a capture
    has not run them yet."""
    from torch.utils.cpp_extension import load_inline

    from evaluations.timing import TimingPlan, time_calls

    ext = load_inline(name="kv_test_legacy_add_one", cpp_sources="torch::Tensor add_one_legacy(torch::Tensor x);",
                      cuda_sources=_LEGACY_SRC, functions=["add_one_legacy"], build_directory=str(tmp_path))
    sets = [[torch.randn(4096, device="cuda")] for _ in range(16)]
    plan = TimingPlan(warmup_s=0.05, min_calls=60, time_cap_s=2.0, min_time_s=0.1, graph_short=True)
    with torch.no_grad():
        plain = time_calls(lambda k: sets[k][0] + 1, sets, torch.device("cuda"), plan)
        assert plain.stats.method == "cuda_graph" and plain.graph_unsafe is None, plain.stats.note
        legacy = time_calls(lambda k: ext.add_one_legacy(sets[k][0]), sets, torch.device("cuda"), plan)
    note = legacy.stats.note or ""
    assert legacy.stats.method == "cuda_events", note
    # captured without the kernel (the evidence kept, label legacy-stream), or a capture that failed outright
    assert (legacy.graph_unsafe and "missed the call's work" in note) or "capture as a CUDA graph failed" in note, note
    for k, out in legacy.last_outputs.items():
        torch.testing.assert_close(out, sets[k][0] + 1)
