"""Self-speedup of timing recipes: each problem's reference timed against a separately built copy of itself.

A faithful timer reports 1.00x when a kernel is compared with itself. For every KernelBench v0
problem (the ``ref_code`` of the CUDA-L1 bundle) this script builds the reference ``Model`` and a
copy loaded as a separate module (``Model`` renamed ``ModelNew``), times both with each recipe of
:data:`RECIPES`, and prints per recipe the share of problems within +-1% of 1.00x and the p50/p95 of
|self-speedup - 1|, plus the problems whose reference runs under 20 us.

Rows are appended to ``$OUT/self_speedup.jsonl`` as each problem finishes; a re-run resumes from
them. A problem whose reference fails is reported and skipped. Needs a CUDA GPU.

    python3 benchmarks/self_speedup.py [--bundle .data/h100.jsonl] [--budget-s 400]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluations.core import (  # noqa: E402
    gpulock,  # noqa: E402
    mean,
    median,
)
from evaluations.protocols.standard import SEED, collect_times_ms, set_seed  # noqa: E402
from evaluations.protocols.verified import to_device  # noqa: E402
from schemas import pinned  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _self_speedup_report import report  # noqa: E402
from _tasks import Task, build_pair, load_suite_tasks, load_tasks  # noqa: E402
from _verified_recipe import LAST_CLOCKS_MHZ, LAST_METHODS, LAST_SPEEDUP, PREVIOUS, PairRecipe, input_sets  # noqa: E402
from _verified_recipe import RECIPES as VERIFIED_RECIPES  # noqa: E402

Recipe = Callable[[Callable[[], Any]], float]
"""Times a zero-argument callable on the current CUDA device; returns the recipe's statistic in ms."""
SetRecipe = PairRecipe
"""Times the reference and then its copy over rotated input sets (the verified protocol's recipe); both ms."""

STANDARD = pinned("standard").timing
"""The standard protocol's timing (``schemas.PROTOCOLS``): its warm-up and timed calls."""
L2_FLUSH_BYTES = 512 * 1024 * 1024
"""Size of the buffer written before each call to evict L2 (the H200's L2 is 60 MiB)."""
PROBLEM_TIMEOUT_S = 120
"""Longest one problem may take before it is abandoned and reported."""
CUDA_ERRORS: tuple[type[BaseException], ...] = tuple(
    t for t in (getattr(torch, "AcceleratorError", None),) if isinstance(t, type))
"""Errors after which the CUDA context is unusable (the run stops; a re-run resumes in a fresh process)."""
_flush_buffer: list[torch.Tensor] = []


def kernelbench_verified(fn: Callable[[], Any]) -> float:
    """KernelBench-Verified's recipe: 3 warm-ups, 10 calls between CUDA events, mean."""
    return mean(collect_times_ms(fn, "cuda", warmup=3, calls=10))


def kernelbench_standard(fn: Callable[[], Any]) -> float:
    """KernelBench / this project's standard protocol: its warm-ups (3), then its timed calls (100) between CUDA events,
    mean (the protocols' table's counts)."""
    return mean(collect_times_ms(fn, "cuda", warmup=STANDARD.warmup_calls, calls=STANDARD.timed_calls))


def flushed_median(fn: Callable[[], Any]) -> float:
    """100 calls, L2 flushed before each, CUDA events around the call only, median."""
    if not _flush_buffer:
        _flush_buffer.append(torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda"))
    buffer = _flush_buffer[0]
    for _ in range(3):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(100)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(100)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends, strict=True):
        buffer.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return median([s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)])


RECIPES: dict[str, Recipe | SetRecipe] = {
    "kernelbench-verified (3 warm-ups, 10 calls, mean)": kernelbench_verified,
    "kernelbench / standard (3 warm-ups, 100 calls, mean)": kernelbench_standard,
    "100-call median, L2 flushed": flushed_median,
}
"""Recipe name -> recipe; the verified protocol's timing is added here as a further entry."""
SET_RECIPES: set[str] = set()
"""Names of recipes that take (reference, copy, rotated input sets) instead of a zero-argument callable."""
OPTIONAL = {"100-call median, L2 flushed"}
"""Recipes left out by ``--essential-only`` (comparison figures, not the protocols' own timing)."""


