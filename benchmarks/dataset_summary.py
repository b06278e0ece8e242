"""A records folder's summary per public dataset, as the site computes it: for the CHANGELOG's record of a set
judged (again), so that its figures are the records' and not copied by hand.

Prints, in Markdown, one row per dataset (hardware, suite, model) at level "all" from the site's claims table: its
kernels with a claim, the claimed speedup, the geometric means under the standard and the verified protocol (over
the kernels correct under each), fast_1 under each, and the verified records `hacked` (by failed check) and
`incorrect` (by reason); then the verified records of every model by protocol version, status and reason.

    python3 benchmarks/dataset_summary.py [RECORDS_DIR]   # default: records/

A re-judging's pending records are summed the same way once restored into a copy of ``records/``
(``pending_records.py restore HW --records COPY``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}×"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def summary_lines(records_dir: Path) -> list[str]:
    """The Markdown tables of ``records_dir``'s datasets and verdicts."""
    from generator import build_data

    agg = build_data(records_dir, ROOT).site.agg
    lines = ["| hardware | suite | model | kernels | claimed | standard | verified | fast_1 std | fast_1 ver "
             "| hacked (by check) | incorrect (by reason) |", "|" + " --- |" * 11]
    for r in agg.claims:
        if r["level"] != 0:
            continue
        hacked = f"{r['hacked']}" + (f" ({r['hacked_by']})" if r["hacked_by"] else "")
        incorrect = f"{r['incorrect']}" + (f" ({r['incorrect_by']})" if r["incorrect_by"] else "")
        lines.append(f"| {r['hardware']} | {r['suite']} | {r['model']} | {r['kernels']} | {_x(r['claimed_speedup'])} "
                     f"| {_x(r['std_speedup'])} ({r['std_correct']}/{r['std_run']}) "
                     f"| {_x(r['ver_speedup'])} ({r['ver_correct']}/{r['ver_run']}) "
                     f"| {_pct(r['std_fast_1'] if r['std_run'] else None)} "
                     f"| {_pct(r['ver_fast_1'] if r['ver_run'] else None)} | {hacked} | {incorrect} |")
    lines += ["", "| hardware | model | verified version | status | reason | records |", "|" + " --- |" * 6]
    lines += [f"| {r['hardware']} | {r['model']} | {r['protocol_version']} | {r['status']} | {r['reason'] or '–'} "
              f"| {r['records']} |" for r in agg.verdict_reasons]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, nargs="?", default=ROOT / "records", help="a records folder")
    args = parser.parse_args(argv)
    if not args.records.is_dir():
        print(f"dataset_summary: no folder {args.records}", file=sys.stderr)
        return 2
    print("\n".join(summary_lines(args.records)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
