"""Code that runs inside a worker process: load a problem and a candidate, call the protocol.

Every function here is a target of :func:`evaluations.worker._isolation.run_isolated` or a helper the
protocols call inside the worker. Problem and candidate sources are compiled from their text
(:func:`load_module`), never imported from a file or a bytecode cache another process could write.
"""

from __future__ import annotations

import importlib.machinery
import linecache
import os
import sys
import tempfile
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from ..core import BaselineOutcome, CandidateOutcome, Job, Judgement, get_protocol, gpulock, no_answer, sha256_text
from . import _extensions, _isolation, _landlock

MAX_ERROR_CHARS = 2500
"""Longest error text a worker hands back (the record keeps 4000 characters with the output tail)."""
BESIDE_NICE = 10
"""How much lower the CPU priority of a prepare worker that runs beside timings is (``warm_candidate_beside``)."""


class CandidateLoadError(Exception):
    """The candidate's source failed to import (syntax, missing name, extension build failure)."""


class ProblemModule(NamedTuple):
    """The three names of a KernelBench problem file."""

    model: type
    get_inputs: Any
    get_init_inputs: Any


class BuildResult(NamedTuple):
    """Outcome of the prepare stage for one candidate (``warm_candidate``): ``error`` is None when it imported."""

    error: str | None


_PRIVATE_DIR: list[Path] = []
"""This process's own folder for copies of loaded sources (made on first use)."""


def _private_dir() -> Path:
    if not _PRIVATE_DIR:
        _PRIVATE_DIR.append(Path(tempfile.mkdtemp(prefix=f"kv-modules-{os.getpid()}-")))
    return _PRIVATE_DIR[0]


def load_module(source: str, prefix: str, folder: Path | None = None) -> ModuleType:
    """Compile ``source`` and run it as a fresh module named after its hash, never reading a file or a cache.

    No ``.pyc`` is read or written, so bytecode another process left in a shared folder cannot stand in for
    a problem or candidate. The text is registered in ``linecache`` under the module's ``__file__`` (a
    copy in ``folder``, by default a folder private to this process, for tracebacks and tools; never read
    back), so ``inspect.getsource`` works as Triton's ``@jit`` needs.
    """
    name = f"kv_{prefix}_{sha256_text(source)[:16]}"
    path = (folder or _private_dir()) / f"{name}.py"
    if not path.exists():
        path.write_text(source, encoding="utf-8")
    filename = str(path)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    code = compile(source, filename, "exec", dont_inherit=True)
    module = ModuleType(name)
    module.__file__ = filename
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=filename)
    sys.modules[name] = module
    exec(code, module.__dict__)  # noqa: S102 - running the problem or candidate is this function's job
    return module


def load_problem(job: Job) -> ProblemModule:
    """The problem's ``Model``, ``get_inputs`` and ``get_init_inputs``."""
    module = load_module(job.problem.source, "problem")
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise RuntimeError(f"problem {job.problem.name} lacks {', '.join(missing)}")
    return ProblemModule(module.Model, module.get_inputs, module.get_init_inputs)


def describe(exc: BaseException) -> str:
    """``Type: message`` first, then the innermost traceback lines, capped at ``MAX_ERROR_CHARS``."""
    head = f"{type(exc).__name__}: {exc}".strip()
    trace = "".join(traceback.format_exception(exc)).rstrip()
    room = MAX_ERROR_CHARS - len(head) - 1
    if room <= 0:
        return head[:MAX_ERROR_CHARS]
    return f"{head}\n{trace[-room:]}"


def load_candidate(job: Job) -> type:
    """The candidate's ``ModelNew``; any failure to import it raises :class:`CandidateLoadError`."""
    assert job.candidate is not None
    if job.build_dir:
        _extensions.install(candidate_scope(job, "extensions"))
    try:
        module = load_module(job.candidate.source, "candidate")
    except Exception as exc:
        raise CandidateLoadError(describe(exc)) from exc
    if not hasattr(module, "ModelNew"):
        raise CandidateLoadError("the candidate defines no class ModelNew")
    return module.ModelNew


