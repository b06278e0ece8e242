"""The exploit zoo where calls are timed as CUDA graph replays.

The zoo's problems take over 0.1 ms per call on an H200, so its records are timed eager. Here the
zoo's fused-chain problem runs at its small (CPU test) size, a few microseconds per call, which the
verified protocol times as replays of CUDA graphs: its exploits must still be flagged by the checks
their manifest entries name, and its honest kernels must pass. Runs only where torch sees a GPU.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import schemas
from evaluations.cli import main
from evaluations.zoo import ZOO_DIR, load_manifest

pytestmark = pytest.mark.gpu

PROBLEM = "5_bias_gelu_residual.py"
LEGACY_STREAM = {"5_bias_gelu_residual__cuda_fused.py"}
"""Honest kernels launched as ``kernel<<<grid, block>>>`` (the legacy default stream), which a CUDA graph
captured on its own stream does not hold: they are timed eager, and the note says why."""
SIZE_SWITCH = "SMALL = not torch.cuda.is_available()"
BATCH, DIM = 64, 256
"""The problem's small size (its ``SMALL`` branch): the roofline figures are scaled to it."""


def _short_problem(folder: Path) -> None:
    """The zoo problem at its small size, with its roofline figures for that size."""
    folder.mkdir()
    source = (ZOO_DIR / "problems" / PROBLEM).read_text(encoding="utf-8")
    assert SIZE_SWITCH in source and f"({BATCH}, {DIM}) if SMALL" in source
    (folder / PROBLEM).write_text(source.replace(SIZE_SWITCH, "SMALL = True"), encoding="utf-8")
    meta = json.loads((ZOO_DIR / "problems" / "meta.json").read_text(encoding="utf-8"))
    entry = dict(meta["problems"][PROBLEM])
    assert entry["min_bytes"] == 2 * 8192 * 8192 * 4 + 2 * 8192 * 4  # x read, y written, w and b read: full size
    entry.update(flops=entry["flops"] * BATCH * DIM // (8192 * 8192), min_bytes=2 * BATCH * DIM * 4 + 2 * DIM * 4)
    (folder / "meta.json").write_text(json.dumps({**meta, "problems": {PROBLEM: entry}}), encoding="utf-8")


def test_exploits_timed_as_graph_replays_are_still_flagged_and_honest_kernels_pass(tmp_path):
    problems, candidates, out = tmp_path / "problems", tmp_path / "candidates", tmp_path / "out"
    _short_problem(problems)
    entries = [e for e in load_manifest() if e.problem == PROBLEM]
    assert {e.kind for e in entries} == {"exploit", "honest"}
    candidates.mkdir()
    for entry in entries:
        shutil.copyfile(entry.path, candidates / entry.path.name)
    assert main(["eval", "--problems", str(problems), "--candidates", str(candidates), "--model", "gpu-zoo-short",
                 "--protocol", "verified", "--out", str(out), "--build-dir", str(tmp_path / "build"),
                 "--device", "cuda", "--timeout", "300", "--no-progress"]) == 0
    loaded = [schemas.load_record(p) for p in out.rglob("*.json")]
    records = {Path(r.kernel.path).name: r for r in loaded if isinstance(r, schemas.Record)}
    baselines = {b.kind: b for b in loaded if isinstance(b, schemas.BaselineRecord)}
    eager = baselines["eager_tf32"].timing
    assert eager.method == "cuda_graph" and eager.calls_per_sample > 1, eager.note  # the path under test
    for entry in entries:
        record = records[entry.path.name]
        failed = {c.name for c in record.integrity if not c.passed}
        if entry.kind == "exploit":
            assert record.status == "hacked" and entry.expected_check in failed, (entry.file, record.status, failed)
        else:
            assert record.status == "correct", (entry.file, record.error, failed)
            if entry.path.name in LEGACY_STREAM:
                assert "<<<blocks, threads>>>" in entry.path.read_text(encoding="utf-8")
                assert record.timing.method == "cuda_events", record.timing.note
                assert "a captured CUDA graph missed the call's work" in record.timing.note
            else:
                assert record.timing.method == "cuda_graph", (entry.file, record.timing.note)
