"""The same slice of a public kernel set through each executor, cold each time: wall time against the serial run.

Runs ``benchmarks/throughput.py`` (a fresh records folder and build cache per run) once per mode:

* ``serial``: ``kverdict eval`` in one process, as on a machine of one GPU;
* ``lanes``: the local executor, ``--lanes N`` (default: every visible GPU), a lane process per GPU;
* ``ray``: ``--executor ray --address local``, a Ray instance of one node started by the command.

and prints each mode's wall time, records written, records per minute and its ratio to the serial run's
wall time (measured in this run). Figures go to ``$OUT/scaleout.json``.

    python3 benchmarks/scaleout.py --bundle .data/h100.jsonl --every 20 --modes serial lanes ray
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = {"serial": "", "lanes": "--lanes {lanes}", "ray": "--executor ray --address local"}


def main(argv: list[str] | None = None) -> int:
    """Run every mode, print the comparison, write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", type=Path, default=Path(".data/h100.jsonl"))
    p.add_argument("--every", type=int, default=20, help="take every N-th row (default 20)")
    p.add_argument("--protocol", default="both", choices=("standard", "verified", "both"))
    p.add_argument("--concurrent", type=int, default=8)
    p.add_argument("--lanes", type=int, default=1, help="lanes of the 'lanes' mode (default 1)")
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    p.add_argument("--budget-s", type=float, help="each mode's run is stopped after this long")
    args = p.parse_args(argv)
    out = Path(os.environ.get("OUT", ".data/out"))
    rows = []
    for mode in args.modes:
        extra = MODES[mode].format(lanes=args.lanes)
        cmd = [sys.executable, str(ROOT / "benchmarks" / "throughput.py"), "--bundle", str(args.bundle),
               "--every", str(args.every), "--protocol", args.protocol, "--concurrent", str(args.concurrent),
               "--workdir", f".data/scaleout-{mode}", "--tag", f"scaleout-{mode}", f"--extra={extra}"]
        if args.budget_s:
            cmd += ["--budget-s", str(args.budget_s)]
        print(f"=== {mode}", flush=True)
        code = subprocess.call(cmd, cwd=ROOT)
        result = out / f"throughput-scaleout-{mode}.json"
        if not result.is_file():
            print(f"{mode}: no figures (exit {code})", flush=True)
            continue
        data = json.loads(result.read_text(encoding="utf-8"))
        rows.append({"mode": mode, "extra": extra, "exit": data["exit"], "wall_s": data["wall_s"],
                     "written": data["written"], "rows": data["rows"]})
    serial = next((r["wall_s"] for r in rows if r["mode"] == "serial" and r["exit"] == 0), None)
    print(f"{'mode':<8}{'exit':>5}{'records':>9}{'wall s':>9}{'records/min':>13}{'wall vs serial':>16}")
    for r in rows:
        ratio = f"{r['wall_s'] / serial:.2f}x" if serial else "-"
        per_min = 60.0 * r["written"] / r["wall_s"] if r["wall_s"] else 0.0
        print(f"{r['mode']:<8}{r['exit']:>5}{r['written']:>9}{r['wall_s']:>9.1f}{per_min:>13.1f}{ratio:>16}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "scaleout.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
