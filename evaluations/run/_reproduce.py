"""Re-run a committed record's kernel under its protocol and write a reproduction record beside it.

The kernel and the problem are found again from the record alone (a repository path, or a public
dataset file in a local copy, or a problem folder) and accepted only when their sha256 equals the
record's. Baselines are measured afresh, so the reproduction checks the whole speedup, not just the
candidate's time. Importing this module does not import torch; running a reproduction does.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import schemas
from schemas import Record

from ..core import Candidate, Origin, Overrides, Problem, sha256_text

DEFAULT_DATASET_ROOTS = (Path(".data/datasets"),)
"""Where local copies of public datasets are looked for when ``--dataset-root`` is not given."""
_HERE = Path(__file__).resolve().parents[1]  # the evaluations package
DEFAULT_PROBLEM_ROOTS = (_HERE / "problems", _HERE / "zoo" / "problems")
"""Problem suites kept in this repository: a folder of suites (each subfolder is one) and the exploit zoo's."""
NO_CI_TOLERANCE = 0.05
"""Relative band a reproduced speedup must fall in when the original records no confidence interval."""


class ReproduceError(Exception):
    """A record that cannot be reproduced here; ``str()`` is one line."""


@dataclass(frozen=True)
class Agreement:
    """Whether a reproduction confirms its original: same status and a speedup inside the original's band."""

    original_speedup: float | None
    reproduced_speedup: float | None
    low: float | None
    """Lower end of the original's speedup band (its CI, or ±5% without one)."""
    high: float | None
    agrees: bool
    reason: str


@dataclass(frozen=True)
class Reproduction:
    """One finished reproduction: where it was written and how it compares."""

    original: Path
    written: Path
    record: Record
    agreement: Agreement


def repo_root_of(path: Path) -> Path:
    """The enclosing git checkout of ``path``, else the current folder."""
    for parent in path.resolve().parents:
        if (parent / ".git").exists():
            return parent
    return Path.cwd().resolve()


def records_root_of(path: Path, record: Record) -> Path:
    """The records folder an original lies in, from its layout path; raises if it is misplaced."""
    rel = schemas.record_relpath(record)
    resolved = path.resolve()
    if PurePosixPath(resolved.as_posix()).parts[-len(rel.parts):] != rel.parts:
        raise ReproduceError(f"{path}: not at its layout path (…/{rel.as_posix()}); run kverdict validate first")
    return Path(*resolved.parts[: len(resolved.parts) - len(rel.parts)])


def load_original(path: Path) -> Record:
    """Read a record that can be reproduced (a candidate record, not a baseline or a reproduction)."""
    try:
        record = schemas.load_record(path)
    except (schemas.RecordError, OSError) as exc:
        raise ReproduceError(str(exc)) from None
    if not isinstance(record, Record):
        raise ReproduceError(f"{path}: a baseline record; reproduce the candidate records that use it")
    if record.reproduces is not None:
        raise ReproduceError(f"{path}: already a reproduction (of {record.reproduces}); reproduce the original")
    return record


def _bundles(roots: Iterable[Path], file_name: str | None) -> Iterator[Path]:
    for root in roots:
        if root.is_file() and (file_name is None or root.name == file_name):
            yield root
        elif root.is_dir():
            pattern = file_name or "*.jsonl"
            yield from sorted(root.rglob(pattern))


def find_kernel(record: Record, repo_root: Path, dataset_roots: Iterable[Path]) -> Candidate:
    """The record's kernel text, from the repository or a local dataset copy, with its sha256 checked."""
    from .. import KNOWN_BUNDLES, LoadError, load_bundle

    k, m = record.kernel, record.model
    if k.url is None and k.row is None and k.path:
        file = repo_root / k.path
        if not file.is_file():
            raise ReproduceError(f"kernel.path {k.path}: no such file in {repo_root}")
        text = file.read_text(encoding="utf-8")
        if sha256_text(text) != k.sha256:
            raise ReproduceError(f"kernel.path {k.path}: sha256 {sha256_text(text)[:12]}… differs from the "
                                 f"record's {k.sha256[:12]}…: the kernel changed since it was evaluated")
        return Candidate(problem_key="", model=m.name, sample=m.sample, label="", source=text,
                         origin=Origin(path=k.path), provider=m.provider)
    if k.url is not None:
        names = [b.file_name for b in KNOWN_BUNDLES if b.url == k.url and b.file_name]
        roots = list(dataset_roots)
        places = [p for name in names or [None] for p in _bundles(roots, name)]
    else:
        places = [repo_root / (k.path or "")]
    for place in places:
        try:
            loaded = load_bundle(place, model=m.name)
        except LoadError:
            continue
        for c in loaded.candidates:
            if c.sha256 == k.sha256:
                return dataclasses.replace(c, model=m.name, sample=m.sample, provider=m.provider)
    where = ", ".join(str(p) for p in places) or "no dataset file found under " + \
        ", ".join(str(r) for r in dataset_roots)
    raise ReproduceError(f"kernel sha256 {k.sha256[:12]}… not found (looked in: {where}); "
                         "give the dataset's folder with --dataset-root")


