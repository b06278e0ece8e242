"""Hidden input distributions: the problem's own ``get_inputs()`` draw, scaled, under fresh seeds.

D1 x1, D2 x3, D3 x0.01 and D4 x(-1) multiply every floating-point tensor that ``get_inputs()``
returns; integer tensors (indices, labels) and Python scalars are left as drawn. Seeds are fresh
for every evaluation and kept far from the standard protocol's seeds (drawn after seed 42).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from . import _gpulock
from ._memory import prefill_allocator


@dataclass(frozen=True)
class Distribution:
    """A named scaling of the problem's inputs."""

    name: str
    scale: float

    @property
    def label(self) -> str:
        """Label used in records, e.g. ``D4 x(-1)``."""
        scale = f"{self.scale:g}"
        return f"{self.name} x({scale})" if self.scale < 0 else f"{self.name} x{scale}"


DISTRIBUTIONS: tuple[Distribution, ...] = (
    Distribution("D1", 1.0), Distribution("D2", 3.0), Distribution("D3", 0.01), Distribution("D4", -1.0),
)
"""The four hidden distributions, D1 first (the distribution the standard protocol sees)."""

SEED_FLOOR = 10_000_019
"""Fresh seeds lie in [SEED_FLOOR, 2**31): never 42 or the small seeds a harness derives from it."""


def fresh_seeds(count: int, base: int | None = None) -> list[int]:
    """``count`` distinct fresh seeds; reproducible from ``base`` when given, else from the OS."""
    rng = random.Random(base) if base is not None else random.SystemRandom()
    seeds: list[int] = []
    while len(seeds) < count:
        seed = rng.randrange(SEED_FLOOR, 2**31 - 1)
        if seed not in seeds:
            seeds.append(seed)
    return seeds


def _seed_all(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def scale_inputs(values: list[Any], scale: float) -> list[Any]:
    """The inputs with every floating-point tensor multiplied by ``scale`` (others unchanged)."""
    return [v * scale if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def draw(get_inputs: Callable[[], list[Any]], dist: Distribution, seed: int, device: torch.device) -> list[Any]:
    """One draw of ``get_inputs()`` under ``seed``, scaled by ``dist``, on ``device``.

    Tensors that ``get_inputs()`` creates without naming a device are made on ``device`` directly, with its
    generator: the same seed gives the same values on the same kind of device and PyTorch (a candidate's worker
    and its judge draw a trial's inputs alike), but other values than a host draw. Drawn on the host, KernelBench's
    current level-1 inputs (gigabytes a call) took seconds a draw, and a candidate's worker and its judge draw some
    25 times between them. A ``get_inputs()`` that fails on the device (host-only steps such as ``.numpy()``)
    is drawn on the host and moved; that host draw lets go of the GPU lock (``_gpulock.released``) while
    ``get_inputs()`` runs: it is the problem's code on the host, and a timing of another worker may go meanwhile.
    """
    values = None
    if device.type != "cpu":
        _seed_all(seed)
        try:
            with device:
                values = list(get_inputs())
        except Exception:  # noqa: BLE001 - any failure on the device: the host draw below decides
            values = None
    if values is None:
        _seed_all(seed)
        with _gpulock.released():  # host work (seconds for large inputs): other workers' timings need not wait
            values = list(get_inputs())
    moved = [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]
    return scale_inputs(moved, dist.scale)


def signature(values: list[Any]) -> list[str]:
    """What tells two draws apart without a copy of either: each tensor's shape, dtype, sum, largest and smallest
    element (reductions on the device), each other value's text; NaN compares equal to NaN here."""
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            parts = [str(tuple(v.shape)), str(v.dtype)]
            if v.numel() and not v.is_complex():
                parts += [repr(x.item()) for x in (v.sum(), v.amax(), v.amin())]
            out.append(" ".join(parts))
        else:
            out.append(repr(v))
    return out


class NotReproducible(RuntimeError):
    """A problem whose ``get_inputs()`` is not a function of its seed: a judge could not draw the inputs a candidate's
    worker drew, and would find an honest kernel's outputs wrong."""


def check_reproducible(get_inputs: Callable[[], list[Any]], seed: int, device: torch.device,
                       first: list[str]) -> None:
    """Draw under ``seed`` again and raise :class:`NotReproducible` unless its :func:`signature` is ``first``. On the
    GPU the allocator's free memory is filled with a sentinel first, so that inputs left uninitialised
    (``torch.empty``) read otherwise than in the first draw, as they would in another process."""
    prefill_allocator(device)
    again = signature(draw(get_inputs, DISTRIBUTIONS[0], seed, device))
    if again != first:
        pairs = enumerate(zip(first, again, strict=False))
        diff = next((i for i, (a, b) in pairs if a != b), min(len(first), len(again)))
        one, other = (d[diff][:120] if diff < len(d) else "no such input" for d in (first, again))
        raise NotReproducible(
            f"the problem's get_inputs() is not a function of its seed on {device.type}: two draws under seed {seed} "
            f"differ in input {diff} ({one} against {other}), so a judge could not redraw a candidate's inputs "
            "(unseeded randomness, or uninitialised memory such as torch.empty?)")


def refresh_in_place(values: list[Any]) -> None:
    """Give each floating-point input new content under the same pointer, shape and value multiset.

    Rolling the flattened tensor by one element keeps the distribution (and the sum) but changes
    what sits where, so any cache keyed on pointer, identity, shape or an order-blind fingerprint
    returns a stale answer that the re-check after timing catches.
    """
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel() > 1:
            v.copy_(v.reshape(-1).roll(1).reshape(v.shape))