def measure(task: Task, folder: Path, only: set[str] | None = None) -> dict[str, Any]:
    """Times of the reference and of its separately built copy under every recipe (or those in ``only``)."""
    names = [n for n in RECIPES if only is None or n in only]
    # beside a run that shares the GPU (KVERDICT_GPU_LOCK set, e.g. a detached run on the same machine): hold the
    # device shared like one of its workers and every timing alone, so neither disturbs the other's timings
    with gpulock.shared("self-speedup"):
        return _measure(task, folder, names)


def _measure(task: Task, folder: Path, names: list[str]) -> dict[str, Any]:
    reference, ref_model, copy_model = build_pair(task.source, f"l{task.level}_{task.task_id}", folder)
    with torch.no_grad():
        set_seed(SEED)
        inputs = to_device(reference.get_inputs(), torch.device("cuda"))
        sets = input_sets(reference.get_inputs, torch.device("cuda")) if SET_RECIPES & set(names) else []
        ref_ms, copy_ms, clocks, methods, paired = {}, {}, {}, {}, {}
        for name in names:
            recipe = RECIPES[name]
            if name in SET_RECIPES:
                ref_ms[name], copy_ms[name] = recipe(ref_model, copy_model, sets,  # type: ignore[call-arg,misc]
                                                     source=task.source)
                clocks[name], methods[name] = dict(LAST_CLOCKS_MHZ), dict(LAST_METHODS)
                if "self_speedup" in LAST_SPEEDUP:  # timed in turns: the median of per-round ratios
                    paired[name] = LAST_SPEEDUP["self_speedup"]
            else:
                with gpulock.exclusive():  # the verified recipe takes the device alone itself
                    ref_ms[name] = recipe(lambda: ref_model(*inputs))  # type: ignore[call-arg]
                    copy_ms[name] = recipe(lambda: copy_model(*inputs))  # type: ignore[call-arg]
        del sets
    return {"ref_ms": ref_ms, "copy_ms": copy_ms, "clock_mhz": clocks, "method": methods,
            "self_speedup": {n: paired.get(n, ref_ms[n] / copy_ms[n]) for n in names if copy_ms[n] > 0},
            "self_speedup_from": {n: "median of per-round ratios" if n in paired else "ratio of times" for n in names}}


MEASURED = ("ref_ms", "copy_ms", "clock_mhz", "method", "self_speedup", "self_speedup_from")
"""Row fields keyed by recipe name (a later run adds recipes to them)."""


