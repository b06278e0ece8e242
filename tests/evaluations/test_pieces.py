"""Comparisons of large outputs a piece at a time give what the whole tensors give, NaN and empty ones included."""

from __future__ import annotations

import importlib
import math

import pytest
import torch

from evaluations import protocols
from evaluations.protocols import Maximum, allclose, pieces, piecewise, verified
from evaluations.protocols import standard as std


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 7 elements, so that a test's small tensors are compared in many pieces and a ragged last one."""
    monkeypatch.setattr(importlib.import_module(protocols.pieces.__module__), "PIECE_ELEMENTS", 7)


def _pair(n: int = 50, nan_at: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    ref = torch.randn(5, n, generator=g)
    out = ref + 1e-3 * torch.randn(5, n, generator=g)
    out[3, n // 2] += 0.5  # one element far off: the maxima must find it whichever piece holds it
    if nan_at is not None:
        out.view(-1)[nan_at] = float("nan")
    return out, ref


def test_pieces_cover_every_element_once_and_refuse_tensors_of_other_sizes():
    a, b = torch.arange(20.0).reshape(4, 5), torch.arange(20.0).t().contiguous().t()
    parts = list(pieces(a, b, size=6))
    assert [len(p[0]) for p in parts] == [6, 6, 6, 2]
    assert torch.equal(torch.cat([p[0] for p in parts]), a.reshape(-1))
    assert torch.equal(torch.cat([p[1] for p in parts]), b.reshape(-1))
    assert [p[0].numel() for p in pieces(torch.empty(0), torch.empty(0))] == [0]
    with pytest.raises(ValueError, match="elements"):
        list(pieces(a, torch.zeros(3)))


def test_the_maximum_over_pieces_is_the_whole_maximum_and_carries_nan():
    x = torch.randn(100)
    m = Maximum()
    for (p,) in pieces(x, size=9):
        m.add(p)
    assert m.value == float(x.max())
    x[57] = float("nan")
    m = Maximum()
    for (p,) in pieces(x, size=9):
        m.add(p)
    assert math.isnan(m.value)
    empty = Maximum()
    empty.add(torch.empty(0))
    assert empty.value is None


def test_a_piecewise_result_is_the_whole_one_stretch_by_stretch_and_allclose_matches():
    out, ref = _pair()
    n = ref.numel()
    allowed = piecewise(lambda r: 1e-2 + 1e-2 * r.double().abs(), ref)
    whole = (1e-2 + 1e-2 * ref.double().abs()).reshape(-1)
    assert torch.equal(torch.cat([allowed(a, min(a + 7, n)) for a in range(0, n, 7)]), whole)
    assert allowed(0, n).dtype == torch.float64
    t = ref.t()  # a transposed view: its stretches follow its own row-major order, as its fingerprint's do
    assert torch.equal(piecewise(lambda a, b: a - b, t, out.t())(3, 40), (t - out.t()).reshape(-1)[3:40])
    with pytest.raises(ValueError, match="elements"):
        piecewise(lambda a, b: a, ref, torch.zeros(3))
    for atol in (1e-4, 1e-2, 1.0):
        assert allclose(out, ref, atol, atol) == torch.allclose(out, ref, atol=atol, rtol=atol)
    assert allclose(torch.empty(0, 3), torch.empty(0, 3), 1e-2, 1e-2)


@pytest.mark.parametrize("nan_at", [None, 0, 123, 249])
def test_the_standard_comparison_in_pieces_matches_the_whole_one(small_pieces, nan_at):
    out, ref = _pair(nan_at=nan_at)
    check = std.compare(out, ref, seed=1, index=0)
    diff = (out.double() - ref.double()).abs()
    budget = float((diff / (1e-2 + 1e-2 * ref.double().abs())).max())
    assert check.passed == torch.allclose(out, ref, atol=1e-2, rtol=1e-2)
    if nan_at is None:
        assert check.max_abs_error == float(diff.max()) and check.error_budget_used == budget
    else:
        assert check.max_abs_error is None and check.error_budget_used is None and not check.passed


@pytest.mark.parametrize("nan_at", [None, 17, 248])
def test_the_verified_precision_judgement_in_pieces_matches_the_whole_one(small_pieces, monkeypatch, nan_at):
    out, ref = _pair(nan_at=nan_at)
    tol = verified.Tolerance(1e-3, 1e-3)
    judge = verified.judge_precision
    in_pieces = judge(out, ref.double(), ref, ref, tol)
    monkeypatch.setattr(importlib.import_module(protocols.pieces.__module__), "PIECE_ELEMENTS", 1 << 24)
    whole = judge(out, ref.double(), ref, ref, tol)
    assert in_pieces == whole
    assert (whole.passed, whole.message is None) == (False, False)  # the far element fails it, or the NaN does
    if nan_at is None:
        diff = (out.double() - ref.double()).abs()
        assert whole.budget == float((diff / (1e-3 + 1e-3 * ref.double().abs())).max())
        assert whole.max_abs_error == float(diff.max())
        assert whole.relative_error == float(diff.max()) / float(ref.double().abs().max())


def test_the_error_maxima_work_in_place_on_copies_and_leave_float64_outputs_and_references_as_they_were():
    """The float64 work is done in place on two temporaries a piece; a float64 output or reference is not one of
    them (``double()`` would hand back the tensor itself)."""
    from evaluations.protocols import error_maxima

    out, ref = (t.double() for t in _pair())
    kept = out.clone(), ref.clone()
    got = error_maxima(out, ref, 1e-3, 1e-3)
    assert torch.equal(out, kept[0]) and torch.equal(ref, kept[1])
    diff = (out - ref).abs()
    assert got == (float(diff.max()), float((diff / (1e-3 + 1e-3 * ref.abs())).max()))
