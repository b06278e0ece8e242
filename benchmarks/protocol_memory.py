"""How much memory one evaluation takes beside its problem's own data, per protocol.

A worker that holds many times its problem's inputs and outputs takes the device from every other evaluation
sharing it: on the H200 one ReLU of KernelBench's 6.4 GB input held 115 GiB, so the evaluations of such problems
could not run beside each other. This benchmark evaluates one candidate (``torch.relu`` of a large input, and a
matrix product whose 8 MB of inputs make a large output, as KernelBench's L1/9 does) with ``kverdict eval``, once
per protocol, and prints the peak resident size of the largest process the run started (a worker: the
candidate's, its judge's, a baseline's) as a multiple of one call's bytes (its inputs and its output).

On the CPU, resident memory stands for the device's: the same tensors are made and let go, without the CUDA
allocator's cache. On CUDA (``--device cuda``) the figure is device memory: the most that any one process held on
the GPU, sampled through NVML every 0.1 s while the run goes (its CUDA context and the allocator's cache
included, which is what the device must have room for), and below each run's row the peak of each kind of job
(candidate, judge, baseline by kind, memory; each worker's job read from its lock trace): the figures that the
runner's admission by memory estimates (``FOOTPRINT_FACTOR`` in ``evaluations/run/_admission.py``).

    python3 benchmarks/protocol_memory.py [--mib 256] [--protocols standard,verified] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBLEMS = {
    "1_relu": ("x = torch.relu(x)", "[torch.randn({n})]", lambda n: 2 * 4 * n),
    "2_outer": ("x = torch.matmul(a, b)", "[torch.rand({m}, 32), torch.rand(32, {m})]", lambda m: 4 * (m * m + 64 * m)),
}
"""Problem -> (its forward's body, its inputs by size, one call's bytes by size)."""


def _sizes(mib: int) -> dict[str, int]:
    """The size parameter of each problem that makes one call hold about ``mib`` MiB."""
    n = mib * 2**20 // 8  # relu: input and output, float32
    m = int((mib * 2**20 / 4) ** 0.5)  # outer: an m x m float32 output
    return {"1_relu": n, "2_outer": m}


def _write(folder: Path, mib: int) -> dict[str, int]:
    """Problems and candidates of the two kinds in ``folder``; returns one call's bytes of each."""
    (folder / "problems").mkdir(parents=True)
    (folder / "candidates").mkdir()
    call_bytes = {}
    for (name, (body, inputs, nbytes)), size in zip(PROBLEMS.items(), _sizes(mib).values(), strict=True):
        args = "a, b" if "matmul" in body else "x"
        get = inputs.format(n=size, m=size)
        source = textwrap.dedent(f"""\
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, {args}):
                    {body}
                    return x

            def get_inputs():
                return {get}

            def get_init_inputs():
                return []
            """)
        (folder / "problems" / f"{name}.py").write_text(source, encoding="utf-8")
        (folder / "candidates" / f"{name}.py").write_text(source.replace("class Model(", "class ModelNew("),
                                                          encoding="utf-8")
        call_bytes[name] = nbytes(size)
    return call_bytes


class _DevicePeak:
    """The most device memory any one process held while it runs, read through NVML on a thread."""

    def __init__(self) -> None:
        import pynvml

        pynvml.nvmlInit()
        self._nvml, self._handle = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        self.peak, self._stop = 0, threading.Event()
        self.by_pid: dict[int, int] = {}
        """Peak device bytes of each process of the run, by pid (NVML's pids: the workers' own where the run's
        processes see the host's pid space, as on the device machine)."""
        self.before = {p.pid: int(p.usedGpuMemory or 0) for p in self._processes()}
        """Processes on the device before the run (another job's): not counted, and named in the output."""
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _processes(self) -> list:
        return self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handle)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            for proc in self._processes():
                if proc.pid not in self.before:
                    used = int(proc.usedGpuMemory or 0)
                    self.peak = max(self.peak, used)
                    self.by_pid[proc.pid] = max(self.by_pid.get(proc.pid, 0), used)

    def __enter__(self) -> _DevicePeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(2)


