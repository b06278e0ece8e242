"""Speed-of-light (roofline) figures of a problem on measured hardware ceilings.

T_SOL = max(FLOPs / rate, min_bytes / bandwidth), where the ceilings come from
``evaluations/data/ceilings/<hardware>.json`` (written on the device by ``benchmarks/ceilings.py``).

Which rate a problem may use: the fastest arithmetic its precision permits under the protocols'
tolerances. A float32 problem may be computed with TF32 tensor cores (both protocols accept
TF32-level error: the standard one through atol = rtol = 1e-2, the verified one through its
precision policy), so by default T_SOL uses the TF32 rate; ``tf32_allowed=False`` gives the strict
float32 floor. bfloat16 and float16 problems use the bf16 rate. Without a ceilings file for the
hardware nothing is made up: every function returns ``None``.

The counts come from the problem's metadata: written by hand for the own suite (``_counts``),
counted automatically for imported suites (``_auto_counts``, through the committed KernelBench index or
at load time; ``ProblemMeta.counted`` says which). An automatic FLOP count is the reference's algorithm,
which a kernel may beat honestly where the problem's inputs have structure: ``torch.diag(A) @ B`` counts
N times the multiplications the product needs, ``torch.triu(A @ B)`` of triangular matrices six times.
The record's figures (T_SOL, SOL score) use it as counted; the floor that the faster-than-physics check
holds a time to (:func:`t_sol_ms_for`) keeps only the byte term for automatic counts.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from schemas import Roofline

from ..core import Problem

CEILINGS_DIR = Path(__file__).parents[1] / "data" / "ceilings"
"""Where measured ceilings live, one ``<hardware>.json`` per hardware slug."""


@dataclass(frozen=True)
class Ceilings:
    """Measured limits of one device."""

    hardware: str
    date: str
    device_name: str
    copy_bytes_per_s: float
    """Device-to-device copy bandwidth, bytes read plus bytes written per second."""
    fp32_flops_per_s: float
    """Dense float32 matrix rate with TF32 off."""
    tf32_flops_per_s: float
    """Dense float32 matrix rate with TF32 on."""
    bf16_flops_per_s: float
    """Dense bfloat16 matrix rate."""

    def rate_for(self, dtype: str, tf32_allowed: bool) -> float:
        """The FLOP rate a problem of ``dtype`` may reach."""
        if dtype in ("bfloat16", "float16", "bf16", "fp16"):
            return self.bf16_flops_per_s
        return self.tf32_flops_per_s if tf32_allowed else self.fp32_flops_per_s


def load_ceilings(hardware: str, ceilings_dir: Path | None = None) -> Ceilings | None:
    """Ceilings of ``hardware`` from its JSON file, or ``None`` when it was never measured."""
    path = (ceilings_dir or CEILINGS_DIR) / f"{hardware}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    rates = data["rates"]
    return Ceilings(
        hardware=hardware,
        date=str(data["date"]),
        device_name=str(data["device_name"]),
        copy_bytes_per_s=float(rates["copy_bytes_per_s"]),
        fp32_flops_per_s=float(rates["fp32_flops_per_s"]),
        tf32_flops_per_s=float(rates["tf32_flops_per_s"]),
        bf16_flops_per_s=float(rates["bf16_flops_per_s"]),
    )


def t_sol_ms(flops: float, min_bytes: float, ceilings: Ceilings, dtype: str = "float32",
             tf32_allowed: bool = True) -> float:
    """max(flops / rate, bytes / bandwidth) in milliseconds."""
    compute_s = flops / ceilings.rate_for(dtype, tf32_allowed)
    memory_s = min_bytes / ceilings.copy_bytes_per_s
    return max(compute_s, memory_s) * 1e3


def t_sol_ms_for(problem: Problem, hardware: str, tf32_allowed: bool = True,
                 ceilings_dir: Path | None = None) -> float | None:
    """The floor no honest time of the problem on ``hardware`` goes below, in ms: T_SOL for hand-written
    counts, the byte term alone for automatic ones (their FLOPs may exceed what the problem needs);
    ``None`` without ceilings or FLOP/byte counts."""
    ceilings = load_ceilings(hardware, ceilings_dir)
    meta = problem.meta
    if ceilings is None or meta.flops is None or meta.min_bytes is None:
        return None
    flops = 0.0 if meta.counted == "automatic" else meta.flops
    return t_sol_ms(flops, meta.min_bytes, ceilings, meta.dtype, tf32_allowed)


def sol_score(candidate_ms: float, baseline_ms: float, t_sol: float) -> float | None:
    """SOL ExecBench's score S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)).

    1 means the candidate reached the floor, 0.5 means it matches the baseline, toward 0 slower.
    ``None`` when the baseline is not above the floor (the score is undefined there) or the
    candidate is so far below the floor that the formula breaks down.
    """
    headroom = baseline_ms - t_sol
    if headroom <= 0:
        return None
    denominator = 1.0 + (candidate_ms - t_sol) / headroom
    if denominator <= 0:
        return None
    return 1.0 / denominator


def roofline_for(problem: Problem, hardware: str, candidate_ms: float | None, baseline_ms: float | None,
                 tf32_allowed: bool = True, ceilings_dir: Path | None = None) -> Roofline | None:
    """The record's roofline figures, or ``None`` when the hardware's ceilings were never measured."""
    ceilings = load_ceilings(hardware, ceilings_dir)
    meta = problem.meta
    if ceilings is None or meta.flops is None or meta.min_bytes is None:
        return None
    floor = t_sol_ms(meta.flops, meta.min_bytes, ceilings, meta.dtype, tf32_allowed)
    usable = candidate_ms is not None and math.isfinite(candidate_ms) and candidate_ms > 0
    fraction = floor / candidate_ms if usable else None
    score = None
    if usable and baseline_ms is not None and math.isfinite(baseline_ms):
        score = sol_score(candidate_ms, baseline_ms, floor)
    return Roofline(flops=meta.flops, min_bytes=meta.min_bytes, t_sol_ms=floor,
                    fraction_of_roofline=fraction, sol_score=score, ceilings_date=ceilings.date, counted=meta.counted)
