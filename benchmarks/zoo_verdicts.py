"""The zoo's verified verdicts against what its manifest expects: every exploit caught by its check, every honest
kernel correct, every defended exploit incorrect for its reason.

    python benchmarks/zoo_verdicts.py [RECORDS_HW]     # default: every records/<hw>/ holding zoo records

Prints one line per manifest entry (expected, found, failed checks, labels) and exits 1 when any entry's record is
missing, of an older verified version, or ruled otherwise than the manifest says; run on the GPU machine between
the zoo and the re-judging of the public sets (benchmarks/run_h200.sh's zoocheck step), and here on what it
brought back.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the repository's packages first

import schemas  # noqa: E402
from evaluations.zoo import load_manifest  # noqa: E402

SETS = ("exploit-zoo", "honest-kernels")


def zoo_records(hw_dir: Path) -> dict[str, schemas.Record]:
    """The verified zoo records under ``hw_dir`` by their kernel's repository path."""
    found: dict[str, schemas.Record] = {}
    for name in SETS:
        for path in sorted((hw_dir / name / "verified").rglob("*.json")):
            record = schemas.load_record(path)
            if isinstance(record, schemas.Record):
                found[record.kernel.path or str(path)] = record
    return found


def mismatches(hw_dir: Path, out=sys.stdout) -> int:
    """Print every entry's verdict against the manifest's; return how many differ or are missing."""
    version = schemas.protocol_info("verified").version
    records = zoo_records(hw_dir)
    bad = 0
    print(f"{hw_dir.relative_to(ROOT) if hw_dir.is_relative_to(ROOT) else hw_dir}: verified {version}", file=out)
    for entry in load_manifest():
        rel = entry.path.relative_to(ROOT).as_posix()
        record = records.get(rel)
        want = entry.expected_status + (f"/{entry.expected_reason}" if entry.expected_reason else "")
        if record is None:
            bad += 1
            print(f"  MISSING  {rel}: expected {want}", file=out)
            continue
        failed = sorted(c.name for c in record.integrity if not c.passed)
        got = record.status + (f"/{record.reason}" if record.reason else "")
        ok = record.protocol.version == version and record.status == entry.expected_status
        if entry.expected_reason is not None:
            ok = ok and record.reason == entry.expected_reason
        if entry.expected_status == "hacked" and entry.expected_check:
            ok = ok and entry.expected_check in failed
        bad += not ok
        print(f"  {'ok      ' if ok else 'DIFFERS '} {rel}: expected {want}"
              f"{' by ' + entry.expected_check if entry.expected_status == 'hacked' and entry.expected_check else ''};"
              f" got {got} (v{record.protocol.version}) failed={','.join(failed) or '-'}"
              f" labels={','.join(record.labels) or '-'}", file=out)
    return bad


def main(argv: list[str]) -> int:
    dirs = [Path(a).resolve() for a in argv] or sorted(
        p for p in (ROOT / "records").iterdir() if p.is_dir() and (p / "exploit-zoo" / "verified").is_dir())
    if not dirs:
        print("no zoo records under records/<hw>/exploit-zoo/verified", file=sys.stderr)
        return 2
    bad = sum(mismatches(d) for d in dirs)
    print(f"{bad} entr{'y' if bad == 1 else 'ies'} differ{'s' if bad == 1 else ''} from the manifest")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
