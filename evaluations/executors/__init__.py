"""Where a run's evaluations execute: this host's GPUs (``local``) or a Ray cluster (``ray``).

Both split a run into batches of one problem each (a problem's baselines are measured once, by the
lane that runs its candidates) and run each batch as a lane: an ordinary run of the runner in a process
of its own, on one GPU. ``local`` runs one lane per GPU of this host; ``ray`` makes each batch a Ray
task that asks for one GPU and sends its records back to the driver, which writes them. A single lane on
one GPU is the runner as ``kverdict eval`` always ran it, in its own process. This face also gives ``local``, the
local executor's module (``_local``) itself: where a lane's process is started and its batch deadline read.
"""

from . import _local as local
from ._batches import Batch, BatchReport, LaneSpec, batches
from ._local import MAX_ATTEMPTS, Lane, LocalExecutor, batch_deadline_s, lanes_for
from ._ray import CodeMismatch, RayExecutor, RayUnavailable, checked_record, code_digest, evaluate_batch, seed_files

EXECUTORS = ("local", "ray")
"""The names ``kverdict eval --executor`` takes."""

__all__ = [
    "EXECUTORS", "MAX_ATTEMPTS", "Batch", "BatchReport", "CodeMismatch", "Lane", "LaneSpec", "LocalExecutor",
    "RayExecutor", "RayUnavailable", "batch_deadline_s", "batches", "checked_record", "code_digest",
    "evaluate_batch", "lanes_for", "local", "seed_files",
]
