"""Where an evaluation run's wall time goes: a fixed slice of a public kernel set, cold caches, both protocols.

Runs ``kverdict eval`` exactly as a user would (one command, ``--protocol both``) on every ``--every``-th row
of a bundle (CUDA-L1's ``h100.jsonl`` by default), into a fresh records folder and a fresh build cache
(``--warm`` keeps the build cache and the baselines of an earlier run of this script), and prints:

* the run's wall time, and per phase (extension builds, baselines, candidates, peak memory, record
  writing) the jobs, the wall time the phase was in progress and the worker-seconds it used;
* the GPU's busy share over the run and over each phase's span (NVML, sampled by the runner);
* per candidate: its wall time, its own timed device work (calls x mean time), and the overhead beyond
  that work (median, p90, max), per protocol.

The slice is written to a scratch bundle under the run folder (named like the source so it loads as the
same known bundle); its records are scratch too, never the repository's. Figures go to
``$OUT/throughput-<tag>.json`` and the table to standard output.

    python3 benchmarks/throughput.py --bundle .data/h100.jsonl --every 5 --concurrent 8 --tag cold
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluations.run import BusySampler  # noqa: E402 - after the repository is on the path


def slice_bundle(source: Path, every: int, offset: int, limit: int | None, target: Path) -> int:
    """Write every ``every``-th non-empty row of ``source`` (from ``offset``) to ``target``; returns the count."""
    rows = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = rows[offset::every][:limit]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return len(chosen)


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def per_candidate(spans: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Candidate wall time, its wait for the shared GPU lock and for room on the device (admission by memory), and
    the overhead beyond its timed work and those waits, per protocol (from span labels; the wait figures are None
    for stats files that did not keep them)."""
    out: dict[str, dict[str, float | None]] = {}
    for protocol in ("standard", "verified"):
        mine = [s for s in spans if s["phase"] == "candidate" and s["label"].startswith(f"eval-{protocol}-")]
        if not mine:
            continue
        walls = [s["end_s"] - s["start_s"] for s in mine]
        kept = all("waited_s" in s for s in mine)
        waits = [s.get("waited_s", 0.0) + s.get("admitted_s", 0.0) for s in mine]
        over = [w - (s["timed_ms"] or 0.0) / 1000 - wait for w, s, wait in zip(walls, mine, waits, strict=True)]
        timed = [(s["timed_ms"] or 0.0) / 1000 for s in mine]
        out[protocol] = {"candidates": len(mine), "wall_median_s": statistics.median(walls),
                         "wall_p90_s": quantile(walls, 0.9), "timed_median_s": statistics.median(timed),
                         "wait_median_s": statistics.median(waits) if kept else None,
                         "wait_p90_s": quantile(waits, 0.9) if kept else None,
                         "overhead_median_s": statistics.median(over), "overhead_p90_s": quantile(over, 0.9),
                         "overhead_max_s": max(over)}
    return out


def busy_between(samples: list[list[float]], start: float, end: float) -> float | None:
    """Mean GPU busy share of the samples taken between ``start`` and ``end`` seconds (as the runner reads them)."""
    return BusySampler(0.0, [(t, b) for t, b in samples]).share(start, end)


def report(stats: dict[str, Any], wall_s: float, rows: int) -> list[str]:
    """The printed table."""
    samples = stats.get("gpu_samples") or []
    lines = [f"{rows} bundle rows, {stats['written']} records written, {stats['skipped']} skipped, "
             f"wall {wall_s:.1f} s"]
    whole = busy_between(samples, 0.0, float("inf"))
    lines.append(f"GPU busy over the run: {whole:.1%}" if whole is not None
                 else f"GPU busy: not measured ({stats.get('gpu_unavailable')})")
    lines.append(f"{'phase':<10}{'jobs':>6}{'in progress s':>15}{'worker-s':>11}{'GPU busy':>10}")
    for t in stats["totals"]:
        busy = busy_between(samples, t["first_s"], t["last_s"])
        lines.append(f"{t['phase']:<10}{t['jobs']:>6}{t['wall_s']:>15.1f}{t['worker_s']:>11.1f}"
                     f"{(f'{busy:.1%}' if busy is not None else '-'):>10}")
    for protocol, row in per_candidate(stats["spans"]).items():
        lines.append(f"{protocol}: {row['candidates']:.0f} candidates; wall median {row['wall_median_s']:.1f} s "
                     f"(p90 {row['wall_p90_s']:.1f}); timed work median {row['timed_median_s']:.2f} s; waiting for the "
                     + (f"GPU lock median {row['wait_median_s']:.1f} s (p90 {row['wait_p90_s']:.1f})"
                        if row["wait_median_s"] is not None else "GPU lock not kept in this file") +
                     f"; overhead beyond both median {row['overhead_median_s']:.1f} s, p90 {row['overhead_p90_s']:.1f}, "
                     f"max {row['overhead_max_s']:.1f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the slice, print the table, write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", type=Path, default=Path(".data/h100.jsonl"))
    p.add_argument("--every", type=int, default=5, help="take every N-th row (default 5)")
    p.add_argument("--offset", type=int, default=0, help="first row taken (default 0)")
    p.add_argument("--limit", type=int, help="at most this many rows")
    p.add_argument("--protocol", default="both", choices=("standard", "verified", "both"))
    p.add_argument("--concurrent", type=int, default=8)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=float, default=200.0)
    p.add_argument("--workdir", type=Path, default=Path(".data/throughput"))
    p.add_argument("--warm", action="store_true", help="keep the build cache and baselines of the last run")
    p.add_argument("--tag", default="run", help="name of this run in the output file")
    p.add_argument("--extra", default="", help="more options for kverdict eval, space-separated")
    p.add_argument("--budget-s", type=float, help="stop the run (SIGTERM: it keeps what finished) after this long")
    args = p.parse_args(argv)
    work = args.workdir.resolve()
    if not args.warm and work.exists():
        shutil.rmtree(work)
    records = work / "records"
    if args.warm and records.exists():  # candidates again, baselines kept: the warm case
        for path in records.rglob("*.json"):
            if "baselines" not in path.parts:
                path.unlink()
    bundle = work / "slice" / args.bundle.name
    rows = slice_bundle(args.bundle, args.every, args.offset, args.limit, bundle)
    stats_path = work / f"stats-{args.tag}.json"
    cmd = [sys.executable, "-m", "evaluations.cli", "eval", "--candidates", str(bundle), "--protocol", args.protocol,
           "--device", "cuda", "--out", str(records), "--build-dir", str(work / "build"), "--timeout", str(args.timeout),
           "--concurrent", str(args.concurrent), "--jobs", str(args.jobs), "--no-progress",
           "--stats-json", str(stats_path), *args.extra.split()]
    print("$", " ".join(cmd), flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT)
    try:
        returncode = proc.wait(timeout=args.budget_s)
    except subprocess.TimeoutExpired:
        print(f"budget of {args.budget_s:g} s spent: stopping the run", flush=True)
        proc.terminate()
        returncode = proc.wait()
    wall = time.monotonic() - start
    if not stats_path.is_file():
        print(f"kverdict eval exited {returncode} without its stats file", file=sys.stderr)
        return 1
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    lines = report(stats, wall, rows)
    print("\n".join(lines))
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    summary = {"tag": args.tag, "rows": rows, "wall_s": wall, "exit": returncode, "argv": cmd[3:],
               "per_candidate": per_candidate(stats["spans"]), **stats}
    (out / f"throughput-{args.tag}.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return returncode


if __name__ == "__main__":
    raise SystemExit(main())
