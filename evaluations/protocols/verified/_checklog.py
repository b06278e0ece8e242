"""The verified protocol's integrity checks by name, and the log that collects their verdicts."""

from __future__ import annotations

from schemas import IntegrityCheck

CHECKS: tuple[str, ...] = (
    "hidden-inputs", "precision", "cached-output", "stale-memory", "recheck-after-timing", "unsynchronised-work", "threads",
    "output-type", "function-patching", "global-state", "input-mutation", "output-aliasing", "constant-output",
    "determinism", "faster-than-sol",
)
"""Every integrity check, in the order a record lists them."""


class CheckLog:
    """First evidence of each failed check; skipped checks keep the reason they were skipped."""

    def __init__(self) -> None:
        self.failed: dict[str, str] = {}
        self.skipped: dict[str, str] = {}

    def check(self, name: str, evidence: str | None) -> None:
        """Record ``evidence`` of a violation of check ``name`` (``None`` = no violation seen)."""
        if name not in CHECKS:
            raise ValueError(f"unknown integrity check {name!r}")
        if evidence and name not in self.failed:
            self.failed[name] = evidence[:2000]

    def skip(self, name: str, reason: str) -> None:
        """Mark a check as not run, with the reason."""
        self.skipped.setdefault(name, f"skipped: {reason}"[:2000])

    def results(self) -> list[IntegrityCheck]:
        """One ``IntegrityCheck`` per check, failures carrying their evidence."""
        out = []
        for name in CHECKS:
            if name in self.failed:
                out.append(IntegrityCheck(name=name, passed=False, evidence=self.failed[name]))
            else:
                out.append(IntegrityCheck(name=name, passed=True, evidence=self.skipped.get(name)))
        return out
