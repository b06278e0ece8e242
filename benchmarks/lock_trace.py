"""Which steps of a concurrent GPU run keep its timings waiting: a reading of the workers' lock traces.

Run an evaluation with ``KVERDICT_GPU_TRACE=<folder>`` (``evaluations.core.gpulock``): each worker appends every
step of its use of the shared GPU lock to ``<folder>/trace-<pid>.txt``. This script reads them back and prints

* the timing lane: the share of the traced span in which one worker timed alone, in which a timing waited
  for the device (every other worker then stops at its next step), and in which no timing was ready;
* per kind of job (candidate, baseline, judge, memory; per protocol): jobs, their wall time in the lock, the
  time they held the device alone (timing) and the time they waited for it;
* the steps (harness line to harness line) that held the device shared while a timing waited, worst first:
  how often a waiting timing was held up by that step last, and for how long in all;
* the steps in which workers were out of the lock, worst first: host work done with the lock let go (a host
  draw of a problem's inputs) or a yield to another's timing;
* while no timing was ready (no worker timing or waiting to time): how many workers stood in each state, per kind
  of job, on average over those seconds, and the longest such gaps (from the span's start). A worker is
  ``starting`` from its process's start to its job's, a spare started ahead waiting for its job included: many
  workers starting and few in a job there means the run handed out no work (a chunk's end, its warm-ups).

    python3 benchmarks/lock_trace.py <folder> [--json PATH] [--top 15]
"""

from __future__ import annotations

import argparse
import bisect
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Hold:
    """One interval of one worker: ``state`` is starting (from the process's start to its job's: imports,
    confinement; a worker started ahead of need waits here too), entering (waiting to take the device at its
    job's start), shared, waiting (for the device alone), alone (timing) or out (yielded to another's timing); ``step`` names the harness lines it ran between."""

    pid: int
    kind: str
    state: str
    start: float
    end: float
    step: str


NEXT_STATE = {"born": "starting", "begin": "entering", "in": "shared", "want": "waiting", "alone": "alone", "out": "out"}


def job_kind(label: str) -> str:
    """``stage:protocol`` of a trace label, with a baseline's kind (``baseline:verified:compile``)."""
    parts = label.split(":")
    if parts[0] == "baseline" and len(parts) >= 4:
        return f"baseline:{parts[1]}:{parts[-1].split('+')[0]}" + (":turns" if "party" in label else "")
    return ":".join(parts[:2]) + (":turns" if "party" in label else "")


def read_trace(path: Path) -> list[Hold]:
    """The intervals of one worker's trace (an unfinished last interval is dropped)."""
    pid = int(path.stem.split("-")[-1])
    holds: list[Hold] = []
    kind, state, since, where = "?", None, 0.0, ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split(" ", 2)
        if len(fields) != 3:
            continue
        t, event, site = float(fields[0]), fields[1], fields[2]
        if event in ("born", "begin"):
            kind = job_kind(site)
        if state is not None:
            holds.append(Hold(pid, kind, state, since, t, f"{where} -> {site}"))
        # a yield point that did not yield ("pass") splits the interval and keeps its state
        state = state if event == "pass" else NEXT_STATE.get(event)
        since, where = t, site
    return holds


def covered(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the union of ``intervals``."""
    total, reach = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def stragglers(holds: list[Hold]) -> dict[tuple[str, str], list[float]]:
    """For each wait of a timing: the shared hold of another worker that ended last before it got the device,
    and how long the timing waited after the last other timing ended; keyed by (job kind, step)."""
    by_end = sorted((h for h in holds if h.state in ("shared", "alone")), key=lambda h: h.end)
    found: dict[tuple[str, str], list[float]] = defaultdict(list)
    for wait in (h for h in holds if h.state == "waiting"):
        others = [h for h in by_end if h.pid != wait.pid and h.start < wait.end and wait.start <= h.end <= wait.end + 0.05]
        timings = [h.end for h in others if h.state == "alone"]
        after = max([wait.start, *timings])
        shared = [h for h in others if h.state == "shared" and h.end >= after]
        if shared and wait.end > after:
            last = shared[-1]
            found[(last.kind, last.step)].append(wait.end - after)
    return found


def outside(holds: list[Hold], top: int) -> list[dict[str, object]]:
    """The steps in which workers were out of the lock, worst first: host work the harness does with the lock let
    go (a host draw of the problem's inputs, a reference's construction) or a yield to another's timing, by (kind,
    step); each interval runs to the worker's taking the lock again, any wait for that included."""
    found: dict[tuple[str, str], list[float]] = defaultdict(list)
    for h in holds:
        if h.state == "out":
            found[(h.kind, h.step)].append(h.end - h.start)
    ranked = sorted(((sum(v), len(v), k) for k, v in found.items()), reverse=True)[:top]
    return [{"kind": k, "step": step, "times": n, "seconds": round(s, 1)} for s, n, (k, step) in ranked]


