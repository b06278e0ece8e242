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
from types import ModuleType
from typing import Any, NamedTuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from evaluations.core import (  # noqa: E402
    gpulock,  # noqa: E402
    mean,
    median,
    quantile,
)
from evaluations.protocols.standard import SEED, collect_times_ms, set_seed  # noqa: E402
from evaluations.protocols.verified import to_device  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _verified_recipe import LAST_CLOCKS_MHZ, LAST_METHODS, LAST_SPEEDUP, PREVIOUS, PairRecipe, build_model, input_sets  # noqa: E402
from _verified_recipe import RECIPES as VERIFIED_RECIPES  # noqa: E402

Recipe = Callable[[Callable[[], Any]], float]
"""Times a zero-argument callable on the current CUDA device; returns the recipe's statistic in ms."""
SetRecipe = PairRecipe
"""Times the reference and then its copy over rotated input sets (the verified protocol's recipe); both ms."""

L2_FLUSH_BYTES = 512 * 1024 * 1024
"""Size of the buffer written before each call to evict L2 (the H200's L2 is 60 MiB)."""
FAST_MS = 0.020
"""Problems whose reference takes less than this are listed (launch overhead dominates)."""
WITHIN = 0.01
"""A self-speedup within this of 1.0 counts as faithful."""
BEYOND = 0.03
"""The verified timing's target: within +-1% (``WITHIN``) on >= 95% of problems, none beyond +-3%."""
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
    """KernelBench / this project's standard protocol: 3 warm-ups, 100 calls between CUDA events, mean."""
    return mean(collect_times_ms(fn, "cuda", warmup=3, calls=100))


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
REFERENCE_RECIPE = "kernelbench / standard (3 warm-ups, 100 calls, mean)"
"""Recipe whose reference time decides which problems count as under 20 us."""


class Task(NamedTuple):
    """One problem of the bundle."""

    level: int
    task_id: int
    source: str
    suite: str = "kernelbench-v0"

    @property
    def key(self) -> str:
        prefix = "" if self.suite == "kernelbench-v0" else f"{self.suite}/"
        return f"{prefix}L{self.level}/{self.task_id}"


def load_suite_tasks(folder: Path) -> list[Task]:
    """Every problem of a suite folder (``levelN/NNN_name.py``), level 0-padded ids kept."""
    tasks = []
    for path in sorted(folder.glob("level*/*.py")):
        level = int(path.parent.name.removeprefix("level"))
        task_id = int(path.name.split("_", 1)[0])
        tasks.append(Task(level, task_id, path.read_text(encoding="utf-8"), folder.name))
    return tasks


def load_tasks(bundle: Path) -> list[Task]:
    """Every distinct problem of a CUDA-L1-shaped bundle, in file order."""
    tasks: dict[tuple[int, int], Task] = {}
    with bundle.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                key = (int(row["level_id"]), int(row["task_id"]))
                tasks.setdefault(key, Task(key[0], key[1], row["ref_code"]))
    return list(tasks.values())


def tasks_by_key(bundle: Path, keys: list[str]) -> dict[str, Task]:
    """The problems of ``bundle`` named by ``keys`` (``L3/30``, ...); ValueError naming any it lacks."""
    tasks = {t.key: t for t in load_tasks(bundle) if t.key in keys}
    missing = [k for k in keys if k not in tasks]
    if missing:
        raise ValueError(f"not in {bundle}: {', '.join(missing)}")
    return tasks


def gpu_tasks(tool: str, bundle: Path, keys: list[str]) -> dict[str, Task] | None:
    """For a GPU tool's command line: the problems named by ``keys``, or ``None`` after saying on stderr
    why not (no CUDA GPU, or keys the bundle lacks)."""
    if not torch.cuda.is_available():
        print(f"{tool} needs a CUDA GPU", file=sys.stderr)
        return None
    try:
        return tasks_by_key(bundle, keys)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return None


def build_pair(source: str, tag: str, folder: Path) -> tuple[ModuleType, torch.nn.Module, torch.nn.Module]:
    """The problem's module, its ``Model`` on the GPU, and a separately built copy (``Model`` renamed
    ``ModelNew``, imported as its own module), each constructed after the same seed (``build_model``)."""
    reference, ref_model = build_model(source, tag, folder)
    return reference, ref_model, build_model(source, tag, folder, copy=True)[1]


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


BANDS_MS = (0.03, 0.1, 1.0, 10.0)
"""Edges of the reference-time bands in which the report splits each recipe's share within +-1%."""


