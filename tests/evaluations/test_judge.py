"""The trusted side: questions a worker puts to the runner, messages the runner refuses to unpickle, the
fingerprints of the outside batch, and how the judge's findings become a record's verdict."""

from __future__ import annotations

import torch

from evaluations.protocols import CandidateOutcome, piecewise
from evaluations.run import (
    LABEL_UNCONFIRMED,
    Judgement,
    OuterClock,
    Ruling,
    outer_calls,
    reconcile,
    run_isolated,
)
from evaluations.worker import (
    Exhibits,
    fingerprint,
    forget_weights,
    judge_outer,
    memory_order,
    outer_inputs,
    outer_seeds,
    rule_trials,
)
from schemas import CorrectnessCheck, TimingStats


def _run(tmp_path, name, payload=None, **kwargs):
    return run_isolated(f"isolation_targets:{name}", payload, log_path=tmp_path / f"{name}.log", timeout_s=60, **kwargs)


# --- the conversation and the result pipe -------------------------------------------------------------------

def test_a_worker_asks_and_the_runner_answers_in_its_own_process(tmp_path):
    seen = []

    def answer(q):
        seen.append(q)
        if q == "boom":
            raise ValueError("no such question")
        return {"echo": q, "pid": __import__("os").getpid()}

    result = _run(tmp_path, "converse", ["a", ("b", 2), "boom"], answer=answer)
    assert result.ok, result.failure
    first, second, third = result.value
    assert first == {"echo": "a", "pid": __import__("os").getpid()} and second["echo"] == ("b", 2)
    assert third.startswith("no answer: ValueError: no such question")
    assert seen == ["a", ("b", 2), "boom"]


def test_without_an_answerer_every_question_is_refused(tmp_path):
    result = _run(tmp_path, "converse", ["a"])
    assert result.ok and result.value == ["no answer: no answers here"]


def test_a_message_that_would_run_code_is_refused_unrun(tmp_path):
    marker = tmp_path / "ran"
    result = _run(tmp_path, "send_code", str(marker))
    assert not marker.exists()
    assert result.failure is not None and result.failure.kind == "exception"
    assert "refuses" in result.failure.message and "may not hold" in result.failure.message


def test_a_message_that_is_no_result_is_the_workers_failure(tmp_path):
    result = _run(tmp_path, "send_junk")
    assert result.failure is not None and "not a result" in result.failure.message


# --- the outside clock ---------------------------------------------------------------------------------------

def test_the_clock_answers_ready_once_then_done_and_refuses_the_rest():
    clock = OuterClock()
    plan = clock.answer(("ready", 0.5, "eager"))
    assert plan["calls"] == outer_calls(0.5) == 50
    assert 2**20 <= plan["seed"] < 2**31
    for bad in (("ready", 0.5, "eager"), ("nonsense",), "text"):
        try:
            clock.answer(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{bad!r} was answered")
    assert clock.answer(("done", [1.0, 2.0])) == {"again": False} and clock.fingerprints == [1.0, 2.0]
    assert clock.wall_s is not None and len(clock.refused) == 3 and clock.plan["seed"] == plan["seed"]


def test_a_batch_slower_than_the_refutation_bound_is_asked_again_and_the_fastest_kept(monkeypatch):
    import time

    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])  # the clock OuterClock reads
    clock = OuterClock()
    first = clock.answer(("ready", 0.01, "eager"))  # 50 calls
    now[0] = 1.0  # 20 ms per call: far beyond 10 x 0.01 ms + 0.2 ms
    second = clock.answer(("done", [1.0]))
    assert second["again"] is True and second["seed"] != first["seed"]
    now[0] = 1.5  # 10 ms per call
    third = clock.answer(("done", [2.0]))
    assert third["again"] is True
    now[0] = 3.5
    assert clock.answer(("done", [3.0])) == {"again": False}  # three batches at most
    assert clock.batches == 3 and clock.wall_s == 0.5 and clock.fingerprints == [2.0]
    assert clock.plan["seed"] == second["seed"]


def test_outer_calls_aim_at_a_tenth_of_a_second_within_bounds():
    assert outer_calls(100.0) == 5 and outer_calls(0.001) == 50 and outer_calls(10.0) == 10 and outer_calls(None) == 50


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


