"""Device work of the trusted side (``_judge``): what a worker keeps for the judge, and what the judge checks.

In the candidate's worker: :class:`Exhibits` keeps CPU copies of its correctness trials' outputs for the
judge; :func:`outer_batch` answers the runner's outside clock. In the judge's worker (never a process that
imported candidate code): :func:`load_exhibits` reads those outputs back (tensors only, no code), and
:func:`judge_outer` checks the outside batch's fingerprints and times what its drawing and fingerprinting
cost. Both sides draw the outside batch's inputs the same way (:func:`outer_inputs`), on the device.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from schemas import CorrectnessCheck

from ..protocols._pieces import PIECE_ELEMENTS, Piecewise
from ..protocols.verified._distributions import DISTRIBUTIONS, draw
from ..protocols.verified._integrity import outputs_of, tensor_bytes
from ..run._judge import Judgement, Ruling
from . import _gpulock

EVIDENCE_BYTES = 1 << 30
"""Most bytes of trial outputs a worker keeps for the judge; trials past it are judged on the worker's word."""
Verdict = tuple[bool, float | None, str | None]
"""(passed, error budget used, message) of one judged trial."""
Z = 8.0
"""A signed fingerprint may differ from the reference's by this many times the root of the summed squares of what
the tolerance allows (its elements' weighted allowed errors): an answer inside the tolerance passes but with odds
below 2 exp(-Z^2 / 2) = 3e-14, whatever the pattern of its errors (Hoeffding's inequality over the weights' signs)."""
PRINTS = 4
"""Fingerprints per output: a projection and a nonlinear sum, each against weights of mean 1 and of random signs."""


class Exhibits:
    """CPU copies of a worker's trial outputs, by trial name, up to :data:`EVIDENCE_BYTES` (in trial order)."""

    def __init__(self, path: str | None) -> None:
        self.path, self.bytes, self.full = path, 0, False
        self.kept: dict[str, list[torch.Tensor]] = {}

    def add(self, name: str, outs: list[Any]) -> None:
        """Keep ``outs`` (tensors) of trial ``name``, unless an earlier trial already filled the file."""
        if self.path is None or self.full:
            return
        tensors = [o for o in outs if isinstance(o, torch.Tensor)]
        size = tensor_bytes(tensors)
        if len(tensors) != len(outs) or self.bytes + size > EVIDENCE_BYTES:
            self.full = True
            return
        self.kept[name] = [t.detach().as_subclass(torch.Tensor).to("cpu", copy=True).contiguous() for t in tensors]
        self.bytes += size

    def save(self) -> None:
        """Write the kept outputs (atomically: a half-written file is never read as evidence)."""
        if self.path is None:
            return
        tmp = f"{self.path}.tmp-{os.getpid()}"
        torch.save(self.kept, tmp)
        os.replace(tmp, self.path)


def trials_room(one_trial: list[torch.Tensor], reported: int) -> int:
    """How many trials of outputs like ``one_trial`` fit the evidence file (at most ``reported``)."""
    size = tensor_bytes(one_trial)
    return reported if size == 0 else min(reported, EVIDENCE_BYTES // size)


def load_exhibits(path: str) -> dict[str, list[torch.Tensor]]:
    """Trial name -> outputs, from a worker's evidence file (tensors only); empty when there is no file."""
    if not Path(path).exists():
        return {}
    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict):
        raise ValueError("the evidence file does not hold a table of trial outputs")
    out: dict[str, list[torch.Tensor]] = {}
    for name, outs in data.items():
        if isinstance(name, str) and isinstance(outs, list) and all(isinstance(t, torch.Tensor) for t in outs):
            out[name] = outs
    return out


def rule_trials(out: Judgement, reported: list[CorrectnessCheck], evidence: str,
                rule: Callable[[int, CorrectnessCheck], tuple[list[Any], Callable[[list[torch.Tensor]], Verdict]] | None]) -> None:
    """The judge's rulings on the reported trials, into ``out``: ``rule(index, check)`` draws the trial's inputs and
    gives its reference outputs and a function judging the kept outputs ((passed, budget, message)); None for a
    trial it cannot draw (the seeds fault says why). A trial whose outputs are missing while the evidence file had
    room for them is ruled ``missing``; one past that room is left to the worker's word."""
    exhibits = load_exhibits(evidence)
    for index, check in enumerate(reported):
        _gpulock.yield_to_timing()  # a timing of another worker that waits goes first
        found = rule(index, check)
        if found is None:
            continue
        refs, decide = found
        out.trials_room = trials_room([r for r in refs if isinstance(r, torch.Tensor)], len(reported))
        outs = exhibits.get(check.name)
        if outs is None:
            if index < out.trials_room:
                out.rulings.append(Ruling(check.name, False, missing=True))
            continue
        passed, budget, message = decide(outs)
        out.rulings.append(Ruling(check.name, passed, budget, message))


