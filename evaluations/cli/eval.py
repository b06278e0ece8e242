"""``kverdict eval``: evaluate candidate kernels and write one record per candidate and protocol."""

from __future__ import annotations

import argparse
import fnmatch
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import UserError

PROTOCOL_CHOICES = ("standard", "verified", "both")


def register(subparsers: Any) -> None:
    """Add the ``eval`` command."""
    p = subparsers.add_parser(
        "eval", help="evaluate candidate kernels and write records",
        description="Evaluate candidate kernels against their problems, each in its own process, and write one "
        "record per (model, sample, problem, protocol, hardware) under --out. Re-running the same command "
        "skips records already written; exit status 0 means the run completed, whatever the candidates' statuses.")
    p.add_argument("--problems", metavar="PATH", help="folder of KernelBench-format problems, a KernelBench "
                   "checkout, or a JSON-lines bundle (optional when --candidates is a bundle)")
    p.add_argument("--candidates", metavar="PATH", required=True, help="folder of candidates (NAME.py or "
                   "NAME__LABEL.py solves problem NAME.py) or a JSON-lines bundle of problems and kernels")
    p.add_argument("--model", metavar="NAME", help="model that wrote the candidates (a known bundle has a default)")
    p.add_argument("--provider", metavar="TEXT", help="who released the model, or the dataset's source")
    p.add_argument("--protocol", choices=PROTOCOL_CHOICES, default="standard", help="protocol(s) to run (default: standard)")
    p.add_argument("--out", metavar="DIR", default="records", help="records folder (default: records)")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto", help="where to run (default: auto)")
    p.add_argument("--timeout", metavar="S", type=float, default=300.0, help="deadline per candidate or baseline, seconds (default: 300)")
    p.add_argument("--jobs", metavar="N", type=int, default=os.cpu_count() or 1,
                   help="parallel extension builds before timing (default: CPU count)")
    p.add_argument("--only", metavar="PATTERN", help="evaluate only problems whose name, file name or key "
                   "(suite/level/id) matches this shell pattern, or one of several separated by commas")
    p.add_argument("--suite", metavar="NAME", help="suite name for a folder of problems (default: its meta.json or folder name)")
    p.add_argument("--build-dir", metavar="DIR", default=".kv-cache/build", help="extension build cache and worker logs (default: .kv-cache/build)")
    p.add_argument("--build-timeout", metavar="S", type=float, default=900.0, help="deadline of one candidate's extension build, seconds (default: 900)")
    p.add_argument("--source-url", metavar="URL", help="public repository of a bundle (overrides the known-bundle table)")
    p.add_argument("--source-commit", metavar="SHA", help="commit of --source-url holding the bundle")
    p.add_argument("--source-path", metavar="PATH", help="path of the bundle inside --source-url")
    p.add_argument("--trials", metavar="N", type=int, help="fewer correctness trials than the protocol's: standard, its "
                   "first N seeds (at most 5); verified, N fresh seeds per hidden distribution (at most 3); recorded in "
                   "each record")
    p.add_argument("--warmup-calls", metavar="N", type=int, help="override the protocol's warm-up calls (verified: at "
                   "least N calls, beside its warm-up time); recorded in each record")
    p.add_argument("--timed-calls", metavar="N", type=int, help="override the protocol's timed calls (verified: the "
                   "fewest before its confidence target may stop the timing); recorded in each record")
    p.add_argument("--concurrent", metavar="N", type=int, default=1,
                   help="CUDA only: evaluations in flight at once on the one GPU; each timing holds the GPU alone "
                   "while the others load, check and wait (default: 1)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where evaluations run: 'local' runs one lane per GPU of this host (see --lanes); 'ray' runs each "
                   "problem as a task of one GPU on the Ray cluster at --address, records written here (default: local)")
    p.add_argument("--lanes", metavar="N", type=int, help="local executor: lanes, each a process with one GPU of its "
                   "own (default: every visible GPU); on the CPU each lane keeps to its own share of the cores (default: 1)")
    p.add_argument("--address", metavar="ADDR", default="auto", help="--executor ray: the cluster's address (HOST:PORT, "
                   "ray://HOST:PORT, 'auto' for the one this machine joined, 'local' to start one here; default: auto)")
    p.add_argument("--cpus-per-task", metavar="N", type=int, default=1,
                   help="--executor ray: CPUs each task asks for, beside its GPU on CUDA (default: 1)")
    p.add_argument("--in-turns", action="store_true", help="verified protocol: time every candidate in turns with fresh "
                   "timings of its problem's baselines, each in its own worker, a batch of samples a turn (default: only for a "
                   "problem whose eager baseline is host-bound and timed as eager calls)")
    p.add_argument("--no-progress", action="store_true", help="do not show the progress bar")
    p.add_argument("--stats-json", metavar="PATH", help="write the run's phase spans, per-job wall times and GPU busy "
                   "samples to this JSON file (benchmarks/throughput.py reads it)")
    p.add_argument("--prewarm", action="store_true", help="on CUDA, keep a spare worker importing torch ahead of the "
                   "next isolated call to save start-up time (each worker still serves one job; on by default with "
                   "--concurrent above 1, where one spare per evaluation in flight is kept)")
    p.set_defaults(func=run_command)


