"""The worker: what runs inside an isolated child process, or right around it.

``_isolation`` spawns a child per call, watches it and reads its result safely (``_child`` is the child's side:
its entry, questions to the runner); ``_confine`` (on the runner's side: environment, survivors, signals) and
``_landlock`` (its writes) confine it; ``_gpulock`` shares the GPU between workers (a timing holds it alone);
``_extensions`` builds a candidate's extensions; ``_evidence`` keeps the outputs the judge rules on and runs the
outside batch, whose answers ``_fingerprint`` sums; ``_worker`` holds the jobs a child runs (the targets the runner
names).

A worker imports this package at start-up, so it stays light: the names below are imported on first use
(PEP 562), and the modules only when asked for. ``gpulock`` is ``_gpulock`` itself, whose functions the other
packages call through the module (so a test that replaces one replaces it for them).
"""

from __future__ import annotations

from .._lazy import lazy_face

_PART_OF = {
    "BESIDE_NICE": "_worker",
    "confine_writes": "_worker",
    "confined": "_confine",
    "in_every_thread": "_child",
    "GPU_LOCK_ENV": "_gpulock",
    **dict.fromkeys(("restrict_writes", "scopes_signals", "unavailable"), "_landlock"),
    **dict.fromkeys(("Exhibits", "judge_outer", "outer_inputs", "outer_seeds", "rule_trials"), "_evidence"),
    **dict.fromkeys(("fingerprint", "forget_weights", "memory_order"), "_fingerprint"),
}
"""Name -> the module of this package that holds it."""
_MODULES = {"gpulock": "_gpulock"}
"""Name -> the module of this package given whole."""

__all__ = sorted({*_PART_OF, *_MODULES})

__getattr__, __dir__ = lazy_face(__name__, _PART_OF, globals(), _MODULES)
