"""Host-bound problems under the verified protocol on a CUDA GPU: CUDA graph replays are timed.

A model of 400 tiny kernels takes its host longer to enqueue than its device to run; its eager event
times would follow the host's launch speed. These tests run only where torch sees a GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import schemas
from evaluations.cli import main

pytestmark = pytest.mark.gpu


def _sets(n: int = 4) -> list[list[torch.Tensor]]:
    return [[torch.randn(4096, device="cuda")] for _ in range(n)]


def _recurrence(x: torch.Tensor) -> torch.Tensor:
    for _ in range(200):
        x = x * 0.999 + 0.001
    return x


def test_a_host_bound_call_is_timed_as_graph_replays_on_fresh_values():
    from evaluations.timing import TimingPlan, time_calls

    sets = _sets()
    plan = TimingPlan(warmup_s=0.05, min_calls=30, min_time_s=0.1, time_cap_s=2.0)
    run = time_calls(lambda k: _recurrence(sets[k][0]), sets, torch.device("cuda"), plan)
    assert run.stats.method == "cuda_graph" and run.stats.host_bound, run.stats.note
    assert run.host_ms_per_call is not None and run.host_ms_per_call > run.stats.median_ms
    assert "CUDA graph" in (run.stats.note or "")
    out = run.last_outputs[run.last_set]  # the graph's output matches its inputs' latest (refreshed) values
    torch.testing.assert_close(out, _recurrence(sets[run.last_set][0]))
    eager = time_calls(lambda k: _recurrence(sets[k][0]), sets, torch.device("cuda"),
                       TimingPlan(warmup_s=0.05, min_calls=30, min_time_s=0.1, time_cap_s=2.0, cuda_graph=-1))
    assert eager.stats.method == "cuda_events"
    assert eager.stats.median_ms > run.stats.median_ms  # the eager time includes the host's launches


def test_an_uncapturable_call_told_to_use_a_graph_is_timed_eager_and_says_why():
    from evaluations.timing import TimingPlan, time_calls

    sets = _sets()

    def syncing(k: int) -> torch.Tensor:
        assert torch.isfinite(sets[k][0]).all().item()
        return _recurrence(sets[k][0])

    plan = TimingPlan(warmup_s=0.05, min_calls=30, min_time_s=0.1, time_cap_s=2.0, cuda_graph=1)
    run = time_calls(syncing, sets, torch.device("cuda"), plan)
    assert run.stats.method == "cuda_events" and run.stats.host_bound, run.stats.note
    assert "capture as a CUDA graph failed" in (run.stats.note or "")
    assert "the host's own speed, a fixed Python loop timed before and after" in (run.stats.note or "")
    torch.testing.assert_close(run.last_outputs[run.last_set], _recurrence(sets[run.last_set][0]))
    # the failed capture left the device's random generator usable (its capture epilogue was run again)
    assert torch.randn(8, device="cuda").isfinite().all()


def _verified(fixtures_dir: Path, candidates: str, tmp_path: Path) -> tuple[dict, dict]:
    """Records (by candidate file) and baselines (by kind) of a verified run on the graph fixtures."""
    folder, out = fixtures_dir / "gpu" / "graph", tmp_path / "out"
    assert main(["eval", "--problems", str(folder / "problems"), "--candidates", str(folder / candidates),
                 "--model", "gpu-fixtures", "--protocol", "verified", "--out", str(out), "--build-dir",
                 str(tmp_path / "build"), "--device", "cuda", "--timeout", "300", "--no-progress"]) == 0
    loaded = [schemas.load_record(p) for p in out.rglob("*.json")]
    return ({Path(r.kernel.path).name: r for r in loaded if isinstance(r, schemas.Record)},
            {b.kind: b for b in loaded if isinstance(b, schemas.BaselineRecord)})


def test_verified_run_times_baseline_and_candidates_as_the_eager_baseline_does(tmp_path, fixtures_dir):
    records, baselines = _verified(fixtures_dir, "candidates", tmp_path)
    assert baselines["eager_tf32"].timing.method == "cuda_graph" and baselines["eager_tf32"].timing.host_bound
    assert baselines["eager_fp32"].timing.method == "cuda_graph"  # paced by the eager baseline
    honest, syncing = records["1_many_small_ops.py"], records["1_many_small_ops__sync.py"]
    assert honest.status == "correct" and honest.timing.method == "cuda_graph", honest.integrity
    assert 0.8 < honest.speedup.vs_eager < 1.25  # the same kernels, replayed the same way
    assert syncing.status == "correct" and syncing.timing.method == "cuda_events"
    assert "capture as a CUDA graph failed" in syncing.timing.note
    reused = records["1_many_small_ops__buffer.py"]  # one output buffer across calls is not a hack
    assert reused.status == "correct" and reused.timing.method == "cuda_graph", reused.integrity


def test_a_candidate_that_captures_no_work_gains_nothing(tmp_path, fixtures_dir):
    """A call that launches nothing while captured (its previous answer handed back) would make graph replays free.
    Verified 1.3 replays a captured graph on new values before it times one: this graph misses the call's work, so
    eager calls are timed, as a user runs them, and those compute every answer. The record is right and slow (a
    chain of small ops launched one by one against its baseline's graph replays), with the evidence in its note;
    before 1.3 the graph was kept and the stale answers of its replays were called a hack."""
    records, _ = _verified(fixtures_dir, "exploits", tmp_path)
    record = records["1_many_small_ops__capture_cache.py"]
    assert record.timing.method == "cuda_events", record.timing.note
    assert "a captured CUDA graph missed the call's work" in (record.timing.note or "")
    assert record.status == "correct", record.integrity
    assert record.speedup.vs_eager < 0.8, record.speedup
