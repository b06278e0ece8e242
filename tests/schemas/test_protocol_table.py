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


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_module_runs_the_parameters_its_version_pins(name: str) -> None:
    pytest.importorskip("torch")
    from evaluations.protocols import get_protocol

    info = get_protocol(name).INFO
    pin = PROTOCOLS[name]["pinned"][info.version]
    assert (info.atol, info.rtol, tuple(info.seeds), tuple(info.distributions)) == \
        (pin.atol, pin.rtol, pin.seeds, pin.distributions)
    assert info.timing == pin.timing
    assert pin.timing.statistic == PROTOCOLS[name]["statistic"]


def test_verified_1_2_pins_what_1_1_pins() -> None:
    pinned = PROTOCOLS["verified"]["pinned"]
    assert PROTOCOLS["verified"]["versions"] == ("1.0", "1.1", "1.2")
    assert pinned["1.2"] == pinned["1.1"] == pinned["1.0"]
