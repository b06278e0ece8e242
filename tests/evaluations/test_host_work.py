"""Host work of the problem's own code (drawing large inputs, constructing large layers) lets go of the GPU lock, so
another worker's timing need not wait for it; a candidate's Triton autotuning is kept in its own cache, so its later
processes do not benchmark every configuration again while timings wait (H200 session 25: such steps held the
Triton dump's timings up for most of its run)."""

from __future__ import annotations

import contextlib
import os

import pytest
import torch

from evaluations.worker import gpulock


@pytest.fixture
def steps(monkeypatch) -> list[str]:
    """What ran, in order, with the lock let go of (``out``/``in``) around host work."""
    seen: list[str] = []

    @contextlib.contextmanager
    def released():
        seen.append("out")
        yield
        seen.append("in")

    monkeypatch.setattr(gpulock, "released", released)
    return seen


def _get_inputs(steps: list[str]):
    def get_inputs():
        steps.append("draw")
        return [torch.ones(4), 3]
    return get_inputs


class _Model(torch.nn.Module):
    def __init__(self, steps: list[str], scale: float):
        super().__init__()
        steps.append("construct")
        self.scale = scale

    def forward(self, x):
        return x * self.scale


def test_a_verified_host_draw_runs_the_problems_get_inputs_without_the_lock(steps):
    from evaluations.protocols.verified import DISTRIBUTIONS, draw

    values = draw(_get_inputs(steps), DISTRIBUTIONS[1], 7, torch.device("cpu"))
    assert steps == ["out", "draw", "in"]
    assert torch.equal(values[0], torch.full((4,), 3.0)) and values[1] == 3  # scaled as D2 x3, non-tensors kept


def test_the_verified_reference_is_constructed_without_the_lock(steps):
    from evaluations.protocols.verified import build_reference

    model = build_reference(lambda scale: _Model(steps, scale), [2.0], torch.device("cpu"))
    assert steps == ["out", "construct", "in"]
    assert torch.equal(model(torch.ones(2)), torch.full((2,), 2.0))


def test_the_standard_protocol_draws_inputs_and_builds_its_reference_without_the_lock(steps):
    from evaluations.protocols import standard

    inputs = standard.host_inputs(_get_inputs(steps), torch.device("cpu"))
    reference = standard.build_reference(lambda scale: _Model(steps, scale), [5.0], torch.device("cpu"))
    assert steps == ["out", "draw", "in", "out", "construct", "in"]
    assert torch.equal(reference(inputs[0]), torch.full((4,), 5.0))


def test_only_a_candidates_jobs_keep_triton_autotuning_results_in_its_own_cache(tmp_path, monkeypatch):
    from evaluations.run import candidate_scope, use_caches
    from evaluations.zoo import load_manifest, zoo_job

    for name in ("TRITON_CACHE_AUTOTUNING", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS"):
        monkeypatch.setenv(name, "")  # restored after the test, whatever use_caches sets
        monkeypatch.delenv(name)
    entry = next(e for e in load_manifest() if e.problem == "6_row_sum.py")
    job = zoo_job(entry, "verified", "cpu", {}, str(tmp_path))
    baseline = type(job)(problem=job.problem, protocol="verified", device="cpu", baseline_kind="compile",
                         build_dir=str(tmp_path))
    use_caches(baseline)
    assert "TRITON_CACHE_AUTOTUNING" not in os.environ
    assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path.absolute() / "caches" / "baselines" / "triton")
    use_caches(job)
    assert os.environ["TRITON_CACHE_AUTOTUNING"] == "1"
    assert os.environ["TRITON_CACHE_DIR"] == str(candidate_scope(job, "caches") / "triton")
