"""The fingerprints of the outside batch: the right answer passes in any memory order, errors within the tolerance
pass and errors beyond it fail, and the weights are hashed once per batch."""

from __future__ import annotations

import torch

from evaluations.protocols import piecewise
from evaluations.worker import (
    fingerprint,
    forget_weights,
    judge_outer,
    memory_order,
    outer_inputs,
    outer_seeds,
)

# --- fingerprints ----------------------------------------------------------------------------------------------

def _ref(x):
    y = torch.tanh(x[0]).double()
    return [y], [piecewise(lambda r: 1e-3 + 1e-3 * r.abs(), y)]


def test_fingerprints_pass_the_right_answer_and_fail_zeros_and_a_small_systematic_error():
    plan = {"seed": 123457, "calls": 4}
    device = torch.device("cpu")

    def prints(fn):
        out = []
        for seed in outer_seeds(plan["seed"], plan["calls"]):
            x = outer_inputs(lambda: [torch.randn(64, 300)], seed, device)
            out += fingerprint([fn(x[0])]).tolist()
        return out

    get = lambda: [torch.randn(64, 300)]  # noqa: E731
    within = prints(lambda x: torch.tanh(x) * (1 + 2e-4 * torch.randn_like(x)))
    assert judge_outer(_ref, get, device, plan, within, False)[0] is None
    assert "fingerprint" in judge_outer(_ref, get, device, plan, prints(torch.zeros_like), False)[0]
    assert judge_outer(_ref, get, device, plan, prints(lambda x: torch.tanh(x) + 0.01), False)[0]
    assert "were due" in judge_outer(_ref, get, device, plan, [*within, 1.0, 2.0], False)[0]


def test_errors_inside_the_tolerance_pass_in_any_pattern_and_errors_beyond_it_in_no_pattern_fail():
    """An honest kernel's errors can all lean one way (a TF32 convolution in Triton that truncates its operands:
    on the H200 seven such kernels erred by about 5e-5 of a sum where a random walk of their allowed errors
    would have allowed 1e-5, and were called hacked). Every element at 0.999 of its allowed error, all of one
    sign, passes; noise ten times the tolerance, of no sign, fails on the fingerprints of random signs."""
    plan = {"seed": 424243, "calls": 3}
    device = torch.device("cpu")
    get = lambda: [torch.randn(128, 500)]  # noqa: E731

    def prints(fn):
        out = []
        for seed in outer_seeds(plan["seed"], plan["calls"]):
            out += fingerprint([fn(outer_inputs(get, seed, device)[0])]).tolist()
        return out

    def edge(sign):
        def f(x):
            y = torch.tanh(x.double())
            return (y + sign * 0.999 * (1e-3 + 1e-3 * y.abs())).float()
        return f

    assert judge_outer(_ref, get, device, plan, prints(edge(1)), False)[0] is None
    assert judge_outer(_ref, get, device, plan, prints(edge(-1)), False)[0] is None
    assert judge_outer(_ref, get, device, plan, prints(lambda x: torch.tanh(x) * (1 - 9e-4)), False)[0] is None
    noisy = judge_outer(_ref, get, device, plan, prints(lambda x: torch.tanh(x) + 0.02 * torch.randn_like(x)), False)[0]
    assert noisy is not None and "fingerprint 3" in noisy  # the projection against signed weights


def test_an_answer_held_in_another_memory_order_has_the_fingerprint_of_its_values_and_passes():
    """A kernel may return a transposed view (CUDA-L1's L1/59 returns its convolution's output so): its fingerprint
    is read in its own memory order, so it costs what the reference's costs, and the numbers are those of its
    values in any layout."""
    plan = {"seed": 99991, "calls": 3}
    device = torch.device("cpu")
    get = lambda: [torch.randn(6, 40, 30)]  # noqa: E731

    def transposed(x):  # the right values, held in the memory order of a (30, 40, 6) tensor
        return torch.tanh(x).permute(2, 1, 0).contiguous().permute(2, 1, 0)

    x = torch.randn(6, 40, 30)
    view = transposed(x)
    assert not view.is_contiguous() and memory_order(view) == (2, 1, 0)
    assert memory_order(torch.tanh(x)) is None and memory_order(view.expand(2, 6, 40, 30)) is None
    same = fingerprint([view]), fingerprint([torch.tanh(x)])
    assert torch.allclose(*same, rtol=1e-12, atol=0)
    prints = []
    for seed in outer_seeds(plan["seed"], plan["calls"]):
        prints += fingerprint([transposed(outer_inputs(get, seed, device)[0])]).tolist()
    assert judge_outer(_ref, get, device, plan, prints, False)[0] is None
    assert "fingerprint" in judge_outer(_ref, get, device, plan, [-v for v in prints], False)[0]


