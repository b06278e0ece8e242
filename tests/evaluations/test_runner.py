"""End to end on the CPU: one evaluation run over honest, wrong, crashing and broken candidates."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import schemas
from evaluations import Overrides
from evaluations.cli import main

MAIN_RUN = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__segfault.py", "1_tiny_relu__abort.py",
            "1_tiny_relu__exit.py", "1_tiny_relu__flood.py", "1_tiny_relu__syntax.py", "2_tiny_add.py",
            "3_tiny_scale.py")
REPO = Path(__file__).resolve().parents[2]
QUICK = ["--timed-calls", "5", "--warmup-calls", "1", "--no-progress", "--device", "cpu"]


def _candidates(tmp: Path, fixtures: Path, names: tuple[str, ...]) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(fixtures / "candidates" / name, tmp / name)
    return tmp


def _args(fixtures: Path, cands: Path, out: Path, build: Path, *extra: str) -> list[str]:
    return ["eval", "--problems", str(fixtures / "problems"), "--candidates", str(cands), "--model", "fixture-model",
            "--out", str(out), "--build-dir", str(build), *QUICK, *extra]


def _records(out: Path) -> dict[str, schemas.Record]:
    found = {}
    for path in out.rglob("*.json"):
        record = schemas.load_record(path)
        if isinstance(record, schemas.Record):
            found[Path(record.kernel.path).name] = record
    return found


@pytest.fixture(scope="module")
def main_run(tmp_path_factory, fixtures_dir):
    base = tmp_path_factory.mktemp("run")
    cands = _candidates(base / "cands", fixtures_dir, MAIN_RUN)
    args = _args(fixtures_dir, cands, base / "out", base / "build", "--timeout", "120", "--jobs", "2")
    assert main(args) == 0
    return base, args, _records(base / "out")


def test_every_candidate_gets_a_record(main_run):
    _, _, records = main_run
    assert sorted(records) == sorted(MAIN_RUN)


@pytest.mark.parametrize(("name", "status", "evidence"), [
    ("1_tiny_relu.py", "correct", None),
    ("3_tiny_scale.py", "correct", None),
    ("2_tiny_add.py", "correct", None),
    ("1_tiny_relu__wrong.py", "incorrect", "differs from the reference"),
    ("1_tiny_relu__segfault.py", "runtime_error", "SIGSEGV"),
    ("1_tiny_relu__abort.py", "runtime_error", "SIGABRT"),
    ("1_tiny_relu__exit.py", "runtime_error", "exited with code 0"),
    ("1_tiny_relu__flood.py", "runtime_error", "bytes of output"),
    ("1_tiny_relu__syntax.py", "compile_error", "SyntaxError"),
])
def test_status_and_evidence(main_run, name, status, evidence):
    record = main_run[2][name]
    assert record.status == status, record.error
    if evidence:
        assert evidence in (record.error or "")


def test_correct_records_carry_cpu_timing_and_speedup(main_run):
    base, _, records = main_run
    for name in ("1_tiny_relu.py", "2_tiny_add.py", "3_tiny_scale.py"):
        record = records[name]
        assert record.timing.method == "host_clock" and record.timing.calls == 5
        assert record.protocol.timing.timed_calls == 5  # reduced counts are recorded
        assert len(record.correctness) == 5 and all(c.passed for c in record.correctness)
        eager = record.baselines[0]
        assert eager.kind == "eager_fp32"
        assert record.speedup.vs_eager == pytest.approx(eager.timing.mean_ms / record.timing.mean_ms)
        assert record.memory.candidate_peak_bytes is None and record.memory.baseline_peak_bytes is None
        assert (base / "out" / eager.baseline_id).is_file()
    assert records["2_tiny_add.py"].kernel.language == "cpp"
    assert records["1_tiny_relu.py"].kernel.language == "pytorch"


def test_records_land_at_the_schema_layout(main_run):
    base, _, records = main_run
    for record in records.values():
        assert (base / "out" / schemas.record_relpath(record)).is_file()
    assert not list((base / "out").rglob("*.tmp"))


def test_resume_skips_finished_work(main_run, capsys):
    base, args, _ = main_run
    logs = {p: p.stat().st_mtime_ns for p in (base / "build" / "logs").iterdir()}
    records = {p: p.stat().st_mtime_ns for p in (base / "out").rglob("*.json")}
    start = time.monotonic()
    assert main(args) == 0
    assert f"0 records written, {len(MAIN_RUN)} already finished" in capsys.readouterr().out
    assert time.monotonic() - start < 10
    assert {p: p.stat().st_mtime_ns for p in (base / "build" / "logs").iterdir()} == logs  # no worker ran
    assert {p: p.stat().st_mtime_ns for p in (base / "out").rglob("*.json")} == records


def test_a_record_of_another_protocol_version_is_not_finished_work(main_run):
    from types import SimpleNamespace

    from evaluations.run import finished_record
    from schemas import Manifest

    base, _, _ = main_run
    path = next(p for p in (base / "out").rglob("*.json") if "_baselines" not in p.parts)
    record = schemas.load_record(path)
    candidate = SimpleNamespace(sha256=record.kernel.sha256)
    problem = SimpleNamespace(sha256=record.problem.source_sha256)
    manifest = Manifest(base / "out")

    def finished(info=record.protocol, env=record.environment, source=problem):
        return finished_record(path, candidate, source, info, env, manifest.contradicts(path))

    assert finished() == record  # resume skips it
    assert finished(info=record.protocol.model_copy(update={"version": record.protocol.version + ".1"})) is None
    assert finished(info=record.protocol.model_copy(update={"seeds": record.protocol.seeds[:1]})) is None
    assert finished(env=record.environment.model_copy(update={"torch": "0.0.1"})) is None
    assert finished(source=SimpleNamespace(sha256="0" * 64)) is None


def test_hang_times_out_and_baseline_is_reused(main_run, tmp_path, fixtures_dir):
    base, _, _ = main_run
    out = tmp_path / "out"
    shutil.copytree(base / "out" / "cpu" / "_baselines", out / "cpu" / "_baselines")
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu__hang.py",))
    assert main(_args(fixtures_dir, cands, out, tmp_path / "build", "--timeout", "8")) == 0
    record = _records(out)["1_tiny_relu__hang.py"]
    assert record.status == "timeout" and "deadline" in record.error
    assert not list((tmp_path / "build" / "logs").glob("baseline-*"))  # measured once, reused


def test_killed_run_keeps_finished_records(tmp_path, fixtures_dir):
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "1_tiny_relu__hang.py"))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen([sys.executable, "-m", "evaluations.cli",
                             *_args(fixtures_dir, cands, out, tmp_path / "build", "--timeout", "300")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _records(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)  # the hanging candidate is running now
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "finished records are kept" in err
    assert list(_records(out)) == ["1_tiny_relu.py"]
    assert not list(out.rglob("*.tmp"))


def test_spare_workers_give_the_same_verdicts_and_leave_nothing_behind(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__segfault.py")
    cands = _candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(str(fixtures_dir / "problems"), str(cands), model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, prewarm=True)
    summary = run(loaded, config, capture_environment("cpu"))
    statuses = {Path(r.kernel.path).name: r.status for r in summary.records}
    assert statuses == {"1_tiny_relu.py": "correct", "1_tiny_relu__wrong.py": "incorrect",
                        "1_tiny_relu__segfault.py": "runtime_error"}
    logs = tmp_path / "build" / "logs"
    assert len(list(logs.glob("eval-*.log"))) == 3 and len(list(logs.glob("baseline-*.log"))) == 1
    assert not list(logs.glob("spare-*.log"))  # the unused spare was stopped and cleaned up


def test_concurrent_evaluations_write_every_record_and_measure_each_baseline_once(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__exit.py", "2_tiny_add.py", "3_tiny_scale.py")
    cands = _candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model", provider=None, suite=None)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=3)
    summary = run(loaded, config, capture_environment("cpu"))
    assert sorted(Path(p).name.split("__")[0] for p in summary.written) == sorted(
        ["0001-1_tiny_relu", "0001-1_tiny_relu", "0001-1_tiny_relu", "0002-2_tiny_add", "0003-3_tiny_scale"])
    statuses = {Path(r.kernel.path).name: r.status for r in summary.records}
    assert statuses == {"1_tiny_relu.py": "correct", "1_tiny_relu__wrong.py": "incorrect",
                        "1_tiny_relu__exit.py": "runtime_error", "2_tiny_add.py": "correct", "3_tiny_scale.py": "correct"}
    # three candidates of problem 1 ran at once: its eager baseline was still measured exactly once
    baseline_logs = sorted(p.name for p in (tmp_path / "build" / "logs").glob("baseline-*.log"))
    assert len(baseline_logs) == 3, baseline_logs
    assert all(not r.notes for r in summary.records), [r.notes for r in summary.records]  # no shared GPU on the CPU


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
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
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
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
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


def test_an_interrupted_evaluation_writes_no_record(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1), progress=False)
    runner = Runner(loaded, config, capture_environment("cpu"))
    (protocol, candidate, path), = runner.pending()
    assert runner.baseline(protocol, runner.problems[candidate.problem_key], "eager_fp32") is not None
    runner.cancel.set()  # what an interrupt does to the evaluations still in flight
    assert runner.evaluate(protocol, candidate, path) is None
    assert not path.exists()  # no "interrupted" verdict: a re-run evaluates it
    assert [p for p in (tmp_path / "out").rglob("*.json") if "_baselines" not in p.parts] == []


def test_every_verified_timing_of_a_problem_uses_the_eager_baselines_calls_per_sample_and_method(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.protocols import uses_graph
    from evaluations.run import RunConfig, Runner
    from evaluations.timing import TimingPlan, calls_per_sample

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("verified", "standard"), device="cpu",
                       build_dir=tmp_path / "build", progress=False)
    runner = Runner(loaded, config, capture_environment("cpu"))
    problem = next(iter(runner.problems.values()))
    committed = next((REPO / "records" / "h200" / "_baselines" / "verified").rglob("*__eager_tf32.json"))
    eager = schemas.load_record(committed)
    # whichever committed record comes first, its method is set here: the test must not depend on it
    paced = eager.model_copy(update={"timing": eager.timing.model_copy(update={"calls_per_sample": 4,
                                                                                 "method": "eager"})})
    asked: list[str] = []
    runner.baseline = lambda protocol, p, kind: asked.append(kind) or paced  # type: ignore[method-assign]

    assert runner.pacer_of("verified", problem, "eager_tf32") == (False, None)  # the pacer paces itself
    assert runner.pacer_of("standard", problem) == (False, None)  # one call per pair anyway
    needed, pacer = runner.pacer_of("verified", problem, "compile")
    assert needed and pacer is paced and asked == ["eager_tf32"]
    candidate = loaded.candidates[0]
    assert runner.job_of("verified", problem, candidate, pacer=pacer).options["calls_per_sample"] == 4
    assert "calls_per_sample" not in runner.job_of("verified", problem, candidate).options
    assert TimingPlan.of({"calls_per_sample": 4}).calls_per_sample == 4
    assert TimingPlan.of({}).calls_per_sample == 0  # decide from the probe
    assert calls_per_sample(0.005, 16) == 16 and calls_per_sample(0.01, 3) == 3 and calls_per_sample(0.05, 16) == 1
    # the method follows the eager baseline too: graph replays where it was host-bound, else eager calls
    assert runner.job_of("verified", problem, candidate, pacer=pacer).options["cuda_graph"] == -1
    graphed = eager.model_copy(update={"timing": eager.timing.model_copy(update={"method": "cuda_graph"})})
    assert runner.job_of("verified", problem, candidate, pacer=graphed).options["cuda_graph"] == 1
    assert "cuda_graph" not in runner.job_of("verified", problem, candidate).options
    assert TimingPlan.of({"cuda_graph": 1}).cuda_graph == 1 and TimingPlan.of({}).cuda_graph == 0
    assert uses_graph(host_ms=60.0, device_ms=80.0)  # thousands of launches: the host sets the pace
    assert not uses_graph(host_ms=0.01, device_ms=0.004)  # a tiny call: the device spin hides the host
    assert not uses_graph(host_ms=2.0, device_ms=10.0)  # the device outruns its host by far


def test_a_pool_of_spares_serves_a_concurrent_run_with_the_same_verdicts(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__segfault.py", "2_tiny_add.py")
    cands = _candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model", provider=None, suite=None)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                       progress=False, concurrent=3, prewarm=True)
    summary = run(loaded, config, capture_environment("cpu"))
    statuses = {Path(r.kernel.path).name: r.status for r in summary.records}
    assert statuses == {"1_tiny_relu.py": "correct", "1_tiny_relu__wrong.py": "incorrect",
                        "1_tiny_relu__segfault.py": "runtime_error", "2_tiny_add.py": "correct"}
    assert not list((tmp_path / "build" / "logs").glob("spare-*.log"))  # every unused spare stopped
    phases = {t.phase: t.jobs for t in summary.phases.totals()}
    assert phases["candidate"] == 4 and phases["baseline"] == 2 and phases["write"] == 6


def test_the_prepare_stage_gives_a_failing_import_its_compile_error_once_for_both_protocols(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "3_tiny_scale.py").write_text(  # a Triton import that does not exist: a build failure
        "import torch\nfrom triton_missing_module import jit  # noqa\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n", encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard", "verified"), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1, trials=2),
                       progress=False)
    summary = run(loaded, config, capture_environment("cpu"))
    assert sorted(r.status for r in summary.records) == ["compile_error", "compile_error"]
    assert all("triton_missing_module" in (r.error or "") for r in summary.records)
    logs = tmp_path / "build" / "logs"
    assert len(list(logs.glob("build-*.log"))) == 1 and not list(logs.glob("eval-*.log"))
    assert {t.phase: t.jobs for t in summary.phases.totals()}["build"] == 1


def test_a_concurrent_run_starts_problems_window_by_window_pacers_first(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py", "3_tiny_scale.py")
    cands = _candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard", "verified"), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    work = runner.schedule(runner.pending())

    def step(item):  # (problem id, 0 pacing baseline / 1 paced baseline / 2 candidate)
        if isinstance(item[2], str):
            pacer = runner.protocols[item[0]].SPEEDUP_BASELINE["vs_eager"]
            return int(item[1].rsplit("/", 1)[1]), 0 if item[2] == pacer else 1
        return int(item[1].problem_key.rsplit("/", 1)[1]), 2

    steps = [step(w) for w in work]
    windows = [(pid - 1) // 2 for pid, _ in steps]  # problems in the order loaded, two to a window
    assert windows == sorted(windows)
    for w in set(windows):
        classes = [c for (pid, c), win in zip(steps, windows, strict=True) if win == w]
        assert classes == sorted(classes)  # pacers, then paced baselines, then candidates
    assert steps.count((1, 2)) == 4 and steps.count((3, 2)) == 2  # two protocols x candidates
    assert steps.count((1, 0)) == 2 and steps.count((1, 1)) == 2  # standard eager_fp32 + verified eager_tf32; compile, eager_fp32


def test_a_run_prepares_and_evaluates_its_problems_chunk_by_chunk(tmp_path, fixtures_dir, monkeypatch):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py", "3_tiny_scale.py")
    cands = _candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_WINDOWS", 1)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard", "verified"), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    todo = runner.pending()
    chunks = runner.chunks(todo)
    problems = [sorted({c.problem_key.rsplit("/", 1)[1] for _, c, _ in chunk}) for chunk in chunks]
    assert problems == [["1", "2"], ["3"]]  # whole problems, in order, one window of two problems each
    assert sorted(map(str, (p for chunk in chunks for _, _, p in chunk))) == sorted(str(p) for _, _, p in todo)
    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_PROBLEMS", 2)
    single = Runner(loaded, RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu",
                                      build_dir=tmp_path / "build", progress=False), capture_environment("cpu"))
    assert [len({c.problem_key for _, c, _ in ch}) for ch in single.chunks(single.pending())] == [2, 1]


def _as_candidate(fixtures_dir: Path, problem: str) -> str:
    """A fixture problem's reference as a candidate (its class renamed ``ModelNew``)."""
    text = (fixtures_dir / "problems" / problem).read_text(encoding="utf-8")
    return text.replace("class Model(", "class ModelNew(")


