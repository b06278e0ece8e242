"""Order or instance? Times a problem's reference and its copy in the order A B B A under the verified timing.

When the self-speedup of a problem misses 1.00x, either the two timings drifted apart in time (then
the second reference timing, A2, moves with the copy) or the copy itself runs differently (then both
copy timings, B1 and B2, differ from both reference timings). Printed per problem: the four medians,
A1/B1 (the self-speedup benchmark's pair), A2/B2, and A2/A1 and B2/B1 (each callable against itself
a few seconds later). Rows go to ``$OUT/timing_drift.jsonl``. Needs a CUDA GPU.

    python3 benchmarks/timing_drift.py --bundle .data/h100.jsonl --keys L1/25,L1/41
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluations._worker import load_module  # noqa: E402
from evaluations.protocols.standard import SEED, set_seed  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _verified_recipe import input_sets, paced_by, verified_run  # noqa: E402
from self_speedup import _cuda, load_tasks  # noqa: E402


def abba(source: str, tag: str, folder: Path) -> dict[str, float]:
    """Medians (ms) of reference A and copy B timed A1, B1, B2, A2, each paced by A1."""
    reference = load_module(source, f"drift_ref_{tag}", folder)
    copy = load_module(re.sub(r"\bModel\b", "ModelNew", source), f"drift_copy_{tag}", folder)
    with torch.no_grad():
        set_seed(SEED)
        init = _cuda(reference.get_init_inputs())
        set_seed(SEED)
        a = reference.Model(*init).cuda()
        set_seed(SEED)
        b = copy.ModelNew(*init).cuda()
        sets = input_sets(reference.get_inputs, torch.device("cuda"))
        first = verified_run(a, sets)
        plan = paced_by(first)
        b1 = verified_run(b, sets, plan).stats.median_ms
        b2 = verified_run(b, sets, plan).stats.median_ms
        a2 = verified_run(a, sets, plan).stats.median_ms
    return {"A1": first.stats.median_ms, "B1": b1, "B2": b2, "A2": a2}


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl", help="CUDA-L1 bundle whose ref_code are the problems")
    parser.add_argument("--keys", required=True, help="problems, comma-separated (L1/25,L1/41,...)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("timing_drift needs a CUDA GPU", file=sys.stderr)
        return 2
    wanted = args.keys.split(",")
    tasks = {t.key: t for t in load_tasks(Path(args.bundle)) if t.key in wanted}
    missing = [k for k in wanted if k not in tasks]
    if missing:
        print(f"not in {args.bundle}: {', '.join(missing)}", file=sys.stderr)
        return 2
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{'problem':8s} {'A1 ms':>10s} {'B1 ms':>10s} {'B2 ms':>10s} {'A2 ms':>10s} "
          f"{'A1/B1':>7s} {'A2/B2':>7s} {'A2/A1':>7s} {'B2/B1':>7s}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kv-drift-") as tmp:
        for key in wanted:
            task = tasks[key]
            try:
                t = abba(task.source, f"l{task.level}_{task.task_id}", Path(tmp))
            except Exception as exc:  # a failing problem is reported and the others go on
                print(f"{key:8s} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            with (out / "timing_drift.jsonl").open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "median_ms": t}) + "\n")
            print(f"{key:8s} {t['A1']:10.5f} {t['B1']:10.5f} {t['B2']:10.5f} {t['A2']:10.5f} "
                  f"{t['A1'] / t['B1']:7.4f} {t['A2'] / t['B2']:7.4f} {t['A2'] / t['A1']:7.4f} {t['B2'] / t['B1']:7.4f}",
                  flush=True)
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