def outer_seeds(seed: int, calls: int) -> list[int]:
    """The seeds of the outside batch's ``calls`` input draws."""
    rng = random.Random(seed)
    return [rng.randrange(2**20, 2**31 - 1) for _ in range(calls)]


def outer_inputs(get_inputs: Any, seed: int, device: torch.device) -> list[Any]:
    """One input draw of the outside batch (the first hidden distribution, made on the device)."""
    return draw(get_inputs, DISTRIBUTIONS[0], seed, device)


FINGERPRINT_CHUNK = PIECE_ELEMENTS
"""Elements of an output fingerprinted at a time, the protocols' comparison piece: the float64 work on a large output
stays this size (128 MiB per temporary) instead of several times the output's own."""
WEIGHTS_KEPT = 1 << 23
"""Outputs of at most this many elements keep their weights between fingerprints (32 MiB of float32 for each of the
four kinds); larger ones have theirs computed chunk by chunk each time, as the sums go."""
_WEIGHTS: dict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor]] = {}
"""Kept fingerprint weights (of mean 1, signed) by (shape, device, output index, kind, memory order)."""
_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)
_MIX = (0xBF58476D1CE4E5B9 - (1 << 64), 0x94D049BB133111EB - (1 << 64))


def _signed(value: int) -> int:
    """``value`` modulo 2**64, as the int64 that holds those bits."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _shr(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 values (torch's ``>>`` keeps the sign)."""
    return (x >> bits).bitwise_and_((1 << (64 - bits)) - 1)


