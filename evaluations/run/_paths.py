"""Where a run's records go, and whether a record already there is finished work (a re-run resumes from them)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import schemas
from schemas import BaselineRecord, Environment, ProtocolInfo, Record

from ..core import AlgorithmFlags, Candidate, Overrides, Problem


def trials_limit(protocol: str) -> int:
    """The most correctness trials ``--trials`` may ask of ``protocol``: its seeds, or its trials per hidden
    distribution where seeds are fresh."""
    pin = schemas.pinned(protocol)
    return len(pin.seeds) or pin.trials_per_distribution


def effective_info(protocol: ModuleType, overrides: Overrides) -> ProtocolInfo:
    """The protocol's info with the counts the run uses (overridden counts are recorded, never hidden): timed and
    warm-up calls; for trials, the standard protocol's first seeds (the verified protocol's seeds are fresh, and
    its records list each trial)."""
    info: ProtocolInfo = protocol.INFO
    if overrides.trials is not None and overrides.trials > trials_limit(info.name):
        raise ValueError(f"trials={overrides.trials}: the {info.name} protocol runs at most {trials_limit(info.name)}")
    counts = {k: v for k, v in overrides.given().items() if k in ("warmup_calls", "timed_calls")}
    timing = info.timing.model_copy(update=counts)
    seeds = info.seeds[: overrides.trials] if overrides.trials is not None else info.seeds
    return info.model_copy(update={"timing": timing, "seeds": seeds})


def problem_ref(problem: Problem) -> schemas.ProblemRef:
    """The record's reference to a problem."""
    return schemas.ProblemRef(suite=problem.suite, level=problem.level, id=problem.id, name=problem.name,
                              source_sha256=problem.sha256)


def record_path(out_dir: Path, env: Environment, info: ProtocolInfo, problem: Problem, candidate: Candidate) -> Path:
    """Where the record of ``candidate`` under ``info`` goes (``schemas.record_relpath``'s layout)."""
    stub = Record.model_construct(
        model=schemas.ModelInfo.model_construct(name=candidate.model, sample=candidate.sample),
        problem=problem_ref(problem), environment=env, protocol=info, reproduces=None)
    return out_dir / schemas.record_relpath(stub)


def baseline_path(out_dir: Path, env: Environment, info: ProtocolInfo, problem: Problem, kind: str,
                  flags: AlgorithmFlags = ()) -> Path:
    """Where a baseline record goes (``schemas.baseline_relpath``'s layout; one file per algorithm-flag set)."""
    stub = BaselineRecord.model_construct(problem=problem_ref(problem), protocol=info, kind=kind, environment=env,
                                          algorithm_flags=flag_models(flags))
    return out_dir / schemas.baseline_relpath(stub)


def flag_models(flags: AlgorithmFlags) -> list[schemas.AlgorithmFlag]:
    """Algorithm-choice flags as a record carries them."""
    return [schemas.AlgorithmFlag(name=name, value=value) for name, value in flags]  # type: ignore[arg-type]


def flag_tag(kind: str, flags: AlgorithmFlags) -> str:
    """A baseline kind with the algorithm-choice flags it is timed with, as its file name has it (``eager_tf32+cudnn.benchmark``)."""
    return "+".join([kind, *(f.token for f in flag_models(flags))])


def existing_record(path: Path) -> Record | BaselineRecord | None:
    """The valid record already at ``path``, if any (an invalid or missing one is redone)."""
    if not path.is_file():
        return None
    try:
        return schemas.load_record(path)
    except schemas.RecordError:
        return None


def finished_record(path: Path, candidate: Candidate, problem: Problem, info: ProtocolInfo, env: Environment,
                    tampered: bool) -> Record | None:
    """The record at ``path`` when it is this run's finished work: the same kernel, problem source, protocol
    parameters (all of them: tolerances, seeds, distributions, timing, trial counts) and environment, and
    byte for byte what a run wrote (``tampered``: its file contradicts the manifest). Anything else is redone."""
    existing = None if tampered else existing_record(path)
    if isinstance(existing, Record) and existing.kernel.sha256 == candidate.sha256 \
            and existing.problem.source_sha256 == problem.sha256 and existing.protocol == info \
            and same_environment(existing.environment, env):
        return existing
    return None


def same_environment(a: Environment, b: Environment) -> bool:
    """Whether two records were made on the same device, torch and hardware (a record of another is redone)."""
    return (a.device_name, a.torch, a.hardware) == (b.device_name, b.torch, b.hardware)
