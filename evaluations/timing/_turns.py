"""Timings of one problem taken in turns by several processes, so a drifting host weighs on each alike.

An eager call that waits for the host inside (it cannot be captured as a CUDA graph) takes as long
as the host makes it, and a shared host's own speed was seen to change twofold within a minute: a
baseline timed at one moment and a candidate at another then differ by the host's drift, not by
their kernels. Timed in turns, a batch of samples each in a fixed round (candidate, then every
baseline kind), each timing's samples come from the same stretch of time.

The parties share one small JSON file, read and written under an exclusive ``flock``::

    {"turn": 7, "parties": 4, "satisfied": [true, false, true, true], "gone": [false, ...], "stop": false}

Party ``p`` may use the device while ``turn % parties == p``. When it hands the turn on it says
whether its own stopping rule is met; once every party still present has said so, ``stop`` is set
and each party, at its next turn, finishes (its last checks run in that turn, alone on the device)
and hands the turn on for good. A party whose process ended (:func:`take_turns` marks it ``gone``) is
skipped. Party 0 leads (the candidate): if it is gone before the stop, the others have nothing to
be compared with and raise :class:`Abandoned`.

The side that starts the parties (the runner, the benchmarks) creates the file (:func:`create`), starts each
party with its place in the round, and waits for them with :func:`take_turns`.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Bound at import, before any candidate code runs (as the timing's own clock and sync are).
_flock, _sleep, _monotonic = fcntl.flock, time.sleep, time.monotonic
POLL_S = 0.001
"""How often a waiting party looks at the file (a turn lasts a batch of samples: tens of milliseconds or more)."""
LEAD = 0
"""The party the others are compared with (the candidate)."""


def round_core() -> int:
    """The host core every turn of a round runs on: the highest this process may use (-1 where the system
    cannot pin a thread to a core)."""
    return max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else -1


class Abandoned(RuntimeError):
    """The lead party ended before the stop: the other timings have nothing to be compared with."""


def create(path: str | os.PathLike[str], parties: int) -> Path:
    """A fresh turns file for ``parties`` parties (turn 0: the lead's)."""
    if parties < 1:
        raise ValueError(f"turns need at least one party, got {parties}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    state = {"turn": 0, "parties": parties, "satisfied": [False] * parties, "gone": [False] * parties, "stop": False}
    target.write_text(json.dumps(state), encoding="ascii")
    return target


def _locked(path: str | os.PathLike[str], change: Any = None) -> dict[str, Any]:
    """The state, after ``change(state)`` (if given) under the same exclusive lock; written back if changed."""
    fd = os.open(path, os.O_RDWR)
    try:
        _flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "r+", encoding="ascii") as fh:
            state = json.loads(fh.read())
            if change is not None and change(state):
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
        return state
    finally:
        os.close(fd)  # releases the lock


def _skip_gone(state: dict[str, Any]) -> bool:
    """Move the turn past parties that are gone (all gone: left as is); whether it moved."""
    n, moved = state["parties"], False
    for _ in range(n):
        if not state["gone"][state["turn"] % n]:
            break
        state["turn"] += 1
        moved = True
    return moved


def _stop_if_satisfied(state: dict[str, Any]) -> None:
    """Set the stop once every party still present has said its stopping rule is met (none has before its
    first turn is over)."""
    live = [s for s, g in zip(state["satisfied"], state["gone"], strict=True) if not g]
    if live and all(live):
        state["stop"] = True


def mark_gone(path: str | os.PathLike[str], party: int) -> None:
    """Party ``party`` takes no more turns (its process ended); the turn moves on if it was its own."""

    def change(state: dict[str, Any]) -> bool:
        state["gone"][party] = True
        _stop_if_satisfied(state)
        _skip_gone(state)
        return True

    _locked(path, change)


def take_turns(path: str | os.PathLike[str], parties: Sequence[Callable[[], T]],
               stop: Callable[[], None] | None = None) -> list[T]:
    """The results of the parties of the turns file at ``path``, in their order: each of ``parties`` runs one party
    to its end (its process's or worker's result), in a thread of its own, and its party is marked gone as soon as
    it returns, so the others go on without it (or stop, where the lead is gone).

    Where the wait is interrupted (an exception in the calling thread, or in a party's call), ``stop`` (if given)
    ends the parties first, so their threads end too."""

    def seated(party: int) -> T:
        try:
            return parties[party]()
        finally:
            mark_gone(path, party)

    with ThreadPoolExecutor(max_workers=len(parties)) as pool:
        futures = [pool.submit(seated, party) for party in range(len(parties))]
        try:
            return [future.result() for future in futures]
        except BaseException:
            if stop is not None:
                stop()
            raise


class Turns:
    """One party's view of a turns file."""

    def __init__(self, path: str | os.PathLike[str], party: int) -> None:
        self.path = os.fspath(path)
        self.party = party
        self.parties = int(_locked(self.path)["parties"])
        if not 0 <= party < self.parties:
            raise ValueError(f"party {party} of {self.parties}")
        self.waited_s = 0.0
        """Seconds spent waiting for the other parties' turns."""

    def take(self) -> bool:
        """Wait for this party's turn; True when the timings are to stop (this turn is then the last).

        Raises :class:`Abandoned` when the lead is gone before the stop (this party is not the lead)."""
        t0 = _monotonic()
        while True:
            state = _locked(self.path, _skip_gone)
            if state["stop"] is False and self.party != LEAD and state["gone"][LEAD]:
                raise Abandoned("the candidate's process ended before its timing did: nothing to compare with")
            if state["turn"] % self.parties == self.party:
                self.waited_s += _monotonic() - t0
                return bool(state["stop"])
            _sleep(POLL_S)

    def give(self, satisfied: bool) -> None:
        """Hand the turn to the next party present, saying whether this party's stopping rule is met."""

        def change(state: dict[str, Any]) -> bool:
            state["satisfied"][self.party] = satisfied
            _stop_if_satisfied(state)
            state["turn"] += 1
            _skip_gone(state)
            return True

        _locked(self.path, change)

    def leave(self) -> None:
        """Hand the turn on for good (after the last turn)."""
        mark_gone(self.path, self.party)
