"""``kverdict audit``: flag degenerate problems of a suite and write its audit report."""

from __future__ import annotations

import argparse
import fnmatch
from pathlib import Path
from typing import Any

from . import UserError


def register(subparsers: Any) -> None:
    """Add the ``audit`` command."""
    p = subparsers.add_parser(
        "audit", help="flag degenerate problems of a suite (zero, constant or input-ignoring outputs, ...)",
        description="Run every reference of a suite, each in a worker process with a deadline, and flag problems "
        "that cannot measure a kernel: output zero, constant or within atol of zero for all inputs, output that "
        "ignores an input or the weights, nondeterministic references, and (on a GPU) problems so small that "
        "launch overhead sets their time. Writes records/_audits/<hardware>/<suite>.json; the site excludes "
        "flagged problems from its aggregates and shows why.")
    p.add_argument("--problems", metavar="PATH", required=True,
                   help="folder of KernelBench-format problems, a KernelBench checkout, or a JSON-lines bundle")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto", help="where to run (default: auto)")
    p.add_argument("--out", metavar="FILE", help="report path (default: records/_audits/<hardware>/<suite>.json)")
    p.add_argument("--hardware", metavar="SLUG", help="hardware slug of the report (default: from the device)")
    p.add_argument("--suite", metavar="NAME", help="suite name for a folder of problems (default: its meta.json or folder name)")
    p.add_argument("--only", metavar="PATTERNS", help="comma-separated shell patterns; audit only problems whose "
                   "name, file name or key (suite/level/id) matches one")
    p.add_argument("--draws", metavar="N", type=int, default=3, help="input draws per problem (default: 3)")
    p.add_argument("--timeout", metavar="S", type=float, default=300.0, help="deadline per problem, seconds (default: 300)")
    p.add_argument("--log", metavar="FILE", default=".kv-cache/audit-worker.log", help="where references' own output goes")
    p.add_argument("--no-progress", action="store_true", help="do not show the progress bar")
    p.set_defaults(func=run_command)


def _selected(problems: list[Any], only: str | None) -> list[Any]:
    if not only:
        return problems
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    return [p for p in problems
            if any(fnmatch.fnmatchcase(n, pat) for pat in patterns for n in (p.name, p.file_name or "", p.key))]


def run_command(args: argparse.Namespace) -> int:
    """Audit the problems, write the report, print a one-line summary per flagged problem."""
    from .. import LoadError, hardware_slug, load_problems, resolve_device
    from ..audit import AuditOptions, audit_problems, build_report, default_report_path, write_report

    if args.draws < 2:
        raise UserError(f"--draws must be at least 2, got {args.draws}")
    try:
        problems = _selected(load_problems(args.problems, suite=args.suite), args.only)
        device = resolve_device(args.device)
    except (LoadError, RuntimeError) as exc:
        raise UserError(str(exc)) from None
    if not problems:
        raise UserError(f"no problems to audit in {args.problems}" + (f" matching {args.only!r}" if args.only else ""))
    hardware = args.hardware or _hardware(device, hardware_slug)
    Path(args.log).parent.mkdir(parents=True, exist_ok=True)
    options = AuditOptions(device=device, draws=args.draws, timeout_s=args.timeout, log_path=args.log)
    if args.no_progress:
        entries = audit_problems(problems, options)
    else:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(f"auditing {len(problems)} problems on {device}", total=len(problems))
            entries = audit_problems(problems, options, on_done=lambda _: progress.advance(task))
    suite = problems[0].suite
    report = build_report(entries, suite=suite, source=str(args.problems), hardware=hardware, device=device, options=options)
    out = Path(args.out) if args.out else default_report_path(hardware, suite)
    write_report(report, out)
    for entry in report.problems:
        if entry.findings:
            mark = "EXCLUDED" if entry.excluded else "warning "
            codes = ", ".join(sorted({f.code for f in entry.findings}))
            print(f"{mark} {entry.key} {entry.name}: {codes}")
    print(f"audited {len(entries)} problems on {report.device_name}: {len(report.excluded)} excluded; report: {out}")
    return 0


def _hardware(device: str, hardware_slug: Any) -> str:
    if device == "cpu":
        return "cpu"
    import torch

    return hardware_slug(torch.cuda.get_device_name(0), device)
