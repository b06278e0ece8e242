"""Evaluation runner of KernelVerdict: problem and candidate loading, isolated workers, protocols.

Importing this package does not import torch; the runner imports it where it is needed.
"""

from ._types import Candidate, Job, Origin, Problem, ProblemMeta, sha256_text

__all__ = ["Candidate", "Job", "Origin", "Problem", "ProblemMeta", "sha256_text"]