def _by_band(members: list[dict[str, Any]], name: str) -> str:
    """'<30us 12/37, 30-100us ...': within +-1% / measured, per band of the reference's time."""
    edges = (0.0, *BANDS_MS, float("inf"))
    parts = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        band = [r for r in members if name in r["self_speedup"] and lo <= r["ref_ms"][name] < hi]
        if band:
            ok = sum(abs(r["self_speedup"][name] - 1.0) <= WITHIN for r in band)
            label = (f"<{hi * 1000:g}us" if lo == 0 else f">={lo:g}ms" if hi == float("inf")
                     else f"{lo * 1000:g}-{hi * 1000:g}us" if hi <= 1 else f"{lo:g}-{hi:g}ms")
            parts.append(f"{label} {ok}/{len(band)}")
    return ", ".join(parts)


def _clock_summary(members: list[dict[str, Any]], name: str) -> str | None:
    """Whether the SM clock explains the misses: clock ratios of misses vs hits, and how often the
    slower of the two timings also ran at the lower clock."""
    pairs = []
    for r in members:
        c = r.get("clock_mhz", {}).get(name) or {}
        if name in r["self_speedup"] and c.get("ref") and c.get("copy"):
            pairs.append((r["self_speedup"][name], c["ref"] / c["copy"]))
    if not pairs:
        return None
    misses = [(s, c) for s, c in pairs if abs(s - 1.0) > WITHIN]
    hits = [c for s, c in pairs if abs(s - 1.0) <= WITHIN]
    # s = ref time / copy time (< 1: the copy was slower); c = ref clock / copy clock (> 1: the copy's lower)
    same_side = sum((s < 1) == (c > 1) for s, c in misses if c != 1.0)

    def med(ratios: list[float]) -> str:
        return f"{quantile([abs(x - 1) for x in ratios], 0.5):.2%}" if ratios else "-"

    return (f"SM clock ref/copy: median |ratio-1| {med([c for _, c in misses])} on misses, {med(hits)} on hits; "
            f"slower timing at the lower clock in {same_side}/{len(misses)} misses (n={len(pairs)})")


def report(rows: dict[str, dict[str, Any]]) -> None:
    """Per suite and recipe: share within +-1%, p50/p95/max of |self-speedup - 1|; failures and sub-20-us problems."""
    good = [(k, r) for k, r in rows.items() if "error" not in r]
    print(f"\n{len(good)} problems measured, {len(rows) - len(good)} skipped (reference failed)")
    suites = sorted({k.split("/L", 1)[0] if "/L" in k else "kernelbench-v0" for k, _ in good})
    for suite in suites:
        members = [r for k, r in good if (k.split("/L", 1)[0] if "/L" in k else "kernelbench-v0") == suite]
        print(f"-- {suite} ({len(members)} problems)")
        for name in RECIPES:
            devs = [abs(r["self_speedup"][name] - 1.0) for r in members if name in r["self_speedup"]]
            if devs:
                within = sum(d <= WITHIN for d in devs) / len(devs)
                print(f"{name:55s} within +-1%: {within:6.1%}   p50 |s-1|: {quantile(devs, 0.5):6.2%}   "
                      f"p95 |s-1|: {quantile(devs, 0.95):6.2%}   max: {max(devs):6.2%}   (n={len(devs)})")
                print(f"{'':55s} within +-1% by the reference's time under this recipe: {_by_band(members, name)}")
                far = sorted(((abs(r["self_speedup"][name] - 1.0), r["key"]) for r in members
                              if abs(r["self_speedup"].get(name, 1.0) - 1.0) > BEYOND), reverse=True)
                listed = f" ({', '.join(k for _, k in far)})" if 0 < len(far) <= 12 else ""
                print(f"{'':55s} beyond +-{BEYOND:.0%}: {len(far)}{listed}")
                clock_line = _clock_summary(members, name)
                if clock_line:
                    print(f"{'':55s} {clock_line}")
                graphs = [r for r in members if (r.get("method", {}).get(name) or {}).get("ref") == "cuda_graph"]
                if graphs:
                    ok = sum(abs(r["self_speedup"][name] - 1.0) <= WITHIN for r in graphs)
                    print(f"{'':55s} timed as CUDA graph replays (short or host-bound calls): {len(graphs)} problems, {ok} within +-1%: "
                          + ", ".join(f"{r['key']} {r['self_speedup'][name]:.3f}" for r in graphs))
    for key, row in rows.items():
        if "error" in row:
            print(f"reference failed: {key}: {row['error']}")
    fast = sorted((r["ref_ms"][REFERENCE_RECIPE], k) for k, r in rows.items()
                  if "error" not in r and r["ref_ms"].get(REFERENCE_RECIPE, 1.0) < FAST_MS)
    print(f"{len(fast)} problems under {FAST_MS * 1000:g} us: " + ", ".join(f"{k} ({ms * 1000:.1f} us)" for ms, k in fast))


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
        for row in rows.values():  # recipes of earlier versions too (e.g. verified timing before a change)
            for name in row.get("self_speedup", {}):
                RECIPES.setdefault(name, None)  # type: ignore[arg-type]
        report(rows)
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
    report({t.key: rows[t.key] for t in tasks if t.key in rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
