"""The outside batch's fingerprints: :data:`PRINTS` numbers per output that cannot be had more cheaply than by
computing the whole output, the same for any memory layout, summed a piece at a time against fixed pseudo-random
weights (tables hashed from each element's place, kept for the batch: :data:`PERIOD`). The candidate's worker sends
them for its answers (``_evidence.outer_batch``); the judge computes the reference's and their bounds
(``_evidence.judge_outer``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ..core import PIECE_ELEMENTS

PRINTS = 4
"""Fingerprints per output: a projection and a nonlinear sum, each against weights of mean 1 and of random signs."""
FINGERPRINT_CHUNK = PIECE_ELEMENTS
"""Elements of an output fingerprinted at a time, the protocols' comparison piece: the float64 work on a large output
stays this size (128 MiB per temporary) instead of several times the output's own."""
PERIOD = FINGERPRINT_CHUNK
"""The weights of element ``i`` (its place in the output's shape, row-major) are ``table[i % PERIOD] *
scale[i // PERIOD]``: a table of :data:`PERIOD` hashed weights per output and kind (:func:`_hashed`), repeated
over the output's *blocks* of :data:`PERIOD` elements, each block scaled by a hashed power of two of hashed sign
(:func:`_scales`; the first block by 1, so an output of at most :data:`PERIOD` elements is weighted by the table
itself). The table is hashed once per batch, by the fingerprint taken off the clock, and is 32 MiB a kind
whatever the output's size; a row-major piece's weights are a slice of it times one number. Hashing is a dozen
int64 passes: made afresh for every answer of an output of 134M elements, it would take 42 ms of each answer on an
H100, and the outside clock allows for what drawing and fingerprinting cost, so a forged time could hide inside it.
KernelBench's largest outputs have 2.1G elements."""
WEIGHTS_KEPT = 1 << 28
"""An output held in another memory order than its shape's (a transposed view) gathers each piece's weights from
the table by its elements' places: one of at most this many elements keeps them (bfloat16, 2 bytes an element for
each of the two kinds: 1 GiB at most), so a layout costs no more to fingerprint than the reference's, which the
outside clock allows for; a larger one gathers them afresh in every fingerprint."""
_WEIGHTS: dict[tuple[Any, ...], torch.Tensor] = {}
"""Kept weights: tables by (device, output index, kind); a transposed layout's pieces by (shape, device, output
index, kind, memory order, the piece's first element). Emptied by :func:`forget_weights` when an outside batch is
done."""
_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)
_MIX = (0xBF58476D1CE4E5B9 - (1 << 64), 0x94D049BB133111EB - (1 << 64))


def _signed(value: int) -> int:
    """``value`` modulo 2**64, as the int64 that holds those bits."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _shr(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 values (torch's ``>>`` keeps the sign)."""
    return (x >> bits).bitwise_and_((1 << (64 - bits)) - 1)


def _salt(j: int, k: int) -> int:
    return _signed((7919 + 31 * j + k) * _GOLDEN)


