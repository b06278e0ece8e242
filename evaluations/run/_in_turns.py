"""Timing a candidate in turns with fresh timings of its problem's baselines, each in a worker of its own, so that
the host's drifting speed touches all of them alike."""

from __future__ import annotations

import threading
from dataclasses import replace
from functools import partial
from types import ModuleType
from typing import Any

from schemas import BaselineRecord

from ..core import Job, host_speed_bound
from ..worker import IsolatedResult
from ._base import RunnerBase


class TakingTurns(RunnerBase):
    """Whether :class:`~evaluations.run.Runner` times a candidate in turns with its baselines, and that timing."""

    def takes_turns(self, module: ModuleType, baselines: dict[str, BaselineRecord]) -> bool:
        """Whether a candidate is timed in turns with its baselines: when asked for, or where the protocol
        does so for a problem whose eager baseline follows the host's own speed (``host_speed_bound``: a
        graph could not hold the call), as that speed then sets every timing of the problem."""
        if not getattr(module, "TURNS_WHEN_HOST_BOUND", False):
            return False  # a protocol whose timing takes no turns (the standard one)
        eager = baselines[module.SPEEDUP_BASELINE["vs_eager"]].timing
        return self.config.in_turns or (self.config.device == "cuda" and host_speed_bound(eager))

    def timed_in_turns(self, job: Job, baselines: dict[str, BaselineRecord], tag: str,
                       answer: Any = None) -> tuple[IsolatedResult, dict[str, BaselineRecord], list[str]]:
        """The candidate's worker, with every baseline kind timed anew beside it in a worker of its own, the
        timings taking turns of a batch of samples each (``_turns``), every turn on the same host core.

        Returns the candidate's result, the baselines timed in turns and notes: a baseline whose timing in
        turns fails keeps its earlier timing, and a note says so. Deadlines are twice the run's, as each
        timing waits for the others' turns."""
        from ..timing import (  # the timing package imports torch: imported where a run takes turns
            create,
            round_core,
            take_turns,
        )
        kinds = list(baselines)
        path = create(self.config.build_dir.absolute() / "turns" / f"{tag}.json", 1 + len(kinds))
        eager = baselines[self.protocols[job.protocol].SPEEDUP_BASELINE["vs_eager"]]
        shared = {"turns": str(path), "turn_cpu": round_core()}
        jobs = [replace(job, options={**job.options, **shared, "party": 0})]
        for party, kind in enumerate(kinds, 1):
            own = self.job_of(job.protocol, self.problems[job.problem.key], kind=kind, pacer=eager)
            jobs.append(replace(own, options={**own.options, **shared, "party": party}))
        untimed = threading.Event()
        cancel = _AnySet(self.cancel, untimed)  # baselines stop once the candidate ended without a timing

        def run(party: int) -> IsolatedResult:
            result = None
            try:
                result = self._isolated("evaluations.worker._worker:run_job", jobs[party],
                                        tag if party == 0 else f"{tag}-turns-{kinds[party - 1]}",
                                        2 * self.config.timeout_s, "candidate" if party == 0 else "baseline",
                                        spare=False, cancel=self.cancel if party == 0 else cancel,
                                        answer=answer if party == 0 else None, admit=False)
                return result
            finally:
                if party == 0 and not _timed(result):
                    untimed.set()

        results = take_turns(path, [partial(run, party) for party in range(len(jobs))])
        lead = results[0]
        if not _timed(lead):
            return lead, {}, []
        timed, notes = {}, []
        for kind, result in zip(kinds, results[1:], strict=True):
            if result.ok:
                timed[kind] = baselines[kind].model_copy(update={"timing": result.value.timing})
            else:
                reason = result.failure.message if result.failure else "no result"
                notes.append(f"the {kind} baseline timed in turns beside this candidate failed ({reason[:200]}); "
                             "its earlier timing, taken alone, is used")
        return lead, timed, notes


def _timed(result: IsolatedResult | None) -> bool:
    """Whether an isolated candidate call came back with a timing."""
    return result is not None and result.ok and getattr(result.value, "timing", None) is not None


class _AnySet:
    """Set when any of its events is (the ``cancel`` of an isolated call that more than one thing may stop)."""

    def __init__(self, *events: threading.Event) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)
