"""Evaluate one zoo entry under the verified protocol, then the standard one, in one fresh process.

The verified protocol runs first: it snapshots the process before the candidate's code is
imported, so the process must not have seen that code before. The standard run afterwards sees
the process as a naive harness would (the candidate's own patches included).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..core import CandidateOutcome, Overrides, gpulock, no_answer
from ..worker import CandidateLoadError, describe
from ._manifest import ZooEntry, zoo_job


class BothOutcomes(NamedTuple):
    """What each protocol said of one zoo entry."""

    verified: CandidateOutcome
    standard: CandidateOutcome | None
    """None where only the verified protocol was asked (:func:`evaluate_verified`)."""


def _run(job: Any) -> CandidateOutcome:
    from ..protocols import get_protocol

    try:
        return get_protocol(job.protocol).run_candidate(job)
    except CandidateLoadError as exc:
        return no_answer("build", str(exc))
    except Exception as exc:
        return no_answer("run", describe(exc))


Payload = tuple[ZooEntry, str, dict[str, Any], str | None, Overrides]
"""(entry, device, job options, build folder, overrides) of one zoo evaluation."""


def evaluate_both(payload: Payload) -> BothOutcomes:
    """Worker target: ``(entry, device, options, build_dir, overrides)`` -> outcomes of both protocols."""
    entry, device, options, build_dir, overrides = payload
    with gpulock.shared_on(device):  # beside other workers: time alone
        verified = _run(zoo_job(entry, "verified", device, options, build_dir, overrides))
        standard = _run(zoo_job(entry, "standard", device, options, build_dir, overrides))
    return BothOutcomes(verified, standard)


def evaluate_verified(payload: Payload) -> BothOutcomes:
    """Worker target: as :func:`evaluate_both`, the verified protocol alone (the GPU tests judge only its verdict)."""
    entry, device, options, build_dir, overrides = payload
    with gpulock.shared_on(device):
        return BothOutcomes(_run(zoo_job(entry, "verified", device, options, build_dir, overrides)), None)