def _overrides(args: argparse.Namespace, protocols: tuple[str, ...]) -> Any:
    """The counts given on the command line, typed (each protocol applies every one), or a one-line error."""
    from ..core import Overrides
    from ..run import trials_limit

    try:
        overrides = Overrides(trials=args.trials, warmup_calls=args.warmup_calls, timed_calls=args.timed_calls)
    except ValueError as exc:
        name = str(exc).split()[0]
        raise UserError(f"--{name.replace('_', '-')}: {str(exc).removeprefix(name + ' ')}") from None
    for name in protocols:
        if overrides.trials is not None and overrides.trials > trials_limit(name):
            raise UserError(f"--trials {overrides.trials}: the {name} protocol runs at most {trials_limit(name)}"
                            + (" per hidden distribution" if name == "verified" else ""))
    return overrides


def only_matches(patterns: str, problem: Any) -> bool:
    """Whether the problem's name, file name or key matches one of the comma-separated shell patterns."""
    names = (problem.name, problem.file_name or "", problem.key)
    return any(fnmatch.fnmatchcase(n, pattern.strip()) for pattern in patterns.split(",") if pattern.strip()
               for n in names)


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt so a killed run stops its worker and keeps finished records."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(args: argparse.Namespace) -> int:
    """Load inputs, run the evaluation, print the summary."""
    from .. import Loaded, LoadError, SourceOverride, load_inputs
    from ..protocols import ProtocolUnavailable, get_protocol

    protocols = ("standard", "verified") if args.protocol == "both" else (args.protocol,)
    try:
        for name in protocols:
            get_protocol(name)
    except ProtocolUnavailable as exc:
        raise UserError(str(exc)) from None
    if args.timeout <= 0 or args.jobs < 1 or args.concurrent < 1 or args.cpus_per_task < 1 or (args.lanes or 1) < 1:
        raise UserError("--timeout, --jobs, --concurrent, --lanes and --cpus-per-task must be positive")
    if args.executor == "ray" and args.lanes is not None:
        raise UserError("--lanes is for --executor local; a Ray cluster runs one task per GPU it has")
    if args.source_url and not args.source_commit:
        raise UserError("--source-url needs --source-commit")
    if args.candidates and not Path(args.candidates).exists():
        raise UserError(f"{args.candidates}: no such file or folder")
    override = SourceOverride(url=args.source_url, commit=args.source_commit, path=args.source_path)
    try:
        loaded = load_inputs(args.problems, args.candidates, model=args.model, provider=args.provider,
                             suite=args.suite, override=override)
    except LoadError as exc:
        raise UserError(str(exc)) from None
    if args.only:
        keep = {p.key for p in loaded.problems if only_matches(args.only, p)}
        loaded = Loaded([p for p in loaded.problems if p.key in keep],
                        [c for c in loaded.candidates if c.problem_key in keep])
        if not loaded.candidates:
            raise UserError(f"--only {args.only!r} matches no problem with a candidate")
    return _evaluate(args, loaded, protocols, _overrides(args, protocols))


def _evaluate(args: argparse.Namespace, loaded: Any, protocols: tuple[str, ...], overrides: Any) -> int:
    from .. import resolve_device
    from ..run import RunConfig, RunSummary, default_prewarm, write_stats

    try:
        device = resolve_device(args.device)
    except RuntimeError as exc:
        raise UserError(str(exc)) from None
    if args.concurrent > 1 and device != "cuda":
        raise UserError("--concurrent above 1 needs --device cuda: host-clock timings on the CPU would share its cores")
    config = RunConfig(out_dir=Path(args.out), protocols=protocols, device=device, timeout_s=args.timeout,
                       jobs=args.jobs, build_dir=Path(args.build_dir), build_timeout_s=args.build_timeout,
                       overrides=overrides, progress=not args.no_progress,
                       prewarm=default_prewarm(device, args.prewarm, args.concurrent), concurrent=args.concurrent,
                       in_turns=args.in_turns)
    execute = _executor(args, config, device)
    print(confinement_line(), file=sys.stderr)
    summary = RunSummary()
    try:
        with _sigterm_interrupts():
            execute(loaded, summary)
    finally:  # an interrupted run's figures are kept too
        if args.stats_json:
            write_stats(Path(args.stats_json), summary)
    print_summary(summary, protocols)
    return 1 if summary.lost else 0


