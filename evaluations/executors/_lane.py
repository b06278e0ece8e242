"""One lane: a process that runs one batch (``python -m evaluations.executors._lane SPEC REPORT``).

The executor starts a lane per batch with its device chosen in the environment (``CUDA_VISIBLE_DEVICES``,
or a set of CPU cores). The lane is an ordinary run of the runner (``run.run``) over the batch: every
candidate and baseline in its own confined worker, records written atomically as they are made, finished
records skipped. ``SPEC`` is a pickled :class:`LaneSpec` the executor wrote; ``REPORT`` receives the
:class:`BatchReport`. A lane whose executor dies stops as on Ctrl-C: its finished records are kept.
"""

from __future__ import annotations

import _thread
import os
import pickle
import socket
import sys
import threading
import time
from pathlib import Path

PARENT_POLL_S = 1.0
"""How often a lane checks that the process that started it is still there."""


def _watch_parent(parent: int, stop: threading.Event) -> None:
    while not stop.wait(PARENT_POLL_S):
        if os.getppid() != parent:
            _thread.interrupt_main()
            return


def run_lane(spec_path: Path, report_path: Path) -> int:
    """Run the batch of ``spec_path`` and write its report to ``report_path``; the process's exit status."""
    from schemas import write_text

    from .. import capture_environment
    from ..run import RunSummary, run
    from ._batches import BatchReport, LaneSpec

    spec = pickle.loads(spec_path.read_bytes())  # noqa: S301 - written by this lane's executor, never by a candidate
    if not isinstance(spec, LaneSpec):
        print(f"{spec_path}: not a lane spec", file=sys.stderr)
        return 2
    stop = threading.Event()
    threading.Thread(target=_watch_parent, args=(os.getppid(), stop), name="kverdict-lane-parent", daemon=True).start()
    summary = RunSummary()
    start = time.monotonic()
    try:
        run(spec.batch.loaded, spec.config, capture_environment(spec.config.device), summary)
    except KeyboardInterrupt:
        print("lane interrupted; finished records are kept", file=sys.stderr)
        return 130
    finally:
        stop.set()
        if spec.stats_path is not None:
            from ..run import write_stats

            write_stats(spec.stats_path, summary)
    write_text(report_path, BatchReport.of(summary, socket.gethostname(), time.monotonic() - start).to_json())
    return 0


def main(argv: list[str]) -> int:
    """Entry point: ``SPEC REPORT``."""
    from ..worker import watching

    if len(argv) != 2:
        print("usage: python -m evaluations.executors._lane SPEC REPORT", file=sys.stderr)
        return 2
    from ._local import LANE_ENV

    cpus = os.environ.get(LANE_ENV)
    if cpus:  # a CPU lane keeps to its share of the cores; its workers inherit the mask
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    with watching():  # first, before any thread starts (as the command line does)
        return run_lane(Path(argv[0]), Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
