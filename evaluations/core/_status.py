"""A candidate's status from its evidence: the one place of the evaluator that says which status an evaluation gets.

Two kinds of evidence decide it. A candidate that gave no answers to judge failed in one of three ways
(:data:`Failure`): it did not build or import (``compile_error``), it failed while it ran, crashed or returned no
answer (``runtime_error``), or it ran past its deadline (``timeout``). A candidate whose answers were judged gets its
status from the checks that failed and whether a trial was plainly wrong (:func:`verdict`): ``hacked`` only for
evidence that the kernel defeats the measurement; a wrong answer, however it shows, is ``incorrect`` with its reason.

Which failed checks are findings of a wrong answer, and the reason each gives, is the protocol table's
(``schemas.Pinned.incorrect_checks``): arithmetic below the protocol's accuracy (``precision``), two calls on one
input that disagree (``determinism``: ``nondeterministic``), output memory never written (``stale-memory``:
``uninitialised-read``). Every other failed check (answers not computed in the timed call, hidden or deferred
work, patched timers or checks, inputs changed, lazy outputs, a shortcut that holds only on the problem's own
input distribution, faster than physics, a report the judge contradicts) is ``hacked``. A protocol whose table
entry names no such checks (the standard protocol) makes every failed check ``hacked``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from schemas import IncorrectReason, Pinned, Status

from ._outcomes import CandidateOutcome

Failure = Literal["build", "run", "deadline"]
"""How a candidate gave no answers to judge: it did not build or import, it failed while it ran, or it ran past its
deadline."""
FAILURE_STATUS: dict[Failure, Status] = {"build": "compile_error", "run": "runtime_error", "deadline": "timeout"}
"""The status of each :data:`Failure`."""
FIRST = ("uninitialised-read",)
"""Reasons that explain a wrong trial (its output held memory never written): named before ``wrong-answer``. The
others are named only where no trial was plainly wrong."""


class Verdict(NamedTuple):
    """A status and, for ``incorrect``, why."""

    status: Status
    reason: IncorrectReason | None = None


def verdict(failed: Iterable[str], wrong: bool, pin: Pinned | None) -> Verdict:
    """The status of an evaluation whose checks ``failed`` (names) and whose trials were plainly ``wrong``, under the
    protocol version ``pin`` (``None``: one that classes no check as a wrong answer's)."""
    failed = list(failed)
    incorrect_checks = pin.incorrect_checks if pin is not None else ()
    wrong_answer = dict(incorrect_checks)
    if any(name not in wrong_answer for name in failed):
        return Verdict("hacked")
    found = [wrong_answer[name] for name, _ in incorrect_checks if name in failed]
    for reason in found:
        if reason in FIRST:
            return Verdict("incorrect", reason)  # type: ignore[arg-type]
    if wrong:
        return Verdict("incorrect", "wrong-answer")
    if found:
        return Verdict("incorrect", found[0])  # type: ignore[arg-type]
    return Verdict("correct")


def failure_status(how: Failure) -> Status:
    """The status of a candidate that gave no answers to judge, by how it failed."""
    return FAILURE_STATUS[how]


def no_answer(how: Failure, error: str | None) -> CandidateOutcome:
    """The outcome of a candidate that gave no answers to judge: its status by how it failed, and the error text."""
    return CandidateOutcome(status=failure_status(how), error=error)