def _builds_cpp(fixtures_dir: Path, problem: str) -> str:
    """A fixture problem's reference as a candidate whose text names ``load_inline``: the prepare stage takes it for a
    C++ extension's candidate."""
    return _as_candidate(fixtures_dir, problem) + "\n# built with torch.utils.cpp_extension.load_inline\n"


def test_a_candidate_prepared_once_is_not_prepared_again_with_the_same_build_folder(tmp_path, fixtures_dir):
    import shutil

    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "3_tiny_scale.py").write_text(_builds_cpp(fixtures_dir, "3_tiny_scale.py"), encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def once():
        config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                           progress=False)
        summary = run(loaded, config, capture_environment("cpu"))
        shutil.rmtree(tmp_path / "out")  # the next run evaluates it again
        return summary

    first, second = once(), once()
    assert [r.status for r in first.records] == [r.status for r in second.records] == ["correct"]
    assert {t.phase: t.jobs for t in first.phases.totals()}["build"] == 1
    assert "build" not in {t.phase for t in second.phases.totals()}  # prepared before: no build job
    assert len(list((tmp_path / "build" / "prepared").glob("*.ok"))) == 1


def test_timing_options_of_the_wrong_kind_are_refused_not_coerced():
    import pytest

    from evaluations.timing import TimingPlan

    assert TimingPlan.of({"graph_short": False}).graph_short is False
    assert TimingPlan.of({"time_cap_s": 2}).time_cap_s == 2.0 and TimingPlan.of({"min_calls": "30"}).min_calls == 30
    for bad in ({"graph_short": "False"}, {"min_calls": True}, {"time_cap_s": "2"}, {"flush": 1}):
        with pytest.raises(ValueError, match="timing option"):
            TimingPlan.of(bad)