def _mixed(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's mixer of int64 values, in place (arithmetic wrapping as it does in C)."""
    x.bitwise_xor_(_shr(x, 30)).mul_(_MIX[0])
    x.bitwise_xor_(_shr(x, 27)).mul_(_MIX[1])
    return x.bitwise_xor_(_shr(x, 31))


def _hashed(index: torch.Tensor, j: int, k: int) -> torch.Tensor:
    """Fixed pseudo-random signed weights of elements by their index (:func:`_mixed`): the same on every device.
    Their magnitudes lie in [0.5, 1.5) (the hash's top 7 bits, exact in bfloat16), of mean about 1, so an error of
    one sign over many elements (an offset, a scale) moves the sums against them by its whole size; their signs are
    random (the hash's lowest bit), so any pattern of errors inside the tolerance moves the sums against the signed
    weights by a random walk of its size, and errors larger than it in no pattern stand out of that walk. They need
    no secret: the inputs, drawn from the runner's seed, are what no one knows ahead."""
    x = _mixed(index + _salt(j, k))  # a fresh tensor: mixed in place
    magnitude = _shr(x, 57).to(torch.float32).mul_(1.0 / 128).add_(0.5)
    return x.bitwise_and_(1).mul_(-2).add_(1).to(torch.float32).mul_(magnitude).to(torch.bfloat16)


@functools.cache
def _scales(blocks: int, j: int, kind: int) -> tuple[float, ...]:
    """The factors of the ``blocks`` blocks of output ``j``'s weights of ``kind``: 1 for the first block, else 1/2,
    1 or 2 (a power of two, so weights times it stay exact in bfloat16) of random sign, hashed from the block's
    number (:func:`_mixed`, on the host: a few numbers, made once). Blocks in a wrong order, or one block's answer
    copied to another, move the fingerprints though each block's table is the same."""
    x = _mixed(torch.arange(blocks, dtype=torch.int64) + _salt(j, kind + PRINTS))
    factors = (1 - 2 * (x & 1)).double() * torch.pow(2.0, (_shr(x, 61) % 3 - 1).double())
    return (1.0, *factors.tolist()[1:])


def _table(device: torch.device, j: int, kind: int) -> torch.Tensor:
    """Output ``j``'s :data:`PERIOD` weights of ``kind`` on ``device``, hashed once and kept."""
    key = (str(device), j, kind)
    if key not in _WEIGHTS:
        _WEIGHTS[key] = _hashed(torch.arange(PERIOD, device=device), j, kind)
    return _WEIGHTS[key]


def _gathered(index: torch.Tensor, n: int, j: int, kind: int, device: torch.device) -> torch.Tensor:
    """The weights of the elements at row-major places ``index`` of an output of ``n`` elements."""
    factor = torch.tensor(_scales(-(-n // PERIOD), j, kind), dtype=torch.bfloat16, device=device)
    if PERIOD & (PERIOD - 1) == 0:  # a power of two (always but in tests): no division per element
        place, block = index & (PERIOD - 1), index >> (PERIOD.bit_length() - 1)
    else:
        place, block = index % PERIOD, index // PERIOD
    return _table(device, j, kind)[place] * factor[block]


Index = Callable[[], torch.Tensor]
"""Makes the row-major places of one piece's elements (needed only where its weights are gathered)."""


def index_pieces(shape: tuple[int, ...], order: tuple[int, ...] | None,
                  device: torch.device) -> Iterator[tuple[int, int, Index]]:
    """``(start, stop, index)`` over an output of ``shape`` held in memory ``order`` (``like.permute(order)``
    contiguous; None: row-major itself), in pieces of at most about :data:`FINGERPRINT_CHUNK` elements: ``index()``
    is the row-major place in ``shape`` of each element ``start:stop`` of its memory. A row-major output's pieces
    are the weights' blocks (:data:`PERIOD`). A transposed layout's index is a sum of small ranges broadcast over a
    block, with no division per element."""
    n = math.prod(shape)
    if order is None:
        for a in range(0, n, FINGERPRINT_CHUNK):
            b = min(n, a + FINGERPRINT_CHUNK)
            yield a, b, lambda a=a, b=b: torch.arange(a, b, device=device)
        return
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    dims, steps = [shape[d] for d in order], [strides[d] for d in order]  # in memory order, the last fastest
    k, inner = len(dims), 1
    while k > 0 and inner * dims[k - 1] <= FINGERPRINT_CHUNK:
        k, inner = k - 1, inner * dims[k - 1]
    if k == len(dims):  # one row of the fastest memory dimension is longer than a piece: pieces of a row
        k, inner = k - 1, dims[-1]

    @functools.cache
    def block() -> torch.Tensor:  # the index of every element of one block of the dimensions from k on (made once)
        out = torch.zeros((), dtype=torch.int64, device=device)
        for d in range(k, len(dims)):
            out = out.unsqueeze(-1) + torch.arange(dims[d], device=device) * steps[d]
        return out.reshape(-1)

    def offsets(q0: int, q1: int) -> torch.Tensor:  # the first place of each row q0:q1 of the block's size
        rem = torch.arange(q0, q1, device=device)
        out = torch.zeros_like(rem)
        for d in range(k - 1, -1, -1):
            out += (rem % dims[d]) * steps[d]
            rem = rem // dims[d]
        return out

    per = max(1, FINGERPRINT_CHUNK // inner)
    rows = n // inner
    for q0 in range(0, rows, per):
        q1 = min(rows, q0 + per)
        if inner <= FINGERPRINT_CHUNK:
            yield q0 * inner, q1 * inner, lambda q0=q0, q1=q1: (offsets(q0, q1)[:, None] + block()[None, :]).reshape(-1)
            continue
        for a in range(0, inner, FINGERPRINT_CHUNK):  # per == 1: one long row in pieces
            b = min(inner, a + FINGERPRINT_CHUNK)
            yield q0 * inner + a, q0 * inner + b, lambda q0=q0, a=a, b=b: offsets(q0, q0 + 1)[0] + block()[a:b]


def piece_weights(shape: tuple[int, ...], order: tuple[int, ...] | None, j: int, start: int, stop: int,
                  index: Index, device: torch.device) -> Iterator[tuple[int, torch.Tensor]]:
    """``(kind, signed weights)`` of the piece ``start:stop`` of output ``j``'s memory (:func:`index_pieces`), one
    kind at a time, so the fingerprints ``kind`` and ``kind + 2`` of :func:`fingerprint` take their sums before
    the next kind is made. A row-major piece inside one block (every one, the pieces being the blocks) takes a
    slice of the kept table times its block's factor; a transposed layout's piece gathers its weights
    (:func:`_gathered`), kept for an output of at most :data:`WEIGHTS_KEPT` elements."""
    n = math.prod(shape)
    block, offset = divmod(start, PERIOD)
    for kind in range(PRINTS // 2):
        if order is None and offset + stop - start <= PERIOD:
            weights = _table(device, j, kind)[offset:offset + stop - start]
            factor = _scales(-(-n // PERIOD), j, kind)[block]
            yield kind, weights if factor == 1.0 else weights * factor
            continue
        if n > WEIGHTS_KEPT:
            yield kind, _gathered(index(), n, j, kind, device)
            continue
        key = (shape, str(device), j, kind, order, start)
        if key not in _WEIGHTS:
            _WEIGHTS[key] = _gathered(index(), n, j, kind, device)
        yield kind, _WEIGHTS[key]


def forget_weights() -> None:
    """Let go of the kept fingerprint weights (the tables, and up to :data:`WEIGHTS_KEPT` elements' worth of a
    transposed layout's on the device)."""
    _WEIGHTS.clear()


def memory_order(y: torch.Tensor) -> tuple[int, ...] | None:
    """The permutation of ``y``'s dimensions that its memory holds contiguously (a transposed view's), or None
    where there is none (overlapping or gapped strides) or it is the identity."""
    order = tuple(sorted(range(y.dim()), key=lambda d: (-y.stride(d), -y.shape[d])))
    if order == tuple(range(y.dim())) or not y.permute(order).is_contiguous():
        return None
    return order


def fingerprint(outs: list[Any]) -> torch.Tensor:
    """:data:`PRINTS` numbers per output: sum(w * y) and sum(w * y * |y|), each against fixed pseudo-random weights
    of mean 1 and against weights of random signs (:func:`_hashed`), in float64. The nonlinear sums cannot be had
    more cheaply than by computing the whole output.

    An output in another memory order than its shape's (a transposed view) is read in its own order, against
    weights laid out the same way: the numbers are the same sums, and the cost of fingerprinting does not depend
    on the layout (the outside clock compares it with the cost for the reference's layout). A large output is
    summed :data:`FINGERPRINT_CHUNK` elements at a time, so fingerprinting it needs little memory beside it."""
    values = []
    for j, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise TypeError(f"output {j} is not a tensor")
        y = o.detach().as_subclass(torch.Tensor)
        order = memory_order(y)
        if order is None and not y.is_contiguous():
            y = y.contiguous()
        flat = (y.permute(order) if order is not None else y).reshape(-1)  # a view: contiguous in that order
        shape = tuple(y.shape)
        sums = [torch.zeros((), dtype=torch.float64, device=y.device) for _ in range(PRINTS)]
        for a, b, index in index_pieces(shape, order, y.device):
            part = flat[a:b].to(torch.float64)
            for kind, signed in piece_weights(shape, order, j, a, b, index, y.device):
                value = part if kind == 0 else part * part.abs()
                sums[kind] = sums[kind] + (signed.abs() * value).sum()
                sums[kind + 2] = sums[kind + 2] + (signed * value).sum()
                del signed, value
        values += sums
    return torch.stack(values) if values else torch.zeros(0, dtype=torch.float64)
