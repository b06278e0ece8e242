"""The Ray executor: each batch a Ray task that asks for one GPU, its records sent back and written here.

Every node runs the same commit of this package (a task first checks that its code digest is the
driver's). A task runs its batch as a lane process (:mod:`._lane`) on the node, in a scratch records
folder seeded with the batch's records the driver already has (its problem's baselines and finished
records, with their manifest lines), so the lane skips finished work and reuses baselines exactly as a
local run does. The task returns the records the lane wrote; the driver checks each (schema, and that
its path is the one its own content names), then writes it atomically and adds it to the manifest: only
the driver writes the records folder. A task whose lane fails is run again, up to ``MAX_ATTEMPTS`` goes.

The build cache is per node (``--build-dir``), keyed by each candidate's source hash; point every node's
build folder at one shared filesystem to build each extension once for the whole cluster.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import socket
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from .. import Loaded
from ..run import RunConfig, RunSummary, progress_bar
from ._batches import Batch, LaneSpec, batches
from ._local import MAX_ATTEMPTS, Lane, LocalExecutor

CODE_SUFFIXES = (".py", ".sql", ".json")


class RayUnavailable(RuntimeError):
    """Ray is not installed, or no cluster answered at the address."""


class CodeMismatch(RuntimeError):
    """A node runs other code than the driver: its records would not be this run's."""


def code_digest() -> str:
    """sha256 over the source of the packages that make records (``evaluations``, ``schemas``)."""
    import evaluations
    import schemas

    h = hashlib.sha256()
    for package in (Path(evaluations.__file__).parent, Path(schemas.__file__).parent):
        for path in sorted(p for p in package.rglob("*") if p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts):
            h.update(path.relative_to(package.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def seed_files(out_dir: Path, batch: Batch) -> dict[str, str]:
    """Relative path -> text of the records under ``out_dir`` a batch's lane needs: its problem's baselines and
    its models' records of that problem, on any hardware (the lane keeps only those of its own)."""
    from schemas import slug

    problem = batch.loaded.problems[0]
    models = {slug(c.model) for c in batch.loaded.candidates} | {"_baselines"}
    found = {}
    for path in out_dir.glob(f"*/*/*/{slug(problem.suite)}/level-{problem.level}/{problem.id:04d}-{slug(problem.name)}__*.json"):
        rel = path.relative_to(out_dir)
        if rel.parts[1] in models:
            found[rel.as_posix()] = path.read_text(encoding="utf-8")
    return found


@dataclass
class TaskResult:
    """What a task sends back: the records its lane wrote, what it skipped, and the lane's report."""

    files: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    reference_failures: dict[str, str] = field(default_factory=dict)
    host: str = ""
    why: str = ""
    """Why the lane failed (no records then)."""


def evaluate_batch(spec_bytes: bytes, seeds: dict[str, str], manifest: dict[str, str], code: str) -> TaskResult:
    """The Ray task: run one batch in a scratch records folder on this node and return what it wrote."""
    from schemas import MANIFEST_RELPATH, write_text

    if code_digest() != code:
        raise CodeMismatch(f"node {socket.gethostname()} runs other code than the driver (digest {code_digest()[:12]} "
                           f"vs {code[:12]}): install the same commit of kverdict on every node")
    spec: LaneSpec = pickle.loads(spec_bytes)  # noqa: S301 - the driver's own spec
    with tempfile.TemporaryDirectory(prefix="kv-ray-") as scratch:
        out = Path(scratch) / "records"
        for rel, text in seeds.items():
            write_text(out / rel, text)
        write_text(out / MANIFEST_RELPATH, "".join(f"{manifest[rel]}  {rel}\n" for rel in sorted(seeds) if rel in manifest))
        config = replace(spec.config, out_dir=out)
        executor = LocalExecutor(config, [], workdir=Path(scratch) / "lane")
        executor.workdir.mkdir()
        outcome = executor.run_batch(Lane(0, socket.gethostname(), {}), spec.batch, threading.Event())
        if outcome.report is None:
            return TaskResult(host=socket.gethostname(), why=outcome.why)
        report = outcome.report

        def rel(name: str) -> str:
            return Path(name).resolve().relative_to(out.resolve()).as_posix()

        made = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.json")}
        return TaskResult(files={r: text for r, text in made.items() if seeds.get(r) != text},  # baselines too
                          skipped=[rel(p) for p in report.skipped], tampered=[rel(p) for p in report.tampered],
                          reference_failures=report.reference_failures, host=report.host)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs Ray: pip install 'kverdict[ray]'") from None
    return ray


def connect(address: str) -> tuple[Any, bool]:
    """Join the Ray cluster at ``address`` (``local`` starts a single-node instance in this process): (ray,
    whether this call connected, so the caller disconnects when done)."""
    ray = _ray()
    if ray.is_initialized():
        return ray, False
    try:
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False, namespace="kverdict")
        else:
            ray.init(address=address, log_to_driver=False, namespace="kverdict")
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"no Ray cluster at {address!r}: {exc}") from None
    return ray, True


