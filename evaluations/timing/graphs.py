"""CUDA graphs of a timed call: capture, the clean-up after a capture that failed, and the check that a
captured graph does the call's work as an eager call does (``work_outside_capture``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..core import outputs_of, refresh_in_place
from .bound import _synchronize


def _capture(call: Callable[[int], Any], ks: list[int],
             sets: list[list[Any]]) -> tuple[torch.cuda.CUDAGraph, dict[int, Any]] | str:
    """A CUDA graph of ``call(k)`` for each ``k`` of ``ks`` in turn and their (static) outputs, or why
    capture failed. The input sets get new values between the warm-up calls and the capture, so an
    answer kept from the warm-up is stale in the captured outputs."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
            for k in ks:
                call(k)
        torch.cuda.current_stream().wait_stream(side)
        for k in ks:
            refresh_in_place(sets[k])
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = {k: call(k) for k in ks}
        _synchronize()
        return graph, outs
    except Exception as exc:  # noqa: BLE001 - any failure means: time eager calls, and say why
        try:
            _synchronize()
        except Exception:  # noqa: BLE001, S110 - the error above is the one reported
            pass
        _end_failed_capture()
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]


def _end_failed_capture() -> None:
    """Leave the device's random generator as it was before a capture that failed.

    A capture that fails at its end never runs the generator's capture epilogue, so the generator
    stays in capture mode and the next random draw on the device fails ("Offset increment outside
    graph capture encountered unexpectedly"): a model that draws random numbers in its forward could
    then not even be timed eager. A capture of one small kernel runs prologue and epilogue again."""
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            torch.zeros(1, device="cuda")
        _synchronize()
    except Exception:  # noqa: BLE001, S110 - best effort: the eager timing reports what still fails
        pass


def output_mismatch(got: list[Any], want: list[Any]) -> str | None:
    """How the tensors of ``got`` differ from ``want`` beyond float noise (``torch.isclose`` with 1e-3
    relative and absolute: NaN where both are NaN, and an infinity of the same sign, count as equal), or
    ``None``."""
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)):
            continue
        if g.shape != w.shape:
            return f"output {i} has shape {tuple(g.shape)}, an eager call's {tuple(w.shape)}"
        if g.is_floating_point() or g.is_complex():
            wide = torch.complex128 if g.is_complex() else torch.float64
            same = bool(torch.isclose(g.to(wide), w.to(wide), rtol=1e-3, atol=1e-3, equal_nan=True).all())
        else:
            same = bool((g == w).all())
        if not same:
            return f"output {i} differs from an eager call's on the same inputs"
    return None


def work_outside_capture(graph: torch.cuda.CUDAGraph, outs: dict[int, Any], call: Callable[[int], Any],
                          sets: list[list[Any]]) -> str | None:
    """Evidence that a captured graph does not do the call's work as an eager call on the default stream does, or
    ``None``.

    A capture records the captured stream's work without running it, so the outputs right after capture hold
    nothing yet and are not compared. The test is a replay: the input sets get new values, the graph is replayed,
    and its outputs must be an eager call's on those values. Work a call launches outside the capturing stream (a
    kernel on the legacy default stream, as ``kernel<<<grid, block>>>`` does without a stream argument; or on a
    side stream) is not captured: it ran once, during capture, on the values of then, while the captured work
    around it (``torch::zeros``, a convolution before it, a ``.mean()`` after it) runs at each replay. A replay then
    leaves the outputs as they were, or zeroes them, or feeds the kernel's stale result on: it does not do what a
    user's eager call does, so the graph is not used, eager calls on the default stream are timed, and their
    outputs re-checked after timing, as for any candidate (an answer a candidate hands back without computing it is
    found there, in the eager calls).
    """
    last = list(outs)[-1]
    shared = {o.untyped_storage().data_ptr() for o in outputs_of(outs[last]) if isinstance(o, torch.Tensor)}
    own = [k for k in outs if k == last or not any(  # a buffer reused by every call holds the last call's answer
        isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() in shared for o in outputs_of(outs[k]))]

    def current() -> dict[int, list[Any]]:
        _synchronize()
        return {k: [o.clone() if isinstance(o, torch.Tensor) else o for o in outputs_of(outs[k])] for k in own}

    def eager(k: int) -> list[Any]:
        want = outputs_of(call(k))
        _synchronize()
        return want

    for k in outs:
        refresh_in_place(sets[k])
    graph.replay()
    for k, got in current().items():
        missed = output_mismatch(got, eager(k))
        if missed:
            return f"a replay on new values of input set {k}: {missed}"
    return None
