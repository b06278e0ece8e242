"""Synthetic records that validate against the schema, for tests and the site-build benchmark.

``synthetic_record`` builds one record from a few numbers that matter to the metrics (status,
speedups, memory, SOL score); every other field gets a plausible constant. Timings are made
consistent with the speedups (baseline statistic / candidate statistic), as real records are.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from schemas import Record, protocol_info, record_relpath

from ._protocols import EAGER_KIND

SYNTHETIC_FRESH_SEED = 20_000_003
"""The seed of a synthetic verified trial (the verified protocol draws its seeds fresh, above its floor)."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _timing(ms: float, statistic_ci: bool) -> dict:
    t = {"method": "cuda_events", "calls": 100, "mean_ms": ms, "median_ms": ms, "min_ms": ms * 0.97,
         "max_ms": ms * 1.05, "std_ms": ms * 0.01, "l2_flush": statistic_ci}
    if statistic_ci:
        t.update(q1_ms=ms * 0.99, q3_ms=ms * 1.01, ci95_low_ms=ms * 0.995, ci95_high_ms=ms * 1.005)
    return t


@dataclass
class Spec:
    """The metric-relevant facts of one synthetic record."""

    model: str
    problem_id: int
    protocol: str = "verified"
    status: str = "correct"
    speedup: float | None = 1.0
    """vs_eager; the candidate time is the baseline time divided by it."""
    vs_eager_fp32: float | None = None
    vs_compile: float | None = None
    level: int = 1
    suite: str = "kernelverdict"
    hardware: str = "h200"
    sample: int = 0
    baseline_ms: float = 2.0
    cand_peak_bytes: int | None = None
    base_peak_bytes: int | None = None
    sol_score: float | None = None
    failed_check: str | None = None
    evidence: str | None = None
    reproduces: str | None = None
    problem_name: str | None = None
    labels: list[str] = field(default_factory=list)
    provider: str = "synthetic"
    """``kernelverdict`` marks the project's own records (fixtures, zoo), which are never ranked."""
    claimed: float | None = None
    """The source's claimed speedup, when the record carries one."""
    precision_class: str | None = None
    """The verified protocol's precision class of a passing candidate (``float32-like``, ``TF32-like``, ``reduced``)."""
    shape_passed: bool | None = None
    """Outcome of the held-out shape re-check; ``None`` writes no re-check."""