def _executor(args: argparse.Namespace, config: Any, device: str) -> Any:
    """What runs the evaluations, as ``execute(loaded, summary)``: in this process, on lanes, or on Ray."""
    from .. import capture_environment
    from ..executors import LocalExecutor, RayExecutor, RayUnavailable, lanes_for
    from ..run import run

    if args.executor == "ray":
        executor = RayExecutor(config, args.address, args.cpus_per_task)

        def on_ray(loaded: Any, summary: Any) -> None:
            try:
                executor.run(loaded, summary)
            except RayUnavailable as exc:
                raise UserError(str(exc)) from None
            print(f"ran on the Ray cluster at {args.address}: "
                  + ", ".join(f"{host} {n} problems" for host, n in sorted(executor.hosts.items())), file=sys.stderr)
        return on_ray
    try:
        lanes = lanes_for(device, args.lanes)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.lanes is None and len(lanes) == 1:  # one GPU and no lanes asked for: in this process, as always
        return lambda loaded, summary: run(loaded, config, capture_environment(device), summary)
    local = LocalExecutor(config, lanes)
    if args.stats_json:
        local.stats_dir = Path(args.stats_json).with_suffix("").with_name(Path(args.stats_json).stem + "-lanes")
    print(f"kverdict eval: {len(lanes)} lanes: " + "; ".join(lane.name for lane in lanes), file=sys.stderr)
    return lambda loaded, summary: local.run(loaded, capture_environment(device), summary)


def confinement_line() -> str:
    """How candidate workers' writes are confined on this machine, for the start of a run."""
    from ..worker import landlock, unconfined_reason

    why = unconfined_reason()
    if why:
        return f"kverdict eval: candidate workers may write anywhere this user can: {why}"
    return (f"kverdict eval: candidate workers write only their own temporary, build and evidence folders "
            f"(Landlock ABI {landlock.abi()})")


def phase_lines(summary: Any) -> list[str]:
    """One line per phase: jobs, wall seconds in progress, worker-seconds (and how many of them its workers
    waited for the shared GPU lock, and its jobs for room on the device), GPU busy share over its span."""
    lines = []
    for t in summary.phases.totals():
        busy = summary.gpu.share(t.first_s, t.last_s) if summary.gpu is not None else None
        lines.append(f"  {t.phase:<9} {t.jobs:>5} jobs  {t.wall_s:8.1f} s in progress  {t.worker_s:9.1f} worker-s"
                     + (f" ({t.waited_s:.1f} waiting for the GPU)" if t.waited_s > 0 else "")
                     + (f" ({t.admitted_s:.1f} waiting for device memory)" if t.admitted_s >= 0.05 else "")
                     + (f"  GPU busy {busy:.0%}" if busy is not None else ""))
    if summary.gpu is not None:
        whole = summary.gpu.share()
        lines.append(f"  GPU busy over the run: {whole:.0%}" if whole is not None
                     else f"  GPU busy share not measured: {summary.gpu.unavailable or 'no samples'}")
    return ["phases (wall time; phases overlap when several jobs run at once):", *lines] if lines else []


def print_summary(summary: Any, protocols: tuple[str, ...]) -> None:
    """A table of status counts and the geometric-mean speedup of correct candidates, per protocol."""
    from schemas import STATUSES

    rows = []
    for name in protocols:
        counts = summary.status_counts(name)
        geomean = summary.geomean_speedup(name)
        rows.append([name, *(str(counts.get(s, 0)) for s in STATUSES), f"{geomean:.3f}x" if geomean else "-"])
    header = ["protocol", *STATUSES, "geomean speedup (correct)"]
    lines = [f"{len(summary.written)} records written, {len(summary.skipped)} already finished (skipped)"]
    lines += [f"baseline failed (without an eager one a problem's candidates are not evaluated; without another, they "
              f"have no speedup against it): {key}: {reason}"
              for key, reason in sorted(summary.reference_failures.items())]
    lines += [f"changed since its run wrote it (digest differs from the manifest), redone: {path}"
              for path in summary.tampered]
    lines += [f"not finished, re-run to resume: {key}: {why}" for key, why in sorted(summary.lost.items())]
    lines += phase_lines(summary)
    from rich.console import Console
    from rich.table import Table

    table = Table(title="kverdict eval")
    for index, column in enumerate(header):
        table.add_column(column, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console = Console(width=None if sys.stdout.isatty() else 132)  # a log keeps whole column names
    console.print(table)
    for line in lines:
        console.print(line, markup=False, highlight=False)
