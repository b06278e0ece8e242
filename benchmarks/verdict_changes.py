"""How the verified verdicts of one dataset changed between two lanes of records (e.g. the committed H200 records
of an older verified version and a re-judging under the newest).

    python benchmarks/verdict_changes.py OLD_DIR NEW_DIR     # e.g. records/h200/cuda-l1/verified <new>/cuda-l1/verified

One line per problem that NEW_DIR holds (old status and failed checks -> new status, reason, failed checks and the
labels that explain a change: sets:<flag>, legacy-stream), then the counts of old and new statuses over those rows
and of the new incorrect records by reason.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import schemas  # noqa: E402


def _records(folder: Path) -> dict[tuple[str, int, int, int], schemas.Record]:
    found = {}
    for path in sorted(folder.rglob("*.json")):
        record = schemas.load_record(path)
        if isinstance(record, schemas.Record):
            p = record.problem
            found[(p.suite, p.level, p.id, record.model.sample)] = record
    return found


def _failed(record: schemas.Record) -> str:
    return ",".join(sorted(c.name for c in record.integrity if not c.passed)) or "-"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (_records(Path(a)) for a in argv)
    before, after, reasons = Counter(), Counter(), Counter()
    for key in sorted(new):
        rec, was = new[key], old.get(key)
        labels = [x for x in rec.labels if x.startswith("sets:") or x == "legacy-stream"]
        print(f"{key[0]}/{key[1]}/{key[2]} s{key[3]}  {rec.problem.name[:40]:40}  "
              f"{was.status if was else '-'} v{was.protocol.version if was else '-'} [{_failed(was) if was else '-'}] -> "
              f"{rec.status}{'/' + rec.reason if rec.reason else ''} v{rec.protocol.version} [{_failed(rec)}]"
              f"{'  ' + ','.join(labels) if labels else ''}")
        before[was.status if was else "none"] += 1
        after[rec.status] += 1
        if rec.reason:
            reasons[rec.reason] += 1
    print(f"{len(new)} records; before: {dict(before)}; after: {dict(after)}; incorrect by reason: {dict(reasons)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