def by_job(trace: Path, by_pid: dict[int, int]) -> dict[str, int]:
    """Peak device bytes by kind of job (``candidate:standard``, ``baseline:verified:compile``, ...): each worker's
    kind from its lock trace (``trace-<pid>.txt``, its first line naming its job), its peak from ``by_pid``."""
    from lock_trace import job_kind  # benchmarks/lock_trace.py, beside this script

    out: dict[str, int] = {}
    for path in trace.glob("trace-*.txt"):
        pid = int(path.stem.split("-")[-1])
        first = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].split(" ", 2)
        if pid in by_pid and len(first) == 3:
            kind = job_kind(first[2])
            out[kind] = max(out.get(kind, 0), by_pid[pid])
    return out


def _peak_of_run(folder: Path, name: str, protocol: str, device: str, call_bytes: int) -> tuple[int, int]:
    """(peak bytes of the largest process of one ``kverdict eval`` run: resident on the CPU, on the GPU its device
    memory; the run's exit status). A run that fails has its error output's last lines printed. On the GPU the run's
    workers share a GPU lock and trace their use of it, which names each one's job: the peak of each kind of job is
    printed below the run's row."""
    script = textwrap.dedent(f"""\
        import resource, subprocess, sys
        rc = subprocess.call([sys.executable, "-m", "evaluations.cli", "eval", "--problems", {str(folder / 'problems')!r},
                              "--candidates", {str(folder / 'candidates')!r}, "--only", {name!r},
                              "--protocol", {protocol!r}, "--device", {device!r}, "--out", {str(folder / 'records')!r},
                              "--build-dir", {str(folder / 'build')!r}, "--model", "bench", "--no-progress"],
                             stdout=subprocess.DEVNULL, stderr=open({str(folder / 'eval.err')!r}, "w"))
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, rc)
        """)
    # the repository first, then whatever the caller's path holds (the packages a device machine was given)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    trace = folder / f"trace-{name}-{protocol}"
    if device == "cuda":
        (folder / "lock").mkdir(exist_ok=True)
        trace.mkdir()
        env.update(KVERDICT_GPU_LOCK=str(folder / "lock" / "gpu.lock"), KVERDICT_GPU_TRACE=str(trace))
    run = lambda: subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,  # noqa: E731
                                 check=True, env=env)
    if device != "cuda":
        peak, rc = (int(v) for v in run().stdout.split())
    else:
        with _DevicePeak() as watch:
            rc = int(run().stdout.split()[1])
        peak = watch.peak
        if watch.before:  # printed above the run's row
            print(f"  (not counted: {len(watch.before)} process(es) on the device before this run, "
                  f"{sum(watch.before.values()) / 2**20:.0f} MiB)")
        jobs = by_job(trace, watch.by_pid)
        for kind, held in sorted(jobs.items()):  # printed above the run's row, with the row's name
            print(f"  {name} {protocol}: {kind:<32} {held / 2**20:9.0f} M {held / call_bytes:6.1f} x call")
        if not jobs:
            print(f"  {name} {protocol}: no worker's pid among NVML's processes: no figure by job")
    if rc:
        err = (folder / "eval.err").read_text(encoding="utf-8", errors="replace").strip().splitlines()
        print("  eval failed:\n" + "\n".join(f"    {line}" for line in err[-12:]))
    return peak, rc


def _idle_worker_bytes() -> int:
    """Resident size of a Python process that imported torch and nothing more: the floor under every worker."""
    out = subprocess.run([sys.executable, "-c", "import resource, torch; "
                          "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=256, help="one call's inputs and output, about (default 256)")
    p.add_argument("--protocols", default="standard,verified")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    floor = _idle_worker_bytes() if args.device != "cuda" else 0
    print(f"one call about {args.mib} MiB on {args.device}; " + (f"a worker with torch imported holds {floor / 2**20:.0f} "
          "MiB before any of it" if floor else "device memory per process, its CUDA context included"))
    print(f"{'problem':<10} {'protocol':<9} {'one call':>9} {'largest process':>16} {'beyond torch':>13} {'x call':>7}")
    for protocol in args.protocols.split(","):
        with tempfile.TemporaryDirectory(prefix="kv-mem-") as tmp:
            call_bytes = _write(Path(tmp), args.mib)
            for name, nbytes in call_bytes.items():
                peak, rc = _peak_of_run(Path(tmp), name, protocol, args.device, nbytes)
                beyond = max(0, peak - floor)
                print(f"{name:<10} {protocol:<9} {nbytes / 2**20:7.0f} M {peak / 2**20:14.0f} M {beyond / 2**20:11.0f} M "
                      f"{beyond / nbytes:7.1f}" + (f"  (eval exited {rc})" if rc else ""))


if __name__ == "__main__":
    main()
