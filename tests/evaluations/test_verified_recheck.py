"""Which outputs the re-check after timing judges: those that still hold their own call's answer, and the most
recent call's where its buffer is one the timed calls returned."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from evaluations.protocols.verified import _recheck
from evaluations.timing import TimingRun


def _judged(monkeypatch, outputs: dict[int, torch.Tensor], last_set: int, latest: torch.Tensor | None):
    judged = []
    monkeypatch.setattr(_recheck, "compare", lambda ctx, outs, inputs, tol: SimpleNamespace(passed=False))
    monkeypatch.setattr(_recheck, "_timed_output_wrong",
                        lambda ctx, outs, sets, k, v, settings, what: judged.append((k, what, outs[0].data_ptr())))
    ctx = SimpleNamespace(device=torch.device("cpu"), tol=None, log=SimpleNamespace(check=lambda *a: None))
    run = TimingRun(stats=None, last_outputs=outputs, last_set=last_set, latest_output=latest)
    _recheck.recheck(ctx, run, [[torch.zeros(1)]] * 4, settings=None)
    return judged


def test_a_buffer_the_kernel_stopped_returning_is_not_judged_its_fresh_outputs_are(monkeypatch):
    """A kernel whose own graph's static buffer served the warm-up calls, then fresh outputs (the graph replays'
    and the calls after timing): the old buffer holds an earlier call's answer, not judged; the rest are."""
    static, graph_out, fresh = torch.zeros(4), torch.zeros(4), torch.zeros(4)
    judged = _judged(monkeypatch, {0: static, 1: static, 3: static, 2: graph_out}, last_set=1, latest=fresh)
    assert [(k, what) for k, what, _ in judged] == [(2, "a timed call")]


def test_one_buffer_for_every_call_is_judged_as_the_most_recent_calls_answer(monkeypatch):
    """Every call returns the same tensor (a reused buffer, or the call-counting exploit's stored answer): it is
    judged once, as the answer of the most recent call, on its set."""
    shared = torch.zeros(4)
    judged = _judged(monkeypatch, {0: shared, 1: shared, 2: shared}, last_set=1, latest=shared)
    assert [(k, ptr) for k, _, ptr in judged] == [(1, shared.data_ptr())]
    assert "after timing" in judged[0][1]
    # on the CPU the most recent call is a timed one: its entry is judged
    judged = _judged(monkeypatch, {0: shared, 1: shared, 2: shared}, last_set=2, latest=None)
    assert [(k, what) for k, what, _ in judged] == [(2, "a timed call")]


def test_fresh_outputs_are_all_judged_and_the_last_call_after_timing_is_not(monkeypatch):
    outs = {k: torch.zeros(4) for k in range(3)}
    judged = _judged(monkeypatch, outs, last_set=0, latest=torch.zeros(4))
    assert [k for k, _, _ in judged] == [0, 1, 2]
    assert all(what == "a timed call" for _, what, _ in judged)
