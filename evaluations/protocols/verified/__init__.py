"""The verified protocol: fair baselines, hidden inputs, a precision policy and integrity checks.

Baselines: eager with TF32 allowed, ``torch.compile`` of the reference, and eager float32 with TF32
off (to split the standard -> verified drop), each timed in its own worker process. Candidates:
hidden distributions D1 x1, D2 x3, D3 x0.01, D4 x(-1) under fresh seeds, float64 reference,
atol = rtol = 1e-3 judged by the precision policy, and the integrity checks of this package's
building blocks. Timing: L2 flush, rotated fresh inputs, device spin, median with IQR and
a 95% CI over at least 100 calls and 0.5 s, until the CI half-width is under 0.5% or a time cap;
the module's weights rotated over sixteen places (the time: the mean of their medians); replays of
captured CUDA graphs where the call is under 0.1 ms or the eager call is host-bound
(``evaluations.timing``); a candidate of a problem whose eager calls follow the host's own speed is timed
in turns with fresh timings of the baselines, every turn on one host core (``TURNS_WHEN_HOST_BOUND``).
A candidate that sets algorithm-choice flags (``cudnn.benchmark``, ``cudnn.deterministic``) is judged on
its merits, labelled ``sets:<flag>``, and compared with baselines timed with the same flags
(``Job.algorithm_flags``). Every passing candidate gets a precision class, and a held-out shape re-check.
See the methodology page (site_src/methodology.md), "Protocols".

This package is the protocol module of the registry (``evaluations.protocols``) and its parts: the baselines,
memory and entry points (``_protocol``), a candidate's evaluation (``_candidate``: its steps' shared context in
``_context``, the correctness trials in ``_trials``, the re-check after timing in ``_recheck``) and the judge's
re-run (``_judging``), built from the precision policy (``_precision``), integrity checks (``_integrity``,
``_provenance``, ``_checklog``), the static scan (``_scan``), the held-out shape re-check (``_shapes``), the
speed-of-light check (``_sol``), the reference (``_reference``) and a job's settings (``_setup``), over what
``evaluations.core`` holds for every stage: the statistics, the hidden input distributions and allocator poisoning.
The statistics, the precision policy's arithmetic and the static scan are pure and run on the CPU.

The table's figures below are read without torch. The names of the parts (``__all__``) are imported on first
use.
"""

from __future__ import annotations

from schemas import PROTOCOLS, protocol_info

from ...core import lazy_face

VERSION = PROTOCOLS["verified"]["versions"][-1]
"""The version this module runs (what changed from one to the next: ``CHANGELOG.md``). Records and cached
baselines of another version are redone, and a record of another version is not reproduced by this one."""
INFO = protocol_info("verified", VERSION)
"""Its parameters and its records' ``protocol`` block, from the protocols' one table (``schemas.PROTOCOLS``): seeds
are drawn fresh for every evaluation, and each correctness check in a record names its seed. The distributions
(``DISTRIBUTIONS``) and the timing plan's defaults (``TimingPlan``) are what the table pins, as a test checks."""
BASELINE_KINDS: tuple[str, ...] = PROTOCOLS["verified"]["baseline_kinds"]
SPEEDUP_BASELINE: dict[str, str] = dict(PROTOCOLS["verified"]["speedups"])
PACED_BY_EAGER_BASELINE = True
"""The eager baseline's calls per event pair and timing method (eager calls, or CUDA graph replays for a
host-bound problem) are reused by the other baselines and every candidate."""
TURNS_WHEN_HOST_BOUND = True
"""Where the eager baseline is host-bound and timed as eager calls (no CUDA graph could hold the call), every
candidate is timed in turns with fresh timings of all baseline kinds, each in its own worker, a batch of
samples a turn (``Runner.timed_in_turns``): the host's own speed, which sets such times and drifts, then
weighs on candidate and baselines alike, and each speedup is the median of the per-round ratios."""

_PARTS: dict[str, tuple[str, ...]] = {
    "_protocol": ("judge", "measure_memory", "run_baseline", "run_candidate", "time_baseline", "warm_baseline"),
    "_checklog": ("CHECKS", "CheckLog"),
    "_integrity": (
        "changed_state", "constant_output", "flags_set", "mutated_inputs", "new_threads", "output_type",
        "outputs_of", "python_threads", "replaced_functions", "rng_change", "rng_snapshot", "snapshot_flags",
        "snapshot_functions",
        "snapshot_state", "storage_overlap",
    ),
    "_precision": ("Tolerance", "judge_precision", "precision_class", "precision_class_of"),
    "_provenance": ("watch_thread_starts",),
    "_reference": ("References",),
    "_scan": ("scan",),
    "_setup": ("Settings", "build_reference", "set_count", "timing_sets", "to_device"),
    "_shapes": ("held_out_value", "size_constants", "with_value"),
    "_sol": ("SOL_MARGIN",),
}
_PART_OF = {name: part for part, names in _PARTS.items() for name in names}
_FROM_CORE = (
    "DISTRIBUTIONS", "SEED_FLOOR", "Distribution", "NotReproducible", "check_reproducible", "draw", "fresh_seeds",
    "refresh_in_place", "signature", "prefill_allocator", "ci_half_width_rel", "grouped_half_width_rel",
    "grouped_median", "median_ci", "median_ci_ranks", "round_medians", "summarize_verified",
)
"""The hidden input distributions, allocator poisoning and statistics of the protocol, which live in
``evaluations.core`` (the timing and the worker use them too)."""

__all__ = [
    "BASELINE_KINDS", "INFO", "PACED_BY_EAGER_BASELINE", "SPEEDUP_BASELINE", "TURNS_WHEN_HOST_BOUND", "VERSION",
    *_PART_OF, *_FROM_CORE,
]

__getattr__, __dir__ = lazy_face(__name__, _PART_OF, globals(), faces=dict.fromkeys(_FROM_CORE, "evaluations.core"))
