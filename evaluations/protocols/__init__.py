"""The evaluation protocols: ``standard`` and ``verified`` (``evaluations.protocols.verified``).

Each is a module that implements ``evaluations.core.EvaluationProtocol``: ``INFO`` (``schemas.ProtocolInfo``),
``BASELINE_KINDS``, ``SPEEDUP_BASELINE`` (``Speedups`` field -> baseline kind), ``run_baseline(job)``,
``run_candidate(job)`` and ``judge(request)`` (each run inside a fresh worker process), and optionally
``measure_memory(job)``. The registry (``PROTOCOLS``, ``get_protocol``), what a protocol returns
(``CandidateOutcome``, ``BaselineOutcome``), the statistics that summarise a timing and the comparisons of large
outputs a piece at a time live in ``evaluations.core`` and are named here too.
"""

from __future__ import annotations

from ..core import (
    PROTOCOLS,
    BaselineOutcome,
    CandidateOutcome,
    EvaluationProtocol,
    ProtocolUnavailable,
    get_protocol,
    host_speed_bound,
    lazy_face,
    mean,
    median,
    pacing_of,
    quantile,
    std,
    summarize,
    uses_graph,
)

_PIECES = ("PIECE_ELEMENTS", "Maximum", "Piecewise", "allclose", "error_maxima", "pieces", "piecewise")
"""Names given on first use (they import torch; this face does not)."""

__all__ = [
    "PROTOCOLS", "BaselineOutcome", "CandidateOutcome", "EvaluationProtocol", "ProtocolUnavailable", "get_protocol",
    "host_speed_bound", "mean", "median", "pacing_of", "quantile", "std", "summarize", "uses_graph", *_PIECES,
]


__getattr__, __dir__ = lazy_face(__name__, {}, globals(), faces=dict.fromkeys(_PIECES, "evaluations.core"))
