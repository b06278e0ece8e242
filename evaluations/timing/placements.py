"""Where a timing's inputs and weights come from: input sets handed out in turn (``_Rotation``), and the
timed module's weights rotated over places in device memory (``_Placements``)."""

from __future__ import annotations

from typing import Any

import torch

from ..core import refresh_in_place
from .plan import PLACEMENT_BYTES_BUDGET


class _Rotation:
    """Hands out input sets in turn, refreshing a set's content before it is used again."""

    def __init__(self, sets: list[list[Any]]) -> None:
        self.sets, self.next, self.used = sets, 0, [False] * len(sets)

    def take(self) -> int:
        k = self.next
        self.next = (k + 1) % len(self.sets)
        if self.used[k]:
            refresh_in_place(self.sets[k])
        self.used[k] = True
        return k


class _Placements:
    """Copies of a module's parameters and buffers at other device addresses, swapped in sample by sample.

    Where the weights happen to lie in memory moves a short call's time by a percent or two (a model
    and a separately built copy of it ran that far apart, each stable against itself), so one
    placement's luck would decide a small speedup. Every timing therefore rotates over the same number
    of placements, and its time is the mean of the placements' medians (pooled, placements a few
    percent apart make a multimodal mix whose median jumps between them). The module's own tensors
    are placement 0 and are back in place when the timing ends; the copies hold the same values, so
    outputs do not change.
    """

    def __init__(self, module: torch.nn.Module | None, count: int) -> None:
        tensors: dict[int, torch.Tensor] = {}
        if isinstance(module, torch.nn.Module):
            for t in (*module.parameters(), *module.buffers()):
                if t.numel() > 0:
                    tensors.setdefault(id(t), t)
        self.tensors = list(tensors.values())
        nbytes = sum(t.numel() * t.element_size() for t in self.tensors)
        self.count = max(1, min(count, 1 + PLACEMENT_BYTES_BUDGET // max(nbytes, 1))) if self.tensors else 1
        self.places = [[t.data for t in self.tensors]]
        self.places += [[d.clone() for d in self.places[0]] for _ in range(self.count - 1)]
        self.current = 0

    def use(self, j: int) -> None:
        """Put placement ``j`` (modulo the count) in the module's tensors."""
        j %= self.count
        if j != self.current:
            for t, d in zip(self.tensors, self.places[j], strict=True):
                t.data = d
            self.current = j

    def restore(self) -> None:
        """The module's own tensors back in place; the copies are released."""
        self.use(0)
        self.places = self.places[:1]
        self.count = 1
