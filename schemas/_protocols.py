"""The one table of the protocols: for each, the versions it accepts, the parameters each version pins, its timing
statistic, its baseline kinds and the baseline behind each speedup column. The validator checks records
against it, the protocol modules take their parameters and their record's ``protocol`` block from it
(:func:`protocol_info`), and the site and the tests build from it: nothing else writes these values down."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ._record import ProtocolInfo
from ._timing import TimingConfig


@dataclass(frozen=True)
class Pinned:
    """What one version of a protocol fixes: a record that names the version carries exactly these
    parameters, and a ``correct`` one ran every trial they call for."""

    atol: float
    """Absolute tolerance of the correctness comparison."""
    rtol: float
    """Relative tolerance."""
    seeds: tuple[int, ...]
    """Seeds of the trials, in order; empty where seeds are drawn fresh for every evaluation."""
    distributions: tuple[str, ...]
    """Input distributions, in order."""
    trials_per_distribution: int
    """Trials (distinct seeds) per distribution of a complete evaluation."""
    timing: TimingConfig
    """Timing parameters."""
    fresh_seed_floor: int | None = None
    """Where seeds are fresh: the lowest seed a trial may use (the standard protocol's lie far below)."""
    incorrect_checks: tuple[tuple[str, str], ...] = ()
    """(check, reason) of each failed check that makes a record ``incorrect`` with that ``reason``, not ``hacked``:
    findings of a wrong answer (arithmetic below the protocol's accuracy, two calls that disagree, output memory
    never written), not of an attack on the measurement. Empty: every failed check is ``hacked``."""
    granted_state: tuple[tuple[str, str, str], ...] = ()
    """(setting, value, label) of each global setting a candidate may change to ``value`` because the protocol's
    baselines already run with it: not a finding but the label ``sets:<label>``; the harness restores its own
    value after each of the candidate's calls. Empty: every change of global state is a finding."""
    baselines_of: tuple[str, ...] = ()
    """Earlier versions whose baseline records this version reuses: it times baselines exactly as they did."""


_STANDARD_1_0 = Pinned(atol=1e-2, rtol=1e-2, seeds=(734796314, 576165995, 2197670066, 839703249, 2584932063),
                       distributions=("D1 x1",), trials_per_distribution=5,
                       timing=TimingConfig(warmup_calls=3, timed_calls=100, statistic="mean", l2_flush=False))
_VERIFIED_1_0 = Pinned(atol=1e-3, rtol=1e-3, seeds=(), distributions=("D1 x1", "D2 x3", "D3 x0.01", "D4 x(-1)"),
                       trials_per_distribution=3, fresh_seed_floor=10_000_019,
                       timing=TimingConfig(warmup_calls=3, timed_calls=100, statistic="median", l2_flush=True,
                                           ci_target_rel=0.005, time_cap_s=10.0))
_VERIFIED_1_3 = replace(
    _VERIFIED_1_0,
    incorrect_checks=(("precision", "precision"), ("determinism", "nondeterministic"),
                      ("stale-memory", "uninitialised-read")),
    granted_state=(("torch.backends.cuda.matmul.allow_tf32", "True", "allow_tf32"),
                   ("float32_matmul_precision", "high", "float32_matmul_precision"),
                   ("torch.backends.cuda.matmul.fp32_precision", "tf32", "allow_tf32")),
    baselines_of=("1.2",))


def _protocol_entry(statistic: str, tf32_baseline: bool, baseline_kinds: tuple[str, ...],
                    speedups: dict[str, str], pinned: dict[str, Pinned]) -> dict[str, Any]:
    return {"versions": tuple(pinned), "statistic": statistic, "tf32_baseline": tf32_baseline,
            "baseline_kinds": baseline_kinds, "speedups": speedups, "pinned": pinned}


PROTOCOLS: dict[str, dict[str, Any]] = {
    "standard": _protocol_entry("mean", False, ("eager_fp32",), {"vs_eager": "eager_fp32", "vs_eager_fp32": "eager_fp32"},
                                {"1.0": _STANDARD_1_0}),
    "verified": _protocol_entry("median", True, ("eager_tf32", "compile", "eager_fp32"),
                                {"vs_eager": "eager_tf32", "vs_compile": "compile", "vs_eager_fp32": "eager_fp32"},
                                {"1.0": _VERIFIED_1_0, "1.1": _VERIFIED_1_0, "1.2": _VERIFIED_1_0,
                                 "1.3": _VERIFIED_1_3}),
}
"""Known protocols: accepted versions (the keys of ``pinned``), the timing statistic speedups use,
baseline kinds, speedup columns, and the parameters each version pins."""


def pinned(name: str, version: str | None = None) -> Pinned:
    """What ``version`` of protocol ``name`` (default: its newest) pins."""
    entry = PROTOCOLS[name]
    return entry["pinned"][version or entry["versions"][-1]]


def superseded(name: str, version: str) -> str | None:
    """The newest version of protocol ``name`` where ``version`` is an earlier one of the table (its records were
    judged by rules since replaced), else None (the newest itself, or a version or protocol the table does not know)."""
    entry = PROTOCOLS.get(name)
    versions = entry["versions"] if entry else ()
    return versions[-1] if version in versions[:-1] else None


def baseline_versions(name: str, version: str) -> tuple[str, ...]:
    """The versions of protocol ``name`` whose baseline records a record of ``version`` may use: its own, and those
    it times baselines exactly as (``Pinned.baselines_of``)."""
    entry = PROTOCOLS.get(name)
    pin = entry["pinned"].get(version) if entry else None
    return (version, *(pin.baselines_of if pin else ()))


def protocol_info(name: str, version: str | None = None) -> ProtocolInfo:
    """The ``protocol`` block of a record of ``name`` at ``version`` (default: its newest), from the table."""
    entry = PROTOCOLS[name]
    version = version or entry["versions"][-1]
    pin: Pinned = entry["pinned"][version]
    return ProtocolInfo(name=name, version=version, atol=pin.atol, rtol=pin.rtol, seeds=list(pin.seeds),
                        distributions=list(pin.distributions), tf32_baseline=entry["tf32_baseline"],
                        timing=pin.timing.model_copy())
