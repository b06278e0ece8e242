"""What a protocol version pins, and the checks that a record carries exactly that: its parameters,
and the trials a complete evaluation runs."""

from __future__ import annotations

from collections.abc import Iterator

from ._protocols import Pinned
from ._record import BaselineRecord, CorrectnessCheck, Record


def pinned_faults(rec: Record | BaselineRecord, pin: Pinned) -> Iterator[tuple[str, str]]:
    """(field, reason) for each parameter that differs from what the record's protocol version pins."""
    p, name = rec.protocol, f"{rec.protocol.name} {rec.protocol.version}"
    for field, mine, pinned in (("atol", p.atol, pin.atol), ("rtol", p.rtol, pin.rtol),
                                ("seeds", tuple(p.seeds), pin.seeds),
                                ("distributions", tuple(p.distributions), pin.distributions)):
        if mine != pinned:
            yield f"protocol.{field}", f"{name} pins {field} = {list(pinned) if isinstance(pinned, tuple) else pinned}"
    for field, pinned in pin.timing.model_dump().items():
        if getattr(p.timing, field) != pinned:
            yield f"protocol.timing.{field}", f"{name} pins timing.{field} = {pinned}"


def trial_faults(rec: Record, pin: Pinned) -> Iterator[tuple[str, str]]:
    """Trials must be the protocol's own: its seeds and distributions, and all of them for ``correct``."""
    for i, check in enumerate(rec.correctness):
        if reason := _trial_fault(check, i, pin):
            yield f"correctness[{i}]", reason
            return
    if rec.status == "correct":
        for dist in pin.distributions:
            seeds = {c.seed for c in rec.correctness if c.distribution == dist}
            if len(seeds) < pin.trials_per_distribution:
                yield "correctness", (f"'correct' needs {pin.trials_per_distribution} trials of {dist!r} with distinct "
                                      f"seeds under {rec.protocol.name} {rec.protocol.version}, the record has {len(seeds)}")
                return


def _trial_fault(check: CorrectnessCheck, index: int, pin: Pinned) -> str | None:
    if check.distribution not in pin.distributions:
        return f"distribution {check.distribution!r} is not one of the protocol's {list(pin.distributions)}"
    if pin.seeds:
        if index >= len(pin.seeds) or check.seed != pin.seeds[index]:
            return f"trial {index} must use the protocol's seed {pin.seeds[index] if index < len(pin.seeds) else None}"
    elif pin.fresh_seed_floor is not None and not pin.fresh_seed_floor <= check.seed < 2**31:
        return f"seed {check.seed} is not a fresh seed (they lie in [{pin.fresh_seed_floor}, 2**31))"
    return None
