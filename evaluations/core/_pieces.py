"""Element-wise comparisons of large outputs done a piece at a time.

Comparing an output with its reference in float64 makes several float64 copies of both: for KernelBench's
current level 1, whose outputs are 4-6 GB, whole tensors would take tens of gigabytes of device memory on top of
the outputs themselves, which decides how many evaluations fit the device at once. Done over
:data:`PIECE_ELEMENTS` elements at a time, the float64 work stays a few pieces' size whatever the output's; every
result is the one the whole tensors give (the maxima propagate NaN as a tensor's ``max`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch

PIECE_ELEMENTS = 1 << 24
"""Elements compared at a time: 128 MiB per float64 temporary."""


def pieces(*tensors: torch.Tensor, size: int | None = None) -> Iterator[tuple[torch.Tensor, ...]]:
    """The same stretch of each of ``tensors`` (all of one number of elements), flattened, ``size`` elements at a
    time (default :data:`PIECE_ELEMENTS`, read at each call); one empty stretch for empty tensors."""
    size = size or PIECE_ELEMENTS
    flats = [t.reshape(-1) for t in tensors]
    n = flats[0].numel()
    if any(f.numel() != n for f in flats):
        raise ValueError(f"pieces of tensors of {[f.numel() for f in flats]} elements")
    for a in range(0, max(n, 1), size):
        yield tuple(f[a:a + size] for f in flats)


class Maximum:
    """The largest element seen over several tensors: NaN once any is NaN, None while all were empty."""

    def __init__(self) -> None:
        self._best: torch.Tensor | None = None

    def add(self, values: torch.Tensor) -> None:
        if values.numel():
            top = values.max()
            self._best = top if self._best is None else torch.maximum(self._best, top)

    @property
    def value(self) -> float | None:
        return None if self._best is None else float(self._best)


def error_maxima(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float,
                 mask: torch.Tensor | None = None) -> tuple[float | None, float | None]:
    """(max |out - ref|, max |out - ref| / (atol + rtol |ref|)) over the elements ``mask`` selects (all by
    default), in float64 a piece at a time: None where it selects none, NaN where a selected one is NaN."""
    worst_abs, worst_share = Maximum(), Maximum()
    for o, r, *m in pieces(out, ref, *([] if mask is None else [mask])):
        # two float64 temporaries a piece, worked in place (copies: a float64 piece of ``out`` or ``ref`` is theirs)
        diff = o.to(torch.float64, copy=True).sub_(r).abs_()
        worst_abs.add(diff[m[0]] if m else diff)
        share = diff.div_(r.to(torch.float64, copy=True).abs_().mul_(rtol).add_(atol))
        worst_share.add(share[m[0]] if m else share)
    return worst_abs.value, worst_share.value


Piecewise = Callable[[int, int], torch.Tensor]
"""Elements ``start:stop`` of an element-wise result over tensors flattened in row-major order, made when asked."""


def piecewise(fill: Callable[..., torch.Tensor], *tensors: torch.Tensor) -> Piecewise:
    """``fill`` of the same stretch of each of ``tensors`` (all of one number of elements, flattened row-major),
    for the stretch asked for: an element-wise float64 result (a judge's allowed error of each element) that is
    never whole, whatever the tensors' size."""
    flats = [t.reshape(-1) for t in tensors]
    if any(f.numel() != flats[0].numel() for f in flats):
        raise ValueError(f"a piecewise result of tensors of {[f.numel() for f in flats]} elements")
    return lambda start, stop: fill(*(f[start:stop] for f in flats))


def allclose(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> bool:
    """``torch.allclose(out, ref, atol=atol, rtol=rtol)`` of two tensors of one shape, a piece at a time."""
    return all(torch.allclose(o, r, atol=atol, rtol=rtol) for o, r in pieces(out, ref))