def _hashed(index: torch.Tensor, j: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Fixed pseudo-random float32 weights of elements by their index in the output's shape (splitmix64's mixer,
    int64 arithmetic wrapping as it does in C): the same on every device and for any chunking. The first lie in
    [0.5, 1.5), of mean 1, so an error of one sign over many elements (an offset, a scale) moves their sums by its
    whole size; the second are the same with a random sign (the hash's lowest bit), so any pattern of errors
    inside the tolerance moves their sums by a random walk of its size, and errors larger than it in no pattern
    stand out of that walk. They need no secret: the inputs, drawn from the runner's seed, are what no one knows
    ahead."""
    x = index + _signed((7919 + 31 * j + k) * _GOLDEN)  # a fresh tensor: mixed in place from here
    x.bitwise_xor_(_shr(x, 30)).mul_(_MIX[0])
    x.bitwise_xor_(_shr(x, 27)).mul_(_MIX[1])
    x.bitwise_xor_(_shr(x, 31))
    w = _shr(x, 41).to(torch.float32).mul_(1.0 / (1 << 23)).add_(0.5)  # the top 23 bits: exact in float32
    return w, x.bitwise_and_(1).mul_(-2).add_(1).to(torch.float32).mul_(w)


def _index_pieces(shape: tuple[int, ...], order: tuple[int, ...] | None,
                  device: torch.device) -> Iterator[tuple[int, int, torch.Tensor]]:
    """``(start, stop, index)`` over an output of ``shape`` held in memory ``order`` (``like.permute(order)``
    contiguous; None: row-major itself), in pieces of at most about :data:`FINGERPRINT_CHUNK` elements: ``index``
    is the row-major place in ``shape`` of each element ``start:stop`` of its memory. A transposed layout's
    index is a sum of small ranges broadcast over a block, with no division per element, so it costs what the
    row-major one does."""
    n = math.prod(shape)
    if order is None:
        for a in range(0, n, FINGERPRINT_CHUNK):
            yield a, min(n, a + FINGERPRINT_CHUNK), torch.arange(a, min(n, a + FINGERPRINT_CHUNK), device=device)
        return
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    dims, steps = [shape[d] for d in order], [strides[d] for d in order]  # in memory order, the last fastest
    k, inner = len(dims), 1
    while k > 0 and inner * dims[k - 1] <= FINGERPRINT_CHUNK:
        k, inner = k - 1, inner * dims[k - 1]
    if k == len(dims):  # one row of the fastest memory dimension is longer than a piece: pieces of a row
        k, inner = k - 1, dims[-1]
    block = torch.zeros((), dtype=torch.int64, device=device)
    for d in range(k, len(dims)):  # the index of every element of one block of the dimensions from k on
        block = block.unsqueeze(-1) + torch.arange(dims[d], device=device) * steps[d]
    block = block.reshape(-1)
    per = max(1, FINGERPRINT_CHUNK // inner)
    rows = n // inner
    for q0 in range(0, rows, per):
        rem = torch.arange(q0, min(rows, q0 + per), device=device)
        offsets = torch.zeros_like(rem)
        for d in range(k - 1, -1, -1):
            offsets += (rem % dims[d]) * steps[d]
            rem = rem // dims[d]
        if inner <= FINGERPRINT_CHUNK:
            yield q0 * inner, q0 * inner + offsets.numel() * inner, (offsets[:, None] + block[None, :]).reshape(-1)
            continue
        for a in range(0, inner, FINGERPRINT_CHUNK):  # per == 1: one long row in pieces
            yield q0 * inner + a, q0 * inner + min(inner, a + FINGERPRINT_CHUNK), offsets[0] + block[a:a + FINGERPRINT_CHUNK]


def _kept_weights(shape: tuple[int, ...], order: tuple[int, ...] | None, j: int, kind: int,
                  index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`_hashed`'s weights of output ``j``'s fingerprints of ``kind``, kept between fingerprints (an output of
    at most :data:`WEIGHTS_KEPT` elements: one piece holds them all)."""
    key = (shape, str(index.device), j, kind, order)
    if key not in _WEIGHTS:
        _WEIGHTS[key] = _hashed(index, j, kind)
    return _WEIGHTS[key]


def _piece_weights(shape: tuple[int, ...], order: tuple[int, ...] | None, j: int,
                   index: torch.Tensor) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
    """``(kind, weights of mean 1, signed weights)`` of one piece, one kind at a time (each hashed once), so the
    fingerprints ``kind`` and ``kind + 2`` of :func:`fingerprint` take their sums before the next kind is made:
    kept for an output of at most :data:`WEIGHTS_KEPT` elements, made afresh for a larger one."""
    kept = math.prod(shape) <= WEIGHTS_KEPT
    for kind in range(PRINTS // 2):
        yield kind, *(_kept_weights(shape, order, j, kind, index) if kept else _hashed(index, j, kind))


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
        for a, b, index in _index_pieces(shape, order, y.device):
            part = flat[a:b].to(torch.float64)
            for kind, w, signed in _piece_weights(shape, order, j, index):
                value = part if kind == 0 else part * part.abs()
                sums[kind] = sums[kind] + (w * value).sum()
                sums[kind + 2] = sums[kind + 2] + (signed * value).sum()
                del w, signed, value
        values += sums
    return torch.stack(values) if values else torch.zeros(0, dtype=torch.float64)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _graphed(call: Callable[[list[Any]], Any], static: list[Any]) -> tuple[Any, list[Any]] | None:
    """A CUDA graph of ``call(static)`` and its outputs, or None where capture fails."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            call(static)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = outputs_of(call(static))
        torch.cuda.synchronize()
        return graph, outs
    except Exception:  # noqa: BLE001 - no graph: the batch calls it eagerly, and says so
        torch.cuda.synchronize()
        return None


def _copy_into(static: list[Any], fresh: list[Any]) -> None:
    for s, f in zip(static, fresh, strict=True):
        if isinstance(s, torch.Tensor):
            s.copy_(f)


def outer_batch(call: Callable[[list[Any]], Any], get_inputs: Any, device: torch.device, reported_ms: float | None,
                graphs: bool) -> None:
    """In the candidate's worker, after its timing: ask the runner for a seed (its clock starts), call the
    candidate on fresh draws from it and send back their fingerprints (its clock stops). With ``graphs`` (the
    timing replayed CUDA graphs) each answer is a graph replay on fresh values copied into its static inputs.
    One call and its fingerprint come first, off the clock. The whole batch holds the GPU alone. A failure is
    reported to the runner as such."""
    from ._isolation import ask

    with _gpulock.exclusive() if device.type == "cuda" else nullcontext():
        try:
            static = outer_inputs(get_inputs, 1, device)
            graph = _graphed(call, static) if graphs and device.type == "cuda" else None
            fingerprint(graph[1] if graph is not None else outputs_of(call(static))).tolist()  # weights drawn here
            plan = ask(("ready", reported_ms, "cuda_graph" if graph is not None else "eager"))
            while True:
                prints = []
                for seed in outer_seeds(int(plan["seed"]), int(plan["calls"])):
                    fresh = outer_inputs(get_inputs, seed, device)
                    if graph is not None:
                        _copy_into(static, fresh)
                        graph[0].replay()
                        outs = graph[1]
                    else:
                        outs = outputs_of(call(fresh))
                    prints.append(fingerprint(outs))
                values = [float(v) for v in torch.cat(prints).tolist()]  # waits for the device
                plan = ask(("done", values))
                if not plan.get("again"):
                    return
        except Exception as exc:  # noqa: BLE001 - the runner hears what failed; the record says so
            ask(("failed", f"{type(exc).__name__}: {exc}"[:400]))


def _bound(ref: torch.Tensor, allowed: Piecewise, j: int) -> list[tuple[float, float]]:
    """(reference fingerprint, the difference its elements' allowed errors permit) of each of output ``j``'s
    :data:`PRINTS` fingerprints, summed :data:`FINGERPRINT_CHUNK` elements at a time, each piece's allowed errors
    made as it is summed. Against weights of mean 1 the permitted difference is the whole weighted sum of the
    allowed errors (errors of one sign, each at its limit: an answer inside the tolerance cannot exceed it); against
    signed weights, ``Z`` times the root of their summed squares (:data:`Z`). Each allows float64 rounding too."""
    r_all = ref.contiguous().reshape(-1)
    shape = tuple(ref.shape)
    sums = torch.zeros(PRINTS, 3, dtype=torch.float64, device=ref.device)
    for a, b, index in _index_pieces(shape, None, ref.device):
        r, t = r_all[a:b].to(torch.float64), allowed(a, b).to(torch.float64)
        for kind, w, signed in _piece_weights(shape, None, j, index):
            # |y|y| - r|r|| <= 2|r|t + t^2 where |y - r| <= t
            value, error = (r, t) if kind == 0 else (r * r.abs(), 2 * r.abs() * t + t * t)
            for p, weights in ((kind, w), (kind + 2, signed)):
                weighted, err = weights * value, (weights * error).abs_()
                sums[p] += torch.stack([weighted.sum(), err.sum() if p < 2 else err.square_().sum(), weighted.abs_().sum()])
            del w, signed, value, error
    return [(ref_p, (err if p < 2 else Z * math.sqrt(err)) + 1e-9 * size)
            for p, (ref_p, err, size) in enumerate(sums.tolist())]


def judge_outer(reference: Callable[[list[Any]], tuple[list[torch.Tensor], list[Piecewise]]], get_inputs: Any,
                device: torch.device, plan: dict[str, Any], prints: list[float], graphs: bool) -> tuple[str | None, float]:
    """In the judge's worker: (why the outside batch's fingerprints are wrong, or None; seconds that drawing and
    fingerprinting its answers cost, timed as the worker's batch runs: the same draws and fingerprints, one wait
    for the device at the end, the GPU held alone). ``reference(inputs)`` gives the reference outputs and each
    one's allowed errors (element by element, a stretch of the flattened output at a time:
    :func:`evaluations.protocols.piecewise`)."""
    seeds = outer_seeds(int(plan["seed"]), int(plan["calls"]))
    at, mismatch, first = 0, None, None
    for i, seed in enumerate(seeds):
        _gpulock.yield_to_timing()  # up to 50 references and their bounds: each a step, not one long hold
        refs, tols = reference(outer_inputs(get_inputs, seed, device))
        first = first if first is not None else refs
        n = PRINTS * len(refs)
        got = prints[at:at + n]
        at += n
        if mismatch is None:
            mismatch = _compare_prints(got, refs, tols, seed, i)
    if mismatch is None and at != len(prints):
        mismatch = f"{len(prints)} fingerprints where {at} were due"
    if first is None:
        return mismatch, 0.0
    like = [r.to(torch.float32) if r.dtype == torch.float64 else r for r in first]  # the candidate's dtype
    static = outer_inputs(get_inputs, 1, device) if graphs else None
    fingerprint(like).tolist()
    with _gpulock.exclusive() if device.type == "cuda" else nullcontext():
        _sync(device)
        start = time.perf_counter()
        prints_again = []
        for seed in seeds:
            fresh = outer_inputs(get_inputs, seed, device)
            if static is not None:
                _copy_into(static, fresh)
            prints_again.append(fingerprint(like))
        torch.cat(prints_again).tolist()
        overhead = time.perf_counter() - start
    return mismatch, overhead


def _compare_prints(got: list[float], refs: list[torch.Tensor], tols: list[Piecewise], seed: int,
                    i: int) -> str | None:
    if len(got) != PRINTS * len(refs):
        return f"call {i}: {len(got)} fingerprints for {len(refs)} outputs"
    for j, (ref, tol) in enumerate(zip(refs, tols, strict=True)):
        for k, (want, allow) in enumerate(_bound(ref, tol, j)):
            mine = got[PRINTS * j + k]
            if not math.isfinite(want):
                continue  # a non-finite reference: the trials judge such outputs
            if not math.isfinite(mine) or abs(mine - want) > allow:
                return (f"call {i} (seed {seed}), output {j}: fingerprint {k + 1} is {mine:.6g} where the reference's is "
                        f"{want:.6g} (allowed difference {allow:.3g})")
    return None
