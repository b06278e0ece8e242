"""How much of the device the evaluations in flight may hold: each worker is admitted with its problem's estimated
footprint, in the order they asked (those that finish an evaluation first), while the sum fits the device.

Several evaluations at once share one GPU's memory. A problem whose calls move gigabytes (KernelBench's current
level 1 has inputs and outputs of 4-13 GB) makes a worker hold many times one call's bytes: its correctness trials'
inputs, reference and candidate outputs, its timing's input sets and the outputs it keeps for them, the outside
batch. Beside others such a worker runs out of memory, and so do they; each attempt costs the run tens of seconds
and ends in an evaluation put off to be done again alone. So the runner estimates each problem's footprint from the
peak bytes of one call that its baselines measured (:data:`FOOTPRINT_FACTOR` times the largest, by protocol and job),
admits a worker only while the estimates in flight fit the device's memory (:class:`Admission`), and puts off at
once, to be evaluated alone, what cannot fit beside anything. A problem with no measured peak yet counts as an equal
share of the device, or as the bytes one call must move (its automatic count) where that is more. An estimate that
is too low still ends in the out-of-memory path; one too high costs concurrency (on an H200, factors of 8 let one
evaluation of KernelBench's current level 1 run at a time).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ._gpubusy import nvml_handle

FOOTPRINT_FACTOR: dict[str, dict[str, int]] = {
    "standard": {"candidate": 2, "judge": 3, "baseline": 2, "memory": 2},
    "verified": {"candidate": 6, "judge": 6, "baseline": 3, "memory": 2},
}
"""A worker's device footprint by protocol and job, in peak bytes of one call of its problem's baselines.

- standard: a candidate's worker holds one trial's inputs, the reference's output and the candidate's at a time,
  then the timing's inputs and outputs; its judge, the same and, for the outside batch, a float64 tolerance of each
  output.
- verified: a candidate's or a judge's worker holds a trial's inputs and their float64 copy, the float64 reference
  output and PyTorch's two float32 ones beside the candidate's, then the timing's input sets and the outputs kept
  for them (up to 2 GiB); a baseline's, one call and the timing's sets; a memory measurement, one call and its
  warm-up.

The factors hold because comparisons run in float64 a piece at a time (``evaluations.core``'s pieces): compared
whole, a standard worker of a ReLU of 6.4 GB held 9x one call on an H200. To be read against
``benchmarks/protocol_memory.py --device cuda``."""
FOLLOW_UPS = frozenset({"judge", "memory"})
"""Jobs that finish an evaluation already under way: in the queue for the device they go before the candidates and
baselines that would start new ones, so that the device's room goes to records nearly done (a judge that waits
behind every candidate holds its evaluation's record back for minutes)."""
CONTEXT_BYTES = 1 << 30
"""Device memory each worker's CUDA context and allocator slack take beyond its tensors."""


def _factors(protocol: str) -> dict[str, int]:
    """:data:`FOOTPRINT_FACTOR` of ``protocol``; the verified protocol's, the larger, for one it does not name."""
    return FOOTPRINT_FACTOR.get(protocol, FOOTPRINT_FACTOR["verified"])


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
    so a large evaluation is not starved by small ones slipping past. Follow-ups (:data:`FOLLOW_UPS`) stand in line
    before the others. Without a budget every worker is admitted at once. Callers put off beforehand what exceeds
    the budget alone (:meth:`fits_beside_none`)."""

    def __init__(self, budget: int | None, concurrent: int) -> None:
        self.budget, self.share = budget, (budget // max(1, concurrent) if budget is not None else None)
        self.held = 0
        self.in_flight = 0
        self._queue: list[tuple[int, int, object]] = []  # a heap of (rank, arrival, ticket)
        self._arrivals = itertools.count()
        self._ready = threading.Condition()

    def need(self, peak_bytes: int | None, job: str = "candidate", protocol: str = "verified",
             least_bytes: float | None = None) -> int:
        """Estimated footprint of a worker of ``job`` (a phase) under ``protocol`` whose problem's one call peaks at
        ``peak_bytes``; 0 for a job that holds no device memory (a phase not in :data:`FOOTPRINT_FACTOR`: a build).
        Before any peak is measured (None), an equal share of the budget, or more where the fewest bytes one call
        must move (``least_bytes``, its inputs, weights and outputs: the problem's automatic count) say a call needs
        more: the first baselines of KernelBench's current level 1, which move 4-16 GB a call, do not start beside
        others on a share that cannot hold them."""
        factor = _factors(protocol).get(job)
        if factor is None:
            return 0
        if peak_bytes is None:
            return max(self.share or 0, int(factor * least_bytes)) if least_bytes else (self.share or 0)
        return factor * peak_bytes

    def largest_need(self, peak_bytes: int | None, protocol: str) -> int:
        """The largest footprint among the workers of an evaluation under ``protocol``."""
        return max(self.need(peak_bytes, job, protocol) for job in _factors(protocol))

    def fits_beside_none(self, need: int) -> bool:
        """Whether ``need`` exceeds the whole budget: such an evaluation runs alone or not at all."""
        return self.budget is not None and need > self.budget

    @contextmanager
    def hold(self, need: int, job: str = "candidate") -> Iterator[float]:
        """Wait for the turn of a worker of ``job`` (a phase) and footprint ``need`` and hold it for the duration;
        gives the seconds it waited (nothing to wait for where ``need`` is 0: a worker that holds no device memory).
        A worker of :data:`FOLLOW_UPS` goes before those that start an evaluation, in the order they asked."""
        if self.budget is None or need <= 0:
            yield 0.0
            return
        ticket, start = (0 if job in FOLLOW_UPS else 1, next(self._arrivals), object()), time.monotonic()
        with self._ready:
            heapq.heappush(self._queue, ticket)
            while not (self._queue[0] is ticket and (self.in_flight == 0 or self.held + need <= self.budget)):
                self._ready.wait()
            heapq.heappop(self._queue)
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
