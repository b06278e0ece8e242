"""The protocols the site shows, read from ``schemas.PROTOCOLS`` (the one table of them): their names in the table's
order, the baseline kind behind each speedup column, and which protocol plays which part on the site. The
``standard`` part is the protocol that reproduces KernelBench as it is commonly run (its eager baseline keeps TF32
off and runs no integrity checks of its own); the ``verified`` part is the one with fair baselines (TF32 eager and
torch.compile). The SQL reads the same facts from the ``protocols`` table (``PROTOCOLS_SCHEMA``)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from schemas import PROTOCOLS


@dataclass(frozen=True)
class SiteProtocol:
    """One protocol as the site uses it."""

    name: str
    position: int
    """Its place in ``schemas.PROTOCOLS``: tabs, legends and lists follow it."""
    reproduces_kernelbench: bool
    """True for the protocol whose eager baseline keeps TF32 off (KernelBench as commonly run): the site's standard."""
    eager_kind: str
    """The baseline kind behind ``speedup.vs_eager``."""
    fp32_kind: str | None
    """The baseline kind behind ``speedup.vs_eager_fp32`` (None where the protocol has no such column)."""
    compile_kind: str | None
    """The baseline kind behind ``speedup.vs_compile`` (None where the protocol has no such column)."""


def _site_protocols() -> tuple[SiteProtocol, ...]:
    return tuple(SiteProtocol(name=name, position=i, reproduces_kernelbench=not entry["tf32_baseline"],
                              eager_kind=entry["speedups"]["vs_eager"], fp32_kind=entry["speedups"].get("vs_eager_fp32"),
                              compile_kind=entry["speedups"].get("vs_compile"))
                 for i, (name, entry) in enumerate(PROTOCOLS.items()))


SITE_PROTOCOLS: tuple[SiteProtocol, ...] = _site_protocols()
"""Every protocol of ``schemas.PROTOCOLS``, in its order."""


def _only(reproduces: bool) -> str:
    names = [p.name for p in SITE_PROTOCOLS if p.reproduces_kernelbench is reproduces]
    if len(names) != 1:
        raise ValueError(f"schemas.PROTOCOLS must hold one protocol with tf32_baseline={not reproduces}, not {names}")
    return names[0]


STANDARD: str = _only(True)
"""The protocol that reproduces KernelBench as commonly run."""
VERIFIED: str = _only(False)
"""The protocol with fair baselines, hidden inputs and integrity checks."""
OTHER_PROTOCOL: dict[str, str] = {STANDARD: VERIFIED, VERIFIED: STANDARD}
"""Each protocol's counterpart, which a record page links to."""
EAGER_KIND: dict[str, str] = {p.name: p.eager_kind for p in SITE_PROTOCOLS}
"""The baseline kind behind each protocol's ``vs_eager``."""

PROTOCOLS_SCHEMA = pa.schema([("name", pa.string()), ("position", pa.int32()), ("reproduces_kernelbench", pa.bool_()),
                              ("eager_kind", pa.string()), ("fp32_kind", pa.string()), ("compile_kind", pa.string())])


def protocols_table() -> pa.Table:
    """``SITE_PROTOCOLS`` as the SQL's ``protocols`` table."""
    return pa.Table.from_pylist([p.__dict__ for p in SITE_PROTOCOLS], schema=PROTOCOLS_SCHEMA)
