"""The GPU lock of concurrent CUDA runs: timings hold the device alone, waiting is not a timeout.

The lock is plain ``flock`` on files, so its rules are tested here with CPU processes; the CUDA
synchronisation it adds around them is a no-op where no device is initialised.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evaluations.run import run_isolated
from evaluations.worker import gpulock


@pytest.fixture
def lock(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "gpu.lock"
    monkeypatch.setenv(gpulock.GPU_LOCK_ENV, str(path))
    return path


def _run(tmp_path: Path, name: str, payload: object, tag: str, timeout_s: float = 60.0):
    result = run_isolated(f"isolation_targets:{name}", payload, timeout_s=timeout_s, log_path=tmp_path / f"{tag}.log")
    assert result.ok, (result.failure, result.output_tail)
    return result.value


def test_without_the_variable_both_holds_are_no_ops(tmp_path, monkeypatch):
    monkeypatch.delenv(gpulock.GPU_LOCK_ENV, raising=False)
    with gpulock.shared(), gpulock.exclusive():
        pass
    assert list(tmp_path.iterdir()) == []
    assert gpulock.waited_s(None, os.getpid()) == 0.0


def _touched(path: Path, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def _holder_then_timing(pool, tmp_path, marks):
    """A worker holding the device shared until ``marks/release`` appears, and a timing that tries to take it."""
    holder = pool.submit(_run, tmp_path, "hold_shared", (str(marks), "first", "release"), "first")
    _touched(marks / "first.held")
    timing = pool.submit(_run, tmp_path, "time_exclusive", (str(marks), "timing", None), "timing")
    _touched(marks / "timing.trying")
    return holder, timing


def test_a_timing_waits_for_every_shared_holder_and_new_holders_wait_for_it(tmp_path, lock):
    marks = tmp_path / "marks"
    marks.mkdir()
    with ThreadPoolExecutor(3) as pool:
        first, timing = _holder_then_timing(pool, tmp_path, marks)
        time.sleep(0.3)  # the timing is now queued behind the first worker
        late = pool.submit(_run, tmp_path, "hold_shared", (str(marks), "late", None), "late")
        _touched(marks / "late.trying")
        time.sleep(0.5)  # the newcomer is now queued too
        (marks / "release").touch()
        _, first_end = first.result()
        alone_start, alone_end, waited = timing.result()
        late_start, _ = late.result()
    assert alone_start >= first_end, "the timing began while another worker held the device"
    assert late_start >= alone_end, "a worker took the device while a timing was waiting for it"
    assert waited > 0.5, waited


def test_waiting_for_the_lock_does_not_count_against_the_deadline(tmp_path, lock):
    held = threading.Event()

    def hold_alone() -> None:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.set()
        time.sleep(4.0)
        os.close(fd)

    holder = threading.Thread(target=hold_alone)
    holder.start()
    held.wait()
    try:
        start, end = _run(tmp_path, "hold_shared", (str(tmp_path), "patient", None), "patient", timeout_s=3.0)
    finally:
        holder.join()
    assert not holder.is_alive()  # it got the device only after the 4 s hold, past its 3 s deadline, unkilled
    assert end - start < 1.0


def test_a_wait_still_counts_after_the_worker_has_let_go_of_the_lock(tmp_path, lock):
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    release = threading.Timer(2.5, os.close, (fd,))
    release.start()
    try:  # 2.5 s waited, then 1.5 s of work once the lock (and its wait file) is gone: 4 s of a 3 s deadline
        result = run_isolated("isolation_targets:wait_then_work", 1.5, timeout_s=3.0, log_path=tmp_path / "let-go.log")
    finally:
        release.join()
    assert result.ok, (result.failure, result.output_tail)
    assert result.value > 1.5, result.value
    assert 1.5 < result.waited_s < result.wall_s - 1.0  # the runner's account of the wait, kept for the run's spans


def test_a_worker_that_waits_longer_than_twice_its_deadline_is_still_stopped(tmp_path, lock):
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        t0 = time.monotonic()
        result = run_isolated("isolation_targets:hold_shared", (str(tmp_path), "stuck", None), timeout_s=1.0,
                              log_path=tmp_path / "stuck.log")
        took = time.monotonic() - t0
    finally:
        os.close(fd)
    assert result.failure is not None and result.failure.kind == "timeout"
    assert took < 15.0


def test_a_timing_waits_for_a_step_of_a_yielding_job_not_for_the_whole_job(tmp_path, lock):
    marks = tmp_path / "marks"
    marks.mkdir()
    with ThreadPoolExecutor(2) as pool:
        job = pool.submit(_run, tmp_path, "hold_shared_in_steps", (str(marks), "job", 3.0), "job")
        _touched(marks / "job.held")
        timing = pool.submit(_run, tmp_path, "time_exclusive", (str(marks), "timing", None), "timing")
        start, end, waited = timing.result()
        steps = job.result()
    assert waited < 1.5  # far less than the 3 s job: it waited for one step (and a worker's start)
    assert end < steps[-1][1]  # the timing ended while the job was still running
    assert not any(s < end and start < e for s, e in steps)  # no step of the job ran inside the timing


def test_timings_queued_together_run_back_to_back_before_a_yielded_job_goes_on(tmp_path, lock):
    marks = tmp_path / "marks"
    marks.mkdir()
    with ThreadPoolExecutor(3) as pool:
        job = pool.submit(_run, tmp_path, "hold_shared_in_steps", (str(marks), "job", 4.0, 0.6), "job")
        _touched(marks / "job.held")
        # a and b both hold the device shared (as workers in the middle of their jobs do); a asks for it alone
        # first, the job yields to a within one step, and b asks only after that (while a still waits for b's
        # shared hold): the job, though it waited first, must not slip in between the two timings
        timings = [pool.submit(_run, tmp_path, "time_exclusive", (str(marks), name, after, delay_s), name)
                   for name, after, delay_s in (("a", "b.trying", 0.0), ("b", "a.trying", 0.9))]
        (first_start, first_end, _), (second_start, second_end, _) = sorted(t.result() for t in timings)
        steps = job.result()
    assert first_end <= second_start
    assert not any(s < second_end and first_start < e for s, e in steps), \
        "a step of the yielded job ran between (or inside) two timings that were queued together"
    assert steps[-1][1] > second_end  # the job went on once both were done


def _lock_trace_script():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lock_trace.py"
    spec = importlib.util.spec_from_file_location("lock_trace", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("lock_trace", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_lock_trace_names_the_step_that_kept_a_timing_waiting(tmp_path, lock, monkeypatch):
    traces = tmp_path / "traces"
    traces.mkdir()
    monkeypatch.setenv(gpulock.TRACE_ENV, str(traces))
    marks = tmp_path / "marks"
    marks.mkdir()
    with ThreadPoolExecutor(2) as pool:
        holder, timing = _holder_then_timing(pool, tmp_path, marks)
        time.sleep(0.8)  # the timing waits for the holder's step
        (marks / "release").touch()
        holder.result()
        timing.result()
    assert len(list(traces.glob("trace-*.txt"))) == 2
    figures = _lock_trace_script().summarise(traces, top=5)
    blamed = figures["held_up_by"][0]
    assert blamed["step"].startswith("isolation_targets.py:") and "hold_shared" in blamed["step"], blamed
    assert blamed["times"] == 1 and blamed["seconds"] >= 0.7, blamed
    assert 0.0 < figures["timing_alone_share"] < 1.0
    assert figures["per_kind"]["job"]["alone"] >= 0.29, figures["per_kind"]


def test_a_trial_s_reference_calls_are_steps_of_their_own(monkeypatch):
    """The float32, TF32 and float64 calls of a problem's reference (seconds each for a large network) each end at
    a yield point, so a timing that waits goes first after one of them, not after all three."""
    import torch

    from evaluations.protocols.verified import References

    steps: list[str] = []

    class Model(torch.nn.Module):
        def forward(self, x):
            steps.append(f"call {x.dtype}")
            return x * 2

    monkeypatch.setattr(gpulock, "yield_to_timing", lambda: steps.append("yield"))
    out = References(Model()).run([torch.ones(3)])
    assert steps == ["call torch.float32", "yield", "call torch.float32", "yield", "call torch.float64"]
    assert out.ref64[0].dtype == torch.float64 and torch.equal(out.strict32[0], torch.full((3,), 2.0))


def test_the_memory_benchmark_reads_each_worker_s_job_from_its_lock_trace(tmp_path, lock, monkeypatch):
    """benchmarks/protocol_memory.py matches NVML's per-process peaks to jobs by the pid in a trace's name and the
    job its first line names, as a worker's real trace writes them."""
    import importlib.util

    traces = tmp_path / "traces"
    traces.mkdir()
    monkeypatch.setenv(gpulock.TRACE_ENV, str(traces))
    with gpulock.shared("judge:verified:kernelbench/1/21:0123456789abcdef"):
        pass
    _lock_trace_script()  # the benchmark reads job kinds with it
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "protocol_memory.py"
    spec = importlib.util.spec_from_file_location("protocol_memory", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.by_job(traces, {os.getpid(): 7 << 30, os.getpid() + 1: 1}) == {"judge:verified": 7 << 30}
    assert bench.by_job(traces, {os.getpid() + 1: 1}) == {}  # no worker's pid among NVML's: no figure


def test_a_worker_killed_while_it_holds_the_device_lets_the_waiting_timing_go_on(tmp_path, lock):
    """A worker that dies or is killed at its deadline while holding the device (shared here, as a candidate's
    long step would) must not keep the others waiting: the lock is the kernel's, let go with the process."""
    marks = tmp_path / "marks"
    marks.mkdir()
    with ThreadPoolExecutor(2) as pool:
        holder = pool.submit(run_isolated, "isolation_targets:hold_shared", (str(marks), "stuck", "never"),
                             timeout_s=3.0, log_path=tmp_path / "stuck.log")
        _touched(marks / "stuck.held")
        timing = pool.submit(_run, tmp_path, "time_exclusive", (str(marks), "timing", None), "timing")
        _touched(marks / "timing.trying")
        stuck = holder.result(timeout=60)
        alone_start, alone_end, waited = timing.result(timeout=60)
    assert not stuck.ok and stuck.failure is not None and "timeout" in str(stuck.failure).lower(), stuck.failure
    assert alone_end > alone_start and waited > 0.5, waited  # it waited for the holder, then timed once it was gone


def test_a_lock_trace_names_the_host_work_done_out_of_the_lock(tmp_path):
    """Host draws of a problem's inputs let go of the lock: the trace's reading ranks the steps out of it, which
    on the H200 showed them to be most of a worker's time (session 27's Triton run)."""
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "trace-101.txt").write_text("\n".join([
        "10.0 born candidate:verified:kb/1/19:abc", "10.5 begin candidate:verified:kb/1/19:abc",
        "10.6 in _worker.py:359:run_job",
        "11.0 out _distributions.py:86:draw", "13.0 in _distributions.py:86:draw",  # a host draw: 2 s
        "13.5 out _distributions.py:86:draw", "16.5 in _distributions.py:86:draw",  # another: 3 s
        "17.0 out _candidate.py:333:_evaluate", "17.5 in _candidate.py:333:_evaluate",  # a yield: 0.5 s
        "18.0 want cuda.py:200:time", "18.1 alone cuda.py:200:time", "19.0 in cuda.py:200:time",
        "19.5 end _worker.py:359:run_job", ""]), encoding="utf-8")
    rows = _lock_trace_script().summarise(traces, top=5)["outside"]
    assert rows[0] == {"kind": "candidate:verified", "step": "_distributions.py:86:draw -> _distributions.py:86:draw",
                       "times": 2, "seconds": 5.0}
    assert rows[1]["step"] == "_candidate.py:333:_evaluate -> _candidate.py:333:_evaluate" and rows[1]["seconds"] == 0.5


