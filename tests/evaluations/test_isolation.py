"""Worker isolation: every way a child can end gives a classified result, and the parent goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluations.run import run_isolated


def _run(tmp_path, name, payload=None, **kwargs):
    kwargs.setdefault("timeout_s", 30)
    return run_isolated(f"isolation_targets:{name}", payload, log_path=tmp_path / f"{name}.log", **kwargs)


def test_value_and_both_output_streams_come_back(tmp_path):
    result = _run(tmp_path, "double", 21)
    assert result.ok and result.value == 42
    assert "doubling 21" in result.output_tail and "from C level" in result.output_tail


def test_exception_is_reported_by_type(tmp_path):
    result = _run(tmp_path, "fail", "bad input")
    assert result.failure.kind == "exception"
    assert result.failure.exception_type == "ValueError"
    assert "bad input" in result.failure.message


def test_segfault_and_abort_are_named_by_signal(tmp_path):
    seg = _run(tmp_path, "segfault")
    assert seg.failure.kind == "signal" and "SIGSEGV" in seg.failure.message
    assert "Fatal Python error" in seg.output_tail  # faulthandler's traceback reaches the record
    abort = _run(tmp_path, "abort")
    assert abort.failure.kind == "signal" and "SIGABRT" in abort.failure.message


def test_early_exit_without_result(tmp_path):
    result = _run(tmp_path, "exit_early", 0)
    assert result.failure.kind == "exit" and "code 0" in result.failure.message


def test_hang_is_killed_at_the_deadline(tmp_path):
    start = time.monotonic()
    result = _run(tmp_path, "hang", timeout_s=2)
    assert result.failure.kind == "timeout"
    assert time.monotonic() - start < 15


def test_output_flood_is_cut_off(tmp_path):
    result = _run(tmp_path, "flood", max_output_bytes=200_000)
    assert result.failure.kind == "output_flood"
    # stopped within a poll or two: a fast disk takes tens of megabytes in that time, never the gigabytes an
    # unwatched flood writes before any deadline
    assert result.wall_s < 3 and (tmp_path / "flood.log").stat().st_size < 400_000_000
    assert len(result.output_tail) <= 3000 and "xxxx" in result.output_tail


def test_cancel_stops_the_child(tmp_path):
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    start = time.monotonic()
    result = _run(tmp_path, "hang", timeout_s=60, cancel=cancel)
    assert result.failure.kind == "cancelled"
    assert time.monotonic() - start < 15


def test_spare_worker_serves_one_job_with_its_own_log(tmp_path):
    from evaluations.run import start_spare

    spare = start_spare(("isolation_targets",), tmp_path / "spares")
    result = _run(tmp_path, "double", 4, spare=spare)
    assert result.ok and result.value == 8
    assert "doubling 4" in result.output_tail and "from C level" in result.output_tail
    assert not spare.proc.is_alive()  # one job per process: it exited after serving
    assert not list((tmp_path / "spares").glob("spare-*.log"))  # its start-up output moved into the job's log


def test_spare_worker_failures_are_classified_like_cold_ones(tmp_path):
    from evaluations.run import start_spare

    seg = _run(tmp_path, "segfault", spare=start_spare((), tmp_path))
    assert seg.failure.kind == "signal" and "SIGSEGV" in seg.failure.message
    start = time.monotonic()
    hang = _run(tmp_path, "hang", timeout_s=2, spare=start_spare((), tmp_path))
    assert hang.failure.kind == "timeout" and time.monotonic() - start < 15


def test_dead_spare_falls_back_to_a_cold_worker(tmp_path):
    from evaluations.run import start_spare

    spare = start_spare(("isolation_targets",), tmp_path)
    spare.discard()
    result = _run(tmp_path, "double", 5, spare=spare)
    assert result.ok and result.value == 10



def test_a_spare_pool_hands_out_live_spares_one_job_each_and_closes_them_all(tmp_path):
    from evaluations.run import SparePool

    pool = SparePool(("isolation_targets",), tmp_path / "spares", size=2)
    first, second = pool.take(), pool.take()
    assert first is not None and second is not None and first.proc.pid != second.proc.pid
    assert _run(tmp_path, "double", 3, spare=first).value == 6
    assert _run(tmp_path, "double", 4, spare=second).value == 8
    dead = pool.waiting[0]
    dead.discard()  # a spare that died while waiting is never handed out
    third = pool.take()
    assert third is not None and third is not dead and third.usable()
    waiting = [s.proc for s in pool.waiting] + [third.proc]
    pool.close()
    third.discard()
    assert pool.take() is None
    assert not any(p.is_alive() for p in waiting)


CONFINED_CALLS = """
import sys
from evaluations.run import run_isolated
from evaluations.worker import confined

if __name__ == "__main__":
    with confined():
        sent = run_isolated("tests.evaluations.isolation_targets:signal_parent", None, timeout_s=60,
                            log_path=sys.argv[1] + "/sent.log")
        after = run_isolated("tests.evaluations.isolation_targets:double", 4, timeout_s=60,
                             log_path=sys.argv[1] + "/ok.log")
    print(sent.failure.kind, sent.failure.message)
    print(after.value)
"""


def test_inside_a_confined_run_a_signal_from_the_child_fails_only_that_call(tmp_path):
    # a process of its own: no thread may predate the watcher (see _confine.watching)
    script = tmp_path / "confined_calls.py"
    script.write_text(CONFINED_CALLS)
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=repo, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(repo)), timeout=300, start_new_session=True)
    assert done.returncode == 0, done.stderr[-2000:]
    sent, after = done.stdout.splitlines()
    assert sent.startswith("signalled_runner ") and "sent SIGINT to the runner" in sent
    assert after == "8"  # the next call runs as usual


_LEAKING_RUN = """
import multiprocessing as mp, os, sys
def leak(q):
    lock = mp.get_context("spawn").Lock()  # a semaphore, as torch.compile's compile pools make
    q.put(lock._semlock.name)
    os._exit(0)  # as a worker ends: no teardown that would free it
if __name__ == "__main__":
    from contextlib import nullcontext
    from evaluations.worker import confined
    with confined() if sys.argv[1] == "confined" else nullcontext():
        ctx = mp.get_context("spawn")
        q = ctx.SimpleQueue()
        p = ctx.Process(target=leak, args=(q,))
        p.start()
        print(q.get())
        p.join()
"""


@pytest.mark.parametrize("how", ["confined", "plain"])
def test_semaphores_a_worker_leaves_are_freed_at_the_end_of_the_run_without_a_warning(tmp_path, how):
    """Workers end with os._exit or are killed, so a semaphore a worker's library made is left to multiprocessing's
    resource tracker, which frees it when the run ends; under confinement it does so without warning of "leaked
    semaphore objects" after the run's summary (the plain run shows that the warning is real)."""
    script = tmp_path / "leak.py"
    script.write_text(_LEAKING_RUN, encoding="utf-8")
    # the tracker holds stderr until it has freed what was left: run() returns after it ends
    done = subprocess.run([sys.executable, str(script), how], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    name = done.stdout.strip().lstrip("/")
    assert name and not Path("/dev/shm", f"sem.{name}").exists()  # freed either way
    assert ("leaked semaphore" in done.stderr) == (how == "plain"), done.stderr
