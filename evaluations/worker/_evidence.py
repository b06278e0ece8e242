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
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from schemas import CorrectnessCheck

from ..core import DISTRIBUTIONS, Judgement, Piecewise, Ruling, draw, gpulock, outputs_of, tensor_bytes
from ._fingerprint import PRINTS, fingerprint, forget_weights, index_pieces, piece_weights

EVIDENCE_BYTES = 1 << 30
"""Most bytes of trial outputs a worker keeps for the judge; trials past it are judged on the worker's word."""
Verdict = tuple[bool, float | None, str | None]
"""(passed, error budget used, message) of one judged trial."""
Z = 8.0
"""A signed fingerprint may differ from the reference's by this many times the root of the summed squares of what
the tolerance allows (its elements' weighted allowed errors): an answer inside the tolerance passes but with odds
below 2 exp(-Z^2 / 2) = 3e-14, whatever the pattern of its errors (Hoeffding's inequality over the weights' signs)."""


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
        gpulock.yield_to_timing()  # a timing of another worker that waits goes first
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

    with gpulock.exclusive() if device.type == "cuda" else nullcontext():
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
        finally:
            forget_weights()


def _bound(ref: torch.Tensor, allowed: Piecewise, j: int) -> list[tuple[float, float]]:
    """(reference fingerprint, the difference its elements' allowed errors permit) of each of output ``j``'s
    :data:`PRINTS` fingerprints, summed a piece at a time (``index_pieces``), each piece's allowed errors made as
    it is summed. Against weights of mean 1 the permitted difference is the whole weighted sum of the
    allowed errors (errors of one sign, each at its limit: an answer inside the tolerance cannot exceed it); against
    signed weights, ``Z`` times the root of their summed squares (:data:`Z`). Each allows float64 rounding too."""
    r_all = ref.contiguous().reshape(-1)
    shape = tuple(ref.shape)
    sums = torch.zeros(PRINTS, 3, dtype=torch.float64, device=ref.device)
    for a, b, index in index_pieces(shape, None, ref.device):
        r, t = r_all[a:b].to(torch.float64), allowed(a, b).to(torch.float64)
        for kind, signed in piece_weights(shape, None, j, a, b, index, ref.device):
            # |y|y| - r|r|| <= 2|r|t + t^2 where |y - r| <= t
            value, error = (r, t) if kind == 0 else (r * r.abs(), 2 * r.abs() * t + t * t)
            for p, weights in ((kind, signed.abs()), (kind + 2, signed)):
                weighted, err = weights * value, (weights * error).abs_()
                spread = err.sum() if p < 2 else err.square_().sum()
                sums[p] += torch.stack([weighted.sum(), spread, weighted.abs_().sum()])
            del signed, value, error
    return [(ref_p, (err if p < 2 else Z * math.sqrt(err)) + 1e-9 * size)
            for p, (ref_p, err, size) in enumerate(sums.tolist())]


def judge_outer(reference: Callable[[list[Any]], tuple[list[torch.Tensor], list[Piecewise]]], get_inputs: Any,
                device: torch.device, plan: dict[str, Any], prints: list[float], graphs: bool) -> tuple[str | None, float]:
    """In the judge's worker: (why the outside batch's fingerprints are wrong, or None; seconds that drawing and
    fingerprinting its answers cost, timed as the worker's batch runs: the same draws and fingerprints, one wait
    for the device at the end, the GPU held alone). ``reference(inputs)`` gives the reference outputs and each
    one's allowed errors (element by element, a stretch of the flattened output at a time:
    :func:`evaluations.protocols.piecewise`)."""
    try:
        return _judge_outer(reference, get_inputs, device, plan, prints, graphs)
    finally:
        forget_weights()


def _judge_outer(reference: Callable[[list[Any]], tuple[list[torch.Tensor], list[Piecewise]]], get_inputs: Any,
                 device: torch.device, plan: dict[str, Any], prints: list[float],
                 graphs: bool) -> tuple[str | None, float]:
    seeds = outer_seeds(int(plan["seed"]), int(plan["calls"]))
    at, mismatch, first = 0, None, None
    for i, seed in enumerate(seeds):
        gpulock.yield_to_timing()  # up to 50 references and their bounds: each a step, not one long hold
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
    with gpulock.exclusive() if device.type == "cuda" else nullcontext():
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
