"""Wall time of each phase of one evaluation, for a tiny problem, under both protocols.

Two views of the same work:

* the runner's view: every isolated process the runner starts for one candidate on a fresh output
  folder (baselines, the candidate, memory measurements) and the record writes, as the runner pays them;
* the worker's view: one extra candidate process and one baseline process per kind, started the way the
  runner starts them, with each phase inside them stamped (process start and interpreter, imports,
  problem and candidate import, model build, correctness trials, timing, result hand-back).

Usage (CPU here, CUDA where present; the problem is a 64x64 ReLU, so the figures are overhead):

    PYTHONPATH=. python benchmarks/runner_overhead.py [--device auto|cpu|cuda] [--protocols standard,verified]

Prints one table per protocol and writes ``$OUT/runner_overhead.json`` (``OUT`` defaults to ./.data/out).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (str(ROOT), str(Path(__file__).resolve().parent)):
    if _path not in sys.path:
        sys.path.insert(0, _path)  # spawned workers inherit sys.path: they import this module by name

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
'''
CANDIDATE = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
'''
TARGET = f"{Path(__file__).stem}:profiled_job"


# ---------------------------------------------------------------- inside a worker process


class _Stamps:
    """Named intervals measured inside the worker (wrapped functions add to them)."""

    def __init__(self) -> None:
        self.spans: dict[str, float] = {}
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}

    def wrap(self, owner: Any, attr: str, phase: str) -> None:
        original = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.time()
            try:
                return original(*args, **kwargs)
            finally:
                end = time.time()
                self.spans[phase] = self.spans.get(phase, 0.0) + end - start
                self.first.setdefault(phase, start)
                self.last[phase] = end

        setattr(owner, attr, timed)


def _instrument(stamps: _Stamps, protocol: str) -> None:
    if protocol == "standard":
        from evaluations.protocols import standard as m

        stamps.wrap(m, "load_problem", "problem import")
        stamps.wrap(m, "load_candidate", "candidate import")
        stamps.wrap(m, "_build", "model build")
        stamps.wrap(m, "_time", "timing")
        return
    from evaluations.protocols.verified import _candidate as c
    from evaluations.protocols.verified import _protocol as v

    for owner in (c, v):
        stamps.wrap(owner, "load_problem", "problem import")
    stamps.wrap(c, "load_candidate", "candidate import")
    stamps.wrap(c, "References", "model build")
    stamps.wrap(c, "trial", "correctness trials")
    stamps.wrap(c, "determinism", "correctness trials")
    stamps.wrap(c, "_timing", "timing")
    stamps.wrap(v, "time_calls", "timing")


def profiled_job(payload: tuple[Any, float]) -> dict[str, Any]:
    """Worker target: run ``evaluations.worker._worker.run_job`` with its phases stamped."""
    job, dispatched = payload
    entered = time.time()
    stamps = _Stamps()
    import torch  # noqa: F401  (first import in this process: its cost is the phase)

    imported_torch = time.time()
    from evaluations.protocols import get_protocol
    from evaluations.worker import _worker

    get_protocol(job.protocol)
    imported = time.time()
    _instrument(stamps, job.protocol)
    outcome = _worker.run_job(job)
    done = time.time()
    phases = {"process start + interpreter": entered - dispatched, "import torch": imported_torch - entered,
              "import runner + protocol": imported - imported_torch}
    phases.update(stamps.spans)
    work = done - imported
    if job.protocol == "standard" and job.candidate is not None and "timing" in stamps.first:
        built = stamps.last.get("model build", stamps.last.get("candidate import", imported))
        phases["correctness trials"] = stamps.first["timing"] - built
    phases["other (seeding, setup, checks)"] = max(0.0, work - sum(stamps.spans.values())
                                                  - phases.get("correctness trials", 0.0)
                                                  * (job.protocol == "standard"))
    return {"phases": phases, "status": getattr(outcome, "status", "baseline"), "finished": done}


# ---------------------------------------------------------------- in the benchmark process


@dataclass
class Report:
    """Figures of one protocol: the runner's processes and the worker's phases."""

    protocol: str
    runner: dict[str, float] = field(default_factory=dict)
    worker: dict[str, dict[str, float]] = field(default_factory=dict)


def _loaded(folder: Path) -> Any:
    from evaluations import Loaded
    from evaluations.core import Candidate, Origin, Problem

    problem = Problem(suite="overhead", level=1, id=1, name="tiny_relu", source=PROBLEM,
                      origin=Origin(path="benchmarks/runner_overhead.py"), file_name="1_tiny_relu.py")
    candidate = Candidate(problem_key=problem.key, model="overhead", sample=0, label="", source=CANDIDATE,
                          origin=Origin(path="benchmarks/runner_overhead.py"))
    return Loaded(problems=[problem], candidates=[candidate])


def _runner_view(protocol: str, device: str, work: Path, prewarm: bool | None) -> dict[str, float]:
    """Evaluate the candidate once through the runner on an empty output folder; time every step."""
    import schemas
    from evaluations import capture_environment, run
    from evaluations.run import _base

    calls: list[tuple[str, float]] = []
    original_isolated, original_write = _base.run_isolated, schemas.write_record

    def isolated(target: str, payload: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        try:
            return original_isolated(target, payload, **kwargs)
        finally:
            calls.append((Path(kwargs["log_path"]).stem, time.monotonic() - start))

    def write(path: Any, record: Any) -> None:
        start = time.monotonic()
        original_write(path, record)
        calls.append(("record write", time.monotonic() - start))

    _base.run_isolated, schemas.write_record = isolated, write
    try:
        config = run.RunConfig(out_dir=work / "out", protocols=(protocol,), device=device,
                               build_dir=work / "build", progress=False, prewarm=prewarm)
        start = time.monotonic()
        summary = run.run(_loaded(work), config, capture_environment(device))
        total = time.monotonic() - start
    finally:
        _base.run_isolated, schemas.write_record = original_isolated, original_write
    status = summary.records[0].status if summary.records else "no record"
    figures: dict[str, float] = {}
    for tag, wall in calls:
        name = tag if tag == "record write" else _process_name(tag)
        figures[name] = figures.get(name, 0.0) + wall
    figures["total (candidate status: " + status + ")"] = total
    return figures


def _process_name(tag: str) -> str:
    kind = tag.rsplit("-", 1)[-1] if tag.startswith(("baseline-", "mem-")) and "-" in tag else ""
    if tag.startswith("baseline-"):
        return f"baseline process {kind}"
    if tag.startswith("mem-"):
        return "memory process " + (kind if not kind.isalnum() or len(kind) < 16 else "candidate")
    if tag.startswith("eval-"):
        return "candidate process"
    return tag


def _worker_view(protocol: str, device: str, work: Path) -> dict[str, dict[str, float]]:
    """Run the candidate job and each baseline job once more in a worker with its phases stamped."""
    from evaluations.core import Job
    from evaluations.protocols import get_protocol
    from evaluations.worker import run_isolated

    loaded = _loaded(work)
    problem, candidate = loaded.problems[0], loaded.candidates[0]
    module = get_protocol(protocol)
    jobs = {"candidate": Job(problem=problem, protocol=protocol, device=device, candidate=candidate,
                             build_dir=str(work / "build"), options={})}
    for kind in module.BASELINE_KINDS:
        jobs[f"baseline {kind}"] = Job(problem=problem, protocol=protocol, device=device, baseline_kind=kind,
                                       build_dir=str(work / "build"), options={})
    views: dict[str, dict[str, float]] = {}
    for name, job in jobs.items():
        start = time.time()
        result = run_isolated(TARGET, (job, start), timeout_s=600, log_path=work / "logs" / f"{name}.log")
        end = time.time()
        if not result.ok:
            views[name] = {"failed: " + result.failure.message: end - start}
            continue
        phases = dict(result.value["phases"])
        phases["result hand-back + process exit"] = end - result.value["finished"]
        phases["process total"] = end - start
        views[name] = phases
    return views


def _print(report: Report, device: str) -> None:
    print(f"\n== {report.protocol} protocol on {device}: runner's view (seconds)")
    for name, value in report.runner.items():
        print(f"  {name:<52} {value:8.3f}")
    for name, phases in report.worker.items():
        print(f"-- worker's view: {name}")
        for phase, value in phases.items():
            print(f"  {phase:<52} {value:8.3f}")


def main(argv: list[str] | None = None) -> int:
    """Measure, print the tables and write the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to evaluate")
    parser.add_argument("--protocols", default="standard,verified", help="comma-separated protocols to measure")
    parser.add_argument("--prewarm", choices=("auto", "on", "off"), default="auto",
                        help="spare workers importing ahead (auto: the runner's default for the device)")
    parser.add_argument("--skip-worker-view", action="store_true", help="only the runner's view")
    args = parser.parse_args(argv)
    from evaluations import resolve_device

    device = resolve_device(args.device)
    out = Path(os.environ.get("OUT", "./.data/out"))
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    for protocol in args.protocols.split(","):
        with tempfile.TemporaryDirectory(prefix="kv-overhead-") as tmp:
            prewarm = None if args.prewarm == "auto" else args.prewarm == "on"
            report = Report(protocol, runner=_runner_view(protocol, device, Path(tmp), prewarm))
            if not args.skip_worker_view:
                report.worker = _worker_view(protocol, device, Path(tmp))
        _print(report, device)
        reports.append(report)
    (out / "runner_overhead.json").write_text(json.dumps(
        {"device": device, "reports": [vars(r) for r in reports]}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
