"""Environment capture and hardware slugs."""

from __future__ import annotations

import pytest

from evaluations import capture_environment, hardware_slug, harness_version, resolve_device


@pytest.mark.parametrize(("name", "device", "slug"), [
    ("NVIDIA H200", "cuda", "h200"),
    ("NVIDIA H100 80GB HBM3", "cuda", "h100"),
    ("NVIDIA A100-SXM4-80GB", "cuda", "a100"),
    ("NVIDIA L40S", "cuda", "l40s"),
    ("NVIDIA GeForce RTX 4090", "cuda", "geforce-rtx-4090"),
    ("AMD EPYC 7B13", "cpu", "cpu"),
])
def test_hardware_slug(name, device, slug):
    assert hardware_slug(name, device) == slug


def test_cpu_environment_is_complete():
    env = capture_environment("cpu")
    assert env.hardware == "cpu"
    assert env.driver is None and env.cuda is None
    assert env.torch and env.python.count(".") == 2
    assert env.harness_version == harness_version()
    assert env.timestamp.tzinfo is not None


def test_a_source_checkout_reports_the_version_of_pyproject():
    import tomllib
    from pathlib import Path

    from evaluations import HARNESS_FALLBACK_VERSION

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert HARNESS_FALLBACK_VERSION == pyproject["project"]["version"]


def test_cuda_requested_without_a_gpu_is_refused():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        resolve_device("cuda")
    assert resolve_device("auto") == "cpu"