def test_the_prepare_stage_compiles_each_compile_baseline_still_to_measure_into_the_baselines_cache(tmp_path,
                                                                                                   fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py"))
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("verified", "standard"), device="cpu",
                       build_dir=tmp_path / "build", progress=False)
    runner = Runner(loaded, config, capture_environment("cpu"))
    todo = [(p, c) for p in ("standard", "verified") for c in runner.candidates]
    jobs = runner.compile_warmups(todo)
    # one per problem, whatever its number of candidates; none for the standard protocol, which has no such baseline
    assert sorted(j.problem.key for j in jobs) == sorted({c.problem_key for c in runner.candidates})
    assert {(j.protocol, j.baseline_kind, j.candidate) for j in jobs} == {("verified", "compile", None)}
    advanced: list[int] = []
    runner.prepare(jobs, lambda: advanced.append(1))
    assert len(advanced) == len(jobs)
    cache = tmp_path / "build" / "caches" / "baselines" / "inductor"
    assert cache.is_dir() and any(p.is_file() for p in cache.rglob("*")), "nothing was compiled into the cache"
    # one process (--jobs 1) warmed both problems, one after the other: a compiled graph of each in the cache
    assert [s.phase for s in runner.summary.phases.spans] == ["build"]
    assert len([p for p in (cache / "fxgraph").rglob("*") if p.is_file()]) >= len(jobs) == 2
    assert not (tmp_path / "out").exists()  # a warm-up measures and records nothing
    measured = jobs[0].problem
    runner.baseline("verified", measured, "compile")  # once measured, its problem needs no warm-up
    assert measured.key not in {j.problem.key for j in runner.compile_warmups(todo)}