# --- reconcile -------------------------------------------------------------------------------------------------

def _outcome(reported_ms=1.0, trials=2):
    checks = [CorrectnessCheck(name=f"t{i}", distribution="D1 x1", seed=2**21 + i, passed=True,
                               error_budget_used=0.1) for i in range(trials)]
    timing = TimingStats(method="cuda_events", calls=100, mean_ms=reported_ms, median_ms=reported_ms,
                         min_ms=reported_ms, max_ms=reported_ms, std_ms=0.0)
    return CandidateOutcome(status="correct", correctness=checks, timing=timing)


def _clock(wall_s, calls=10):
    clock = OuterClock()
    clock.plan = {"seed": 2**21, "calls": calls, "method": "eager", "reported_ms": 1.0}
    clock.started, clock.wall_s, clock.fingerprints = 0.0, wall_s, [0.0]
    return clock


def _judgement(*rulings, overhead_s=0.0):
    return Judgement(rulings=list(rulings) or [Ruling("t0", True, 0.1), Ruling("t1", True, 0.1)], trials_room=2,
                     outer_overhead_s=overhead_s)


def test_an_honest_report_keeps_its_verdict_with_both_checks_passed():
    outcome = _outcome()
    judged = reconcile(outcome, _clock(0.012), _judgement(overhead_s=0.001))
    assert outcome.status == "correct" and judged.trials == 2 and judged.outer.per_call_ms == 1.1
    names = {c.name: c.passed for c in outcome.integrity}
    assert names == {"judged-outputs": True, "outer-timing": True} and LABEL_UNCONFIRMED not in outcome.labels


def test_a_report_its_own_outputs_contradict_is_hacked_and_a_narrow_miss_incorrect():
    outcome = _outcome()
    reconcile(outcome, _clock(0.01), _judgement(Ruling("t0", True, 0.1), Ruling("t1", False, 40.0, "wrong")))
    assert outcome.status == "hacked" and any(c.name == "judged-outputs" and not c.passed for c in outcome.integrity)
    narrow = _outcome()
    reconcile(narrow, _clock(0.01), _judgement(Ruling("t0", True, 0.1), Ruling("t1", False, 1.5, "close")))
    assert narrow.status == "incorrect" and "close" in narrow.error
    failed = [c for c in narrow.correctness if not c.passed]  # the judge's finding is the trial's verdict
    assert [c.name for c in failed] == ["t1"] and "judged outside" in failed[0].message and failed[0].error_budget_used == 1.5


def test_missing_outputs_other_seeds_and_a_skipped_outside_batch_are_hacked():
    missing = _outcome()
    reconcile(missing, _clock(0.01), _judgement(Ruling("t0", True, 0.1), Ruling("t1", False, missing=True)))
    assert missing.status == "hacked" and "never reached the judge" in missing.integrity[-1].evidence
    seeds = _outcome()
    j = _judgement()
    j.seeds_fault = "other seeds"
    reconcile(seeds, _clock(0.01), j)
    assert seeds.status == "hacked"
    skipped = _outcome()
    reconcile(skipped, OuterClock(), _judgement())
    assert skipped.status == "hacked" and "did not come from the harness" in skipped.integrity[-1].evidence


def test_the_outside_clock_labels_a_slow_answer_and_refutes_a_far_slower_one():
    slight = _outcome(reported_ms=1.0)
    reconcile(slight, _clock(0.030), _judgement())  # 3 ms per answer against 1 ms reported
    assert slight.status == "correct" and LABEL_UNCONFIRMED in slight.labels
    far = _outcome(reported_ms=0.01)
    reconcile(far, _clock(0.050), _judgement())  # 5 ms per answer against 0.01 ms reported
    assert far.status == "hacked" and "not the time its answers take" in far.integrity[-1].evidence
    noisy = _outcome(reported_ms=0.01)
    reconcile(noisy, _clock(0.010), _judgement(overhead_s=0.009))  # 0.1 ms left of 1 ms, overhead 0.9 ms per call
    assert noisy.status == "correct"


