"""The validator's torch-free table of protocols agrees with the protocol modules themselves."""

from __future__ import annotations

import pytest

from schemas._validate import PROTOCOLS


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_table_matches_the_protocol_module(name: str) -> None:
    pytest.importorskip("torch")
    from evaluations.protocols import get_protocol

    module = get_protocol(name)
    known = PROTOCOLS[name]
    assert module.INFO.version in known["versions"]
    assert module.INFO.timing.statistic == known["statistic"]
    assert module.INFO.tf32_baseline == known["tf32_baseline"]
    assert tuple(module.BASELINE_KINDS) == known["baseline_kinds"]
    assert dict(module.SPEEDUP_BASELINE) == known["speedups"]


def test_every_registered_protocol_is_known_to_the_validator() -> None:
    from evaluations.protocols import PROTOCOLS as REGISTERED

    assert set(REGISTERED) == set(PROTOCOLS)
