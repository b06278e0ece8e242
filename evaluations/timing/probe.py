"""Probes of the device and the host: the SM clock (``_ClockProbe``), the device's cycles per ms, one call's
host enqueue and device time (``_probe``), work outside the timed stream (``_unsynchronised``), calls per
event pair, the host's own speed (``host_loop_ms``), and the clock a timing reports (``clock_median``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from time import perf_counter
from typing import Any

import torch

from ..core import median
from .bound import _elapsed, _synchronize
from .placements import _Rotation
from .plan import CLOCK_PROBE_CYCLES, PROBE_SPIN_MS, SAMPLE_TARGET_MS, SHORT_CALL_MS


class _ClockProbe:
    """A fixed number of device cycles spun between two events, enqueued now and read after a sync."""

    def __init__(self) -> None:
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.start.record()
        torch.cuda._sleep(CLOCK_PROBE_CYCLES)
        self.end.record()

    def mhz(self) -> float:
        """SM clock in MHz over the spin (valid once the device has passed ``end``)."""
        ms = _elapsed(self.start, self.end)
        return CLOCK_PROBE_CYCLES / (ms * 1e3) if ms > 0 else float("nan")


def _clock_probe() -> _ClockProbe:
    return _ClockProbe()


def clock_median(clocks: list[float]) -> float | None:
    """The median of the SM clock readings (MHz) that are finite and positive; None where none is."""
    finite = [c for c in clocks if math.isfinite(c) and c > 0]
    return median(finite) if finite else None



def _probe(call: Callable[[int], Any], rot: _Rotation, outputs: dict[int, Any]) -> tuple[float, float]:
    """(host enqueue ms, device ms) of one call, medians of a few.

    Without the spin an idle device would wait for the host's launches inside the event pair, and a
    5 us call could look like a 20 us one, flipping how many calls each sample times.
    """
    host, device = [], []
    spin = int(_cycles_per_ms() * PROBE_SPIN_MS)
    for _ in range(5):
        k = rot.take()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        _synchronize()
        torch.cuda._sleep(spin)
        t0 = perf_counter()
        start.record()
        outputs[k] = call(k)
        end.record()
        host.append((perf_counter() - t0) * 1e3)
        _synchronize()
        device.append(_elapsed(start, end))
    return median(host), median(device)


def _unsynchronised(call: Callable[[int], Any], sets: int, device_ms: float) -> tuple[str | None, int, Any]:
    """Compare device-synchronised wall time of back-to-back calls with the event time.

    No refresh or flush runs between these calls, so all device work in the window is the
    candidate's; an honest call takes about max(event time, host enqueue time). Returns the evidence
    (or ``None``), the set of the last call and that call's output: the most recent answer the candidate
    gave, so the re-check after timing can tell which of the buffers it returned still hold their call's
    answer (a buffer reused by every call holds that set's).
    """
    calls = 10
    _synchronize()
    t0 = perf_counter()
    out = None
    for i in range(calls):
        out = call(i % sets)
    host_ms = (perf_counter() - t0) * 1e3 / calls
    _synchronize()
    wall_ms = (perf_counter() - t0) * 1e3 / calls
    last = (calls - 1) % sets
    if wall_ms > 2.0 * max(device_ms, host_ms) + 0.05:
        return (f"device-synchronised wall time {wall_ms:.3g} ms per call is {wall_ms / max(device_ms, 1e-6):.3g}x "
                f"the event time {device_ms:.3g} ms: work ran outside the timed stream"), last, out
    return None, last, out


_CYCLES_PER_MS: list[float] = []


def _cycles_per_ms() -> float:
    if not _CYCLES_PER_MS:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(2_000_000)
        end.record()
        _synchronize()
        _CYCLES_PER_MS.append(2_000_000 / max(_elapsed(start, end), 1e-3))
    return _CYCLES_PER_MS[0]


def calls_per_sample(device_ms: float, sets: int) -> int:
    """Calls per event pair for a call of ``device_ms``: one, or enough distinct sets to fill ~0.2 ms."""
    if device_ms >= SHORT_CALL_MS:
        return 1
    return max(1, min(sets, math.ceil(SAMPLE_TARGET_MS / max(device_ms, 1e-4))))


def host_loop_ms(loops: int = 3, n: int = 100_000) -> float:
    """Median time (ms) of a fixed pure-Python loop that touches no device: the host's own speed.

    An eager call that waits for the host inside (it cannot be captured) takes as long as the host
    makes it; on a shared machine the host's own speed was seen to change twofold within a minute,
    so the note of such a timing gives this loop's time before and after it."""
    times = []
    for _ in range(loops):
        t0 = perf_counter()
        acc = 0
        for i in range(n):
            acc += i & 7
        times.append((perf_counter() - t0) * 1e3)
    return median(times)


def _host_ms(fn: Callable[[], Any]) -> float:
    """Median host enqueue ms of ``fn`` over three calls, the device synchronised between them."""
    times = []
    for _ in range(3):
        _synchronize()
        t0 = perf_counter()
        fn()
        times.append((perf_counter() - t0) * 1e3)
    _synchronize()
    return median(times)

