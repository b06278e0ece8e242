"""What the harness knows of a suite's problems beyond their source: the own suite's sizes and analytic counts
(``_counts``) and its ``meta.json`` (``_meta``), automatic FLOP and byte counts of imported problems
(``_auto_counts``), and the roofline floor and SOL score against measured ceilings (``_roofline``)."""

from ._auto_counts import Count, count_source, with_automatic_counts
from ._meta import META_PATH, SUITE, SUITE_DIR, build_meta, counts, load_problem_module, render_meta, suite_files
from ._roofline import load_ceilings, roofline_for, sol_score, t_sol_ms_for

__all__ = ["META_PATH", "SUITE", "SUITE_DIR", "Count", "build_meta", "count_source", "counts", "load_ceilings",
           "load_problem_module", "render_meta", "roofline_for", "sol_score", "suite_files", "t_sol_ms_for",
           "with_automatic_counts"]
