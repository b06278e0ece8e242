"""``kverdict``: the command line. Each command is a thin layer over library functions.

Commands live in ``_cmd_*.py`` modules, each exposing ``register(subparsers)``; heavy imports (torch)
happen inside the command, so ``kverdict validate`` works without torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import _confine

COMMAND_MODULES = ("_cmd_eval", "_cmd_validate", "_cmd_audit", "_cmd_reproduce")
"""Modules under ``evaluations`` that register subcommands, in help order."""


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
        try:
            module = importlib.import_module(f"evaluations.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"evaluations.{name}":
                continue  # command not part of this build
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kverdict`` console script."""
    with _confine.watching():  # first, before any thread starts: see _confine.watching
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"kverdict {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"kverdict {args.command}: interrupted; finished records are kept, re-run to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # Run through the imported module so ``UserError`` is the class command modules raise.
    from evaluations.cli import main as _main

    sys.exit(_main())
