"""Per-job settings of the verified protocol and the device configuration shared by its workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from schemas import pinned

from ...core import DISTRIBUTIONS, Overrides, draw, fresh_seeds, gpulock, tensor_bytes
from ...core import to_device as to_device  # the protocol's parts move a job's values through this module
from ...timing import TimingPlan
from ._integrity import ALGORITHM_FLAGS

SEEDS_PER_DISTRIBUTION = pinned("verified").trials_per_distribution
"""Fresh seeds drawn for each hidden distribution (the protocol table's)."""
SET_BYTES_BUDGET = 2 << 30
"""Device memory spent on rotated timing input sets and the output kept for each (an output of 4 GiB from 8 MB of
inputs counts as 4 GiB a set)."""
MAX_SETS = 16
MIN_SETS = 2


@dataclass(frozen=True)
class Settings:
    """What one verified evaluation uses: its seeds and its timing plan."""

    init_seed: int
    trial_seeds: list[int]
    extra_seeds: list[int]
    """Seeds of the determinism check and of the timing input sets."""
    plan: TimingPlan
    input_sets: int | None

    @classmethod
    def of(cls, options: dict[str, Any], overrides: Overrides | None = None) -> Settings:
        """Settings of a job: its ``options`` may fix the base seed or shorten the timing (tests), its ``overrides``
        set the trials per distribution and the timing's counts (``kverdict eval --trials/--warmup-calls/--timed-calls``)."""
        overrides = overrides or Overrides()
        per = overrides.trials or int(options.get("seeds_per_distribution", SEEDS_PER_DISTRIBUTION))
        trials = len(DISTRIBUTIONS) * per
        seeds = fresh_seeds(1 + trials + 1 + MAX_SETS, options.get("seed"))
        sets = options.get("input_sets")
        return cls(seeds[0], seeds[1:1 + trials], seeds[1 + trials:], TimingPlan.of(options, overrides),
                   int(sets) if sets is not None else None)


def configure(device: str) -> torch.device:
    """PyTorch's default precision flags (TF32 matmul off, cuDNN TF32 on) and no autograd.

    A candidate that wants TF32 uses it inside its own code, where the precision policy judges it;
    switching the process-wide flag is a global-state violation. Baselines set their own flags.
    """
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    torch.set_grad_enabled(False)
    if device == "cuda":
        torch.cuda.set_device(0)
    return torch.device(device)


def set_algorithm_flags(flags: tuple[tuple[str, bool], ...]) -> None:
    """Set algorithm-choice flags (``torch.backends.<name>``) as a candidate set them, before a baseline is built."""
    for name, value in flags:
        if name not in ALGORITHM_FLAGS:
            raise ValueError(f"{name!r} is not an algorithm-choice flag (known: {', '.join(ALGORITHM_FLAGS)})")
        backend, attr = name.split(".")
        setattr(getattr(torch.backends, backend), attr, bool(value))


def seed_all(seed: int) -> None:
    """Seed torch's CPU and CUDA generators."""
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def build_reference(model: Any, init: list[Any], device: torch.device) -> torch.nn.Module:
    """The problem's own model constructed on the host without the GPU lock (the problem's code: seconds of
    initialisation for large layers, during which another worker's timing may go), then moved to ``device``."""
    with gpulock.released():
        built = model(*init)
    return built.to(device)


def set_count(one_set: list[Any], settings: Settings, output_bytes: int = 0) -> int:
    """How many input sets to rotate through during timing, from the size of a set and of the output the timing
    keeps for each (``output_bytes``)."""
    if settings.input_sets is not None:
        return max(1, settings.input_sets)
    nbytes = tensor_bytes(one_set) + output_bytes
    return max(MIN_SETS, min(MAX_SETS, SET_BYTES_BUDGET // max(nbytes, 1)))


def timing_sets(get_inputs: Any, settings: Settings, device: torch.device, output_bytes: int = 0) -> list[list[Any]]:
    """The input sets a timing rotates through: D1 draws under the timing seeds, as many as
    :func:`set_count` allows for inputs and outputs of their size (the first set is drawn once and kept), made
    on the device as every draw of the protocol is (:func:`draw`)."""
    seeds = settings.extra_seeds[1:]
    first = draw(get_inputs, DISTRIBUTIONS[0], seeds[0], device)
    count = min(set_count(first, settings, output_bytes), len(seeds))
    return [first] + [draw(get_inputs, DISTRIBUTIONS[0], s, device) for s in seeds[1:count]]
