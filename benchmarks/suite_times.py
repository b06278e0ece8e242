"""Eager float32 time of every KernelVerdict suite problem on the GPU, against the 1-20 ms window.

Times each reference as the standard protocol's baseline does (TF32 matmul off, 3 warm-ups, then
per-call CUDA events; mean and median reported), measures its peak memory, and prints the problems
outside the window or over 24 GiB. Writes ``$OUT/suite_times.json``. With ``--ceilings`` (a folder
holding ``<hardware>.json`` from ``benchmarks/ceilings.py``) it also prints each problem's T_SOL; with
``--only`` (comma-separated shell patterns matched against ``level<N>/<file>.py`` and the file name) it
times only the matching problems, e.g. after resizing a few of them.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import statistics
import sys
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evaluations.suite import counts, load_problem_module, suite_files  # noqa: E402

WINDOW_MS = (1.0, 20.0)
MEMORY_LIMIT_BYTES = 24 * 1024**3
WARMUP, TIMED = 3, 30


def time_problem(module) -> dict:
    """Mean/median eager time and peak memory of one problem at its real size."""
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(42)
    with torch.device("cuda"):
        model = module.Model(*module.get_init_inputs())
        inputs = module.get_inputs()
    times = []
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*inputs)
        torch.cuda.synchronize()
        for _ in range(TIMED):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    peak = torch.cuda.max_memory_allocated()
    del model, inputs
    return {"mean_ms": statistics.fmean(times), "median_ms": statistics.median(times), "min_ms": min(times),
            "peak_bytes": peak}


def selected(files: list, only: str | None) -> list:
    """The suite files whose ``level<N>/<file>.py`` path or file name matches one of ``only``'s patterns."""
    if not only:
        return files
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    return [f for f in files
            if any(fnmatch.fnmatchcase(n, pat) for pat in patterns for n in (f"level{f.level}/{f.path.name}", f.path.name))]


def _t_sol_ms(c: dict, ceilings: dict | None, dtype: str) -> float | None:
    if not ceilings:
        return None
    r = ceilings["rates"]
    rate = r["bf16_flops_per_s"] if dtype == "bfloat16" else r["tf32_flops_per_s"]
    return max(c["flops"] / rate, c["min_bytes"] / r["copy_bytes_per_s"]) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", ".data/out"), help="output folder (default: $OUT)")
    parser.add_argument("--ceilings", help="folder holding <hardware>.json ceilings, to print T_SOL")
    parser.add_argument("--only", metavar="PATTERNS", help="comma-separated shell patterns: time only the problems whose "
                        "level<N>/<file>.py or file name matches one (e.g. 'level1/010_*,*_mlp_deep.py')")
    args = parser.parse_args()
    files = selected(suite_files(), args.only)
    if not files:
        raise SystemExit(f"no suite problem matches --only {args.only!r}")
    if not torch.cuda.is_available():
        raise SystemExit("suite_times.py needs a CUDA GPU")
    torch.backends.cuda.matmul.allow_tf32 = False  # the standard protocol's eager float32 baseline
    ceilings = None
    if args.ceilings:
        found = sorted(Path(args.ceilings).glob("*.json"))
        ceilings = json.loads(found[0].read_text()) if found else None
    rows = []
    for f in files:
        module = load_problem_module(f.path)
        row = {"file": f"level{f.level}/{f.path.name}", **counts(module, f.spec)}
        try:
            row.update(time_problem(module))
        except Exception as exc:  # noqa: BLE001 - report the problem and go on with the suite
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            traceback.print_exc()
            torch.cuda.empty_cache()
        row["t_sol_ms"] = _t_sol_ms(row, ceilings, f.spec.dtype)
        lo, hi = WINDOW_MS
        row["in_window"] = "median_ms" in row and lo <= row["median_ms"] <= hi
        row["fits_24gib"] = row.get("peak_bytes", 0) <= MEMORY_LIMIT_BYTES
        rows.append(row)
        flag = "" if row["in_window"] and row["fits_24gib"] else "  <-- OUTSIDE"
        sol = f" T_SOL {row['t_sol_ms']:.3f} ms" if row["t_sol_ms"] else ""
        print(f"{row['file']:48s} {row.get('median_ms', float('nan')):8.3f} ms  peak {row.get('peak_bytes', 0) / 1024**3:6.2f} GiB"
              f"{sol}{flag}", flush=True)
    out = Path(args.out) / "suite_times.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                               "window_ms": WINDOW_MS, "warmup": WARMUP, "timed": TIMED, "problems": rows}, indent=1) + "\n")
    outside = [r["file"] for r in rows if not (r["in_window"] and r["fits_24gib"])]
    print(f"{len(rows) - len(outside)}/{len(rows)} problems inside {WINDOW_MS[0]:g}-{WINDOW_MS[1]:g} ms and 24 GiB; outside: {outside}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
