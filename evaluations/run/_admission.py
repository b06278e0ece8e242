"""How much of the device the evaluations in flight may hold: each worker is admitted with its problem's estimated
footprint, in the order they asked, while the sum fits the device.

Several evaluations at once share one GPU's memory. A problem whose calls move gigabytes (KernelBench's current
level 1 has inputs and outputs of 4-13 GB) makes a worker hold many times one call's bytes: its correctness trials'
inputs, reference and candidate outputs, its timing's input sets and the outputs it keeps for them, the outside
batch. Beside others such a worker runs out of memory, and so do they; each attempt costs the run tens of seconds
and ends in an evaluation put off to be done again alone. So the runner estimates each problem's footprint from the
peak bytes of one call that its baselines measured (:data:`FOOTPRINT_FACTOR` times the largest, by job), admits a worker only
while the estimates in flight fit the device's memory (:class:`Admission`), and puts off at once, to be evaluated
alone, what cannot fit beside anything. A problem with no measured peak yet counts as an equal share of the device.
An estimate that is too low still ends in the out-of-memory path it replaces; one too high only costs concurrency.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from ._gpubusy import nvml_handle

FOOTPRINT_FACTOR = {"candidate": 8, "judge": 8, "baseline": 4, "memory": 2}
"""A worker's device footprint by its job, in peak bytes of one call of its problem's baselines: a candidate's or
a judge's worker holds its trials' inputs, reference outputs (a float64 one among them) and the candidate's, then
the timing's sets and their outputs; a baseline's, one call and the timing's sets; a memory measurement, one call
and its warm-up. Estimates, to be read against ``benchmarks/protocol_memory.py --device cuda``: on the H200
(session 27) workers of the largest problems held 9x (standard, a ReLU of 6.4 GB) and 29x (verified, a product of
8 MB into 4 GiB, whose timing then kept an output for each of 16 input sets) before the verified timing counted
outputs in its sets and the fingerprint summed large outputs in pieces."""
CONTEXT_BYTES = 1 << 30
"""Device memory each worker's CUDA context and allocator slack take beyond its tensors."""


def device_bytes() -> int | None:
    """Total memory of the device the workers use, through NVML; None where NVML cannot tell."""
    handle = nvml_handle()
    if isinstance(handle, str):  # why there is none
        return None
    import pynvml

    try:
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
    except pynvml.NVMLError:
        return None


def budget_of(total: int | None, concurrent: int) -> int | None:
    """What the tensors of ``concurrent`` workers may hold together on a device of ``total`` bytes; None (no
    admission) without a total or with one worker at a time."""
    if total is None or concurrent <= 1:
        return None
    return max(0, total - concurrent * CONTEXT_BYTES)


class Admission:
    """Workers admitted in the order they ask, each holding its estimated bytes, while the sum fits ``budget``.

    The first in line waits until its bytes fit beside those held, or nothing is held; those behind it wait for it,
    so a large evaluation is not starved by small ones slipping past. Without a budget every worker is admitted at
    once. Callers put off beforehand what exceeds the budget alone (:meth:`fits_beside_none`)."""

    def __init__(self, budget: int | None, concurrent: int) -> None:
        self.budget, self.share = budget, (budget // max(1, concurrent) if budget is not None else None)
        self.held = 0
        self.in_flight = 0
        self._queue: deque[object] = deque()
        self._ready = threading.Condition()

    def need(self, peak_bytes: int | None, job: str = "candidate") -> int:
        """Estimated footprint of a worker of ``job`` (a phase) whose problem's one call peaks at ``peak_bytes``
        (None: not yet measured, an equal share of the budget); 0 for a job that holds no device memory (a phase
        not in :data:`FOOTPRINT_FACTOR`: a build)."""
        if job not in FOOTPRINT_FACTOR:
            return 0
        if peak_bytes is None:
            return self.share or 0
        return FOOTPRINT_FACTOR[job] * peak_bytes

    def fits_beside_none(self, need: int) -> bool:
        """Whether ``need`` exceeds the whole budget: such an evaluation runs alone or not at all."""
        return self.budget is not None and need > self.budget

    @contextmanager
    def hold(self, need: int) -> Iterator[float]:
        """Wait for the turn of a worker of footprint ``need`` and hold it for the duration; gives the seconds it
        waited (nothing to wait for where ``need`` is 0: a worker that holds no device memory)."""
        if self.budget is None or need <= 0:
            yield 0.0
            return
        ticket, start = object(), time.monotonic()
        with self._ready:
            self._queue.append(ticket)
            while not (self._queue[0] is ticket and (self.in_flight == 0 or self.held + need <= self.budget)):
                self._ready.wait()
            self._queue.popleft()
            self.held += need
            self.in_flight += 1
            self._ready.notify_all()  # the next in line may fit too
        try:
            yield time.monotonic() - start
        finally:
            with self._ready:
                self.held -= need
                self.in_flight -= 1
                self._ready.notify_all()
