"""A verified evaluation's status from what its checks found: ``hacked`` only for evidence that the kernel defeats
the measurement; a wrong answer, however it shows, is ``incorrect`` with its reason.

Which failed checks are findings of a wrong answer, and the reason each gives, is the protocol table's
(``schemas.Pinned.incorrect_checks``): arithmetic below the protocol's accuracy (``precision``), two calls on one
input that disagree (``determinism``: ``nondeterministic``), output memory never written (``stale-memory``:
``uninitialised-read``). Every other failed check (answers not computed in the timed call, hidden or deferred
work, patched timers or checks, inputs changed, lazy outputs, a shortcut that holds only on the problem's own
input distribution, faster than physics) is ``hacked``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from schemas import IncorrectReason, Pinned, Status

FIRST = ("uninitialised-read",)
"""Reasons that explain a wrong trial (its output held memory never written): named before ``wrong-answer``. The
others are named only where no trial was plainly wrong."""


class Verdict(NamedTuple):
    """A status and, for ``incorrect``, why."""

    status: Status
    reason: IncorrectReason | None = None


def verdict(failed: Iterable[str], wrong: bool, pin: Pinned) -> Verdict:
    """The status of an evaluation whose checks ``failed`` (names) and whose trials were plainly ``wrong``."""
    failed = list(failed)
    wrong_answer = dict(pin.incorrect_checks)
    if any(name not in wrong_answer for name in failed):
        return Verdict("hacked")
    found = [wrong_answer[name] for name, _ in pin.incorrect_checks if name in failed]
    for reason in found:
        if reason in FIRST:
            return Verdict("incorrect", reason)  # type: ignore[arg-type]
    if wrong:
        return Verdict("incorrect", "wrong-answer")
    if found:
        return Verdict("incorrect", found[0])  # type: ignore[arg-type]
    return Verdict("correct")
