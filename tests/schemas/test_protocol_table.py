"""The protocols' one table (``schemas.PROTOCOLS``): the protocol modules take their parameters from it, and what
they run (seeds, distributions, the timing plan) is what it pins."""

from __future__ import annotations

import pytest

from schemas import PROTOCOLS, protocol_info


def test_every_registered_protocol_is_in_the_table() -> None:
    from evaluations.protocols import PROTOCOLS as REGISTERED

    assert set(REGISTERED) == set(PROTOCOLS)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_a_protocol_module_writes_its_newest_version_from_the_table(name: str) -> None:
    pytest.importorskip("torch")
    from evaluations.protocols import get_protocol

    module = get_protocol(name)
    assert module.INFO == protocol_info(name) and module.INFO.version == PROTOCOLS[name]["versions"][-1]
    assert tuple(module.BASELINE_KINDS) == PROTOCOLS[name]["baseline_kinds"]
    assert module.INFO.timing.statistic == PROTOCOLS[name]["statistic"]


def test_the_standard_protocol_draws_the_seeds_it_pins() -> None:
    pytest.importorskip("torch")
    from evaluations.protocols.standard import trial_seeds

    assert tuple(trial_seeds()) == PROTOCOLS["standard"]["pinned"]["1.0"].seeds


def test_the_verified_protocol_runs_the_distributions_and_timing_it_pins() -> None:
    pytest.importorskip("torch")
    from evaluations.protocols.verified import DISTRIBUTIONS
    from evaluations.timing import TimingPlan

    pin, plan = PROTOCOLS["verified"]["pinned"]["1.3"], TimingPlan()
    assert tuple(d.label for d in DISTRIBUTIONS) == pin.distributions
    assert (plan.warmup_calls, plan.min_calls, plan.ci_target_rel, plan.time_cap_s) == \
        (pin.timing.warmup_calls, pin.timing.timed_calls, pin.timing.ci_target_rel, pin.timing.time_cap_s)


def test_a_protocol_block_carries_what_its_version_pins() -> None:
    info = protocol_info("verified", "1.1")
    pin = PROTOCOLS["verified"]["pinned"]["1.1"]
    assert (info.version, info.atol, tuple(info.seeds), tuple(info.distributions), info.timing) == \
        ("1.1", pin.atol, pin.seeds, pin.distributions, pin.timing)
    assert protocol_info("standard").tf32_baseline is False and protocol_info("verified").tf32_baseline is True


def test_verified_1_2_pins_what_1_1_pins() -> None:
    pinned = PROTOCOLS["verified"]["pinned"]
    assert PROTOCOLS["verified"]["versions"] == ("1.0", "1.1", "1.2", "1.3")
    assert pinned["1.2"] == pinned["1.1"] == pinned["1.0"]


def test_verified_1_3_changes_the_verdicts_alone() -> None:
    """1.3 pins the same parameters and timing as 1.2 (so it reuses 1.2's baselines); it classes the checks of a wrong
    answer as ``incorrect`` and grants the TF32 matmul setting the eager baseline runs with."""
    from dataclasses import replace

    from schemas import baseline_versions

    old, new = PROTOCOLS["verified"]["pinned"]["1.2"], PROTOCOLS["verified"]["pinned"]["1.3"]
    assert replace(new, incorrect_checks=(), granted_state=(), baselines_of=()) == old
    assert dict(new.incorrect_checks) == {"precision": "precision", "determinism": "nondeterministic",
                                          "stale-memory": "uninitialised-read"}
    assert {(name, value) for name, value, _ in new.granted_state} >= {
        ("torch.backends.cuda.matmul.allow_tf32", "True"), ("float32_matmul_precision", "high")}
    assert baseline_versions("verified", "1.3") == ("1.3", "1.2") and baseline_versions("verified", "1.2") == ("1.2",)


def test_a_version_is_superseded_by_the_newest_of_its_protocol_and_only_an_earlier_one_is() -> None:
    from schemas import superseded

    versions = PROTOCOLS["verified"]["versions"]
    assert [superseded("verified", v) for v in versions] == [versions[-1]] * (len(versions) - 1) + [None]
    assert superseded("standard", PROTOCOLS["standard"]["versions"][-1]) is None
    assert superseded("verified", "9.9") is None and superseded("no-such-protocol", "1.0") is None


def test_the_audit_and_the_standard_checks_take_the_standard_protocol_s_figures_from_the_table() -> None:
    pytest.importorskip("torch")
    from evaluations.audit import AuditOptions
    from evaluations.protocols.standard import DISTRIBUTION

    pin = PROTOCOLS["standard"]["pinned"]["1.0"]
    assert AuditOptions(device="cpu").atol == pin.atol == pin.rtol
    assert (DISTRIBUTION,) == pin.distributions
