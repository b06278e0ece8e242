"""The evaluation run: prepare candidates (builds, warm-up calls), measure or reuse baselines, evaluate, write records.

Every candidate and every baseline runs in its own spawned process (``evaluations.worker``); records are
written atomically the moment they are finished, so an interrupted run keeps all of them, and a
re-run of the same command skips records already written for the same kernel and protocol version.
This face also holds the parts of a run: isolated and confined workers, extension builds, the judge, the phase
log and reproduction of a record.
"""

from ..core import Judgement, JudgeRequest, Ruling
from ..worker import (
    IsolatedResult,
    NoAnswer,
    SparePool,
    ask,
    candidate_scope,
    hashed_loader,
    kernel_language,
    load_module,
    needs_build,
    run_isolated,
    start_spare,
    use_caches,
    worker_environment,
)
from ._admission import FOOTPRINT_FACTOR, Admission, budget_of
from ._config import RunConfig, RunSummary, default_prewarm, write_stats
from ._failures import failed_outcome, out_of_memory
from ._gpubusy import BusySampler
from ._judge import LABEL_UNCONFIRMED, NOT_JUDGED, OuterClock, outer_calls, reconcile
from ._loop import progress_bar, run
from ._paths import baseline_path, effective_info, finished_record, flag_tag, problem_ref, record_path, trials_limit
from ._phases import PhaseLog, Span, union_s
from ._records import assemble_record
from ._reproduce import (
    DEFAULT_DATASET_ROOTS,
    DEFAULT_PROBLEM_ROOTS,
    ReproduceError,
    Reproduction,
    agreement,
    check_device,
    find_kernel,
    find_problem,
    load_original,
    protocol_options,
    records_root_of,
    reproduce,
)
from ._runner import Runner
from ._schedule import Work, after_builds

__all__ = [
    "FOOTPRINT_FACTOR", "Admission", "BusySampler", "budget_of",
    "DEFAULT_DATASET_ROOTS", "DEFAULT_PROBLEM_ROOTS", "IsolatedResult", "JudgeRequest", "Judgement", "LABEL_UNCONFIRMED", "NOT_JUDGED",
    "NoAnswer", "OuterClock", "PhaseLog", "ReproduceError", "Reproduction", "Ruling", "RunConfig", "RunSummary",
    "Runner", "Span", "SparePool", "Work", "after_builds", "agreement", "ask", "assemble_record", "baseline_path",
    "candidate_scope", "check_device", "default_prewarm", "effective_info", "failed_outcome", "find_kernel",
    "find_problem", "finished_record", "flag_tag", "hashed_loader", "kernel_language", "load_module", "load_original",
    "needs_build", "out_of_memory", "outer_calls", "problem_ref", "progress_bar", "protocol_options", "reconcile",
    "record_path", "records_root_of", "reproduce", "run", "run_isolated", "start_spare", "trials_limit", "union_s",
    "use_caches",
    "worker_environment", "write_stats",
]
