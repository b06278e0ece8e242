"""The GPU's busy share over a run, sampled through NVML from the runner's process.

NVML's utilisation counter is the share of the last sample period in which at least one kernel ran on
the device. It is read from outside every worker, so no candidate can change what it says. Where NVML
is not installed (``nvidia-ml-py``) or no GPU answers, the sampler records nothing and says why.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

SAMPLE_S = 0.25
"""Seconds between two readings of the counter."""


@dataclass
class BusySampler:
    """Reads the device's utilisation every ``SAMPLE_S`` seconds on a thread, from ``start`` to ``stop``."""

    origin: float
    """``time.monotonic()`` of the run's start: samples are in seconds since then (as ``PhaseLog``)."""
    samples: list[tuple[float, float]] = field(default_factory=list)
    """(seconds since the run's start, busy share 0..1)."""
    unavailable: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> BusySampler:
        """Begin sampling (a no-op with a reason where NVML cannot be read)."""
        handle = nvml_handle()
        if isinstance(handle, str):
            self.unavailable = handle
            return self
        self._thread = threading.Thread(target=self._loop, args=(handle,), name="kverdict-gpubusy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End sampling."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * SAMPLE_S + 1)

    def _loop(self, handle: Any) -> None:
        import pynvml

        while not self._stop.wait(SAMPLE_S):
            try:
                busy = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu / 100.0
            except pynvml.NVMLError as exc:
                self.unavailable = f"NVML stopped answering: {exc}"
                return
            self.samples.append((time.monotonic() - self.origin, busy))

    def share(self, start_s: float | None = None, end_s: float | None = None) -> float | None:
        """Mean busy share of the samples between ``start_s`` and ``end_s`` (whole run by default)."""
        lo = float("-inf") if start_s is None else start_s
        hi = float("inf") if end_s is None else end_s
        values = [b for t, b in self.samples if lo <= t <= hi]
        return sum(values) / len(values) if values else None


def nvml_handle() -> Any:
    """The NVML handle of the device the workers use, or why there is none."""
    try:
        import pynvml
    except ImportError:
        return "NVML is not installed (the nvidia-ml-py package)"
    try:
        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
        if visible.isdigit():
            return pynvml.nvmlDeviceGetHandleByIndex(int(visible))
        return pynvml.nvmlDeviceGetHandleByUUID(visible)
    except pynvml.NVMLError as exc:
        return f"NVML could not read a GPU: {exc}"