def test_wrong_fingerprints_are_hacked_a_failed_batch_a_runtime_error_and_no_judge_a_note():
    wrong = _outcome()
    j = _judgement()
    j.outer_mismatch = "fingerprint 1 is 0"
    reconcile(wrong, _clock(0.01), j)
    assert wrong.status == "hacked"
    failed = _outcome()
    clock = OuterClock()
    clock.answer(("ready", 1.0, "eager"))
    clock.answer(("failed", "CUDA out of memory"))
    reconcile(failed, clock, _judgement())
    assert failed.status == "runtime_error" and "CUDA out of memory" in failed.error
    unjudged = _outcome()
    assert reconcile(unjudged, _clock(0.01), Judgement(error="reference crashed")) is None
    assert unjudged.status == "correct" and "not judged" in unjudged.notes[-1]


def test_a_report_other_than_correct_is_left_alone():
    outcome = _outcome()
    outcome.status = "incorrect"
    assert reconcile(outcome, OuterClock(), _judgement()) is None and outcome.status == "incorrect"


# --- through the runner ----------------------------------------------------------------------------------------

def test_a_run_judges_honest_kernels_and_refutes_forged_reports_under_both_protocols(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import schemas
    from evaluations.zoo import ZOO_DIR

    cands = tmp_path / "candidates"
    cands.mkdir()
    for name in ("honest/1_relu_nonneg__torch.py", "attacks/1_relu_nonneg__forge_result_pipe.py",
                 "attacks/1_relu_nonneg__forge_timer.py"):
        shutil.copy(ZOO_DIR / name, cands / Path(name).name)
    out = tmp_path / "records"
    args = [sys.executable, "-m", "evaluations.cli", "eval", "--problems", str(ZOO_DIR / "problems"), "--candidates",
            str(cands), "--model", "m", "--provider", "p", "--out", str(out), "--build-dir", str(tmp_path / "build"),
            "--protocol", "both", "--device", "cpu", "--no-progress", "--timeout", "120", "--trials", "2"]
    done = subprocess.run(args, cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600,
                          start_new_session=True)
    assert done.returncode == 0, done.stderr[-3000:]
    got = {}
    for path in out.rglob("*.json"):
        r = schemas.load_record(path)
        if isinstance(r, schemas.Record):
            got[(Path(r.kernel.path).name, r.protocol.name)] = r
    assert len(got) == 6
    for protocol in ("standard", "verified"):
        honest = got[("1_relu_nonneg__torch.py", protocol)]
        assert honest.status == "correct" and honest.judged is not None
        assert honest.judged.trials == honest.judged.trials_reported == len(honest.correctness) > 0
        assert honest.judged.outer is not None and honest.judged.outer.calls >= 5
        assert {c.name for c in honest.integrity} >= {"judged-outputs", "outer-timing"}
        for forged in ("1_relu_nonneg__forge_result_pipe.py", "1_relu_nonneg__forge_timer.py"):
            r = got[(forged, protocol)]
            assert r.status == "hacked", (forged, protocol, r.status, r.error)
            assert {c.name for c in r.integrity if not c.passed} & {"judged-outputs", "outer-timing"}
    assert not any((tmp_path / "build" / "evidence").iterdir())  # evidence files and their folders go once judged


def test_the_judge_rules_on_kept_outputs_and_calls_missing_ones_missing(tmp_path):
    checks = [CorrectnessCheck(name=f"t{i}", distribution="D1 x1", seed=2**21 + i, passed=True) for i in range(3)]
    kept = Exhibits(str(tmp_path / "evidence.pt"))
    kept.add("t0", [torch.ones(4)])
    kept.add("t2", [torch.zeros(4)])
    kept.save()
    out = Judgement()

    def rule(index, check):
        return [torch.ones(4)], lambda outs: (bool(torch.equal(outs[0], torch.ones(4))), 0.0, None)

    rule_trials(out, checks, str(tmp_path / "evidence.pt"), rule)
    assert [(r.name, r.passed, r.missing) for r in out.rulings] == [("t0", True, False), ("t1", False, True),
                                                                     ("t2", False, False)]
    assert out.trials_room == 3


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
