"""Prints the verified timing's record note of a problem's reference (method, host vs device time, why
a graph was not used): ``python3 benchmarks/timing_note.py --keys L3/30``. Needs a CUDA GPU."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tasks import build_pair, gpu_tasks  # noqa: E402
from _verified_recipe import input_sets, verified_run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl", help="CUDA-L1 bundle whose ref_code are the problems")
    parser.add_argument("--keys", required=True, help="problems, comma-separated (L3/30,...)")
    args = parser.parse_args(argv)
    wanted = args.keys.split(",")
    tasks = gpu_tasks("timing_note", Path(args.bundle), wanted)
    if tasks is None:
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # as the self-speedup benchmark times them
    with tempfile.TemporaryDirectory(prefix="kv-note-") as tmp, torch.no_grad():
        for key in wanted:
            task = tasks[key]
            reference, model, _ = build_pair(task.source, f"l{task.level}_{task.task_id}", Path(tmp))
            run = verified_run(model, input_sets(reference.get_inputs, torch.device("cuda")))
            print(f"{key}: {run.stats.median_ms:.4f} ms, {run.stats.method}, host {run.host_ms_per_call:.3g} ms/call, "
                  f"{run.stats.calls} samples: {run.stats.note}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