def record_dict(spec: Spec) -> dict:
    """The JSON object of the record a spec describes."""
    name = spec.problem_name or f"problem_{spec.level}_{spec.problem_id}"
    proto = protocol_info(spec.protocol).model_dump(exclude_none=True)
    verified = spec.protocol == "verified"
    d: dict = {
        "schema_version": "1.0",
        "model": {"name": spec.model, "provider": spec.provider, "sample": spec.sample},
        "problem": {"suite": spec.suite, "level": spec.level, "id": spec.problem_id, "name": name,
                    "source_sha256": _sha(f"{spec.suite}/{spec.level}/{name}")},
        "kernel": {"sha256": _sha(f"{spec.model}/{name}/{spec.sample}"), "language": "cuda",
                   "path": f"kernels/{spec.model}/{name}__s{spec.sample}.py"},
        "protocol": proto,
        "environment": {"hardware": spec.hardware, "device_name": "NVIDIA H200", "driver": "570.1",
                        "cuda": "12.8", "torch": "2.11.0", "triton": "3.6.0", "python": "3.12.3",
                        "harness_version": "0.1.0", "timestamp": "2026-11-01T12:00:00Z"},
        "status": spec.status,
        "labels": list(spec.labels),
    }
    distributions = proto["distributions"]
    passed = spec.status in ("correct", "hacked")
    d["correctness"] = [{"name": f"{dist} seed {s}", "distribution": dist, "seed": s, "passed": passed,
                         "max_abs_error": 1e-5 if passed else 0.5, "error_budget_used": 0.2 if passed else 40.0}
                        for dist in distributions for s in (proto["seeds"][:1] or [SYNTHETIC_FRESH_SEED])]
    if spec.status in ("compile_error", "runtime_error", "timeout"):
        d["correctness"] = []
        d["error"] = f"{spec.status.replace('_', ' ')} in synthetic candidate"
    if verified:
        failed = spec.failed_check if spec.status == "hacked" else None
        d["integrity"] = [{"name": n, "passed": n != failed, "evidence": spec.evidence if n == failed else None}
                          for n in ("hidden-inputs", "output-aliasing", "timer-patching", failed or "input-mutation")]
        d["integrity"] = list({c["name"]: c for c in d["integrity"]}.values())
    if spec.status in ("correct", "hacked") and spec.speedup is not None:
        cand = spec.baseline_ms / spec.speedup
        d["timing"] = _timing(cand, verified)
        d["baselines"] = [{"kind": EAGER_KIND[spec.protocol], "timing": _timing(spec.baseline_ms, verified),
                           "peak_memory_bytes": spec.base_peak_bytes}]
        sp = {"vs_eager": spec.speedup}
        if spec.vs_eager_fp32 is not None:
            sp["vs_eager_fp32"] = spec.vs_eager_fp32
            d["baselines"].append({"kind": "eager_fp32", "timing": _timing(cand * spec.vs_eager_fp32, verified)})
        if spec.vs_compile is not None:
            sp["vs_compile"] = spec.vs_compile
            d["baselines"].append({"kind": "compile", "timing": _timing(cand * spec.vs_compile, verified)})
        d["speedup"] = sp
        d["memory"] = {"candidate_peak_bytes": spec.cand_peak_bytes, "baseline_peak_bytes": spec.base_peak_bytes}
        if spec.sol_score is not None:
            t_sol = cand * 0.5
            d["roofline"] = {"flops": 1e9, "min_bytes": 1e8, "t_sol_ms": t_sol,
                             "fraction_of_roofline": t_sol / cand, "sol_score": spec.sol_score}
    if spec.reproduces:
        d["reproduces"] = spec.reproduces
    if spec.precision_class is not None:
        d["precision_class"] = spec.precision_class
    if spec.shape_passed is not None:
        d["shape_check"] = {"constant": "N", "original": 4096, "changed": 2047, "passed": spec.shape_passed}
        if not spec.shape_passed:
            d["labels"].append("shape-specific")
    if spec.claimed is not None:
        d["claimed"] = {"speedup": spec.claimed, "baseline": "eager", "ms": None, "source_field": "score_default"}
    return d


def write_specs(root: Path, specs: list[Spec]) -> list[Path]:
    """Validate and write each spec's record at its standard place under ``root``; returns the paths."""
    paths = []
    for spec in specs:
        record = Record.model_validate(record_dict(spec))
        path = root / record_relpath(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record.model_dump(mode="json"), indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def corpus_specs(n_records: int, n_models: int = 20, n_samples: int = 10, seed: int = 0) -> list[Spec]:
    """A corpus of about ``n_records`` specs: models x samples x problems x both protocols, varied statuses."""
    rng = random.Random(seed)
    n_problems = max(1, n_records // (n_models * n_samples * 2))
    specs = []
    for m in range(n_models):
        skill = 0.6 + 0.8 * m / max(1, n_models - 1)
        for pid in range(n_problems):
            level = 1 + pid * 3 // n_problems
            for sample in range(n_samples):
                base = dict(model=f"model-{m:02d}", problem_id=pid, level=level, sample=sample,
                            problem_name=f"p{pid:04d}_op", baseline_ms=rng.uniform(1, 20))
                draw = rng.random()
                status = "correct" if draw < 0.7 else rng.choice(["incorrect", "compile_error", "runtime_error", "timeout"])
                s = rng.lognormvariate(0, 0.5) * skill
                peak = rng.randint(10**6, 10**9)
                specs.append(Spec(protocol="standard", status=status, speedup=s, base_peak_bytes=peak,
                                  cand_peak_bytes=int(peak * rng.uniform(0.5, 1.5)), **base))
                vstatus = status if status != "correct" or rng.random() < 0.85 else rng.choice(["incorrect", "hacked"])
                specs.append(Spec(protocol="verified", status=vstatus, speedup=s * 0.8, vs_eager_fp32=s * 0.95,
                                  vs_compile=s * 0.6, base_peak_bytes=peak, cand_peak_bytes=int(peak * rng.uniform(0.5, 1.5)),
                                  sol_score=rng.uniform(0.1, 0.9), failed_check="hidden-inputs" if vstatus == "hacked" else None,
                                  evidence="D4 x(-1): error budget 4.2e3 used of 1.0", **base))
    return specs
