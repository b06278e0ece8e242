"""Registry of evaluation protocols.

A protocol is a module exposing ``INFO`` (``schemas.ProtocolInfo``), ``BASELINE_KINDS``,
``SPEEDUP_BASELINE`` (``Speedups`` field -> baseline kind), ``run_baseline(job)`` and
``run_candidate(job)`` (both run inside a fresh worker process), and optionally
``measure_memory(job)``. What they return (``CandidateOutcome``, ``BaselineOutcome``) and the statistics that summarise
a timing are exported here, and the comparisons of large outputs a piece at a time that both protocols use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .._lazy import lazy_face
from ._outcomes import (
    BaselineOutcome,
    CandidateOutcome,
    host_speed_bound,
    mean,
    median,
    pacing_of,
    quantile,
    std,
    summarize,
    uses_graph,
)

_PART_OF = {name: "_pieces" for name in ("PIECE_ELEMENTS", "Maximum", "Piecewise", "allclose", "error_maxima", "pieces",
                                          "piecewise")}
"""Names imported on first use (they import torch; this face does not)."""

__all__ = [
    "PROTOCOLS", "BaselineOutcome", "CandidateOutcome", "ProtocolUnavailable", "get_protocol", "host_speed_bound",
    "mean", "median", "pacing_of", "quantile", "std", "summarize", "uses_graph", *_PART_OF,
]

__getattr__, __dir__ = lazy_face(__name__, _PART_OF, globals())

PROTOCOLS: dict[str, str] = {
    "standard": "evaluations.protocols.standard",
    "verified": "evaluations.protocols.verified",
}
"""Protocol name -> module implementing it."""


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
