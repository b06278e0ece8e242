"""Shared test fixtures: paths of the fixture problems and candidates, and GPU skipping."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# CI clones the project beside a copy of shared/; the public datasets live there, never in the repository.
DATASETS = ROOT.parent / "shared" / "datasets"


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` when torch sees no CUDA device."""
    if any(item.get_closest_marker("gpu") for item in items) and not _cuda_available():
        skip = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The folder of fixture problems and candidates."""
    return FIXTURES


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """The public datasets (read-only); tests that need them skip when they are absent."""
    if not DATASETS.is_dir():
        pytest.skip("public datasets not present")
    return DATASETS
