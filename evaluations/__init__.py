"""Evaluation runner of KernelVerdict: problem and candidate loading, isolated workers, protocols.

This face holds the first stage, loading problems and candidates (and the environment a run records); the run, its
isolated workers and the protocols have faces of their own (``evaluations.run``, ``evaluations.worker``,
``evaluations.protocols``).
Importing this package does not import torch; the runner imports it where it is needed.
"""

from ._bundles import KNOWN_BUNDLES, is_bundle, load_bundle
from ._env import (
    HARNESS_FALLBACK_VERSION,
    capture_environment,
    cpu_name,
    hardware_slug,
    harness_version,
    resolve_device,
)
from ._kernelbench_index import INDEX_PATH, REVISIONS, build_index, identify, index_main, normalized
from ._loaders import (
    Loaded,
    LoadError,
    SourceOverride,
    load_candidate_folder,
    load_inputs,
    load_problem_folder,
    load_problems,
    repo_relpath,
)
from .core import Candidate, Claim, Job, Origin, Overrides, Problem, ProblemMeta, sha256_text

__all__ = [
    "Candidate", "Claim", "HARNESS_FALLBACK_VERSION", "INDEX_PATH", "Job", "KNOWN_BUNDLES", "LoadError", "Loaded",
    "Origin", "Overrides", "Problem", "ProblemMeta", "REVISIONS", "SourceOverride", "build_index", "capture_environment",
    "cpu_name", "hardware_slug", "harness_version", "identify", "index_main", "is_bundle", "load_bundle", "load_candidate_folder",
    "load_inputs", "load_problem_folder", "load_problems", "normalized", "repo_relpath", "resolve_device", "sha256_text",
]
