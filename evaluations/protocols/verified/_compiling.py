"""The ``compile`` baseline's compilation with the device let go: host work that need not keep timings waiting.

A timed ``compile`` baseline compiles its model in its first call (:func:`._protocol.time_baseline`), and that call
held the device shared for its whole length: in a concurrent run, another worker's timing waited for the compilation
to end (a second or two from warm caches, each time), the longest such wait of a re-judging's lock traces
(``benchmarks/lock_trace.py``). The prepare stage has compiled the same model on the same input shapes with nothing
timed (``warm_baseline``), so this compilation reads what that one stored (Inductor's graph, AOT and benchmark caches,
Triton's kernels) and is host work: Dynamo's tracing runs on fake tensors, and the compiled code's first run, its
kernels' autotuning included, comes after the compilation ends. So the device is let go while Dynamo compiles a frame
(from its compile-start callback to its compile-end one), and held shared again before the compiled code runs. A
compilation that another trigger starts (a CUDA graph's recording, Triton's autotuning) keeps the device.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ...core import gpulock


@contextlib.contextmanager
def device_let_go_while_compiling() -> Iterator[None]:
    """For the duration, let go of the device while Dynamo compiles a frame, and take it back shared before the
    compiled code runs; a no-op without the GPU lock (one evaluation at a time, or the CPU) or where this torch has no
    compile callbacks (the device is then held throughout, as before)."""
    try:
        from torch._dynamo.callback import CallbackTrigger, callback_handler
    except ImportError:
        yield
        return
    out = [False]

    def start(args: object = None) -> None:
        if getattr(args, "callback_trigger", None) == CallbackTrigger.DYNAMO:
            out[0] = gpulock.let_go()

    def end(args: object = None) -> None:
        if out[0]:
            out[0] = False
            gpulock.take_back()

    callback_handler.register_start_callback(start)
    callback_handler.register_end_callback(end)
    try:
        yield
    finally:
        callback_handler.remove_start_callback(start)
        callback_handler.remove_end_callback(end)
        # Dynamo runs the end callbacks however its compilation ends; should they not have run (a handler that
        # skips them), the device is held again all the same before anything after the call runs on it
        end()
