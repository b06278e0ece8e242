"""The one table of the public kernel datasets the project knows: where each is published (repository, commit,
paths), which model's kernels it holds, and how many kernels it holds there. The loader stamps this provenance on
every record of a known bundle (``evaluations``), and the site tells from it how much of a dataset its records
cover (``generator``): nothing else writes these values down."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublicDataset:
    """A public set of LLM-written kernels at one commit of its repository."""

    name: str
    """The dataset's name in this project (``datasets/README.md``)."""
    file_name: str
    """File name of its JSON-lines bundle, which the loader recognises it by."""
    model: str
    """Model name its records carry."""
    provider: str
    """Who released the kernels, as its records say."""
    url: str
    """Public repository."""
    commit: str
    """Commit of ``url`` the bundle was read from."""
    kernel_path: str
    """Path of the kernels in ``url`` at ``commit`` (``{level}`` and ``{id}`` filled in per kernel)."""
    problem_path: str
    """Path of the problems in ``url`` at ``commit`` (``{level}`` and ``{name}`` filled in)."""
    kernels: int
    """Kernels the bundle holds (its rows with a kernel; a row without one is a problem not submitted): what a
    complete evaluation covers under each protocol."""


DATASETS: tuple[PublicDataset, ...] = (
    PublicDataset(
        name="cuda-l1-h100", file_name="h100.jsonl", model="CUDA-L1", provider="deepreinforce-ai/CUDA-L1",
        url="https://github.com/deepreinforce-ai/CUDA-L1", commit="51e8356bf844101cab2aeeca4bdff47ebb1953b8",
        kernel_path="optimized_cuda_code/h100.json", problem_path="optimized_cuda_code/h100.json", kernels=227,
    ),
    PublicDataset(
        name="kernelbench-triton-h200", file_name="dump.jsonl", model="KernelBench Triton dump",
        provider="ScalingIntelligence/KernelBench, branch sokserey/tritonDump (the source does not report which model "
                 "wrote the kernels)",
        url="https://github.com/ScalingIntelligence/KernelBench", commit="6842d4f293f6736d758f5e1d19fee7cd1982e3fa",
        kernel_path="triton_runs/level{level}_triton/kernels/level{level}_problem{id}_triton.py",
        problem_path="KernelBench/level{level}/{name}", kernels=134,
    ),
)
"""Every public dataset the project knows (provenance: ``datasets/README.md``)."""


def dataset_named(name: str) -> PublicDataset:
    """The dataset of that name; KeyError naming the known ones otherwise."""
    for d in DATASETS:
        if d.name == name:
            return d
    raise KeyError(f"no public dataset {name!r} (known: {', '.join(d.name for d in DATASETS)})")
