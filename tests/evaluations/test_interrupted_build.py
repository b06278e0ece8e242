"""A run cut off during a candidate's C++ extension build: the re-run builds it again and writes its record within
its deadlines, never waiting on the lock the killed build left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import schemas

REPO = Path(__file__).resolve().parents[2]
QUICK = ["--timed-calls", "5", "--warmup-calls", "1", "--no-progress", "--device", "cpu", "--jobs", "1"]


def _args(fixtures: Path, cands: Path, out: Path, build: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "evaluations.cli", "eval", "--problems", str(fixtures / "problems"),
            "--candidates", str(cands), "--model", "fixture-model", "--out", str(out), "--build-dir", str(build),
            *QUICK, *extra]


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _in_folder(folder: Path) -> list[int]:
    """The processes whose working directory lies in ``folder`` (a compiler an orphaned build left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd.startswith(str(folder)):
                found.append(int(entry.name))
    return found


def _kill_mid_build(args: list[str], build: Path, env: dict[str, str]) -> Path:
    """Start the run, wait until torch's build of the candidate's extension holds its lock and its compiler runs,
    then kill the run and everything it started at once (as a machine's time limit does); the lock's path."""
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            locks = list((build / "extensions").glob("candidate-*/*/lock"))
            if locks and _in_folder(locks[0].parent):  # ninja (and the compiler) run in the build folder
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the extension build never started (run exited with {proc.returncode})")
        workers = _children(proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for pid in workers:  # each worker is the leader of its own process group: its build tools are in it
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in _in_folder(locks[0].parent):  # anything that left its group
        os.kill(pid, signal.SIGKILL)
    return locks[0]


@pytest.mark.slow
def test_a_build_killed_mid_way_is_built_again_by_the_rerun_within_its_deadline(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    shutil.copy(fixtures_dir / "candidates" / "2_tiny_add.py", cands / "2_tiny_add.py")
    out, build = tmp_path / "out", tmp_path / "build"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    lock = _kill_mid_build(_args(fixtures_dir, cands, out, build), build, env)
    assert lock.exists() and not list(lock.parent.glob("*.so"))  # what the cut-off run left: a lock, no library
    assert not [p for p in out.rglob("*.json") if isinstance(schemas.load_record(p), schemas.Record)]

    deadline_s = 150
    start = time.monotonic()
    rerun = subprocess.run(_args(fixtures_dir, cands, out, build, "--timeout", "60", "--build-timeout", "120"),
                           env=env, capture_output=True, text=True, timeout=deadline_s + 60)
    took = time.monotonic() - start
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    records = [r for r in map(schemas.load_record, out.rglob("*.json")) if isinstance(r, schemas.Record)]
    assert [r.status for r in records] == ["correct"], [r.error for r in records]
    assert took < deadline_s
    log = "\n".join(p.read_text(errors="replace") for p in (build / "logs").glob("build-*.log"))
    assert "stale" in log and "built in" in log  # the dead build's lock was seen, and the extension built anew
    assert not lock.exists() or list(lock.parent.glob("*.so"))


def test_a_build_past_its_deadline_ends_in_a_timeout_record_that_names_that_deadline(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    source = (fixtures_dir / "problems" / "2_tiny_add.py").read_text(encoding="utf-8")
    (cands / "2_tiny_add.py").write_text(  # a build (named so, it is prepared as one) that never ends
        "import time\n# built with torch.utils.cpp_extension.load_inline\ntime.sleep(3600)\n"
        + source.replace("class Model(", "class ModelNew("), encoding="utf-8")
    out = tmp_path / "out"
    start = time.monotonic()
    done = subprocess.run(_args(fixtures_dir, cands, out, tmp_path / "build", "--timeout", "60", "--build-timeout", "4"),
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [r for r in map(schemas.load_record, out.rglob("*.json")) if isinstance(r, schemas.Record)]
    assert [r.status for r in records] == ["timeout"]
    assert "build deadline of 4 s (--build-timeout)" in (records[0].error or "")
    assert time.monotonic() - start < 60  # its evaluation's own deadline was never waited for
