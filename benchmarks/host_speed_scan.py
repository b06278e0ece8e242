"""Which problems' eager time follows the host's own speed: the ones timed in turns under the verified protocol.

For each problem (KernelBench v0's ``ref_code`` in the CUDA-L1 bundle, and the project's suite) this
script builds the reference as ``self_speedup.py`` does (``build_model``), and runs the verified timing with a short
stopping rule (its probe, CUDA graph capture and graph check decide the method exactly as a full
timing does); ``host_speed_bound`` of the result says whether the protocol times the problem's
candidates in turns with fresh baseline timings. ``--eager-only ROWS`` scans only the problems that a
self-speedup rows file records as timed by eager calls (graph replays never follow the host).

Rows are appended to ``$OUT/host_speed_scan.jsonl`` as each problem finishes; a re-run resumes.
Needs a CUDA GPU.

    python3 benchmarks/host_speed_scan.py [--bundle .data/h100.jsonl] [--suite DIR] [--eager-only ROWS] [--budget-s 400]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluations.core import host_speed_bound  # noqa: E402
from evaluations.timing import TimingPlan  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tasks import Task, load_suite_tasks, load_tasks  # noqa: E402
from _verified_recipe import NAME, build_model, input_sets, verified_run  # noqa: E402

QUICK = TimingPlan(warmup_s=0.05, min_calls=10, min_time_s=0.0, time_cap_s=0.3, placements=1)
"""A short stopping rule: the method is decided before sampling starts, so a few samples suffice."""


def scan_one(task: Task, folder: Path) -> dict[str, object]:
    """The reference's short verified timing: method, host enqueue and device time, and the verdict."""
    module, model = build_model(task.source, f"scan_{task.level}_{task.task_id}", folder)
    with torch.no_grad():
        stats = verified_run(model, input_sets(module.get_inputs, torch.device("cuda")), QUICK).stats
    return {"key": task.key, "method": stats.method, "host_enqueue_ms": stats.host_enqueue_ms,
            "median_ms": stats.median_ms, "host_bound": stats.host_bound,
            "host_speed_bound": host_speed_bound(stats), "note": (stats.note or "")[:300]}


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl", help="CUDA-L1 bundle whose ref_code are the problems")
    parser.add_argument("--suite", type=Path, action="append", default=[], help="also scan this suite folder")
    parser.add_argument("--eager-only", type=Path, metavar="ROWS",
                        help="only problems whose self-speedup row records eager calls under the verified timing")
    parser.add_argument("--budget-s", type=float, default=400.0, help="stop starting new problems after this many seconds")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("host_speed_scan needs a CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # as self_speedup.py times the reference
    tasks = load_tasks(Path(args.bundle)) if Path(args.bundle).is_file() else []
    for folder in args.suite:
        tasks += load_suite_tasks(folder)
    if args.eager_only:
        rows = [json.loads(line) for line in args.eager_only.read_text(encoding="utf-8").splitlines() if line.strip()]
        eager = {r["key"] for r in rows if (r.get("method", {}).get(NAME) or {}).get("ref") == "cuda_events"}
        graphed = {r["key"] for r in rows if (r.get("method", {}).get(NAME) or {}).get("ref") == "cuda_graph"}
        tasks = [t for t in tasks if t.key in eager or t.key not in graphed]  # never measured: scanned too
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "host_speed_scan.jsonl"
    done = {json.loads(line)["key"]: json.loads(line) for line in
            (rows_path.read_text(encoding="utf-8").splitlines() if rows_path.is_file() else []) if line.strip()}
    start = time.monotonic()
    print(f"{len(tasks)} problems to scan, {sum(t.key in done for t in tasks)} scanned before", flush=True)
    with tempfile.TemporaryDirectory(prefix="kv-scan-") as tmp:
        for i, task in enumerate(tasks, 1):
            if task.key in done:
                continue
            if time.monotonic() - start > args.budget_s:
                print(f"time budget of {args.budget_s:g} s spent; re-run to resume", flush=True)
                break
            try:
                row = scan_one(task, Path(tmp))
            except Exception as exc:  # the reference itself fails: report and go on
                row = {"key": task.key, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            with rows_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            done[task.key] = row
            print(f"[{i}/{len(tasks)}] {task.key}: {row.get('error') or row['method']} host {row.get('host_enqueue_ms')}"
                  f" ms, device {row.get('median_ms')} ms{' HOST-SPEED-BOUND' if row.get('host_speed_bound') else ''}",
                  flush=True)
            torch.cuda.empty_cache()
    scanned = [done[t.key] for t in tasks if t.key in done]
    bound = [r["key"] for r in scanned if r.get("host_speed_bound")]
    print(f"\n{len(scanned)} of {len(tasks)} problems scanned, {sum('error' in r for r in scanned)} failed; "
          f"host-speed-bound (timed in turns): {len(bound)}: {', '.join(bound) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