def _held_by_another(lock: Path) -> bool:
    """Whether some holder of the lock keeps a timing out: an exclusive try on a descriptor of its own fails."""
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.parametrize("let_go", [True, False])
def test_a_compile_baseline_lets_go_of_the_device_while_dynamo_compiles(lock, let_go):
    """A compile baseline's first call compiles (host work, from the prepare stage's caches) with the device let go,
    so a waiting timing goes on meanwhile; the device is held shared again before the compiled code runs, and once
    the call is over. Without the context the compilation holds the device throughout, as it did before."""
    import torch

    from evaluations.protocols.verified._compiling import device_let_go_while_compiling

    seen: list[bool] = []

    def backend(gm, example_inputs):  # runs while Dynamo compiles the frame
        seen.append(_held_by_another(lock))
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.relu(x) * 2, backend=backend)
    with gpulock.shared("baseline:verified:compile"):
        assert _held_by_another(lock)
        with device_let_go_while_compiling() if let_go else contextlib.nullcontext():
            out = compiled(torch.arange(-2.0, 2.0))
            held_after_the_call = _held_by_another(lock)
        assert _held_by_another(lock)
    assert out.tolist() == [0.0, 0.0, 0.0, 2.0]
    assert seen == [not let_go]  # compiled once: let go while compiling, or held throughout without the context
    assert held_after_the_call
    assert not _held_by_another(lock)
