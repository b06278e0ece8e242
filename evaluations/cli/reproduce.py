"""``kverdict reproduce``: re-run committed records on this machine and write reproduction records."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``reproduce`` command."""
    p = subparsers.add_parser(
        "reproduce",
        help="re-run committed records' kernels and write reproduction records beside them",
        description="Re-run each record's kernel under its protocol on this machine (baselines measured "
        "afresh) and write a reproduction record next to the original (…__repro.json, with 'reproduces' "
        "naming the original). The kernel and problem sources are found from the record and must match its "
        "sha256. Prints whether each reproduction agrees with its original.",
    )
    p.add_argument("records", nargs="+", metavar="RECORD", help="record files to reproduce")
    p.add_argument("--out", metavar="DIR",
                   help="records folder to write into (default: the folder the original record lies in)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="where to run (default: cuda); cpu only reproduces records measured on the CPU")
    p.add_argument("--dataset-root", metavar="DIR", action="append", type=Path,
                   help="folder holding local copies of public datasets (repeatable; default: .data/datasets)")
    p.add_argument("--problems", metavar="PATH", action="append", type=Path, default=[],
                   help="extra problem folder, KernelBench checkout or JSON-lines bundle to find problems in "
                   "(repeatable; the suites in evaluations/problems and the exploit zoo's problems are always searched)")
    p.add_argument("--timeout", metavar="S", type=float, default=300.0,
                   help="deadline per candidate or baseline, seconds (default: 300)")
    p.add_argument("--build-dir", metavar="DIR", type=Path, default=Path(".kv-cache/build"),
                   help="extension build cache and worker logs (default: .kv-cache/build)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Reproduce each record in turn; a record that cannot be reproduced stops the command with one line."""
    from ..run import DEFAULT_DATASET_ROOTS, ReproduceError, reproduce

    if args.timeout <= 0:
        raise UserError("--timeout must be positive")
    for name in args.records:
        path = Path(name)
        if not path.is_file():
            raise UserError(f"{name}: no such record file")
        try:
            done = reproduce(path, out_dir=Path(args.out) if args.out else None, device=args.device,
                             dataset_roots=args.dataset_root or DEFAULT_DATASET_ROOTS, problem_roots=args.problems,
                             timeout_s=args.timeout, build_dir=args.build_dir)
        except ReproduceError as exc:
            raise UserError(f"{name}: {exc}") from None
        verdict = "agrees" if done.agreement.agrees else "DISAGREES"
        print(f"{_shown(done.written)}: {done.record.status}; {verdict}: {done.agreement.reason}")
    return 0


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