def gaps(intervals: list[tuple[float, float]], first: float, last: float) -> list[tuple[float, float]]:
    """The parts of ``[first, last]`` that no interval of ``intervals`` covers, in order."""
    out, reach = [], first
    for a, b in sorted(intervals):
        if a > reach:
            out.append((reach, min(a, last)))
        reach = max(reach, b)
    if reach < last:
        out.append((reach, last))
    return [(a, b) for a, b in out if b > a]


def while_idle(holds: list[Hold], idle: list[tuple[float, float]], top: int) -> list[dict[str, object]]:
    """The workers in each (state, kind) during the ``idle`` gaps (sorted, disjoint: those in which no timing was
    ready), as a mean count over those seconds, most first."""
    total = sum(b - a for a, b in idle)
    found: dict[tuple[str, str], float] = defaultdict(float)
    starts = [a for a, _ in idle]
    for h in holds:
        # the idle gaps are disjoint and sorted: only those from the one before h.start onwards can overlap it
        i = max(0, bisect.bisect_right(starts, h.start) - 1)
        while i < len(idle) and idle[i][0] < h.end:
            overlap = min(h.end, idle[i][1]) - max(h.start, idle[i][0])
            if overlap > 0:
                found[(h.state, h.kind)] += overlap
            i += 1
    ranked = sorted(((v, k) for k, v in found.items()), reverse=True)[:top]
    return [{"state": state, "kind": kind, "workers": round(v / total, 2) if total else 0.0}
            for v, (state, kind) in ranked]


def summarise(folder: Path, top: int) -> dict[str, object]:
    """The figures this script prints, as plain data."""
    holds = [h for path in sorted(folder.glob("trace-*.txt")) for h in read_trace(path)]
    if not holds:
        raise SystemExit(f"no lock traces in {folder}")
    first, last = min(h.start for h in holds), max(h.end for h in holds)
    span = last - first
    alone = covered([(h.start, h.end) for h in holds if h.state == "alone"])
    waiting = covered([(h.start, h.end) for h in holds if h.state == "waiting"])
    timing_lane = [(h.start, h.end) for h in holds if h.state in ("alone", "waiting")]
    busy_or_waiting = covered(timing_lane)
    kinds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    pids_of: dict[str, set[int]] = defaultdict(set)
    for h in holds:
        kinds[h.kind][h.state] += h.end - h.start
        pids_of[h.kind].add(h.pid)
    per_kind = {k: {"jobs": len(pids_of[k]), **{s: round(v, 1) for s, v in sorted(kinds[k].items())}}
                for k in sorted(kinds)}
    blame = sorted(((sum(v), len(v), k) for k, v in stragglers(holds).items()), reverse=True)[:top]
    idle_gaps = gaps(timing_lane, first, last)
    longest = sorted(idle_gaps, key=lambda g: g[0] - g[1])[:top]
    return {"span_s": round(span, 1), "workers": len({h.pid for h in holds}),
            "timing_alone_share": round(alone / span, 3), "timing_waiting_share": round((busy_or_waiting - alone) / span, 3),
            "no_timing_ready_share": round(1 - busy_or_waiting / span, 3), "waiting_union_s": round(waiting, 1),
            "per_kind": per_kind,
            "held_up_by": [{"kind": k, "step": step, "times": n, "seconds": round(s, 1)} for s, n, (k, step) in blame],
            "outside": outside(holds, top), "idle_s": round(sum(b - a for a, b in idle_gaps), 1),
            "while_idle": while_idle(holds, idle_gaps, top), "idle_gaps": [{"from_s": round(a - first, 1), "seconds": round(b - a, 1)} for a, b in longest]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    figures = summarise(args.folder, args.top)
    print(f"traced span {figures['span_s']} s, {figures['workers']} workers")
    print(f"timing lane: one worker timing alone {figures['timing_alone_share']:.1%} of the span, a timing waiting "
          f"for the device {figures['timing_waiting_share']:.1%}, no timing ready {figures['no_timing_ready_share']:.1%}")
    print("\nper kind of job (seconds in each state, summed over its workers)")
    for kind, row in figures["per_kind"].items():  # type: ignore[union-attr]
        print(f"  {kind:32} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    print("\nsteps that last held the device while a timing waited (kind, step: times, seconds)")
    for row in figures["held_up_by"]:  # type: ignore[union-attr]
        print(f"  {row['seconds']:7.1f} s  {row['times']:4}x  {row['kind']:28} {row['step']}")
    print("\nsteps out of the lock (host work with the lock let go, or a yield to a timing; kind, step: times, "
          "seconds)")
    for row in figures["outside"]:  # type: ignore[union-attr]
        print(f"  {row['seconds']:7.1f} s  {row['times']:4}x  {row['kind']:28} {row['step']}")
    print(f"\nwhile no timing was ready ({figures['idle_s']} s): workers in each state, per kind of job (mean count)")
    for row in figures["while_idle"]:  # type: ignore[union-attr]
        print(f"  {row['workers']:6.2f}  {row['state']:9} {row['kind']}")
    print("longest of those gaps (seconds from the span's start: length): " + ", ".join(
        f"{g['from_s']:.0f}: {g['seconds']:.1f} s" for g in figures["idle_gaps"]))  # type: ignore[union-attr]
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

