"""The "faster than physically possible" check: a time below the roofline floor, beyond the noise."""

from __future__ import annotations

import torch

from schemas import TimingStats

from ...core import Problem
from ._checklog import CheckLog

SOL_MARGIN = 0.10
"""Share of T_SOL allowed below the floor on top of the CI (measured ceilings are not exact)."""


def sol_evidence(problem: Problem, device: torch.device, stats: TimingStats, log: CheckLog) -> str | None:
    """Evidence when even the upper end of the time's 95% CI lies below T_SOL; skips when no floor is known."""
    from ... import hardware_slug
    from ...suite import t_sol_ms_for

    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    t_sol = t_sol_ms_for(problem, hardware_slug(name, device.type), tf32_allowed=True)
    if t_sol is None or t_sol <= 0:
        log.skip("faster-than-sol", "no roofline floor for this problem on this hardware")
        return None
    high = stats.ci95_high_ms if stats.ci95_high_ms is not None else stats.median_ms
    if high < (1.0 - SOL_MARGIN) * t_sol:
        return (f"median {stats.median_ms:.4g} ms (95% CI up to {high:.4g} ms) is below the speed-of-light "
                f"floor T_SOL = {t_sol:.4g} ms")
    return None
