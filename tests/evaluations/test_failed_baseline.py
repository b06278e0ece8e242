"""A baseline kind whose measurement fails (PyTorch's own code crashing on the problem, as ``torch.compile`` did on
KernelBench v0's L3/34 on the H200) leaves its candidates' records without that speedup, with a note saying why;
a failed eager baseline still leaves them unevaluated (nothing paces or compares them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluations import capture_environment, load_inputs
from evaluations.run import RunConfig, Runner, run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compile_fails"
OPTIONS = {"time_cap_s": 0.3, "warmup_s": 0.01, "min_calls": 20, "seeds_per_distribution": 1, "seed": 5}


def _config(tmp_path: Path) -> RunConfig:
    return RunConfig(out_dir=tmp_path / "out", protocols=("verified",), device="cpu", timeout_s=180, jobs=2,
                     build_dir=tmp_path / "build", options=dict(OPTIONS), progress=False)


def test_a_failed_compile_baseline_leaves_the_record_without_its_speedup_and_says_why(tmp_path):
    loaded = load_inputs(FIXTURES / "problems", FIXTURES / "candidates", model="fixture-model")
    summary = run(loaded, _config(tmp_path), capture_environment("cpu"))

    (record,) = summary.records
    assert record.status == "correct"
    assert {b.kind for b in record.baselines} == {"eager_tf32", "eager_fp32"}
    assert record.speedup.vs_eager is not None and record.speedup.vs_eager_fp32 is not None
    assert record.speedup.vs_compile is None
    (note,) = [n for n in record.notes if "compile baseline failed" in n]
    assert "no speedup against that baseline" in note and "must have same reduction dim" in note
    (reason,) = summary.reference_failures.values()
    assert reason.startswith("verified compile baseline: ")
    assert not list((tmp_path / "out").rglob("*__compile.json"))  # no baseline record of a failed measurement


_UNSEEDED = '''import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64) + float(time.perf_counter_ns() % 997)]  # not a function of the seed


def get_init_inputs():
    return []
'''
_RELU = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def _unseeded(tmp_path: Path) -> Any:
    """The loaded inputs of a problem whose draws are not a function of their seed, and an honest kernel for it."""
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "1_unseeded.py").write_text(_UNSEEDED, encoding="utf-8")
    (tmp_path / "candidates").mkdir()
    (tmp_path / "candidates" / "1_unseeded.py").write_text(_RELU, encoding="utf-8")
    loaded = load_inputs(tmp_path / "problems", tmp_path / "candidates", model="fixture-model")
    return loaded


def test_a_problem_whose_inputs_are_not_a_function_of_their_seed_fails_its_eager_baseline_not_its_kernels(tmp_path):
    """A judge redraws a candidate's inputs from their seed: where ``get_inputs()`` is not a function of it, every
    honest kernel would be found wrong. The eager baseline draws twice under one seed and fails with the reason;
    no candidate gets a verdict it did not earn."""
    loaded = _unseeded(tmp_path)
    summary = run(loaded, _config(tmp_path), capture_environment("cpu"))

    assert summary.records == []
    (reason,) = summary.reference_failures.values()
    assert reason.startswith("verified eager_tf32 baseline: ") and "not a function of its seed on cpu" in reason, reason
    assert not list((tmp_path / "out").rglob("*.json"))


def test_no_other_baseline_of_a_problem_is_measured_once_its_eager_one_failed(tmp_path):
    """The eager baseline paces and compares the others: where it failed (here, for real: the problem's draws are
    not a function of their seed), the ``torch.compile`` one is not measured with a method of its own."""
    loaded = _unseeded(tmp_path)
    runner = Runner(loaded, _config(tmp_path), capture_environment("cpu"))
    (problem,) = runner.problems.values()
    assert runner.baseline("verified", problem, "eager_tf32") is None
    assert runner.baseline("verified", problem, "compile") is None
    assert not list((tmp_path / "out").rglob("*.json"))
