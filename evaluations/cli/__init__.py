"""``kverdict``: the command line. Each command is a thin layer over library functions.

Each command is a module of this package (``eval``, ``validate``, ``audit``, ``reproduce``) exposing
``register(subparsers)``; heavy imports (torch) happen inside the command, so ``kverdict validate`` works
without torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..worker import watching

COMMAND_MODULES = ("eval", "validate", "audit", "reproduce")
"""Modules of this package that register subcommands, in help order."""

RUNNER_MODULES = ("torch", "numpy")
"""What the runner extra brings: a command that needs one of them says how to install it."""


class UserError(Exception):
    """A mistake in how the command was called; printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available command registered."""
    parser = argparse.ArgumentParser(
        prog="kverdict",
        description="Evaluate candidate GPU kernels under the standard and verified protocols, "
        "check record files, and audit problem suites.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kverdict`` console script."""
    with watching():  # first, before any thread starts: see _confine.watching
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"kverdict {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if exc.name not in RUNNER_MODULES:
            raise
        print(f"kverdict {args.command}: error: this command needs {exc.name}, which is not installed; "
              "install the runner extra: pip install 'kernelverdict[runner]' (or pip install -e '.[runner]' "
              "in a checkout)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"kverdict {args.command}: interrupted; finished records are kept, re-run to resume", file=sys.stderr)
        return 130

