"""The standard protocol on a CUDA GPU: a CUDA load_inline kernel and a Triton kernel, and crashes.

These run only where torch sees a GPU; the committed records come from the ``kverdict eval``
command in benchmarks/README.md, not from this test (which writes to a temporary folder).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runs import records_in

import schemas
from evaluations.cli import main

pytestmark = pytest.mark.gpu


def _eval(fixtures: Path, candidates: str, out: Path, build: Path) -> dict[str, schemas.Record]:
    assert main(["eval", "--problems", str(fixtures / "gpu" / "problems"), "--candidates",
                 str(fixtures / "gpu" / candidates), "--model", "gpu-fixtures", "--out", str(out),
                 "--build-dir", str(build), "--device", "cuda", "--timeout", "300", "--no-progress"]) == 0
    return records_in(out)


def test_cuda_and_triton_kernels_are_correct_and_timed_with_events(tmp_path, fixtures_dir):
    records = _eval(fixtures_dir, "candidates", tmp_path / "out", tmp_path / "build")
    assert set(records) == {"1_row_softmax.py", "2_scale_bias_relu.py"}
    assert records["1_row_softmax.py"].kernel.language == "triton"
    assert records["2_scale_bias_relu.py"].kernel.language == "cuda"
    for record in records.values():
        assert record.status == "correct", record.error
        assert record.environment.hardware != "cpu" and record.environment.cuda
        assert record.timing.method == "cuda_events" and record.timing.calls == 100
        assert record.speedup.vs_eager and record.speedup.vs_eager > 0
        assert record.memory.candidate_peak_bytes and record.memory.baseline_peak_bytes
    # one read and one write instead of three element-wise passes: clearly faster than eager
    assert records["2_scale_bias_relu.py"].speedup.vs_eager > 1.5


def test_illegal_access_and_out_of_memory_are_runtime_errors(tmp_path, fixtures_dir):
    records = _eval(fixtures_dir, "crashers", tmp_path / "out", tmp_path / "build")
    illegal, oom = records["2_scale_bias_relu__illegal.py"], records["2_scale_bias_relu__oom.py"]
    assert illegal.status == "runtime_error" and "illegal memory access" in illegal.error
    assert oom.status == "runtime_error" and "OutOfMemoryError" in oom.error
