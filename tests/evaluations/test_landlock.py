"""Write confinement of candidate workers (Landlock): what a candidate's worker may write, and what it may not."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluations.run import run_isolated
from evaluations.worker import restrict_writes, scopes_signals, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason="this kernel has no Landlock")


def _in_child(body) -> int:
    """Run ``body`` in a forked child and return its exit status (confinement must not reach this process)."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        except BaseException:  # noqa: B036 - any escape is the child's failure
            os._exit(1)
        os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_writes_beneath_the_given_folders_only_from_every_later_thread_and_process(tmp_path):
    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()

    def body() -> None:
        restrict_writes([mine])
        (mine / "a").write_text("x")
        os.replace(mine / "a", mine / "b")  # making, renaming and removing stay possible inside
        (mine / "b").unlink()
        for attempt in (lambda: (other / "x").write_text("x"), lambda: (tmp_path / "y").mkdir(),
                        lambda: os.replace(mine, other / "moved")):
            with pytest.raises(PermissionError):
                attempt()
        refused = []
        thread = threading.Thread(target=lambda: refused.append(_refused(other / "t")))
        thread.start()
        thread.join()
        assert refused == [True]
        assert os.system(f"echo x > {other / 'sh'} 2>/dev/null") != 0  # a child process inherits it

    assert _in_child(body) == 0
    assert list(other.iterdir()) == [] and (tmp_path / "y").exists() is False
    (other / "parent").write_text("x")  # this process keeps its rights


def _refused(path: Path) -> bool:
    try:
        path.write_text("x")
    except PermissionError:
        return True
    return False


@pytest.mark.parametrize("lock", [None, "gpu.lock"], ids=["alone", "lock-beside-the-records"])
def test_a_candidate_worker_writes_its_own_scope_and_nothing_of_the_run(tmp_path, monkeypatch, lock):
    """``lock``: a concurrent run's GPU lock named in the folder that also holds the records, the problems and the
    builds (as ``KVERDICT_GPU_LOCK=/tmp/x.lock`` would): the worker takes it, and may write its own wait file only."""
    if lock:
        monkeypatch.setenv("KVERDICT_GPU_LOCK", str(tmp_path / lock))
    else:  # alone even where the tests run beside a run that names its lock (benchmarks/h200_detached.sh)
        monkeypatch.delenv("KVERDICT_GPU_LOCK", raising=False)
    build, records, problems = tmp_path / "build", tmp_path / "records", tmp_path / "problems"
    for folder in (records, problems, build / "caches" / "baselines", build / "extensions" / "candidate-other"):
        folder.mkdir(parents=True)
    evidence = build / "evidence" / "eval-x" / "outputs.pt"
    evidence.parent.mkdir(parents=True)  # as the runner makes it (_judge.prepare_job)
    job = SimpleNamespace(candidate=SimpleNamespace(sha256="ab" * 32), build_dir=str(build),
                          options={"evidence": str(evidence)})
    own = build / "extensions" / f"candidate-{'ab' * 8}"
    paths = {"own build": own / "lib.so", "own cache": build / "caches" / f"candidate-{'ab' * 8}" / "t",
             "evidence": evidence, "records": records / "r.json", "problem": problems / "1_relu.py",
             "baselines' cache": build / "caches" / "baselines" / "t",
             "another candidate's build": build / "extensions" / "candidate-other" / "lib.so",
             "the repository": Path(__file__).with_name("planted.py")}
    expected = {"own build": "written", "own cache": "written", "evidence": "written", "records": "refused",
                "problem": "refused", "baselines' cache": "refused", "another candidate's build": "refused",
                "the repository": "refused"}
    if lock:
        paths["beside the lock"], expected["beside the lock"] = tmp_path / "planted.json", "refused"
        paths["its wait file"], expected["its wait file"] = tmp_path / f"{lock}.d" / "wait-1", "written"
        paths["the repository"] = paths.pop("the repository")  # last: the watcher thread tries it too
    result = run_isolated("isolation_targets:confined_writes", (job, [str(p) for p in paths.values()]),
                          timeout_s=60, log_path=tmp_path / "log")
    assert result.failure is None, result.output_tail
    found = {name: result.value[str(path)] for name, path in paths.items()}
    assert found == expected
    assert result.value["temporary file"] == "written"  # into its private temporary folder
    assert result.value[f"watcher: {paths['the repository']}"] == "refused"
    assert result.value["a new thread's name"] == "written"  # CUDA's start-up fails (error 304) where it may not
    assert result.value["the runner's /proc"] == "refused"
    assert not paths["the repository"].exists()
    assert result.value.get("the GPU lock") == ("held" if lock else None)


@pytest.mark.skipif(not scopes_signals(), reason="this kernel's Landlock cannot scope signals (ABI < 6)")
def test_signals_reach_only_the_confined_process_and_its_children(tmp_path):
    parent = os.getpid()
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: received.append(True))

    def body() -> None:
        restrict_writes([tmp_path], scope_signals=True)
        with pytest.raises(PermissionError):
            os.kill(parent, signal.SIGUSR1)
        child = os.fork()
        if child == 0:
            time.sleep(30)
            os._exit(0)
        os.kill(child, signal.SIGKILL)  # its own child it may still stop
        assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == -signal.SIGKILL

    try:
        assert _in_child(body) == 0
        time.sleep(0.1)
        assert received == []
    finally:
        signal.signal(signal.SIGUSR1, previous)