def use_caches(job: Job) -> None:
    """Point Triton's and TorchInductor's on-disk caches at this job's own scope of the build folder.

    Baselines share one scope (their ``torch.compile`` artefacts serve later runs); each candidate has its
    own (what its warm-up compiled serves its evaluation and memory jobs), so no candidate's process reads a
    cache another candidate wrote. Inductor compiles in the worker's own process (one compile thread): the
    run's parallelism comes from its many workers, and a pool of compile processes per worker would cost
    more than it saves. A candidate's Triton autotuning results are kept in its own cache too
    (``TRITON_CACHE_AUTOTUNING``, read when its autotuned kernels are defined, at its import): the configuration
    its warm-up chose serves its later processes, which would otherwise each benchmark every configuration again
    on their first call (seconds to tens of seconds of device work that no timing may run beside). The variables
    are read when a cache is first used, after the worker's imports.
    """
    if not job.build_dir:
        return
    root = Path(job.build_dir).absolute() / "caches" / "baselines" if job.candidate is None else candidate_scope(job, "caches")
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root / "inductor")
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    if job.candidate is not None:
        os.environ["TRITON_CACHE_AUTOTUNING"] = "1"


def candidate_scope(job: Job, kind: str) -> Path:
    """The candidate's own folder of the build folder's ``kind`` (``extensions``, ``caches``): builds and compiler
    caches are shared by the evaluations of one candidate (both protocols, prepare and evaluation) and by no other."""
    assert job.build_dir and job.candidate is not None
    return Path(job.build_dir).absolute() / kind / f"candidate-{job.candidate.sha256[:16]}"


CONFINE_ENV = "KVERDICT_CONFINE_WRITES"
"""``0`` runs candidate workers without write confinement (for diagnosis; the run says so)."""
EXTRA_WRITABLE_ENV = "KVERDICT_WORKER_WRITABLE"
"""More folders a candidate's worker may write (``os.pathsep``-separated), for tools that collect from workers."""


_OWN_THREADS: list[int] = []
"""An open handle on this process's ``/proc/<pid>/task`` once a rule names it (:func:`own_threads`)."""


def own_threads() -> Path:
    """This process's own threads in ``/proc`` (``/proc/<pid>/task``), held open for the life of the process.

    CUDA's start-up names the threads it makes by writing their ``/proc/self/task/<tid>/comm`` and fails with
    error 304 (``cudaErrorOperatingSystem``) where it may not, so a confined worker may write there. Landlock's
    rule names the folder's inode, and procfs makes a new inode when an unused folder is looked up again: the
    open handle keeps the one the rule names. Other processes' entries stay out of reach (Landlock also refuses
    the ptrace access that ``/proc/<pid>/mem`` of a process outside the worker would need)."""
    path = Path(f"/proc/{os.getpid()}/task")
    if not _OWN_THREADS:
        _OWN_THREADS.append(os.open(path, os.O_PATH | os.O_CLOEXEC))
    return path


def writable_folders(job: Job, private: Path) -> list[Path]:
    """Where a candidate's worker may write: its private temporary folder, its own builds and caches, its evidence
    file's folder, its timing-in-turns file, the GPU lock's own folder (``<lock>.d``, never the folder the lock file
    lies in, which may hold anything), the devices (``/dev``: the GPU, ``/dev/null``,
    shared memory) and its own threads' names (:func:`own_threads`)."""
    folders = [private, Path("/dev"), own_threads()]
    if job.build_dir:
        folders += [candidate_scope(job, "extensions"), candidate_scope(job, "caches")]
    if job.options.get("evidence"):
        folders.append(Path(job.options["evidence"]).parent)
    if job.options.get("turns"):
        folders.append(Path(job.options["turns"]))  # the one file of its timing in turns (``_turns``), not its folder
    lock = os.environ.get(gpulock.GPU_LOCK_ENV)
    if lock:
        gpulock.prepare(lock)  # before the rule is made: the confined worker only opens the lock's files
        folders.append(gpulock.wait_folder(lock))
        if os.environ.get(gpulock.TRACE_ENV):  # a lock trace asked for by whoever runs the evaluation
            folders.append(Path(os.environ[gpulock.TRACE_ENV]))
    folders += [Path(p) for p in os.environ.get(EXTRA_WRITABLE_ENV, "").split(os.pathsep) if p]
    return folders


def unconfined_reason() -> str | None:
    """Why candidate workers on this machine run without write confinement (None where they are confined)."""
    if os.environ.get(CONFINE_ENV) == "0":
        return f"{CONFINE_ENV}=0"
    return _landlock.unavailable()


