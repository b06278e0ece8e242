"""Order or instance? Times a problem's reference and its copy in the order A B B A under the verified timing.

When the self-speedup of a problem misses 1.00x, either the two timings drifted apart in time (then
the second reference timing, A2, moves with the copy) or the copy itself runs differently (then both
copy timings, B1 and B2, differ from both reference timings). Printed per problem: the four medians,
A1/B1 (the self-speedup benchmark's pair), A2/B2, and A2/A1 and B2/B1 (each callable against itself
a few seconds later). ``--order AB`` times only the first pair.

``--variant`` tries a cause or a remedy of a copy that runs differently:

- ``copy``: B is the separately built copy, as in the self-speedup benchmark, each timed with its
  weights at one place in memory (as the verified timing v4 times them);
- ``deepcopy``: B is ``copy.deepcopy(A)``, the same module with its tensors elsewhere in memory (weights
  at one place);
- ``read-flush``: as ``copy``, the L2 flushed by reading a buffer (left clean) instead of zeroing one;
- ``placements``: as ``copy``, with each module's weights rotated over four places in memory, sample
  by sample (the time: the mean of the places' medians; the verified timing v6);
- ``places16``: as ``placements``, over sixteen places;
- ``graph-short``: as ``placements``, calls under 0.1 ms timed as CUDA graph replays (the calls of one
  event pair in one graph, one graph per place; ``TimingPlan.graph_short``);
- ``protocol``: the protocol's own timing (both of the above: sixteen places, short calls as graphs);
- ``protocol-nogc``: as ``protocol``, Python's garbage collector run before each timing and kept off
  during it (is the host-bound drift of L3/30, 11.4 to 20.5 ms within one process, the collector's?).

Beside each timing's median, a row keeps the host's state around it: the host enqueue time per eager
call of the timing's probe (``host_ms``), the time of a fixed pure-Python loop run just before the
timing (``py_ms``: if the host's own speed changes, this moves with it) and the mean CPU clock the
kernel reports (``cpu_mhz``, where it reports one).

Rows go to ``$OUT/timing_drift.jsonl``. Needs a CUDA GPU.

    python3 benchmarks/timing_drift.py --bundle .data/h100.jsonl --keys L1/25,L1/41 [--variant deepcopy] [--order AB]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import gc
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluations.timing import host_loop_ms  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tasks import build_pair, gpu_tasks  # noqa: E402
from _verified_recipe import PLAN, input_sets, paced_by, verified_run  # noqa: E402

VARIANTS = ("copy", "deepcopy", "read-flush", "placements", "places16", "graph-short", "protocol", "protocol-nogc")
"""What B is and how both are timed (see the module docstring)."""


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    """Python's garbage collector run now and kept off inside (back on afterwards if it was on)."""
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _cpu_mhz() -> float | None:
    """Mean of the CPU clocks in /proc/cpuinfo (MHz), or ``None`` where the kernel lists none."""
    try:
        clocks = [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("cpu MHz")]
    except (OSError, ValueError, IndexError):
        return None
    return sum(clocks) / len(clocks) if clocks else None


def abba(source: str, tag: str, folder: Path, variant: str = "copy", order: str = "ABBA",
         host: dict[str, dict[str, float | None]] | None = None) -> dict[str, float]:
    """Medians (ms) of reference A and copy B timed A1, B1[, B2, A2], each paced by A1.

    ``host``, when given, receives per timing name the host's state around it (``host_ms``, ``py_ms``,
    ``cpu_mhz``; see the module docstring)."""
    reference, a, b = build_pair(source, tag, folder)
    protocol = variant in ("protocol", "protocol-nogc")

    def timed(name: str, module: torch.nn.Module, plan: Any) -> Any:
        before = {"py_ms": host_loop_ms(loops=5, n=200_000), "cpu_mhz": _cpu_mhz()}
        with _collector_off() if variant == "protocol-nogc" else contextlib.nullcontext():
            run = verified_run(module, sets, plan)
        if host is not None:
            host[name] = {**before, "host_ms": run.host_ms_per_call}
        return run

    with torch.no_grad():
        if variant == "deepcopy":
            b = copy.deepcopy(a)
        sets = input_sets(reference.get_inputs, torch.device("cuda"))
        places = PLAN.placements if protocol else {"placements": 4, "graph-short": 4, "places16": 16}.get(variant, 1)
        base = dataclasses.replace(PLAN, placements=places, graph_short=protocol or variant == "graph-short",
                                   flush="read" if variant == "read-flush" else PLAN.flush)
        first = timed("A1", a, base)
        plan = paced_by(first, base)
        times = {"A1": first.stats.median_ms, "B1": timed("B1", b, plan).stats.median_ms}
        if order == "ABBA":
            times["B2"] = timed("B2", b, plan).stats.median_ms
            times["A2"] = timed("A2", a, plan).stats.median_ms
    return times