def _problem_sources(problem_roots: Iterable[Path], dataset_roots: Iterable[Path]) -> Iterator[list[Problem]]:
    from .. import LoadError, is_bundle, load_bundle, load_problem_folder

    for root in problem_roots:
        try:  # a suite folder, a checkout or a bundle; else a folder of suites
            yield load_bundle(root, model="unused").problems if is_bundle(root) else load_problem_folder(root)
            continue
        except (LoadError, OSError):
            pass
        for folder in sorted(d for d in root.iterdir() if d.is_dir()) if root.is_dir() else []:
            try:
                yield load_problem_folder(folder)
            except (LoadError, OSError):
                continue
    for bundle in _bundles(dataset_roots, None):
        try:
            yield load_bundle(bundle, model="unused").problems
        except (LoadError, OSError):
            continue


def find_problem(record: Record, problem_roots: Iterable[Path], dataset_roots: Iterable[Path]) -> Problem:
    """The record's problem source, found by level, id and sha256, named as the record names it."""
    p = record.problem
    for problems in _problem_sources(problem_roots, dataset_roots):
        for found in problems:
            if found.sha256 == p.source_sha256 and found.level == p.level:
                return dataclasses.replace(found, suite=p.suite, level=p.level, id=p.id, name=p.name)
    raise ReproduceError(f"problem {p.suite} level {p.level} id {p.id} ({p.name}) with sha256 "
                         f"{p.source_sha256[:12]}… not found; give its folder or bundle with --problems")


def check_device(record: Record, device: str, cuda_available: bool) -> None:
    """Refuse to reproduce a GPU record without a GPU, or a CPU record on a GPU, with one clear line."""
    hw = record.environment.hardware
    if hw == "cpu" and device != "cpu":
        raise ReproduceError("the record was measured on the CPU; pass --device cpu to reproduce it there")
    if hw != "cpu" and device == "cpu":
        raise ReproduceError(f"the record was measured on a GPU ({hw}); it cannot be reproduced on the CPU")
    if device == "cuda" and not cuda_available:
        raise ReproduceError(f"no CUDA device is visible here, and the record was measured on {hw} "
                             f"({record.environment.device_name}): run this on a machine with that GPU")


def protocol_options(record: Record, info: schemas.ProtocolInfo) -> Overrides:
    """The overrides that recreate the original's counts where it used fewer than the protocol's own."""
    trials = len(record.protocol.seeds) if info.seeds and len(record.protocol.seeds) < len(info.seeds) else None
    counts = {key: getattr(record.protocol.timing, key) for key in ("warmup_calls", "timed_calls")
              if getattr(record.protocol.timing, key) != getattr(info.timing, key)}
    return Overrides(trials=trials, **counts)


def _speedup_band(record: Record) -> tuple[float, float] | None:
    """The original's vs_eager speedup range implied by the CIs of its candidate and baseline times (widened by
    :func:`agreement` to hold the original's own speedup, which for timings in turns is the median of per-round
    ratios, not the ratio of the medians these CIs bound)."""
    from ..protocols import get_protocol

    if record.timing is None:
        return None
    try:
        kind = get_protocol(record.protocol.name).SPEEDUP_BASELINE["vs_eager"]
    except Exception:  # the protocol module needs torch; fall back to the validator's table
        from schemas import PROTOCOLS

        kind = PROTOCOLS[record.protocol.name]["speedups"]["vs_eager"]
    base = next((b.timing for b in record.baselines if b.kind == kind), None)
    t = record.timing
    if base is None or None in (t.ci95_low_ms, t.ci95_high_ms, base.ci95_low_ms, base.ci95_high_ms):
        return None
    if not t.ci95_low_ms or not t.ci95_high_ms:
        return None
    return base.ci95_low_ms / t.ci95_high_ms, base.ci95_high_ms / t.ci95_low_ms  # type: ignore[operator]


