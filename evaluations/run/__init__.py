"""The evaluation run: prepare candidates (builds, warm-up calls), measure or reuse baselines, evaluate, write records.

Every candidate and every baseline runs in its own spawned process (``_isolation``); records are
written atomically the moment they are finished, so an interrupted run keeps all of them, and a
re-run of the same command skips records already written for the same kernel and protocol version.
"""

from ._config import RunConfig, RunSummary, default_prewarm
from ._failures import failed_outcome, out_of_memory
from ._loop import progress_bar, run
from ._paths import baseline_path, effective_info, flag_tag, problem_ref, record_path
from ._records import assemble_record
from ._runner import Runner
from ._schedule import Work, after_builds

__all__ = [
    "RunConfig", "RunSummary", "Runner", "Work", "after_builds", "assemble_record", "baseline_path",
    "default_prewarm", "effective_info", "failed_outcome", "flag_tag", "out_of_memory", "problem_ref",
    "progress_bar", "record_path", "run",
]
