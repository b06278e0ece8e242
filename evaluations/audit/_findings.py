"""Audit findings as pure functions of a reference's measurements (``evaluations.audit._probe.Probe``).

Severity: ``exclude`` when no kernel can be measured meaningfully on the problem (an all-zero
output lets ``torch.zeros`` pass; an input the output does not depend on can be skipped), ``warn``
when the degeneracy is only within tolerance (a mean over a billion draws is nearly the same number
for every input, so a constant passes the standard protocol's check but not the verified protocol's
scaled inputs) or concerns timing shape rather than validity.
"""

from __future__ import annotations

from schemas import AuditFinding, Severity

from ._probe import Probe, Same

LAUNCH_BOUND_MS = 0.020
"""Below 20 µs per call, kernel launch overhead, not the work, sets the time."""
SCALING_MIN_RATIO = 1.2
"""Doubling the batch must cost at least 20% more time, else the time does not reflect the work."""


def _f(code: str, severity: Severity, message: str, evidence: str | None = None) -> AuditFinding:
    return AuditFinding(code=code, severity=severity, message=message, evidence=evidence)  # type: ignore[arg-type]


def _all(items: list[Same], attr: str) -> bool:
    return bool(items) and all(getattr(s, attr) for s in items)


def _value_findings(p: Probe, atol: float) -> list[AuditFinding]:
    n = len(p.draw_max_abs)
    peak = max(p.draw_max_abs, default=0.0)
    if not all(p.draw_finite):
        return [_f("non-finite-output", "exclude", "the reference output holds NaN or Inf, so no candidate can match it",
                   f"{p.draw_finite.count(False)} of {n} draws not finite")]
    if all(p.draw_all_zero):
        return [_f("zero-output", "exclude", "the output is exactly zero for every input draw: torch.zeros passes",
                   f"max |out| = 0 over {n} draws")]
    out = []
    if peak <= atol:
        out.append(_f("near-zero-output", "exclude", f"the output lies within atol = {atol:g} of zero for every draw: torch.zeros passes",
                      f"max |out| = {peak:.3g} over {n} draws"))
    if _all(p.across_draws, "exact"):
        out.append(_f("constant-output", "exclude", "the output is identical for every input draw: it does not depend on the inputs",
                      f"{n} draws bitwise equal"))
    elif _all(p.across_draws, "close"):
        worst = max(s.max_diff for s in p.across_draws)
        out.append(_f("constant-output", "warn", "the output is the same within tolerance for every input draw: a fixed tensor passes the standard check",
                      f"largest change across {n} draws = {worst:.3g}"))
    if _all(p.draw_uniform, "exact"):
        out.append(_f("uniform-output", "exclude", "every element of the output is the same number", f"{n} draws"))
    elif _all(p.draw_uniform, "close"):
        out.append(_f("uniform-output", "warn", "every element of the output is the same number within tolerance", f"{n} draws"))
    return out


def _dependence_findings(p: Probe) -> list[AuditFinding]:
    out = []
    for i, same in sorted(p.inputs.items()):
        if same.exact:
            out.append(_f("ignores-input", "exclude", f"redrawing input {i} leaves the output bitwise unchanged: the input is ignored"))
        elif same.close:
            out.append(_f("ignores-input", "warn", f"redrawing input {i} changes the output only within tolerance",
                          f"largest change = {same.max_diff:.3g}"))
    if p.weights is not None:
        if p.weights.exact:
            out.append(_f("ignores-weights", "exclude", "perturbing every parameter leaves the output bitwise unchanged"))
        elif p.weights.close:
            out.append(_f("ignores-weights", "warn", "perturbing every parameter changes the output only within tolerance",
                          f"largest change = {p.weights.max_diff:.3g}"))
    return out


def _determinism_findings(p: Probe) -> list[AuditFinding]:
    if p.repeat is not None and not p.repeat.close:
        return [_f("nondeterministic", "exclude", "two calls on the same inputs with the same seed disagree beyond tolerance",
                   f"largest difference = {p.repeat.max_diff:.3g}")]
    if p.reseeded is not None and not p.reseeded.close:
        return [_f("nondeterministic", "exclude", "the output depends on the random number generator (e.g. dropout in training mode): "
                   "a candidate cannot reproduce it", f"largest difference after reseeding = {p.reseeded.max_diff:.3g}")]
    if p.repeat is not None and not p.repeat.exact:
        return [_f("nondeterministic-bitwise", "warn", "two calls on the same inputs differ in the last bits (atomics or split reductions)",
                   f"largest difference = {p.repeat.max_diff:.3g}")]
    return []


def _timing_findings(p: Probe) -> list[AuditFinding]:
    if p.timed_on != "cuda" or p.eager_ms is None:
        return []
    if p.eager_ms < LAUNCH_BOUND_MS:
        return [_f("launch-bound", "exclude", "an eager call takes under 20 µs: launch overhead, not the work, sets the time",
                   f"median eager time = {p.eager_ms * 1e3:.1f} µs")]
    if p.doubled_ms is not None and p.doubled_ms < SCALING_MIN_RATIO * p.eager_ms:
        return [_f("time-not-scaling", "warn", "doubling the batch barely changes the time: the device is far from busy",
                   f"{p.eager_ms:.4g} ms -> {p.doubled_ms:.4g} ms with the first dimension doubled")]
    return []


def findings_for(p: Probe, atol: float) -> list[AuditFinding]:
    """Every finding for one probed reference, in a stable order."""
    return _value_findings(p, atol) + _dependence_findings(p) + _determinism_findings(p) + _timing_findings(p)