def agreement(original: Record, reproduced: Record) -> Agreement:
    """Judge a reproduction: same status, and (for correct records) a speedup inside the original's band."""
    s0, s1 = original.speedup.vs_eager, reproduced.speedup.vs_eager
    if original.status != reproduced.status:
        return Agreement(s0, s1, None, None, False, f"status {reproduced.status!r}, original {original.status!r}")
    if s0 is None or s1 is None:
        return Agreement(s0, s1, None, None, True, f"same status {original.status!r}, no speedup to compare")
    band = _speedup_band(original)
    low, high = band if band else (s0 * (1 - NO_CI_TOLERANCE), s0 * (1 + NO_CI_TOLERANCE))
    low, high = min(low, s0), max(high, s0)  # a speedup from per-round ratios (timed in turns) may lie outside it
    how = "the original's 95% CI" if band else f"±{NO_CI_TOLERANCE:.0%} of the original"
    inside = low <= s1 <= high
    verdict = "inside" if inside else "outside"
    return Agreement(s0, s1, low, high, inside,
                     f"speedup {s1:.3f}x {verdict} {how} [{low:.3f}, {high:.3f}] (original {s0:.3f}x)")


def reproduce(path: Path, *, out_dir: Path | None = None, device: str = "cuda",
              dataset_roots: Iterable[Path] = DEFAULT_DATASET_ROOTS, problem_roots: Iterable[Path] = (),
              timeout_s: float = 300.0, build_dir: Path = Path(".kv-cache/build")) -> Reproduction:
    """Re-run the record at ``path`` and write its reproduction record; see the module docstring."""
    from .. import Loaded, capture_environment
    from ..protocols import ProtocolUnavailable, get_protocol
    from . import RunConfig, Runner

    original = load_original(path)
    root = records_root_of(path, original)
    repo = repo_root_of(path)
    import torch

    check_device(original, device, torch.cuda.is_available())
    try:
        module = get_protocol(original.protocol.name)
    except ProtocolUnavailable as exc:
        raise ReproduceError(str(exc)) from None
    if module.INFO.version != original.protocol.version:
        raise ReproduceError(f"the record used {original.protocol.name} {original.protocol.version}; this build "
                             f"runs {module.INFO.version}, so the result would not be a reproduction")
    ref = _repo_relative(path, repo)
    datasets = list(dataset_roots)
    candidate = find_kernel(original, repo, datasets)
    problem = find_problem(original, [*problem_roots, *DEFAULT_PROBLEM_ROOTS], datasets)
    candidate = dataclasses.replace(candidate, problem_key=problem.key)
    env = capture_environment(device)
    if env.hardware != original.environment.hardware:
        raise ReproduceError(f"this machine is {env.hardware!r} ({env.device_name}); the record was measured on "
                             f"{original.environment.hardware!r}")
    with tempfile.TemporaryDirectory(prefix="kv-repro-") as scratch:
        config = RunConfig(out_dir=Path(scratch), protocols=(original.protocol.name,), device=device,
                           timeout_s=timeout_s, jobs=1, build_dir=build_dir,
                           overrides=protocol_options(original, module.INFO), progress=False)
        runner = Runner(Loaded([problem], [candidate]), config, env)
        todo = runner.pending()
        runner.prepare(runner.preparations([(p, c) for p, c, _ in todo]), lambda: None)
        fresh = runner.evaluate(*todo[0]) if todo else None
        if fresh is None:
            reason = runner.summary.reference_failures.get(problem.key, "no result")
            raise ReproduceError(f"the problem's reference failed here, nothing to compare: {reason}")
    record = Record.model_validate({**fresh.model_dump(), "reproduces": ref})
    target = (out_dir if out_dir is not None else root) / schemas.record_relpath(record)
    schemas.write_record(target, record)
    return Reproduction(original=path, written=target, record=record, agreement=agreement(original, record))


def _repo_relative(path: Path, repo: Path) -> str:
    try:
        return path.resolve().relative_to(repo).as_posix()
    except ValueError:
        raise ReproduceError(f"{path}: not inside the repository at {repo}; run from the checkout") from None
