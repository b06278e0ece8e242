"""The audit of a problem suite: each reference probed in its own worker (``_probe``), findings as pure functions
of what was measured (``_findings``), and the report that ``kverdict audit`` writes (``_report``)."""

from ._findings import findings_for
from ._probe import Probe, probe_problem
from ._report import ATOL, AuditOptions, audit_problems, build_report, default_report_path, write_report

__all__ = ["ATOL", "AuditOptions", "Probe", "audit_problems", "build_report", "default_report_path", "findings_for",
           "probe_problem", "write_report"]