def _line(key: str, variant: str, t: dict[str, float]) -> str:
    cols = [f"{t.get(n, float('nan')):10.5f}" for n in ("A1", "B1", "B2", "A2")]
    ratios = [t["A1"] / t["B1"]] + ([t["A2"] / t["B2"], t["A2"] / t["A1"], t["B2"] / t["B1"]] if "A2" in t else [])
    return f"{key:8s} {variant:10s} " + " ".join(cols) + " " + " ".join(f"{r:7.4f}" for r in ratios)


def _host_line(host: dict[str, dict[str, float | None]]) -> str:
    """The host's state around each timing, in timing order (see the module docstring)."""
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.4g}"
    return "   host: " + "; ".join(f"{n} enqueue {fmt(h['host_ms'])} ms, py loop {fmt(h['py_ms'])} ms, cpu "
                                   f"{fmt(h['cpu_mhz'])} MHz" for n, h in host.items())


def summary(pairs: dict[str, list[float]]) -> list[str]:
    """Per variant: share of A1/B1 within +-1% of 1, and the median and largest |A1/B1 - 1|."""
    lines = []
    for variant, ratios in pairs.items():
        devs = sorted(abs(r - 1.0) for r in ratios)
        if devs:
            within = sum(d <= 0.01 for d in devs) / len(devs)
            lines.append(f"{variant:10s} A1/B1 within +-1%: {within:6.1%}  median |A1/B1-1|: {devs[len(devs) // 2]:6.2%}  "
                         f"max: {devs[-1]:6.2%}  (n={len(devs)})")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl", help="CUDA-L1 bundle whose ref_code are the problems")
    parser.add_argument("--keys", required=True, help="problems, comma-separated (L1/25,L1/41,...)")
    parser.add_argument("--variant", default="copy",
                        help="comma-separated, each of: " + ", ".join(VARIANTS) + " (default copy)")
    parser.add_argument("--order", choices=("ABBA", "AB"), default="ABBA", help="four timings, or only the first pair")
    args = parser.parse_args(argv)
    variants = args.variant.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        print(f"unknown variant(s): {', '.join(unknown)} (choose from {', '.join(VARIANTS)})", file=sys.stderr)
        return 2
    wanted = args.keys.split(",")
    tasks = gpu_tasks("timing_drift", Path(args.bundle), wanted)
    if tasks is None:
        return 2
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{'problem':8s} {'variant':10s} {'A1 ms':>10s} {'B1 ms':>10s} {'B2 ms':>10s} {'A2 ms':>10s} "
          f"{'A1/B1':>7s} {'A2/B2':>7s} {'A2/A1':>7s} {'B2/B1':>7s}", flush=True)
    pairs: dict[str, list[float]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="kv-drift-") as tmp:
        for key in wanted:
            task = tasks[key]
            for variant in variants:
                host: dict[str, dict[str, float | None]] = {}
                try:
                    t = abba(task.source, f"l{task.level}_{task.task_id}", Path(tmp), variant, args.order, host)
                except Exception as exc:  # a failing problem is reported and the others go on
                    print(f"{key:8s} {variant:10s} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                with (out / "timing_drift.jsonl").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": key, "variant": variant, "median_ms": t, "host": host}) + "\n")
                pairs[variant].append(t["A1"] / t["B1"])
                print(_line(key, variant, t), flush=True)
                print(_host_line(host), flush=True)
                torch.cuda.empty_cache()
    print("\n".join(["", *summary(pairs)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
