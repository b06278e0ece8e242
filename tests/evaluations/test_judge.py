"""The trusted side: questions a worker puts to the runner, messages the runner refuses to unpickle, the outside
clock, and how the judge's findings become a record's verdict."""

from __future__ import annotations

import torch

from evaluations.protocols import CandidateOutcome
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
