"""End to end on the CPU: one evaluation run over honest, wrong, crashing and broken candidates; resuming, time-outs,
interrupts, spare workers, concurrent evaluations and the pacing of verified timings."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runs import REPO, copy_candidates, eval_args, records_in

import schemas
from evaluations import Overrides
from evaluations.cli import main

MAIN_RUN = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__segfault.py", "1_tiny_relu__abort.py",
            "1_tiny_relu__exit.py", "1_tiny_relu__flood.py", "1_tiny_relu__syntax.py", "2_tiny_add.py",
            "3_tiny_scale.py")


@pytest.fixture(scope="module")
def main_run(tmp_path_factory, fixtures_dir):
    base = tmp_path_factory.mktemp("run")
    cands = copy_candidates(base / "cands", fixtures_dir, MAIN_RUN)
    args = eval_args(fixtures_dir, cands, base / "out", base / "build", "--timeout", "120", "--jobs", "2")
    assert main(args) == 0
    return base, args, records_in(base / "out")


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
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu__hang.py",))
    assert main(eval_args(fixtures_dir, cands, out, tmp_path / "build", "--timeout", "8")) == 0
    record = records_in(out)["1_tiny_relu__hang.py"]
    assert record.status == "timeout" and "deadline" in record.error
    assert not list((tmp_path / "build" / "logs").glob("baseline-*"))  # measured once, reused


def test_killed_run_keeps_finished_records(tmp_path, fixtures_dir):
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "1_tiny_relu__hang.py"))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen([sys.executable, "-m", "evaluations.cli",
                             *eval_args(fixtures_dir, cands, out, tmp_path / "build", "--timeout", "300")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not records_in(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)  # the hanging candidate is running now
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "finished records are kept" in err
    assert list(records_in(out)) == ["1_tiny_relu.py"]
    assert not list(out.rglob("*.tmp"))


def test_spare_workers_give_the_same_verdicts_and_leave_nothing_behind(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "1_tiny_relu__segfault.py")
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, names)
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
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, names)
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


def test_an_interrupted_evaluation_writes_no_record(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
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

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
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
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, names)
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


def test_a_concurrent_run_starts_problems_window_by_window_pacers_first(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py", "3_tiny_scale.py")
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, names)
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


def test_timing_options_of_the_wrong_kind_are_refused_not_coerced():
    import pytest

    from evaluations.timing import TimingPlan

    assert TimingPlan.of({"graph_short": False}).graph_short is False
    assert TimingPlan.of({"time_cap_s": 2}).time_cap_s == 2.0 and TimingPlan.of({"min_calls": "30"}).min_calls == 30
    for bad in ({"graph_short": "False"}, {"min_calls": True}, {"time_cap_s": "2"}, {"flush": 1}):
        with pytest.raises(ValueError, match="timing option"):
            TimingPlan.of(bad)
