"""A problem whose eager time follows the host's own speed, under the verified protocol on a CUDA GPU.

Its reference reads a value back to the host in every call, so no CUDA graph can hold it, and its
400 launches take the host longer than the device: every candidate is timed in turns with fresh
timings of the three baselines, each in its own worker. These tests run only where torch sees a GPU.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import schemas
from evaluations.cli import main
from evaluations.protocols import host_speed_bound
from schemas import validate

pytestmark = pytest.mark.gpu
IN_TURNS = "timed in turns with 3 other process(es) timing the same problem"


def test_candidates_of_a_host_speed_bound_problem_are_timed_in_turns_with_fresh_baselines(tmp_path, fixtures_dir):
    folder, out, build = fixtures_dir / "gpu" / "turns", tmp_path / "out", tmp_path / "build"
    assert main(["eval", "--problems", str(folder / "problems"), "--candidates", str(folder / "candidates"),
                 "--model", "gpu-fixtures", "--protocol", "verified", "--out", str(out), "--build-dir", str(build),
                 "--device", "cuda", "--timeout", "300", "--no-progress"]) == 0
    loaded = [schemas.load_record(p) for p in out.rglob("*.json")]
    records = {Path(r.kernel.path).name: r for r in loaded if isinstance(r, schemas.Record)}
    stored = {b.kind: b for b in loaded if isinstance(b, schemas.BaselineRecord)}

    eager = stored["eager_tf32"].timing
    assert eager.method == "cuda_events" and host_speed_bound(eager), eager.note
    assert "capture as a CUDA graph failed" in (eager.note or "")

    honest = records["1_syncing_small_ops.py"]
    assert honest.status == "correct", honest.integrity
    assert IN_TURNS in (honest.timing.note or ""), honest.timing.note
    assert "every turn on host core" in (honest.timing.note or "")
    for b in honest.baselines:
        assert b.baseline_id is None and IN_TURNS in (b.timing.note or ""), (b.kind, b.timing.note)
        assert b.timing.median_ms != stored[b.kind].timing.median_ms  # timed anew, beside the candidate
    assert 0.8 < honest.speedup.vs_eager < 1.25, honest.speedup  # the same kernels, timed in turns
    in_turns = {b.kind: b.timing for b in honest.baselines}
    rounds = {kind: t.round_medians_ms for kind, t in in_turns.items()}
    assert honest.timing.round_medians_ms and all(rounds.values()), rounds  # each round's median kept
    ratios = [e / c for e, c in zip(rounds["eager_tf32"], honest.timing.round_medians_ms, strict=False)]
    assert honest.speedup.vs_eager == pytest.approx(statistics.median(ratios))  # the median of per-round ratios
    assert [f for f in validate(root=out) if f.field.startswith(("speedup", "timing", "baselines"))] == []
    print(f"self-speedup in turns: vs_eager {honest.speedup.vs_eager:.4f}, vs_compile {honest.speedup.vs_compile:.4f}, "
          f"vs_eager_fp32 {honest.speedup.vs_eager_fp32:.4f} over {len(ratios)} rounds (ratio of the medians: "
          f"vs_eager {in_turns['eager_tf32'].median_ms / honest.timing.median_ms:.4f}); candidate note: {honest.timing.note}")

    wrong = records["1_syncing_small_ops__wrong.py"]  # never timed: the baselines' workers were stopped
    assert wrong.status == "incorrect" and wrong.timing is None
    assert all(b.baseline_id for b in wrong.baselines)
    for path in (build / "turns").glob("*.json"):
        assert all(json.loads(path.read_text())["gone"])
