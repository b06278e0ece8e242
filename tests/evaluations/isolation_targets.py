"""Functions that worker-isolation tests run in a child process (importable by name, no torch)."""

from __future__ import annotations

import ctypes
import os
import sys
import time
from pathlib import Path


def double(x: int) -> int:
    print("doubling", x)
    os.write(2, b"from C level\n")
    return 2 * x


def fail(message: str) -> None:
    raise ValueError(message)


def segfault(_: object) -> None:
    ctypes.string_at(0)


def abort(_: object) -> None:
    os.abort()


def exit_early(code: int) -> None:
    sys.stdout.flush()
    os._exit(code)


def hang(_: object) -> None:
    while True:
        time.sleep(0.05)


def flood(_: object) -> None:
    line = b"x" * 4096 + b"\n"
    while True:
        os.write(1, line)



def _wait_for(path: str, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def hold_shared(args: tuple[str, str, str | None]) -> tuple[float, float]:
    """Touch ``dir/name.trying``, take the GPU lock shared, touch ``dir/name.held``, hold it until
    ``dir/release`` exists (when named), and return (start, end) of the hold on the monotonic clock."""
    from evaluations.worker import gpulock

    folder, name, release = args
    open(os.path.join(folder, f"{name}.trying"), "w").close()
    with gpulock.shared():
        start = time.monotonic()
        open(os.path.join(folder, f"{name}.held"), "w").close()
        if release:
            _wait_for(os.path.join(folder, release))
        return start, time.monotonic()


def wait_then_work(seconds: float) -> float:
    """Take the GPU lock shared (waiting as long as it is held), let go, then work ``seconds`` more:
    the seconds it waited, as the lock's own record of them said."""
    from evaluations.worker import gpulock

    with gpulock.shared():
        waited = float(gpulock._state["waited"])  # type: ignore[arg-type]
    time.sleep(seconds)  # the wait file is gone by now
    return waited


def time_exclusive(args: tuple[str, str, str | None] | tuple[str, str, str | None, float]) -> tuple[float, float, float]:
    """Hold the lock shared, touch ``dir/name.trying`` (and wait until the mark ``dir/<third argument>`` exists, where
    one is named, then the fourth argument's seconds), then take it alone for 0.3 s, touching ``dir/name.alone`` once
    alone: (start, end of the exclusive hold, seconds this worker waited for the lock)."""
    from evaluations.worker import gpulock

    folder, name, after, delay_s = (*args, 0.0)[:4]
    with gpulock.shared():
        open(os.path.join(folder, f"{name}.trying"), "w").close()
        while after is not None and not os.path.exists(os.path.join(folder, after)):
            time.sleep(0.002)
        time.sleep(delay_s)
        with gpulock.exclusive():
            start = time.monotonic()
            open(os.path.join(folder, f"{name}.alone"), "w").close()
            time.sleep(0.3)
            end = time.monotonic()
        return start, end, gpulock.waited_s(os.environ[gpulock.GPU_LOCK_ENV], os.getpid())


def signal_parent(_: object) -> int:
    """Send SIGINT to the runner, then return as if nothing happened."""
    import signal

    os.kill(os.getppid(), signal.SIGINT)
    return 1


def converse(questions: list[object]) -> list[object]:
    """Put each question to the parent (``_isolation.ask``) and return the answers (an error answer as its text)."""
    from evaluations.run import NoAnswer, ask

    answers: list[object] = []
    for q in questions:
        try:
            answers.append(ask(q))
        except NoAnswer as exc:
            answers.append(f"no answer: {exc}")
    return answers


class _RunsCode:
    """A pickle that, loaded with plain ``pickle``, would create the file named in it."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def send_code(marker: str) -> None:
    """Send the parent a result whose unpickling would run code (create ``marker``), then exit."""
    import gc
    import pickle
    from multiprocessing.connection import Connection

    for obj in gc.get_objects():
        if isinstance(obj, Connection) and not obj.closed and obj.writable:
            obj.send_bytes(pickle.dumps(("ok", _RunsCode(marker))))
            os._exit(0)


def send_junk(_: object) -> None:
    """Send the parent a message that is not a result tuple, then exit."""
    import gc
    from multiprocessing.connection import Connection

    for obj in gc.get_objects():
        if isinstance(obj, Connection) and not obj.closed and obj.writable:
            obj.send(12345)
            os._exit(0)


def hold_shared_in_steps(args: tuple[str, str, float] | tuple[str, str, float, float]) -> list[tuple[float, float]]:
    """Take the GPU lock shared for a job of ``seconds`` in steps of 50 ms (or the fourth argument's seconds),
    calling ``yield_to_timing`` between steps (touching ``dir/name.held`` once it holds the lock): the (start,
    end) of every step."""
    from evaluations.worker import gpulock

    folder, name, seconds, step_s = (*args, 0.05)[:4]
    steps: list[tuple[float, float]] = []
    with gpulock.shared():
        open(os.path.join(folder, f"{name}.held"), "w").close()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.monotonic()
            time.sleep(step_s)
            steps.append((start, time.monotonic()))
            gpulock.yield_to_timing()
    return steps


def _try_write(path: str, text: str = "x") -> str:
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except PermissionError:
        return "refused"
    return "written"


def confined_writes(args: tuple[object, list[str]]) -> dict[str, str]:
    """Confine this worker as a candidate's (``confine_writes``), then try to write each path, from this thread and
    from the parent-watch thread (which candidate code could reach through a patched function)."""
    import tempfile
    import threading

    from evaluations.worker import confine_writes, in_every_thread

    job, paths = args
    confine_writes(job)
    found = {path: _try_write(path) for path in paths}
    found["temporary file"] = _try_write(tempfile.mktemp())
    here = threading.current_thread()

    def from_watcher() -> None:
        if threading.current_thread() is not here:  # this thread has tried already
            found["watcher: " + paths[-1]] = _try_write(paths[-1])

    in_every_thread(from_watcher)
    found["a new thread's name"] = _name_a_new_thread()
    if os.environ.get("KVERDICT_GPU_LOCK"):  # a concurrent run's lock: taken shared, then alone, while confined
        from evaluations.worker import gpulock

        with gpulock.shared("confined"), gpulock.exclusive():
            found["the GPU lock"] = "held"
    runner = f"/proc/{os.getppid()}/oom_score_adj"  # its own value written back: harmless if it were let through
    found["the runner's /proc"] = _try_write(runner, Path(runner).read_text())
    return found


def _name_a_new_thread() -> str:
    """Name a thread started after confinement as CUDA's start-up does (glibc's ``pthread_setname_np`` from
    another thread writes ``/proc/self/task/<tid>/comm``)."""
    import threading

    ready, stop, tid = threading.Event(), threading.Event(), []
    thread = threading.Thread(target=lambda: (tid.append(threading.get_native_id()), ready.set(), stop.wait(10)))
    thread.start()
    ready.wait(10)
    try:
        return _try_write(f"/proc/self/task/{tid[0]}/comm", "cuda-named")
    finally:
        stop.set()
        thread.join()


def draw_on_cuda(seed: int) -> list[float]:
    """A verified trial's draw under ``seed`` on the GPU, as a candidate's worker and its judge each make it in their
    own process: a few of its values and its sums."""
    import torch

    from evaluations.protocols.verified import DISTRIBUTIONS, draw

    def get_inputs() -> list[object]:
        return [torch.randn(3, 1 << 20), torch.randint(0, 100, (4096,)), 0.5]

    x, idx, _ = draw(get_inputs, DISTRIBUTIONS[3], seed, torch.device("cuda"))
    assert x.is_cuda and idx.is_cuda
    return [*x.reshape(-1)[:4].tolist(), float(x.double().sum()), float(idx.sum())]
