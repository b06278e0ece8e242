"""What a protocol is, and where each one lives.

A protocol is a module that implements :class:`EvaluationProtocol`; the registry names each by module, so a stage
that runs a protocol (the worker, the runner) finds it here without importing the protocols' package.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from schemas import ProtocolInfo

    from ._judgement import Judgement, JudgeRequest
    from ._outcomes import BaselineOutcome, CandidateOutcome
    from ._types import Job

PROTOCOLS: dict[str, str] = {
    "standard": "evaluations.protocols.standard",
    "verified": "evaluations.protocols.verified",
}
"""Protocol name -> module implementing it."""


@runtime_checkable
class EvaluationProtocol(Protocol):
    """What every protocol module holds. The entry points run inside a fresh worker process; a protocol may also
    have ``measure_memory(job)`` (peak bytes of one call) and ``warm_baseline(job)`` (a compile before timing)."""

    INFO: ProtocolInfo
    """Its parameters and its records' ``protocol`` block (``schemas.protocol_info``)."""
    BASELINE_KINDS: tuple[str, ...]
    """The baselines it times, each in its own worker."""
    SPEEDUP_BASELINE: dict[str, str]
    """``Speedups`` field -> the baseline kind it divides by."""

    def run_baseline(self, job: Job) -> BaselineOutcome:
        """Time one baseline kind of one problem."""
        ...

    def run_candidate(self, job: Job) -> CandidateOutcome:
        """Evaluate one candidate; a candidate's failure is its outcome's status."""
        ...

    def judge(self, request: JudgeRequest) -> Judgement:
        """Rule on a candidate's reported trials, in a worker that never imported it."""
        ...


class ProtocolUnavailable(LookupError):
    """A protocol name that is unknown, or whose module is not part of this build."""


def get_protocol(name: str) -> ModuleType:
    """The module implementing protocol ``name``."""
    module_name = PROTOCOLS.get(name)
    if module_name is None:
        raise ProtocolUnavailable(f"unknown protocol {name!r} (known: {', '.join(PROTOCOLS)})")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ProtocolUnavailable(f"the {name} protocol is not available in this build yet") from None
        raise
