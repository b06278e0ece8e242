"""The verified protocol's integrity checks as pieces: replaced functions, global state, algorithm-choice flags,
the tensor checks, the check log and the random generators' state."""

from __future__ import annotations

import pytest
import torch

from evaluations.protocols.verified import (
    CHECKS,
    CheckLog,
    changed_state,
    constant_output,
    flags_set,
    mutated_inputs,
    output_type,
    replaced_functions,
    snapshot_flags,
    snapshot_functions,
    snapshot_state,
    storage_overlap,
)

# integrity helpers -------------------------------------------------------------------------------

def test_function_patching_is_named_and_restoring_clears_it():
    before = snapshot_functions()
    original = torch.allclose
    torch.allclose = lambda *a, **k: True
    try:
        assert replaced_functions(before) == "torch.allclose was replaced"
    finally:
        torch.allclose = original
    assert replaced_functions(before) is None


def test_global_state_change_is_reported_with_old_and_new_value():
    before = snapshot_state()
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = not old
    try:
        assert f"torch.backends.cudnn.allow_tf32 {old} -> {not old}" in changed_state(before)
    finally:
        torch.backends.cudnn.allow_tf32 = old
    assert changed_state(before) is None


def test_algorithm_choice_flags_are_not_global_state_but_are_reported_as_set():
    state, flags = snapshot_state(), snapshot_flags()
    old = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = not old
    try:
        assert changed_state(state) is None
        assert flags_set(flags) == (("cudnn.benchmark", not old),)
    finally:
        torch.backends.cudnn.benchmark = old
    assert flags_set(flags) == ()


def test_tensor_checks_catch_aliasing_mutation_subclass_and_constant_output():
    x = torch.randn(8, 8)
    assert storage_overlap([x[2:4]], [x]) == "output 0 storage overlaps input 0"
    assert storage_overlap([x.clone()], [x]) is None
    copy = x.clone()
    x[0, 0] += 1
    assert mutated_inputs([x], [copy]) == "the call changed input 0"

    class Sub(torch.Tensor):
        pass

    assert "not exactly torch.Tensor" in output_type([x.as_subclass(Sub)], torch.device("cpu"))
    assert output_type([x], torch.device("cpu")) is None
    ref = torch.randn(8, dtype=torch.float64) * 1e-3
    assert "constant" in constant_output(torch.zeros(8), ref)
    assert constant_output(ref.float(), ref) is None
    assert constant_output(torch.zeros(8), torch.zeros(8, dtype=torch.float64)) is None


def test_check_log_lists_every_check_once_with_evidence_on_failures():
    log = CheckLog()
    log.check("output-aliasing", "output 0 storage overlaps input 0")
    log.check("output-aliasing", "a later, different message")
    log.skip("faster-than-sol", "no roofline floor")
    results = {c.name: c for c in log.results()}
    assert list(results) == list(CHECKS)
    assert not results["output-aliasing"].passed
    assert results["output-aliasing"].evidence == "output 0 storage overlaps input 0"
    assert results["faster-than-sol"].passed and results["faster-than-sol"].evidence.startswith("skipped")
    with pytest.raises(ValueError):
        log.check("no-such-check", "x")


def test_a_call_that_draws_random_numbers_is_told_from_one_that_re_seeds_the_generator():
    """Drawing moves the generator on (label draws-random, not a finding); a new seed, or the state put back at
    the start of the seed in use, makes the next draws predictable (global-state)."""
    from evaluations.protocols import verified as ig

    torch.manual_seed(1234)
    torch.rand(3)
    before = ig.rng_snapshot()
    assert ig.rng_change(before) == (False, None)  # nothing happened
    torch.randn(100)
    assert ig.rng_change(before) == (True, None)  # a draw
    before = ig.rng_snapshot()
    torch.manual_seed(42)
    moved, evidence = ig.rng_change(before)
    assert moved and "its seed changed" in (evidence or "")
    torch.rand(5)
    before = ig.rng_snapshot()
    torch.manual_seed(torch.initial_seed())
    moved, evidence = ig.rng_change(before)
    assert moved and "put back at the start of its seed" in (evidence or "")


def test_a_generator_the_call_left_alone_is_no_evidence_of_re_seeding(monkeypatch):
    """A call that draws from one generator (CUDA's, here a second CPU generator standing in for it) while the
    other still stands at the start of its seed, having never drawn, only moved on: no finding. Re-seeding the one
    that drew is still found."""
    from evaluations.protocols.verified import _integrity

    torch.manual_seed(99)  # the CPU generator at the start of its seed, and left there
    other = torch.Generator().manual_seed(7)
    torch.rand(3, generator=other)
    monkeypatch.setattr(_integrity, "_fresh_state", lambda seed, device: torch.Generator().manual_seed(seed).get_state())
    monkeypatch.setattr(_integrity, "rng_snapshot", lambda: [
        ("cpu", torch.initial_seed(), torch.random.get_rng_state()), ("cuda", other.initial_seed(), other.get_state())])
    before = _integrity.rng_snapshot()
    torch.randn(100, generator=other)
    assert _integrity.rng_change(before) == (True, None)
    before = _integrity.rng_snapshot()
    other.manual_seed(7)
    moved, evidence = _integrity.rng_change(before)
    assert moved and "put back at the start of its seed" in (evidence or "")


@pytest.mark.gpu
def test_a_cuda_draw_beside_an_untouched_cpu_generator_is_labelled_not_found():
    """On the GPU: a warm-up on ``torch.randn(..., device="cuda")`` moves CUDA's generator; the CPU generator, at
    the start of its seed, is no evidence (the zoo's honest random warm-up)."""
    from evaluations.protocols import verified as ig

    torch.manual_seed(5)
    torch.zeros(1, device="cuda")
    before = ig.rng_snapshot()
    torch.randn(1000, device="cuda")
    torch.cuda.synchronize()
    assert ig.rng_change(before) == (True, None)
    before = ig.rng_snapshot()
    torch.cuda.manual_seed(123)
    moved, evidence = ig.rng_change(before)
    assert moved and "its seed changed" in (evidence or "")
