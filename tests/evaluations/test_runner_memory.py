"""The run and the device's memory on the CPU: an evaluation that ran out of memory or timed out beside others is
evaluated again alone, admission keeps the workers in flight within the device's budget, and a problem too large to
share the device is evaluated alone from the start."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from cli_runs import copy_candidates

from evaluations import Overrides

_OUT_OF_MEMORY = '''"""Runs out of memory on its first {times} calls (counted in a file), then is ReLU."""
from pathlib import Path

import torch
import torch.nn as nn

COUNTER = Path({counter!r})


class ModelNew(nn.Module):
    def forward(self, x):
        left = int(COUNTER.read_text())
        if left > 0:
            COUNTER.write_text(str(left - 1))
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.19 GiB (a test's stand-in)")
        return torch.clamp_min(x, 0.0)
'''


def _out_of_memory_candidates(tmp_path: Path, fixtures_dir: Path, times: dict[str, int]) -> Path:
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    counters = tmp_path / "counters"
    counters.mkdir()
    for label, n in times.items():
        (counters / label).write_text(str(n))
        (cands / f"1_tiny_relu__{label}.py").write_text(_OUT_OF_MEMORY.format(times=n, counter=str(counters / label)))
    return counters


@pytest.mark.parametrize("concurrent", [2, 1])
def test_running_out_of_memory_beside_others_is_evaluated_again_alone(tmp_path, fixtures_dir, monkeypatch, concurrent):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    counters = _out_of_memory_candidates(tmp_path, fixtures_dir, {"oom_once": 1, "oom_always": 99})
    monkeypatch.setenv("KVERDICT_WORKER_WRITABLE", str(counters))  # confined workers may count there
    loaded = load_inputs(fixtures_dir / "problems", tmp_path / "cands", model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=concurrent)
    summary = run(loaded, config, capture_environment("cpu"))
    records = {Path(r.kernel.path).name: r for r in summary.records}
    assert len(summary.written) == 3 and len(records) == 3
    honest, once, always = (records[f"1_tiny_relu{n}.py"] for n in ("", "__oom_once", "__oom_always"))
    assert honest.status == "correct" and not honest.notes
    assert always.status == "runtime_error" and "OutOfMemoryError" in always.error
    if concurrent == 1:  # nothing shared the device: running out is the verdict at once
        assert once.status == "runtime_error" and (counters / "oom_once").read_text() == "0"
        assert not once.notes and not always.notes
        return
    assert once.status == "correct"  # its first go failed only beside the others
    alone = [n for n in once.notes if "evaluated again alone" in n]
    assert len(alone) == 1 and "2 at once" in alone[0]
    assert [n for n in always.notes if "evaluated again alone" in n] == alone  # alone it ran out too
    assert int((counters / "oom_always").read_text()) == 97  # two goes, no more


_REFERENCE_OUT_OF_MEMORY = '''import torch
import torch.nn as nn
from pathlib import Path

COUNTER = Path({counter!r})


class Model(nn.Module):
    """ReLU of a small matrix, whose first {times} calls (counted in a file) run out of device memory."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        left = int(COUNTER.read_text())
        if left > 0:
            COUNTER.write_text(str(left - 1))
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.19 GiB (a test's stand-in)")
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("concurrent", [2, 1])
def test_a_baseline_out_of_memory_beside_others_is_measured_again_alone_with_its_candidates(
        tmp_path, fixtures_dir, monkeypatch, capsys, concurrent):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    problems, counter = tmp_path / "problems", tmp_path / "counters" / "reference"
    problems.mkdir()
    counter.parent.mkdir()
    counter.write_text("2")  # the candidate's warm-up (untimed, its failure not its verdict), then the baseline
    shutil.copy(fixtures_dir / "problems" / "2_tiny_add.py", problems)
    (problems / "1_tiny_relu.py").write_text(_REFERENCE_OUT_OF_MEMORY.format(times=2, counter=str(counter)))
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
    monkeypatch.setenv("KVERDICT_WORKER_WRITABLE", str(counter.parent))
    loaded = load_inputs(problems, cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=concurrent)
    summary = run(loaded, config, capture_environment("cpu"))
    printed = capsys.readouterr().out
    records = {r.problem.name: r for r in summary.records}
    assert counter.read_text() == "0"
    if concurrent == 1:  # nothing shared the device: the baseline failed, and its candidate has no record
        assert set(records) == {"2_tiny_add"}
        assert "OutOfMemoryError" in " ".join(summary.reference_failures.values())
        assert "the standard eager_fp32 baseline failed: " in printed
        return
    assert set(records) == {"1_tiny_relu", "2_tiny_add"} and not summary.reference_failures
    relu = records["1_tiny_relu"]
    assert relu.status == "correct"
    alone = [n for n in relu.notes if "evaluated again alone" in n]
    assert len(alone) == 1 and "eager_fp32 baseline ran out of device memory" in alone[0] and "2 at once" in alone[0]
    assert not [n for n in records["2_tiny_add"].notes if "alone" in n]
    assert "baseline ran out of device memory beside other evaluations" in printed
    written = [line for line in printed.splitlines() if line.startswith("[")]  # one line per record, display off
    assert sorted(line.split("] ", 1)[1].split(":")[0] for line in written) == ["standard problems/1/1 s0",
                                                                                "standard problems/1/2 s0"]
    assert all(": correct, " in line and "x vs eager" in line for line in written) and written[-1].startswith("[2] ")
    baselines = [s for s in summary.phases.spans if s.phase == "baseline"]
    assert sorted(s.status for s in baselines) == ["failed:exception", "ok", "ok"]
    failed, = (s for s in baselines if not s.ok)
    assert "OutOfMemoryError" in failed.error or "out of memory" in failed.error
    assert {s.status for s in summary.phases.spans if s.phase == "candidate"} == {"correct"}


def test_out_of_memory_is_read_from_a_runtime_error_or_from_a_judge_that_could_not_rule():
    from evaluations.protocols import CandidateOutcome
    from evaluations.run import NOT_JUDGED, out_of_memory

    oom = "OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB"
    assert out_of_memory(CandidateOutcome(status="runtime_error", error=oom))
    assert out_of_memory(CandidateOutcome(status="correct", notes=[f"{NOT_JUDGED}: the judge's worker failed: {oom}"]))
    assert not out_of_memory(CandidateOutcome(status="runtime_error", error="RuntimeError: illegal memory access"))
    assert not out_of_memory(CandidateOutcome(status="incorrect", error=oom))  # a verdict on its answers, not a crash
    assert not out_of_memory(CandidateOutcome(status="correct", notes=[f"a note of its own: {oom}"]))


def test_a_timeout_after_waiting_for_others_timings_is_evaluated_again_alone_and_one_without_waiting_is_a_verdict():
    from evaluations.protocols import CandidateOutcome
    from evaluations.run import Runner

    timeout = CandidateOutcome(status="timeout", error="worker exceeded its 200 s deadline and was killed")
    why = Runner._shared_failure(timeout, 151.4)
    assert why is not None and "waiting 151 s for other evaluations' timings" in why
    assert Runner._shared_failure(timeout, 0.0) is None  # it had the device whenever it asked: its own verdict
    assert Runner._shared_failure(CandidateOutcome(status="correct"), 151.4) is None
    oom = CandidateOutcome(status="runtime_error", error="OutOfMemoryError: CUDA out of memory. Tried to allocate 8 GiB")
    assert "ran out of device memory" in Runner._shared_failure(oom, 0.0)


# --- admission: what the workers in flight may hold of the device -------------------------------------------------

def test_admission_never_holds_more_than_its_budget_and_serves_workers_in_the_order_they_asked():
    from evaluations.run import Admission

    admission = Admission(budget=100, concurrent=4)
    order, peak, lock = [], [0], threading.Lock()

    def worker(name: str, need: int, start: threading.Event) -> None:
        start.wait()
        with admission.hold(need):
            with lock:
                order.append(name)
                peak[0] = max(peak[0], admission.held)
            time.sleep(0.05)

    first = threading.Event()
    threads = [threading.Thread(target=worker, args=("big-60", 60, first))]
    threads[0].start()
    first.set()
    time.sleep(0.01)  # the first holds 60: the large one behind it waits, and the small ones behind that wait for it
    for name, need in (("large-70", 70), ("small-10a", 10), ("small-10b", 10)):
        started = threading.Event()
        threads.append(threading.Thread(target=worker, args=(name, need, started)))
        threads[-1].start()
        started.set()
        time.sleep(0.01)
    for t in threads:
        t.join(5)
    assert order == ["big-60", "large-70", "small-10a", "small-10b"]  # nobody slipped past the large one
    assert peak[0] <= 100 and admission.held == 0 and admission.in_flight == 0


def test_a_judge_or_memory_worker_waits_before_the_candidates_that_asked_earlier():
    """A follow-up finishes a record already under way: it takes the device's room before new evaluations start,
    whatever the order they asked in; among themselves each kind keeps that order."""
    from evaluations.run import Admission

    admission = Admission(budget=100, concurrent=4)
    order, lock = [], threading.Lock()

    def worker(name: str, job: str, need: int) -> None:
        with admission.hold(need, job):
            with lock:
                order.append(name)
            time.sleep(0.02)

    with admission.hold(90, "candidate"):  # the device is full: everyone below waits in line
        threads = []
        for name, job in (("candidate-a", "candidate"), ("baseline-b", "baseline"), ("judge-c", "judge"),
                          ("candidate-d", "candidate"), ("memory-e", "memory"), ("judge-f", "judge")):
            threads.append(threading.Thread(target=worker, args=(name, job, 60)))  # one at a time
            threads[-1].start()
            time.sleep(0.02)  # each asks after the one before
        assert order == []
    for t in threads:
        t.join(5)
    assert order == ["judge-c", "memory-e", "judge-f", "candidate-a", "baseline-b", "candidate-d"]
    assert admission.held == 0 and admission.in_flight == 0


def test_admission_lets_a_worker_without_memory_pass_and_one_alone_in_whatever_its_estimate():
    from evaluations.run import FOOTPRINT_FACTOR, Admission, budget_of

    assert budget_of(None, 6) is None and budget_of(100 << 30, 1) is None
    assert budget_of(140 << 30, 6) == (140 - 6) << 30  # a gibibyte a worker for its CUDA context
    admission = Admission(budget=100, concurrent=4)
    assert admission.need(None) == 25 and admission.need(5) == 5 * FOOTPRINT_FACTOR["verified"]["candidate"]
    # before a peak is measured: the equal share, or the problem's least bytes a call where those say more
    assert admission.need(None, "baseline", "verified", least_bytes=2.0) == 25
    assert admission.need(None, "baseline", "verified", least_bytes=20.0) == 20 * FOOTPRINT_FACTOR["verified"]["baseline"]
    assert admission.need(5, "baseline", "verified", least_bytes=20.0) == 5 * FOOTPRINT_FACTOR["verified"]["baseline"]
    assert admission.need(None, "build", least_bytes=20.0) == 0
    assert admission.need(5, "memory") < admission.need(5, "baseline") < admission.need(5, "judge")
    assert admission.need(5, "candidate", "standard") < admission.need(5, "candidate", "verified")
    assert admission.largest_need(5, "standard") == 5 * max(FOOTPRINT_FACTOR["standard"].values())
    assert admission.need(5, "build") == 0 and admission.need(5, "write", "standard") == 0
    assert admission.fits_beside_none(101) and not admission.fits_beside_none(100)
    with admission.hold(100), admission.hold(0):  # a build holds no device memory: it never waits
        assert admission.held == 100
    unlimited = Admission(budget=None, concurrent=4)
    with unlimited.hold(10**15):
        assert not unlimited.fits_beside_none(10**15)


def test_a_problem_too_large_to_share_the_device_is_evaluated_alone_from_the_start(tmp_path, fixtures_dir, capsys):
    """A problem whose calls peak at gigabytes (its baselines measured it) is not tried beside others, where it
    would run out of memory and take others with it: it is put off at once and evaluated alone, and says so."""
    from evaluations import capture_environment, load_inputs
    from evaluations.run import Admission, RunConfig, Runner

    problems = tmp_path / "problems"
    problems.mkdir()
    for name in ("1_tiny_relu.py", "2_tiny_add.py"):
        shutil.copy(fixtures_dir / "problems" / name, problems)
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
    loaded = load_inputs(problems, cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    runner.admission = Admission(budget=16 << 30, concurrent=2)  # a 16 GiB device, as NVML would tell on a GPU
    runner.say = print
    keys = {c.problem_key.split("/")[-1]: c for c in runner.candidates}
    runner.note_peak(keys["1"].problem_key, 6 << 30)  # 6 GiB at the peak of one call: 18 GiB for its judge
    runner.note_peak(keys["2"].problem_key, 1 << 20)
    try:
        shared = {c.problem_key: runner.evaluate("standard", c, tmp_path / f"{c.problem_key.replace('/', '_')}.json")
                  for c in runner.candidates}
        assert shared[keys["1"].problem_key] is None and shared[keys["2"].problem_key].status == "correct"
        assert [c.problem_key for _, c, _ in runner.again_alone] == [keys["1"].problem_key]
        printed = capsys.readouterr().out
        assert "needs about 18 GiB of the device (6.0 GiB at the peak of one call), more than the 16 GiB" in printed
        again = list(runner.again_alone)
        runner.alone = True
        record = runner.evaluate(*again[0])
        assert record is not None and record.status == "correct"
        assert any("needs about 18 GiB" in n and "evaluated again alone" in n for n in record.notes), record.notes
    finally:
        runner.close()


def test_before_its_peak_is_measured_a_problem_s_workers_count_for_the_bytes_its_calls_must_move(tmp_path, fixtures_dir):
    """KernelBench's current level 1 moves 4-16 GB a call: before its baselines measure a peak, its workers must not
    count for a mere equal share of the device. The problem's automatic count (inputs, weights and outputs of one
    call) times the job's factor is their estimate where it is larger; a small problem keeps the equal share."""
    from contextlib import contextmanager
    from dataclasses import replace

    from evaluations import capture_environment, load_inputs
    from evaluations.run import FOOTPRINT_FACTOR, Admission, RunConfig, Runner

    seen: list[tuple[str, int]] = []

    class Recording(Admission):
        @contextmanager
        def hold(self, need: int, job: str = "candidate"):
            seen.append((job, need))
            with super().hold(need, job) as waited:
                yield waited

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model", count=False)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    runner.admission = Recording(budget=64 << 30, concurrent=2)  # a share of 32 GiB each
    big, small = sorted(runner.candidates, key=lambda c: c.problem_key)[:2]
    for c, least in ((big, 20 << 30), (small, 1 << 20)):
        p = runner.problems[c.problem_key]
        runner.problems[c.problem_key] = replace(p, meta=replace(p.meta, min_bytes=float(least)))
    try:
        for c in (big, small):
            seen.clear()
            runner.evaluate("standard", c, tmp_path / f"{c.problem_key.replace('/', '_')}.json")
            assert seen[0] == ("baseline", (20 << 30) * FOOTPRINT_FACTOR["standard"]["baseline"] if c is big
                               else 32 << 30), seen
    finally:
        runner.close()