def _merged(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` measurements added to an earlier row of the same problem (earlier recipes kept)."""
    if not old or "error" in old:
        return new
    return {k: ({**old.get(k, {}), **new[k]} if k in MEASURED else new[k]) for k in new}


def _rows(rows_path: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    if rows_path.is_file():
        for line in rows_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["key"]] = row
    return rows


def _done(rows: dict[str, dict[str, Any]], retry_errors: bool = False) -> dict[str, dict[str, Any]]:
    """Rows needing nothing more: every recipe measured, or (unless retrying) an error."""
    return {k: r for k, r in rows.items()
            if ("error" in r and not retry_errors) or set(RECIPES) <= set(r.get("self_speedup", {}))}


def _append(rows_path: Path, row: dict[str, Any]) -> None:
    with rows_path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout(f"took longer than {PROBLEM_TIMEOUT_S} s")


def run(tasks: list[Task], rows_path: Path, budget_s: float, retry_errors: bool = False,
        remeasure: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """Measure every task (or its missing recipes) not yet in ``rows_path``, until the time budget is spent;
    the tasks keyed in ``remeasure`` under every recipe again (their new row supersedes the earlier one).

    Returns every row known afterwards: measured now, or earlier (maybe lacking a recipe added since).
    """
    import signal

    torch.backends.cuda.matmul.allow_tf32 = False
    earlier = _rows(rows_path)
    done = {k: r for k, r in _done(earlier, retry_errors).items() if k not in remeasure}
    start = time.monotonic()
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory(prefix="kv-self-") as tmp:
        suites = list(dict.fromkeys(t.suite for t in tasks))
        # per suite, problems never measured before those that only lack a recipe added since
        for task in sorted(tasks, key=lambda t: (suites.index(t.suite), t.key in earlier)):
            if task.key in done:
                continue
            if time.monotonic() - start > budget_s:
                print(f"time budget of {budget_s:g} s spent; re-run to resume", flush=True)
                break
            row: dict[str, Any] = {"key": task.key, "level": task.level, "task_id": task.task_id}
            before = earlier.get(task.key)
            missing = (None if not before or "error" in before or task.key in remeasure
                       else set(RECIPES) - set(before.get("self_speedup", {})))
            context_lost = False
            signal.alarm(PROBLEM_TIMEOUT_S)
            try:
                row.update(_merged(before, measure(task, Path(tmp), missing)))
            except Exception as exc:  # the reference itself fails: report and go on
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                context_lost = isinstance(exc, CUDA_ERRORS)
            finally:
                signal.alarm(0)
            _append(rows_path, row)
            done[task.key] = row
            shown = "  ".join(f"{row['self_speedup'][n]:.4f}" for n in RECIPES if n in row.get("self_speedup", {}))
            print(f"[{sum(t.key in done for t in tasks)}/{len(tasks)}] {task.key}: {row.get('error') or shown}", flush=True)
            torch.cuda.empty_cache()
            if context_lost:
                print(f"{task.key}: CUDA context lost ({row['error']}); re-run to resume", flush=True)
                break
    return {**earlier, **done}


def _select(args: argparse.Namespace) -> None:
    """Recipes of this run, from the command line."""
    if args.essential_only:
        for name in OPTIONAL:
            RECIPES.pop(name, None)
    if not args.no_verified:
        chosen = {**VERIFIED_RECIPES, **(PREVIOUS if args.with_previous else {})}
        RECIPES.update(chosen)
        SET_RECIPES.update(chosen)


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=".data/h100.jsonl", help="CUDA-L1 bundle whose ref_code are the problems")
    parser.add_argument("--budget-s", type=float, default=400.0, help="stop starting new problems after this many seconds")
    parser.add_argument("--limit", type=int, help="only the first N problems")
    parser.add_argument("--keys", help="only these problems, comma-separated keys as the rows name them (L3/41,...)")
    parser.add_argument("--suite", type=Path, action="append", default=[],
                        help="also measure the problems of this suite folder (repeatable)")
    parser.add_argument("--no-verified", action="store_true", help="leave out the verified protocol's timing")
    parser.add_argument("--with-previous", action="store_true",
                        help="also measure the verified timing's previous version (eager calls under 0.1 ms, 4 places)")
    parser.add_argument("--essential-only", action="store_true",
                        help="only the protocols' recipes and KernelBench-Verified's (leave out " + ", ".join(sorted(OPTIONAL)) + ")")
    parser.add_argument("--retry-errors", action="store_true", help="measure again the problems whose earlier row is an error")
    parser.add_argument("--remeasure", default="", metavar="KEYS",
                        help="measure these problems (comma-separated keys) again under every recipe, though their rows "
                        "are complete (after a change of a recipe that touches only them)")
    parser.add_argument("--resume-from", type=Path, help="rows of an earlier run to continue (copied into $OUT first)")
    parser.add_argument("--report", type=Path, metavar="ROWS",
                        help="print the figures of a rows file (e.g. benchmarks/results/h200/self_speedup.jsonl); no GPU")
    args = parser.parse_args(argv)
    if args.report is not None:
        _select(args)
        rows = _rows(args.report)
        if not rows:
            print(f"{args.report}: no rows", file=sys.stderr)
            return 2
        for row in rows.values():  # every recipe the rows hold, those of other verified timing versions too
            for name in row.get("self_speedup", {}):
                RECIPES.setdefault(name, None)  # type: ignore[arg-type]
        report(rows, RECIPES)
        return 0
    if not torch.cuda.is_available():
        print("self_speedup needs a CUDA GPU", file=sys.stderr)
        return 2
    out = Path(os.environ.get("OUT", ".data/out"))
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "self_speedup.jsonl"
    if args.resume_from and args.resume_from.is_file() and not rows_path.exists():
        shutil.copyfile(args.resume_from, rows_path)
    _select(args)
    tasks = load_tasks(Path(args.bundle))[: args.limit]
    for folder in args.suite:
        tasks += load_suite_tasks(folder)
    if args.keys:
        wanted = set(args.keys.split(","))
        tasks = [t for t in tasks if t.key in wanted]
    print(f"{len(tasks)} problems on {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    rows = run(tasks, rows_path, args.budget_s, args.retry_errors, frozenset(filter(None, args.remeasure.split(","))))
    report({t.key: rows[t.key] for t in tasks if t.key in rows}, RECIPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