def confine_writes(job: Job) -> None:
    """Before candidate code runs: give this process a private folder of its own (its temporary files, its home and
    its working directory, :func:`private_home`), then take from its threads the right to write anywhere but
    :func:`writable_folders` and, where the kernel can, to signal any process outside the worker and its children
    (``_landlock``). The records, the problem sources, the repository, installed packages and other candidates'
    builds stay out of reach. Where the kernel has no Landlock the worker says so on its output and runs unconfined
    (``kverdict eval`` says so at start), in a private folder all the same."""
    if job.candidate is None:
        return
    private = Path(tempfile.mkdtemp(prefix=f"kv-tmp-{os.getpid()}-"))  # removed with the worker (_confine)
    os.environ["TMPDIR"] = tempfile.tempdir = str(private)  # compilers and Triton write their temporary files here
    os.environ.setdefault("CUDA_CACHE_PATH", str(private / "nv"))
    private_home(job, private)
    why = unconfined_reason()
    if why:
        print(f"kverdict worker: writes not confined: {why}", file=sys.stderr)
        return
    if job.build_dir:  # its own scopes exist before the rule is made (the runner made the evidence folder)
        for kind in ("extensions", "caches"):
            candidate_scope(job, kind).mkdir(parents=True, exist_ok=True)
    folders = writable_folders(job, private)
    _PRIVATE_DIR[:] = [Path(tempfile.mkdtemp(prefix="modules-"))]  # copies of loaded sources, inside ``private``
    try:
        _isolation.in_every_thread(lambda: _landlock.restrict_writes(folders, scope_signals=True))
    except OSError as exc:
        print(f"kverdict worker: writes not confined: {exc}", file=sys.stderr)


def private_home(job: Job, private: Path) -> None:
    """A candidate's home (``HOME``, ``XDG_CACHE_HOME``) and working directory inside its private folder, as a
    KernelBench harness gives a kernel a writable home and working directory: a kernel that writes its sources or
    builds beside itself (``open("kernel.cu", "w")``, ``os.makedirs("build")``) or keeps a cache under ``~``
    (CuPy's ``~/.cupy``) runs as it would there, and none of it outlives the worker or reaches another's. CuPy's
    kernel cache goes to the candidate's own caches scope where there is one, so its evaluations reuse what its
    prepare stage compiled."""
    home, work = private / "home", private / "work"
    for folder in (home, work):
        folder.mkdir()
    os.environ.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    if job.build_dir:
        os.environ["CUPY_CACHE_DIR"] = str(candidate_scope(job, "caches") / "cupy")
    # sys.path's '' (the working directory) kept as the folder it named: the harness's own later imports do not move
    sys.path[:] = [entry or os.getcwd() for entry in sys.path]
    os.chdir(work)


def warm_candidate(job: Job) -> BuildResult:
    """Prepare stage: import the candidate (its extensions build here), then, on the device, construct it and
    call it once on the problem's inputs, so builds made in ``__init__`` or ``forward`` and Triton's
    compilations land in the caches before the candidate is evaluated. The runner runs this stage before any
    timing starts (candidate code may use the device here, even while it builds). Only the import's failure
    is the candidate's verdict (``compile_error``); a failure after it is left for the evaluation to report."""
    use_caches(job)
    confine_writes(job)
    try:
        model_new = load_candidate(job)
    except CandidateLoadError as exc:
        return BuildResult(error=str(exc))
    if job.device != "cuda":
        return BuildResult(error=None)
    gpulock.yield_to_timing()  # beside timings (warm_candidate_beside): a timing that waits goes first
    try:
        import torch

        from ..core import DISTRIBUTIONS, draw, to_device

        problem = load_problem(job)
        device = torch.device("cuda")
        with torch.no_grad():
            torch.manual_seed(0)
            model = model_new(*to_device(problem.get_init_inputs(), device))
            model = model.to(device) if isinstance(model, torch.nn.Module) else model
            # made on the device (the shapes and dtypes are what compiles; a host draw of large inputs took seconds)
            model(*draw(problem.get_inputs, DISTRIBUTIONS[0], 0, device))
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the evaluation meets it again and reports it
        print(f"warm-up after import failed (left to the evaluation): {describe(exc)}", file=sys.stderr)
    return BuildResult(error=None)


