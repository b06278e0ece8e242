"""The worker: what runs inside an isolated child process, or right around it.

``_isolation`` spawns a child per call, watches it and reads its result safely (``_child`` is the child's side:
its entry, questions to the runner); ``_confine`` (on the runner's side: environment, survivors, signals) and
``_landlock`` (its writes) confine it; the GPU lock that shares the GPU between workers (a timing holds it alone) is
``evaluations.core.gpulock``, named here too as ``gpulock``;
``_extensions`` builds a candidate's extensions; ``_evidence`` keeps the outputs the judge rules on and runs the
outside batch, whose answers ``_fingerprint`` sums; ``_worker`` holds the jobs a child runs (the targets the runner
names).

A worker imports this package at start-up, so it stays light: the names below are imported on first use
(PEP 562), and the modules only when asked for.
"""

from __future__ import annotations

from ..core import gpulock, lazy_face

_PART_OF = {
    **dict.fromkeys(("BESIDE_NICE", "CandidateLoadError", "ProblemModule", "candidate_scope", "confine_writes",
                     "describe", "load_candidate", "load_module", "load_problem", "unconfined_reason", "use_caches"),
                    "_worker"),
    **dict.fromkeys(("confined", "finished", "started", "watching", "worker_environment"), "_confine"),
    "in_every_thread": "_child",
    **dict.fromkeys(("IsolatedResult", "NoAnswer", "Spare", "SparePool", "ask", "run_isolated", "start_spare"),
                    "_isolation"),
    **dict.fromkeys(("hashed_loader", "kernel_language", "needs_build"), "_extensions"),
    **dict.fromkeys(("restrict_writes", "scopes_signals", "unavailable"), "_landlock"),
    **dict.fromkeys(("Exhibits", "judge_outer", "outer_batch", "outer_inputs", "outer_seeds", "rule_trials"),
                    "_evidence"),
    **dict.fromkeys(("fingerprint", "forget_weights", "memory_order"), "_fingerprint"),
}
"""Name -> the module of this package that holds it."""
_MODULES = {"landlock": "_landlock"}
"""Name -> the module of this package given whole."""
GPU_LOCK_ENV = gpulock.GPU_LOCK_ENV

__all__ = sorted({*_PART_OF, *_MODULES, "GPU_LOCK_ENV", "gpulock"})

__getattr__, __dir__ = lazy_face(__name__, _PART_OF, globals(), _MODULES)