_BROKEN_BUILD = '''"""A candidate whose extension does not compile: it falls back to PyTorch, as many public kernels do."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = "torch::Tensor combine(torch::Tensor a, torch::Tensor b) { return a + not_declared_anywhere; }"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self.ext = load_inline(name="fused_kernel", cpp_sources=_SOURCE, functions=["combine"])
        except RuntimeError:
            self.ext = None

    def forward(self, a, b):
        return self.ext.combine(a, b) if self.ext is not None else a + b
'''


def test_an_extension_that_failed_to_build_is_not_built_again_by_the_candidates_next_process(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "2_tiny_add__broken_build.py").write_text(_BROKEN_BUILD, encoding="utf-8")
    args = _args(fixtures_dir, cands, tmp_path / "out", tmp_path / "build", "--protocol", "both", "--timeout", "120")
    assert main(args) == 0
    records = [schemas.load_record(p) for p in (tmp_path / "out").rglob("*__s0.json")]
    assert sorted(r.protocol.name for r in records) == ["standard", "verified"]
    assert {r.status for r in records} == {"correct"}  # its fallback is right: the failed build is no verdict
    logs = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "build" / "logs").glob("eval-*")}
    again = [name for name, text in logs.items() if "failed to build in an earlier process; not built again" in text]
    assert len(again) == 1, logs.keys()  # the first evaluation built it and failed; the second did not build
    marks = list((tmp_path / "build" / "extensions").rglob("kverdict-build-failed.txt"))
    assert len(marks) == 1 and "not_declared_anywhere" in marks[0].read_text(encoding="utf-8")  # the compiler's words


