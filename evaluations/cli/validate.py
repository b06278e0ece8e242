"""``kverdict validate``: check record files before they are merged (no torch needed)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``validate`` command."""
    p = subparsers.add_parser(
        "validate",
        help="check record files: schema, layout, duplicates, consistency, limits",
        description="Check record files: schema, path layout, duplicates and conflicts, speedups against "
        "their times, status against its evidence, protocol and environment, source references, size "
        "and string limits, strict JSON and types, pinned protocol parameters, name collisions, paths inside "
        "the repository, and the benchmark rows the site reads. Prints one line per problem, "
        "'path: field: reason' (control characters escaped), and exits 1 if any.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="record files or folders to check (default: every file under --root)")
    p.add_argument("--root", default=None, metavar="DIR",
                   help="the records folder that paths are laid out under (default: the nearest folder holding "
                        "PATH that has a MANIFEST.sha256, else records)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the findings as one JSON object")
    out.add_argument("--github", action="store_true",
                     help="print the findings as GitHub Actions error annotations")
    p.set_defaults(func=run)


def records_root(path: Path) -> Path:
    """The records folder ``path`` lies in: the nearest folder at or above it with a manifest (else ``records``),
    so ``kverdict validate /elsewhere/records`` checks that folder's layout and manifest as its own."""
    from schemas import MANIFEST_RELPATH

    resolved = path.resolve()
    return next((f for f in (resolved, *resolved.parents) if (f / MANIFEST_RELPATH).is_file()), Path("records"))


def run(args: argparse.Namespace) -> int:
    """Validate and report; exit status 1 when anything was found."""
    from schemas import iter_record_files, printable, validate

    from . import UserError

    given = [Path(p) for p in args.paths]
    root = Path(args.root) if args.root is not None else records_root(given[0]) if given else Path("records")
    if not given and not root.exists():
        print(f"{printable(str(root))}: no records folder, nothing to check")
        return 0
    paths = given or [root]
    missing = [str(p) for p in paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise UserError(f"no such file or folder: {printable(missing[0])}")
    checked = sum(1 for _ in iter_record_files(paths))
    findings = validate(paths, root=root)
    if args.json:
        print(json.dumps({"ok": not findings, "files_checked": checked,
                          "findings": [f.as_dict() for f in findings]}, indent=2))
    else:
        for f in findings:
            if args.github:
                print(f"::error file={_escape(f.path)},title={_escape(f.field)}::{_escape(f.reason, prop=False)}")
            else:
                print(f)
        print(f"{checked} file(s) checked, {len(findings)} problem(s) found")
    return 1 if findings else 0


def _escape(text: str, prop: bool = True) -> str:
    """Escape a GitHub Actions workflow-command value (properties also escape ':' and ','); the finding's
    text is already printable, so no line break or command of its own reaches the log."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text
