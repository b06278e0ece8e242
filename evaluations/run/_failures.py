"""What a worker's failure means for its candidate: the status, by how the worker ended, and a bounded error text."""

from __future__ import annotations

import re

import schemas

from ..core import CandidateOutcome, Failure, no_answer
from ..worker import IsolatedResult
from . import _judge

MAX_ERROR_CHARS = 4000
"""Length limit of a record's ``error`` (the schema's)."""
WRITE_REFUSED = "write-refused"
"""Label of a failed candidate whose error is a write refused on a named path (``refused_write``)."""
_REFUSED = re.compile(r"PermissionError: \[Errno (?:1|13)\] (?:Permission denied|Operation not permitted): '([^'\n]{1,300})'")
OUT_OF_MEMORY = ("OutOfMemoryError", "CUDA out of memory", "CUDA error: out of memory")
"""How a worker's error names running out of device memory (torch's exception, the CUDA error)."""


def error_text(message: str | None, tail: str) -> str | None:
    """A worker's error message with its output's tail (unless the message holds it), cut in the middle to fit."""
    parts = [p.strip() for p in (message, tail) if p and p.strip()]
    if not parts:
        return None
    text = parts[0] if len(parts) == 1 or parts[1] in parts[0] else f"{parts[0]}\n--- output ---\n{parts[1]}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS // 2 - 5] + "\n...\n" + text[-MAX_ERROR_CHARS // 2 + 5:]


def failed_outcome(result: IsolatedResult, *, building: bool = False) -> CandidateOutcome:
    """The outcome of a worker that returned nothing: classified by how it ended, not by its text."""
    assert result.failure is not None
    failure = result.failure
    how: Failure = ("deadline" if failure.kind == "timeout" else "build" if failure.kind == "exception" and building
                    else "run")
    message = failure.message if failure.traceback is None else failure.traceback
    return no_answer(how, error_text(message, result.output_tail))


def reported_outcome(result: IsolatedResult) -> CandidateOutcome:
    """The worker's outcome as reported, or the failure's; a value that is no outcome at all is a ``runtime_error``."""
    if not result.ok:
        return failed_outcome(result)
    if not isinstance(result.value, CandidateOutcome) or result.value.status not in schemas.STATUSES:
        return no_answer("run", "its worker returned something other than an outcome")
    return result.value


def names_out_of_memory(text: str) -> bool:
    """Whether a worker's error text names running out of device memory (``OUT_OF_MEMORY``)."""
    return any(m in text for m in OUT_OF_MEMORY)


def out_of_memory(outcome: CandidateOutcome) -> bool:
    """Whether an evaluation failed, or its judge could not rule, by running out of device memory (the
    candidate's or the harness's own allocations: while other workers hold memory, either can fail where it
    would not alone)."""
    texts = [outcome.error or ""] if outcome.status == "runtime_error" else []
    texts += [note for note in outcome.notes if note.startswith(_judge.NOT_JUDGED)]
    return any(map(names_out_of_memory, texts))


def refused_write(outcome: CandidateOutcome) -> str | None:
    """The path whose write was refused, where a candidate failed (``compile_error``, ``runtime_error``) on a
    ``PermissionError`` naming one: a confined worker may write only its own folders, so such a failure may be the
    harness's rule rather than the kernel's (a kernel that writes to a fixed ``/tmp/...`` path). The record keeps
    its status and is labelled ``write-refused`` with the path, for a reader to judge. Read from the error's text,
    which the candidate could fake: the label changes no verdict, so faking it gains nothing."""
    if outcome.status not in ("compile_error", "runtime_error") or not outcome.error:
        return None
    found = _REFUSED.search(outcome.error)
    return found.group(1) if found else None