def test_only_extension_builds_are_prepared_beside_the_timings_of_the_chunk_before(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    (cands / "2_tiny_add__cpp.py").write_text(_builds_cpp(fixtures_dir, "2_tiny_add.py"), encoding="utf-8")
    triton = _builds_cpp(fixtures_dir, "3_tiny_scale.py").replace("load_inline", "a kernel of") + "import triton\n"
    (cands / "3_tiny_scale__triton.py").write_text(triton, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("verified",), device="cpu", build_dir=tmp_path / "build",
                       progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    pairs = [("verified", c) for c in runner.candidates]
    jobs = runner.preparations(pairs) + runner.compile_warmups(pairs)
    assert {j.candidate.label if j.candidate else j.baseline_kind for j in jobs} == {
        "cpp", "triton", "compile"}  # the PyTorch candidate builds nothing
    # a Triton candidate compiles while it holds the device, a compile warm-up too: they wait for nothing timed
    assert [j.candidate.label for j in runner.beside(jobs)] == ["cpp"]


def _build_and_last_write(summary: Any, source: str, first_chunk: tuple[str, ...]) -> tuple[float, float]:
    """When the build of the candidate with ``source`` started, and when the last record of the first chunk's
    problems was written."""
    from evaluations import sha256_text

    spans = summary.phases.spans
    (build,) = [s.start_s for s in spans if s.phase == "build" and s.label == f"build-{sha256_text(source)[:16]}"]
    return build, max(s.start_s for s in spans if s.phase == "write" and s.label.startswith(first_chunk))


def test_the_next_chunks_extensions_are_built_while_this_chunk_is_evaluated(tmp_path, fixtures_dir, monkeypatch):
    import re

    from evaluations import capture_environment, load_inputs, sha256_text
    from evaluations.run import RunConfig, run
    from evaluations.worker import BESIDE_NICE

    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_WINDOWS", 1)  # chunks of two problems: (1, 2), then (3)
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    (cands / "2_tiny_add__plain.py").write_text(_as_candidate(fixtures_dir, "2_tiny_add.py"), encoding="utf-8")
    source = _builds_cpp(fixtures_dir, "3_tiny_scale.py")
    (cands / "3_tiny_scale__cpp.py").write_text(source, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def evaluated(ahead: bool, name: str) -> tuple[Any, Path]:
        build = tmp_path / f"build-{name}"
        config = RunConfig(out_dir=tmp_path / f"out-{name}", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=build, overrides=Overrides(timed_calls=5, warmup_calls=1), progress=False,
                           concurrent=2, prepare_ahead=ahead)
        return run(loaded, config, capture_environment("cpu")), build

    summary, build = evaluated(True, "ahead")
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    started, last_of_first = _build_and_last_write(summary, source, ("0001-", "0002-"))
    assert started < last_of_first  # problem 3's build ran while problems 1 and 2 were evaluated
    log = build / "logs" / f"build-{sha256_text(source)[:16]}.log"
    niceness = re.search(r"preparing beside timings, at nice (\d+)", log.read_text(encoding="utf-8"))
    assert niceness and int(niceness.group(1)) >= BESIDE_NICE  # below the timing workers' priority

    summary, build = evaluated(False, "after")  # the same run without: the build waits for the first chunk's end
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    started, last_of_first = _build_and_last_write(summary, source, ("0001-", "0002-"))
    assert started > last_of_first
    log = build / "logs" / f"build-{sha256_text(source)[:16]}.log"
    assert "beside timings" not in log.read_text(encoding="utf-8")


def test_a_chunks_own_extension_builds_run_beside_its_baselines_and_its_candidate_waits_for_its_build(
        tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs, sha256_text
    from evaluations.run import RunConfig, run

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
    # an import that takes seconds stands for an extension build (the prepare stage imports the candidate)
    source = _builds_cpp(fixtures_dir, "3_tiny_scale.py") + "import time\ntime.sleep(4)\n"
    (cands / "3_tiny_scale__cpp.py").write_text(source, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def spans(ahead: bool, name: str) -> tuple[Any, tuple[float, float], list[tuple[float, float]], float]:
        config = RunConfig(out_dir=tmp_path / f"out-{name}", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=tmp_path / f"build-{name}", overrides=Overrides(timed_calls=5, warmup_calls=1),
                           progress=False, concurrent=2, prepare_ahead=ahead)
        summary = run(loaded, config, capture_environment("cpu"))
        all_spans = summary.phases.spans
        (build,) = [(s.start_s, s.end_s) for s in all_spans if s.label == f"build-{sha256_text(source)[:16]}"]
        baselines = [(s.start_s, s.end_s) for s in all_spans if s.phase == "baseline"]
        (evaluated,) = [s.start_s for s in all_spans if s.phase == "candidate"
                        and s.label == f"eval-standard-{sha256_text(source)[:16]}"]
        return summary, build, baselines, evaluated

    summary, build, baselines, evaluated = spans(True, "beside")
    assert sorted(r.status for r in summary.records) == ["correct"] * 3  # one chunk of three problems
    assert len(baselines) == 3
    assert min(start for start, _ in baselines) < build[1]  # a baseline was timed while the build ran
    assert evaluated >= build[1]  # the candidate's evaluation waited for its build

    summary, build, baselines, evaluated = spans(False, "before")  # without: the build comes before anything timed
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    assert min(start for start, _ in baselines) >= build[1]


def test_a_build_that_fails_beside_its_chunks_baselines_is_its_candidates_compile_error(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    broken = _builds_cpp(fixtures_dir, "3_tiny_scale.py") + "raise RuntimeError('ninja: build stopped: subcommand failed')\n"
    (cands / "3_tiny_scale__cpp.py").write_text(broken, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1), progress=False,
                       concurrent=2, prepare_ahead=True)
    summary = run(loaded, config, capture_environment("cpu"))
    by_problem = {r.problem.id: r for r in summary.records}
    assert sorted(by_problem) == [1, 3], by_problem.keys()
    assert by_problem[1].status == "correct"
    assert by_problem[3].status == "compile_error"
    assert "subcommand failed" in (by_problem[3].error or "")


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
    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
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

    cands = _candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
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
