"""Does timing in turns cancel the host's drift? Reference and copy timed in turns, repeatedly, per host placement.

For each problem named (KernelBench v0 keys of the CUDA-L1 bundle), reference and copy are timed in
turns in two fresh processes (``_verified_recipe.in_turns``: eager calls, one per event pair, as a
host-speed-bound problem is timed), ``--reps`` times for each placement of the two processes on the
host's cores: ``free`` (where the system puts them), ``one-core`` (both on the same single core) and
``two-cores`` (both on the same two cores), ``turn-core`` (each turn on one core, the processes elsewhere
while they wait: the protocol's way, ``TimingPlan.turn_cpu``); ``one-process`` times both in turns in this one process
instead (two threads taking turns through the same file). Prints each self-speedup (reference time / copy time) and
the host's own speed read before and after each timing; the self-speedup both as the ratio of the two
medians and as the median of per-round ratios (``schemas.speedup_between``, what a record in turns uses). Rows go to ``$OUT/turns_bias.jsonl``, with
every sample and its round, so other statistics of the same samples can be compared afterwards.

    python3 benchmarks/turns_bias.py --keys L3/30 [--reps 2] [--placements free,one-core,two-cores]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tasks import build_pair, gpu_tasks  # noqa: E402
from _verified_recipe import LAST_TURN_SAMPLES, PLAN, in_turns, input_sets, verified_run  # noqa: E402

from evaluations.timing import create, round_core, take_turns  # noqa: E402
from schemas import speedup_between  # noqa: E402

EAGER = dataclasses.replace(PLAN, cuda_graph=-1, calls_per_sample=1)
"""How a host-speed-bound problem's timings run: eager calls, one per event pair (paced so by its eager baseline)."""


def in_one_process(source: str, plan: Any) -> tuple[Any, Any]:
    """Reference and copy timed in turns by two threads of this process (the copy leading), as
    :func:`in_turns` times them in two processes; fills ``LAST_TURN_SAMPLES`` the same way."""
    with tempfile.TemporaryDirectory(prefix="kv-turns-") as tmp:
        module, ref_model, copy_model = build_pair(source, "one_process", Path(tmp))
        path = create(Path(tmp) / "turns.json", 2)

        def side(party: int, model: Any) -> Any:
            try:
                sets = input_sets(module.get_inputs, torch.device("cuda"))
                return verified_run(model, sets, dataclasses.replace(plan, turns=str(path), party=party))
            except Exception:  # noqa: BLE001 - shown as a thread shows it, and the side counts as failed
                traceback.print_exc()
                return None

        runs = take_turns(path, [functools.partial(side, 0, copy_model), functools.partial(side, 1, ref_model)])
    if None in runs:
        raise RuntimeError("a side of the one-process timing in turns failed")
    LAST_TURN_SAMPLES.update(ref=(runs[1].samples_ms, runs[1].batches), copy=(runs[0].samples_ms, runs[0].batches))
    return runs[1].stats, runs[0].stats


def placements() -> dict[str, set[int] | None]:
    """Placement name -> the cores both processes are put on (None: anywhere)."""
    cores = sorted(os.sched_getaffinity(0))
    return {"free": None, "one-core": {round_core()}, "two-cores": set(cores[-2:]), "one-process": None,
            "turn-core": None}


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl")
    parser.add_argument("--keys", required=True, help="comma-separated problem keys (L3/30,...)")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--placements", default="free,one-core,two-cores")
    parser.add_argument("--cap-s", type=float, default=PLAN.time_cap_s,
                        help="time cap of each timing (own time; the protocol's is 10 s)")
    args = parser.parse_args(argv)
    tasks = gpu_tasks("turns_bias", Path(args.bundle), args.keys.split(","))
    if tasks is None:
        return 2
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    known = placements()
    for key, task in tasks.items():
        for rep in range(args.reps):
            for name in args.placements.split(","):
                try:
                    plan = dataclasses.replace(EAGER, time_cap_s=args.cap_s,
                                               turn_cpu=round_core() if name == "turn-core" else -1)
                    if name == "one-process":
                        ref, copy = in_one_process(task.source, plan)
                    else:
                        ref, copy = in_turns(task.source, plan, timeout_s=60 + 4 * args.cap_s, cpus=known[name])
                except RuntimeError as exc:  # one timing failed: say which and go on
                    print(f"{key} {name} rep {rep}: {exc}", flush=True)
                    continue
                row = {"key": key, "placement": name, "rep": rep, "ref_ms": ref.median_ms, "copy_ms": copy.median_ms,
                       "self_speedup": ref.median_ms / copy.median_ms, "paired": speedup_between(copy, ref),
                       "ref_note": ref.note, "copy_note": copy.note,
                       "samples": {side: {"ms": ms, "round": rounds} for side, (ms, rounds) in LAST_TURN_SAMPLES.items()}}
                with (out / "turns_bias.jsonl").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
                speed = [n.split("before and after: ")[1].split(";")[0] if n and "before and after: " in n else "?"
                         for n in (ref.note, copy.note)]
                print(f"{key} {name:9s} rep {rep}: ref {ref.median_ms:.3f} ms, copy {copy.median_ms:.3f} ms, "
                      f"self-speedup {row['self_speedup']:.4f} (ratio of medians), {row['paired'] or float('nan'):.4f} "
                      f"(median of per-round ratios); host loop ref {speed[0]}, copy {speed[1]}", flush=True)
    torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
