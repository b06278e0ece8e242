"""Timing in turns: ``_Slots``, the turns a timing takes with other processes' timings of the same problem
(``plan.turns``), or one long turn when timed alone, and the stopping rule it applies."""

from __future__ import annotations

import contextlib
import os
from time import perf_counter

from schemas import ROUNDS_MAX

from ..core import gpulock, grouped_half_width_rel, round_medians
from ._turns import Turns
from .bound import _synchronize
from .plan import BATCH, TURN_MS, TimingPlan


def _should_stop(groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
    """Whether sampling ends: at the caps, or once enough samples and time give a tight enough CI."""
    elapsed, count = perf_counter() - started, sum(len(g) for g in groups)
    if count >= plan.max_calls or elapsed > plan.time_cap_s:
        return True
    return (count >= plan.min_calls and elapsed >= plan.min_time_s
            and grouped_half_width_rel(groups) < plan.ci_target_rel)


class _Slots:
    """The turns a timing takes with other processes' timings (``plan.turns``), or one long turn when alone.

    ``begin`` waits for this timing's turn (letting go of a shared GPU meanwhile) and then holds the
    device alone; ``end`` lets the device go quiet and hands the turn on, saying whether this timing's
    stopping rule is met. Alone, both do nothing (``time_calls`` holds the device throughout). In
    turns, the stopping rule's clock counts this timing's own time only (not its waits for the others'
    turns), and a batch is cut to about ``TURN_MS``."""

    def __init__(self, plan: TimingPlan, cuda: bool) -> None:
        self.turns = Turns(plan.turns, plan.party) if plan.turns else None
        self.cuda = cuda
        self.cpu = plan.turn_cpu if plan.turn_cpu >= 0 and hasattr(os, "sched_setaffinity") else None
        self.batch = BATCH
        self._held = contextlib.ExitStack()
        self._waited_before = 0.0
        self.rounds = 0
        """Batches of samples taken so far (in turns, one a round; a record keeps at most ``ROUNDS_MAX``):
        the index of the batch being taken."""

    def begin(self) -> bool:
        """Wait for this timing's turn; True when all timings of the round are to stop (this turn is the last)."""
        if self.turns is None:
            return False
        with gpulock.released():
            stop = self.turns.take()
        self._held.enter_context(gpulock.exclusive())
        if self.cpu is not None:  # this thread on the round's core for its turn; waiting, it polls elsewhere
            before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {self.cpu})
            self._held.callback(os.sched_setaffinity, 0, before)
        return stop

    def _hand_on(self) -> None:
        if self.cuda:
            _synchronize()
        self._held.close()

    def end(self, satisfied: bool) -> None:
        """Hand the turn on (nothing of this timing's device work left running)."""
        if self.turns is not None:
            self._hand_on()
            self.turns.give(satisfied)

    def leave(self) -> None:
        """Hand the turn on for good, after the last one."""
        if self.turns is not None:
            self._hand_on()
            self.turns.leave()

    def sampling(self, sample_ms: float) -> float:
        """Sampling starts (samples of about ``sample_ms`` each); returns its start on the stopping rule's clock."""
        if self.turns is not None:
            self.batch = max(1, min(BATCH, int(TURN_MS / max(sample_ms, 1e-3))))
            self._waited_before = self.turns.waited_s
        return perf_counter()

    def _stop(self, groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
        waited = self.turns.waited_s - self._waited_before if self.turns is not None else 0.0
        return _should_stop(groups, plan, started + waited)

    def finished(self, groups: list[list[float]], plan: TimingPlan, started: float) -> bool:
        """Before a batch of samples: whether sampling ends. Alone, by this timing's stopping rule; in turns,
        once every timing's rule is met (told at the start of a turn, which is then the last one)."""
        return self._stop(groups, plan, started) if self.turns is None else self.begin()

    def batch_done(self, groups: list[list[float]], plan: TimingPlan, started: float) -> None:
        """After a batch of samples: counted, and in turns, the turn handed on with this timing's stopping rule."""
        self.rounds += 1
        if self.turns is not None:
            self.end(self.rounds >= ROUNDS_MAX or self._stop(groups, plan, started))

    def round_medians(self, samples: list[float], batches: list[int]) -> list[float] | None:
        """In turns, the median of each round's samples (``None`` when timed alone): what a speedup between
        timings of the same turns is taken from (``schemas.speedup_between``)."""
        return round_medians(samples, batches) if self.turns is not None else None

    def note(self) -> str:
        """What the record says of the turns ("" when timed alone)."""
        if self.turns is None:
            return ""
        core = f", every turn on host core {self.cpu}" if self.cpu is not None else ""
        return (f"; timed in turns with {self.turns.parties - 1} other process(es) timing the same problem, "
                f"{self.batch} sample(s) a turn{core}, so the host's slow phases weigh on each timing alike "
                f"(waited {self.turns.waited_s:.3g} s in all for their turns)")