def test_fingerprint_weights_are_hashed_once_per_batch_whatever_the_outputs_size_and_are_the_tables_repeated(
        monkeypatch):
    """Hashing weights is a dozen int64 passes: made afresh for every answer of a 134M-element output it took 42 ms
    an answer on an H100, inside which a forged time hid, and KernelBench's outputs reach 2.1G elements. Each output
    and kind has one table of hashed weights, hashed by the first fingerprint of a batch only (the one taken off the
    clock) until the batch lets go of it, and repeated block by block, each block scaled by its own factor: the
    numbers are those sums, in either memory order, kept or gathered afresh, for outputs of any size."""
    import sys

    module = sys.modules[fingerprint.__module__]
    for name in ("FINGERPRINT_CHUNK", "PERIOD"):
        monkeypatch.setattr(module, name, 1000)  # four blocks of a 3600-element output
    hashed = []
    real = module._hashed
    monkeypatch.setattr(module, "_hashed", lambda index, j, k: hashed.append(k) or real(index, j, k))
    x = torch.randn(6, 40, 15)
    held_transposed = x.permute(2, 1, 0).contiguous().permute(2, 1, 0)
    forget_weights()
    kept = [fingerprint([x]), fingerprint([held_transposed])]
    assert len(hashed) == 2  # one table per kind, for both layouts and all four blocks
    assert torch.equal(fingerprint([x]), kept[0]) and len(hashed) == 2  # the second answer hashes nothing
    forget_weights()
    fingerprint([x])
    assert len(hashed) == 4
    monkeypatch.setattr(module, "WEIGHTS_KEPT", 0)  # as for the largest outputs: still no hashing per answer
    afresh = [fingerprint([x]), fingerprint([held_transposed])]
    assert len(hashed) == 4
    assert all(torch.allclose(a, b, rtol=1e-12, atol=0) for a, b in zip(kept, afresh, strict=True))
    assert torch.allclose(kept[0], kept[1], rtol=1e-9, atol=0)

    v = torch.randn(1000)
    prints = []
    for b in range(3):  # the same values in block b, zeros elsewhere: block b's factors scale the sums
        y = torch.zeros(3600)
        y[1000 * b:1000 * (b + 1)] = v
        prints.append(fingerprint([y.reshape(6, 40, 15)]))
    factors = set()
    for b in (1, 2):
        ratio = (prints[b] / prints[0]).tolist()
        for kind in (0, 1):  # fingerprint kind + 2 is against the signed weights, kind against their magnitudes
            assert ratio[kind + 2] in (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0) and ratio[kind] == abs(ratio[kind + 2])
            factors.add(ratio[kind + 2])
    assert factors != {1.0}

    blocks = x.reshape(-1).clone()
    blocks[1000:2000], blocks[2000:3000] = x.reshape(-1)[2000:3000], x.reshape(-1)[1000:2000]
    assert not torch.allclose(fingerprint([blocks.reshape(x.shape)]), kept[0], rtol=1e-6, atol=0)
    forget_weights()


def test_an_output_larger_than_a_chunk_has_the_same_fingerprint_in_any_memory_order():
    """Past 16M elements an output is summed chunk by chunk against weights made for each chunk (a ReLU of
    KernelBench's 6.4 GB input was fingerprinted with five times its size in float64 beside it): the numbers stay
    those of its values, whichever order its memory holds them in, and a small offset still moves them."""
    x = torch.randn(3, 1400, 4100)  # 17.2M elements: two chunks, weights not kept
    held_transposed = x.permute(2, 1, 0).contiguous().permute(2, 1, 0)
    assert memory_order(held_transposed) == (2, 1, 0)
    same = fingerprint([x]), fingerprint([held_transposed])
    assert torch.allclose(*same, rtol=1e-9, atol=0)
    shifted = fingerprint([x + 1e-3])
    assert (shifted[0] - same[0][0]).item() > 0.9e-3 * x.numel()  # the weights' mean is 1