def warm_candidate_beside(job: Job) -> BuildResult:
    """:func:`warm_candidate` beside other workers' timings (the next chunk's candidates that build an extension,
    while this chunk is evaluated: ``Runner.prepare``). It runs at a lower CPU priority (``BESIDE_NICE``, which its
    compilers inherit) and holds the device shared as an evaluation's worker does, so its import, construction and
    warm-up call never run inside a timing; its builds let go of the device meanwhile (``_extensions``)."""
    os.nice(BESIDE_NICE)
    print(f"kverdict worker: preparing beside timings, at nice {os.nice(0)}", file=sys.stderr, flush=True)
    if job.device == "cuda":  # torch's import is seconds of host work: before the device is held (a cold worker)
        import torch  # noqa: F401 - the caches' variables (use_caches) are read at first use, not at import
    with gpulock.shared_on(job.device, lock_label("build", job)):
        return warm_candidate(job)


def warm_baseline(job: Job) -> BuildResult:
    """Prepare stage, for a baseline that compiles (the verified protocol's ``torch.compile`` of the reference):
    compile it and call it once (the protocol's ``warm_baseline``), so the baselines' shared Inductor and Triton
    caches (:func:`use_caches`) hold its kernels before its timed worker starts, and that worker's first call,
    which holds the device shared beside other workers' timings, is short. Nothing is measured here and no
    candidate code runs; a failure is left for the baseline's own worker to meet and report."""
    use_caches(job)
    warm = getattr(_protocol(job), "warm_baseline", None)
    try:
        if warm is not None:
            warm(job)
    except Exception as exc:  # noqa: BLE001 - the baseline's worker meets it again and reports it
        print(f"compile warm-up failed (left to the baseline): {describe(exc)}", file=sys.stderr)
    return BuildResult(error=None)


def warm_baselines(jobs: list[Job]) -> BuildResult:
    """:func:`warm_baseline` for several problems, one after the other in this one process (no candidate code runs
    here): the imports of torch and Inductor, most of a warm-up's time, are paid once. Each problem's compiled
    code is dropped before the next (``torch._dynamo.reset``; the on-disk caches keep it)."""
    import torch

    for job in jobs:
        warm_baseline(job)
        torch._dynamo.reset()
        if job.device == "cuda":
            torch.cuda.empty_cache()
    return BuildResult(error=None)


def lock_label(stage: str, job: Job) -> str:
    """How a job names itself in a lock trace (``gpulock.TRACE_ENV``): stage, protocol, problem, candidate or
    baseline kind, and its seat where it takes turns."""
    what = job.candidate.sha256[:16] if job.candidate is not None else (job.baseline_kind or "?")
    seat = f":party{job.options['party']}" if "party" in job.options else ""
    return f"{stage}:{job.protocol}:{job.problem.key}:{what}{seat}"


def _protocol(job: Job) -> Any:
    return get_protocol(job.protocol)


def run_job(job: Job) -> CandidateOutcome | BaselineOutcome:
    """Worker entry: a baseline job returns its outcome; a candidate job never raises."""
    use_caches(job)
    confine_writes(job)
    protocol = _protocol(job)
    stage = "candidate" if job.candidate is not None else "baseline"
    with gpulock.shared_on(job.device, lock_label(stage, job)):  # concurrent workers: see gpulock
        if job.candidate is None:
            return protocol.run_baseline(job)
        try:
            return protocol.run_candidate(job)
        except CandidateLoadError as exc:
            return no_answer("build", str(exc))
        except Exception as exc:  # the candidate's own failure, e.g. CUDA OOM or an illegal address
            return no_answer("run", describe(exc))


def judge_job(request: Any) -> Any:
    """Worker entry of the judge (``_judge``): the protocol's ruling on a reported evaluation, in a process that
    never imports the candidate; a failure to judge is the judgement's ``error``, not the candidate's."""
    protocol = _protocol(request.job)
    try:
        with gpulock.shared_on(request.job.device, lock_label("judge", request.job)):
            return protocol.judge(request)
    except Exception as exc:  # noqa: BLE001 - the judge's own failure: the record says it was not judged
        return Judgement(error=describe(exc))


def memory_job(job: Job) -> int | None:
    """Worker entry: the protocol's peak-memory measurement of one call, or None when it has none."""
    use_caches(job)
    confine_writes(job)
    protocol = _protocol(job)
    measure = getattr(protocol, "measure_memory", None)
    with gpulock.shared_on(job.device, lock_label("memory", job)):  # concurrent workers: see gpulock
        return measure(job) if measure is not None else None
