"""Schema-valid records for tests: one call gives a complete record; keyword arguments change parts."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas import (
    PROTOCOLS,
    BaselineRecord,
    BaselineTiming,
    CorrectnessCheck,
    Environment,
    IntegrityCheck,
    KernelSource,
    MemoryStats,
    ModelInfo,
    ProblemRef,
    ProtocolInfo,
    Record,
    Speedups,
    TimingStats,
    baseline_relpath,
    protocol_info,
    record_relpath,
)

DATASET_URL = "https://github.com/deepreinforce-ai/CUDA-L1"
DATASET_COMMIT = "51e8356bf844101cab2aeeca4bdff47ebb1953b8"
STANDARD_SEEDS = PROTOCOLS["standard"]["pinned"]["1.0"].seeds
"""The standard protocol's trial seeds (KernelBench's, drawn after seed 42)."""
VERIFIED_DISTRIBUTIONS = PROTOCOLS["verified"]["pinned"]["1.1"].distributions


def sha(text: str) -> str:
    """sha256 of a text, as records store it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def timing(ms: float, method: str = "cuda_events", **kw: Any) -> TimingStats:
    """Timing statistics centred on ``ms`` (mean = median = ms)."""
    base = dict(method=method, calls=100, mean_ms=ms, median_ms=ms, min_ms=ms * 0.95, max_ms=ms * 1.1,
                std_ms=ms * 0.02, q1_ms=ms * 0.98, q3_ms=ms * 1.02, ci95_low_ms=ms * 0.99, ci95_high_ms=ms * 1.01)
    base.update(kw)
    return TimingStats(**base)


def protocol(name: str = "standard") -> ProtocolInfo:
    """Parameters of the named protocol, from the protocols' table (verified at 1.1, as these records were written)."""
    return protocol_info(name, "1.0" if name == "standard" else "1.1")


def trials(protocol_name: str = "standard") -> list[CorrectnessCheck]:
    """Passing correctness trials of a complete evaluation: the standard seeds, or three fresh seeds for
    each verified distribution."""
    if protocol_name == "standard":
        draws = [("D1 x1", s) for s in STANDARD_SEEDS]
    else:
        draws = [(d, 20_000_000 + 10 * i + j) for i, d in enumerate(VERIFIED_DISTRIBUTIONS) for j in range(3)]
    return [CorrectnessCheck(name=f"{d} seed {s}", distribution=d, seed=s, passed=True, max_abs_error=1e-6,
                             error_budget_used=1e-4) for d, s in draws]


def environment(hardware: str = "h200") -> Environment:
    """A complete GPU environment (or a CPU one for ``hardware='cpu'``)."""
    gpu = hardware != "cpu"
    return Environment(hardware=hardware, device_name="NVIDIA H200" if gpu else "x86_64 CPU",
                       driver="570.86" if gpu else None, cuda="12.8" if gpu else None, torch="2.11.0",
                       triton="3.6.0" if gpu else None, python="3.12.3", harness_version="0.1.0",
                       timestamp=datetime(2026, 11, 1, 12, 0, tzinfo=UTC))


def problem(pid: int = 19, name: str = "19_ReLU", level: int = 1, suite: str = "kernelbench-v0") -> ProblemRef:
    """A problem reference whose sha256 is derived from its name."""
    return ProblemRef(suite=suite, level=level, id=pid, name=name, source_sha256=sha(f"problem {suite} {name}"))


def make_record(*, model: str = "CUDA-L1", sample: int = 0, protocol_name: str = "standard",
                hardware: str = "h200", pid: int = 19, name: str = "19_ReLU", level: int = 1,
                candidate_ms: float = 1.0, baseline_ms: float = 2.0, status: str = "correct",
                **fields: Any) -> Record:
    """A schema-valid ``correct`` record (speedup = baseline_ms / candidate_ms); ``fields`` override parts."""
    proto = protocol(protocol_name)
    kinds = ("eager_fp32",) if protocol_name == "standard" else ("eager_tf32", "compile")
    baselines = [BaselineTiming(kind=k, timing=timing(baseline_ms), peak_memory_bytes=1 << 20) for k in kinds]
    ratio = baseline_ms / candidate_ms
    speedup = Speedups(vs_eager=ratio) if protocol_name == "standard" else Speedups(vs_eager=ratio, vs_compile=ratio)
    data: dict[str, Any] = dict(
        model=ModelInfo(name=model, provider="deepreinforce-ai", sample=sample),
        problem=problem(pid, name, level),
        kernel=KernelSource(sha256=sha(f"kernel {model} {name} {sample}"), language="cuda", url=DATASET_URL,
                            commit=DATASET_COMMIT, path="optimized_cuda_code/h100.json", row=pid),
        protocol=proto, environment=environment(hardware), status=status, correctness=trials(protocol_name),
        timing=timing(candidate_ms), baselines=baselines, speedup=speedup,
        memory=MemoryStats(candidate_peak_bytes=1 << 20, baseline_peak_bytes=1 << 20),
        integrity=[IntegrityCheck(name="output-aliasing", passed=True)] if protocol_name == "verified" else [],
    )
    data.update(fields)
    return Record(**data)


def make_baseline(*, kind: str = "eager_fp32", protocol_name: str = "standard", hardware: str = "h200",
                  pid: int = 19, name: str = "19_ReLU", ms: float = 2.0) -> BaselineRecord:
    """A schema-valid baseline record."""
    return BaselineRecord(problem=problem(pid, name), protocol=protocol(protocol_name), kind=kind,
                          environment=environment(hardware), timing=timing(ms), peak_memory_bytes=1 << 20)


def as_data(record: Record | BaselineRecord) -> dict[str, Any]:
    """The record as the JSON object a file holds."""
    return record.model_dump(mode="json")


def place(root: Path, record: Record | BaselineRecord, data: dict[str, Any] | None = None,
          rel: str | Path | None = None) -> Path:
    """Write a record (or raw data) under ``root`` at its proper path, or at ``rel``; returns the path."""
    if rel is None:
        rel = baseline_relpath(record) if isinstance(record, BaselineRecord) else record_relpath(record)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(as_data(record) if data is None else data, indent=2), encoding="utf-8")
    return path
