"""A bundle row's own claim reaches its record beside the measured speedup, and the row's source is named."""

from __future__ import annotations

import json
from pathlib import Path

import schemas
from evaluations.cli import main

QUICK = ["--timed-calls", "3", "--warmup-calls", "1", "--trials", "1", "--no-progress", "--device", "cpu",
         "--protocol", "standard"]


def test_claim_lands_in_the_record(tmp_path: Path, fixtures_dir: Path) -> None:
    row = {"level": 1, "problem_id": 1, "problem_name": "1_tiny_relu.py",
           "problem_source": (fixtures_dir / "problems" / "1_tiny_relu.py").read_text(),
           "kernel_source": (fixtures_dir / "candidates" / "1_tiny_relu.py").read_text(),
           "claimed": {"speedup": 1.25, "runtime_triton_us": 0.5, "runtime_original_us": 0.625}}
    bundle = tmp_path / "mine.jsonl"
    bundle.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    argv = ["eval", "--candidates", str(bundle), "--model", "m", "--out", str(out),
            "--build-dir", str(tmp_path / "build"), *QUICK]
    assert main(argv) == 0
    records = [r for p in out.rglob("*.json") if isinstance(r := schemas.load_record(p), schemas.Record)]
    assert len(records) == 1
    record = records[0]
    assert record.status == "correct" and record.speedup.vs_eager is not None
    assert record.claimed == schemas.Claimed(speedup=1.25, baseline="eager", ms=0.5, source_field="claimed.speedup")
    assert record.kernel.path == "mine.jsonl" and record.kernel.row == 0
