"""The floor of the evaluator: the types and small pieces every stage shares, and nothing above them.

Problems, candidates and jobs (``_types``), what a protocol returns (``_outcomes``), the status its evidence gives
(``_status``: the one place a status is decided) and what the judge is asked and finds (``_judgement``), the
statistics of per-call times (``_stats``), what a protocol is and where each lives (``_protocol``), the GPU lock
(``gpulock``, the module itself: the stages call its functions through it, so a test that replaces one replaces it
for all), and a lazy package face (``lazy_face``). The pieces that need torch (hidden input distributions, allocator
poisoning, comparisons a piece at a time, a call's tensors) are imported on first use, so this face stays
torch-free. This package imports only ``schemas`` and itself; every stage may import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _gpulock as gpulock
from ._judgement import Judgement, JudgeRequest, Ruling
from ._lazy import lazy_face
from ._outcomes import BaselineOutcome, CandidateOutcome, host_speed_bound, pacing_of, uses_graph
from ._protocol import PROTOCOLS, EvaluationProtocol, ProtocolUnavailable, get_protocol
from ._stats import (
    ci_half_width_rel,
    grouped_half_width_rel,
    grouped_median,
    mean,
    median,
    median_ci,
    median_ci_ranks,
    quantile,
    round_medians,
    std,
    summarize,
    summarize_verified,
)
from ._status import FAILURE_STATUS, Failure, Verdict, failure_status, no_answer, verdict
from ._types import (
    OVERRIDDEN,
    AlgorithmFlags,
    Candidate,
    Claim,
    Counted,
    Job,
    Origin,
    Overrides,
    Problem,
    ProblemMeta,
    sha256_text,
)

if TYPE_CHECKING:
    from ._distributions import (
        DISTRIBUTIONS,
        SEED_FLOOR,
        Distribution,
        NotReproducible,
        check_reproducible,
        draw,
        fresh_seeds,
        refresh_in_place,
        signature,
    )
    from ._memory import prefill_allocator, sentinel_count
    from ._pieces import PIECE_ELEMENTS, Maximum, Piecewise, allclose, error_maxima, pieces, piecewise
    from ._tensors import outputs_of, tensor_bytes, to_device

_TORCH_PARTS: dict[str, tuple[str, ...]] = {
    "_distributions": ("DISTRIBUTIONS", "SEED_FLOOR", "Distribution", "NotReproducible", "check_reproducible", "draw",
                       "fresh_seeds", "refresh_in_place", "signature"),
    "_memory": ("prefill_allocator", "sentinel_count"),
    "_pieces": ("PIECE_ELEMENTS", "Maximum", "Piecewise", "allclose", "error_maxima", "pieces", "piecewise"),
    "_tensors": ("outputs_of", "tensor_bytes", "to_device"),
}
_PART_OF = {name: part for part, names in _TORCH_PARTS.items() for name in names}
"""Names imported on first use (they import torch; this face does not)."""

__all__ = [
    "FAILURE_STATUS", "OVERRIDDEN", "PROTOCOLS", "AlgorithmFlags", "BaselineOutcome", "Candidate",
    "CandidateOutcome", "Claim", "Counted", "EvaluationProtocol", "Failure", "Job", "JudgeRequest", "Judgement",
    "Origin", "Overrides", "Problem", "ProblemMeta", "ProtocolUnavailable", "Ruling", "Verdict", "ci_half_width_rel",
    "failure_status", "get_protocol", "gpulock", "grouped_half_width_rel", "grouped_median", "host_speed_bound",
    "lazy_face", "mean", "median", "median_ci", "median_ci_ranks", "no_answer", "pacing_of", "quantile",
    "round_medians", "sha256_text", "std", "summarize", "summarize_verified", "uses_graph", "verdict",
    # imported on first use (_TORCH_PARTS)
    "DISTRIBUTIONS", "PIECE_ELEMENTS", "SEED_FLOOR", "Distribution", "Maximum", "NotReproducible", "Piecewise",
    "allclose", "check_reproducible", "draw", "error_maxima", "fresh_seeds", "outputs_of", "pieces", "piecewise",
    "prefill_allocator", "refresh_in_place", "sentinel_count", "signature", "tensor_bytes", "to_device",
]

__getattr__, __dir__ = lazy_face(__name__, _PART_OF, globals())
