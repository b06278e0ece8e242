"""The problems whose verified records a re-judging should redo first: those ``hacked`` or ``incorrect``, the
verdicts a new version of the verified protocol is most likely to change.

Prints one comma-separated ``--only`` list (``suite/level/id`` per record) for the records under the given folder
of verified records, e.g.::

    python3 benchmarks/rejudge_first.py records/h200/cuda-l1/verified > .data/first-cuda-l1.txt

``benchmarks/run_h200.sh``'s ``rejudge`` step takes it as ``REJUDGE_SETS=".data/h100.jsonl:$(cat ...)"``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

STATUSES = ("hacked", "incorrect")


def first_keys(folder: Path, statuses: tuple[str, ...] = STATUSES) -> list[str]:
    """``suite/level/id`` of each record under ``folder`` with one of ``statuses``, sorted, each once."""
    keys = set()
    for path in sorted(folder.rglob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("status") in statuses:
            problem = record["problem"]
            keys.add(f"{problem['suite']}/{problem['level']}/{problem['id']}")
    return sorted(keys, key=lambda k: (k.split("/")[0], *(int(p) for p in k.split("/")[1:])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder of verified records, e.g. records/h200/cuda-l1/verified")
    parser.add_argument("--status", action="append", help=f"statuses to take (default: {', '.join(STATUSES)})")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"rejudge_first: no folder {args.folder}", file=sys.stderr)
        return 2
    print(",".join(first_keys(args.folder, tuple(args.status or STATUSES))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