class RayExecutor:
    """Runs a loaded set's batches as Ray tasks of one GPU each (one CPU each for a CPU run)."""

    def __init__(self, config: RunConfig, address: str, cpus_per_task: int = 1) -> None:
        self.config, self.address, self.cpus_per_task = config, address, cpus_per_task
        self.hosts: dict[str, int] = {}
        """Host name -> batches it ran."""

    def run(self, loaded: Loaded, summary: RunSummary | None = None) -> RunSummary:
        """Evaluate every candidate of ``loaded`` on the cluster; records are written here as tasks finish."""
        summary = summary if summary is not None else RunSummary()
        ray, joined = connect(self.address)
        try:
            return self._run(ray, loaded, summary)
        finally:
            if joined:
                ray.shutdown()

    def _run(self, ray: Any, loaded: Loaded, summary: RunSummary) -> RunSummary:
        from schemas import Manifest

        task = ray.remote(evaluate_batch).options(
            num_gpus=1 if self.config.device == "cuda" else 0, num_cpus=self.cpus_per_task, max_retries=0)
        code = code_digest()
        config = replace(self.config, progress=False)
        manifest = Manifest(self.config.out_dir)
        work = batches(loaded)
        attempts: dict[int, int] = {}

        def submit(b: Batch) -> Any:
            seeds = seed_files(self.config.out_dir, b)
            entries = {rel: manifest.entries[rel] for rel in seeds if rel in manifest.entries}
            return task.remote(pickle.dumps(LaneSpec(b, config)), seeds, entries, code)

        with progress_bar(self.config.progress) as progress:
            bar = progress.add_task(f"problems on the Ray cluster at {self.address}", total=len(work))
            flight = {submit(b): b for b in work}
            try:
                while flight:
                    [ref], _ = ray.wait(list(flight), num_returns=1)
                    b = flight.pop(ref)
                    result, why = self._get(ray, ref)
                    if result is not None and not result.why:
                        self._write(result, manifest, summary)
                        progress.advance(bar)
                        continue
                    attempts[b.index] = attempts.get(b.index, 0) + 1
                    why = why or result.why
                    if isinstance(why, CodeMismatch):
                        raise why
                    if attempts[b.index] < MAX_ATTEMPTS:
                        flight[submit(b)] = b
                    else:
                        summary.lost[b.key] = f"its task failed {attempts[b.index]} times, last: {why}"
                        progress.advance(bar)
            except BaseException:
                for ref in flight:
                    ray.cancel(ref, force=True)
                raise
        return summary

    @staticmethod
    def _get(ray: Any, ref: Any) -> tuple[TaskResult | None, Any]:
        try:
            return ray.get(ref), ""
        except ray.exceptions.RayTaskError as exc:
            cause = exc.as_instanceof_cause()
            return None, cause if isinstance(cause, CodeMismatch) else f"{type(cause).__name__}: {cause}"
        except ray.exceptions.RayError as exc:  # the worker or its node died
            return None, f"{type(exc).__name__}: {exc}"

    def _write(self, result: TaskResult, manifest: Any, summary: RunSummary) -> None:
        import schemas

        out = self.config.out_dir
        self.hosts[result.host] = self.hosts.get(result.host, 0) + 1
        written = []
        for rel, text in result.files.items():
            record = checked_record(rel, text)
            path = out / rel
            schemas.write_text(path, text)
            manifest.add(path, text)
            written.append((path, record))
        summary.absorb(written, [out / PurePosixPath(rel) for rel in result.skipped],
                       [out / PurePosixPath(rel) for rel in result.tampered], result.reference_failures)


def checked_record(rel: str, text: str) -> Any:
    """The record ``text`` when it is valid and ``rel`` is where its own content says it belongs; raises
    ``schemas.RecordError`` or ``ValueError`` otherwise (a node may not write anywhere else in the folder)."""
    import schemas

    record = schemas.parse_record(json.loads(text), rel)
    own = schemas.baseline_relpath(record) if isinstance(record, schemas.BaselineRecord) else schemas.record_relpath(record)
    if PurePosixPath(own.as_posix()) != PurePosixPath(rel):
        raise ValueError(f"a task returned a record for {rel!r}, but its content belongs at {own.as_posix()!r}")
    return record
