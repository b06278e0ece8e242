"""The executors on the CPU: lanes standing in for GPUs, and Ray on a local instance this module starts.

Both must write the records a serial run writes (the same files, verdicts and evidence; only timings,
timestamps and the verified protocol's hidden seeds differ by design), replace a lane that dies, and
resume after the driver is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import schemas
from evaluations.cli import main
from evaluations.executors import (
    Batch,
    CodeMismatch,
    LaneSpec,
    LocalExecutor,
    batches,
    checked_record,
    code_digest,
    lanes_for,
    seed_files,
)

REPO = Path(__file__).resolve().parents[2]
NAMES = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py")
QUICK = ["--timed-calls", "5", "--warmup-calls", "1", "--trials", "2", "--no-progress", "--device", "cpu", "--timeout", "120"]
TIMING_KEYS = {"timing", "speedup", "timestamp", "roofline", "memory", "judged"}
"""Fields measured by a clock (or stamped by it): the only ones allowed to differ between runs."""
LANE_MODULE = "evaluations.executors._lane"


def _cands(tmp: Path, fixtures: Path, names: tuple[str, ...] = NAMES) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(fixtures / "candidates" / name, tmp / name)
    return tmp


def _argv(fixtures: Path, cands: Path, out: Path, build: Path, *extra: str, protocol: str = "both") -> list[str]:
    return ["eval", "--problems", str(fixtures / "problems"), "--candidates", str(cands), "--model", "fixture-model",
            "--out", str(out), "--build-dir", str(build), "--protocol", protocol, *QUICK, *extra]


def _comparable(value: object, protocol: str | None = None) -> object:
    """A record without what a clock measured; for the verified protocol, its trials without the seeds drawn
    for this run (hidden inputs are new on every run) and their measured errors."""
    if isinstance(value, dict):
        protocol = value.get("protocol", {}).get("name", protocol) if isinstance(value.get("protocol"), dict) else protocol
        drop = set(TIMING_KEYS)
        if protocol == "verified":
            drop |= {"seed", "name", "max_abs_error", "error_budget_used", "fp32_strict_budget_used",
                     "fp32_tf32_budget_used", "message", "error"}
        return {k: _comparable(v, protocol) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_comparable(v, protocol) for v in value]
    return value


def _integrity_names(record: dict) -> list[tuple[str, bool]]:
    return [(c["name"], c["passed"]) for c in record.get("integrity", [])]


def _folder(out: Path, protocol: str | None = None) -> dict[str, dict]:
    found = {p.relative_to(out).as_posix(): json.loads(p.read_text()) for p in out.rglob("*.json")}
    return {rel: r for rel, r in found.items() if protocol is None or r["protocol"]["name"] == protocol}


def _assert_same_records(got: Path, serial: Path, protocol: str | None = None) -> None:
    a, b = _folder(got), _folder(serial, protocol)
    assert sorted(a) == sorted(b)
    assert len(a) >= (9 if protocol is None else 5)  # 3 candidates per protocol, and both problems' baselines
    for rel in a:
        x, y = dict(a[rel]), dict(b[rel])
        assert _integrity_names(x) == _integrity_names(y), rel
        x.pop("integrity", None), y.pop("integrity", None)
        assert _comparable(x) == _comparable(y), rel
    assert schemas.manifest_problems(got, list(got.rglob("*.json"))) == []


@pytest.fixture(scope="module")
def serial(tmp_path_factory, fixtures_dir) -> Path:
    base = tmp_path_factory.mktemp("serial")
    assert main(_argv(fixtures_dir, _cands(base / "c", fixtures_dir), base / "out", base / "build")) == 0
    return base / "out"


def test_two_cpu_lanes_write_the_records_of_a_serial_run(serial, tmp_path, fixtures_dir, capsys):
    argv = _argv(fixtures_dir, _cands(tmp_path / "c", fixtures_dir), tmp_path / "out", tmp_path / "build", "--lanes", "2")
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "2 lanes: cpu " in err
    _assert_same_records(tmp_path / "out", serial)
    logs = list((tmp_path / "build" / "lanes").rglob("batch-*.log"))
    assert len(logs) == 2  # one lane per problem, none run twice
    assert main(argv) == 0  # resumed: nothing left to do, no lane started
    assert "0 records written, 6 already finished" in capsys.readouterr().out
    assert len(list((tmp_path / "build" / "lanes").rglob("batch-*.log"))) == 2


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory) -> str:
    """A Ray head on this machine, started as a cluster's would be, stopped at the end of the module."""
    pytest.importorskip("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ray = shutil.which("ray", path=os.path.dirname(sys.executable)) or "ray"
    temp = tmp_path_factory.mktemp("ray")
    saved = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # a throwaway head on the loopback: no token to hand to the driver
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    started = subprocess.run([ray, "start", "--head", "--port", str(port), "--num-cpus", "2", "--num-gpus", "0",
                              "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}",
                              "--object-store-memory", str(100 * 1024 * 1024)],
                             env=env, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr[-2000:]
    yield f"127.0.0.1:{port}"
    subprocess.run([ray, "stop", "--force"], env=env, capture_output=True, timeout=120)
    if saved is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = saved


def test_ray_tasks_write_the_records_of_a_serial_run_and_resume(serial, ray_head, tmp_path, fixtures_dir, capsys):
    argv = _argv(fixtures_dir, _cands(tmp_path / "c", fixtures_dir), tmp_path / "out", tmp_path / "build",
                 "--executor", "ray", "--address", ray_head)
    assert main(argv) == 0
    assert f"ran on the Ray cluster at {ray_head}: {socket.gethostname()} 2 problems" in capsys.readouterr().err
    _assert_same_records(tmp_path / "out", serial)
    assert main(argv) == 0
    assert "0 records written, 6 already finished" in capsys.readouterr().out


def _lanes_of(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid and LANE_MODULE.encode() in cmdline:
            found.append(int(entry.name))
    return found


def _start(argv: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "evaluations.cli", *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(check, limit_s: float = 180.0):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("never happened")


def test_a_lane_killed_mid_batch_is_replaced_and_the_run_completes(serial, tmp_path, fixtures_dir):
    argv = _argv(fixtures_dir, _cands(tmp_path / "c", fixtures_dir), tmp_path / "out", tmp_path / "build", "--lanes", "2",
                 protocol="standard")
    proc = _start(argv)
    lanes = _wait_for(lambda: _lanes_of(proc.pid))
    time.sleep(2.0)  # the lane is at work: importing, timing its baselines
    os.kill(lanes[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert "was killed by SIGKILL; running it again (attempt 2 of 3)" in err
    _assert_same_records(tmp_path / "out", serial, "standard")


def test_a_killed_driver_stops_its_lanes_and_the_rerun_finishes_the_work(serial, tmp_path, fixtures_dir):
    out = tmp_path / "out"
    argv = _argv(fixtures_dir, _cands(tmp_path / "c", fixtures_dir), out, tmp_path / "build", "--lanes", "2",
                 protocol="standard")
    proc = _start(argv)
    _wait_for(lambda: any(isinstance(schemas.load_record(p), schemas.Record) for p in out.rglob("0*__s*.json")))
    lanes = _lanes_of(proc.pid)
    proc.kill()
    proc.communicate(timeout=60)
    _wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in lanes), limit_s=60)  # no lane outlives it
    assert not list(out.rglob("*.tmp"))
    rerun = _start(argv)
    stdout, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err[-3000:]
    finished = int(stdout.split(" already finished")[0].rsplit(", ", 1)[1])
    assert finished >= 1, stdout
    _assert_same_records(out, serial, "standard")


def test_a_hung_lane_is_killed_at_its_batch_deadline_with_its_process_group(tmp_path, fixtures_dir, monkeypatch):
    from evaluations import load_inputs
    from evaluations.executors import local
    from evaluations.run import RunConfig

    loaded = load_inputs(fixtures_dir / "problems", _cands(tmp_path / "c", fixtures_dir, ("2_tiny_add.py",)),
                         model="m", provider=None, suite=None)
    child_pid = tmp_path / "child.pid"

    def hang(spec, report, env, log):  # a lane stuck with a child of its own
        script = f"import os,subprocess,time; p=subprocess.Popen(['sleep','600']); open({str(child_pid)!r},'w').write(str(p.pid)); time.sleep(600)"
        return subprocess.Popen([sys.executable, "-c", script], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    monkeypatch.setattr(local, "_start", hang)
    monkeypatch.setattr(local, "batch_deadline_s", lambda config, batch: 3.0)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", build_dir=tmp_path / "build")
    executor = LocalExecutor(config, lanes_for("cpu", 1), workdir=tmp_path / "lanes")
    executor.workdir.mkdir()
    t0 = time.monotonic()
    outcome = executor.run_batch(executor.lanes[0], batches(loaded)[0], threading.Event())
    assert outcome.report is None and "passed its batch deadline" in outcome.why
    assert time.monotonic() - t0 < 30
    pid = int(_wait_for(lambda: child_pid.exists() and child_pid.read_text()))
    _wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2])


def test_batches_are_whole_problems_in_load_order(fixtures_dir, tmp_path):
    from evaluations import load_inputs

    loaded = load_inputs(fixtures_dir / "problems", _cands(tmp_path / "c", fixtures_dir, (*NAMES, "3_tiny_scale.py")),
                         model="m", provider=None, suite=None)
    got = batches(loaded)
    assert [b.key.rsplit("/", 1)[-1] for b in got] == ["1", "2", "3"]
    assert [b.size for b in got] == [2, 1, 1]
    assert all(len(b.loaded.problems) == 1 and {c.problem_key for c in b.loaded.candidates} == {b.key} for b in got)


def test_lanes_take_disjoint_cpu_cores_or_one_visible_gpu_each(monkeypatch):
    cores = sorted(os.sched_getaffinity(0))
    lanes = lanes_for("cpu", len(cores))
    assert sorted(int(c) for lane in lanes for c in lane.env["KVERDICT_LANE_CPUS"].split(",")) == cores
    with pytest.raises(ValueError, match="needs"):
        lanes_for("cpu", len(cores) + 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert [lane.env for lane in lanes_for("cuda", None)] == [{"CUDA_VISIBLE_DEVICES": "3"}, {"CUDA_VISIBLE_DEVICES": "5"}]
    with pytest.raises(ValueError, match="--lanes 3 needs 3 GPUs; 2 visible"):
        lanes_for("cuda", 3)


def test_a_node_may_write_a_record_only_where_its_content_belongs(serial):
    rel, text = next((p.relative_to(serial).as_posix(), p.read_text()) for p in serial.rglob("*__s0.json"))
    assert isinstance(checked_record(rel, text), schemas.Record)
    with pytest.raises(ValueError, match="belongs at"):
        checked_record("cpu/another-model/standard/x/level-1/0001-x__s0.json", text)
    with pytest.raises(schemas.RecordError):
        checked_record(rel, text.replace('"status": ', '"status_": '))


def test_a_node_with_other_code_refuses_the_task(fixtures_dir, tmp_path):
    from evaluations import load_inputs
    from evaluations.executors import evaluate_batch
    from evaluations.run import RunConfig

    loaded = load_inputs(fixtures_dir / "problems", _cands(tmp_path / "c", fixtures_dir, ("2_tiny_add.py",)),
                         model="m", provider=None, suite=None)
    spec = LaneSpec(batches(loaded)[0], RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu"))
    import pickle

    with pytest.raises(CodeMismatch, match="install the same commit"):
        evaluate_batch(pickle.dumps(spec), {}, {}, "0" * 64)
    assert len(code_digest()) == 64


def test_a_task_is_seeded_with_its_problems_records_only(serial, fixtures_dir, tmp_path):
    from evaluations import load_inputs

    loaded = load_inputs(fixtures_dir / "problems", _cands(tmp_path / "c", fixtures_dir), model="fixture-model",
                         provider=None, suite=None)
    first: Batch = batches(loaded)[0]
    seeds = seed_files(serial, first)
    assert seeds and all("/0001-1_tiny_relu__" in rel for rel in seeds)
    assert any("/_baselines/" in rel for rel in seeds) and any("fixture-model" in rel for rel in seeds)
    assert len(seeds) == sum(1 for p in serial.rglob("0001-*.json"))
