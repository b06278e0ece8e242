"""The prepare stage of a run: candidates' builds and warm-up calls, and compile baselines' warm-ups, each in a
fresh process, before anything is timed or (extension builds) beside the timings."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core import Candidate, Job, no_answer, sha256_text
from ..worker import kernel_language
from ._base import RunnerBase
from ._failures import error_text, failed_outcome
from ._paths import baseline_path


class Preparing(RunnerBase):
    """The prepare stage's methods of :class:`~evaluations.run.Runner`."""

    def preparations(self, todo: list[tuple[str, Candidate]]) -> list[Job]:
        """The prepare stage's jobs: one per candidate that compiles (an extension, or Triton kernels), for all
        protocols at once."""
        jobs: dict[str, Job] = {}
        for name, c in todo:
            if c.sha256 not in jobs and kernel_language(c.source) != "pytorch":
                jobs[c.sha256] = self.job_of(name, self.problems[c.problem_key], c)
        return list(jobs.values())

    def compile_warmups(self, todo: list[tuple[str, Candidate]]) -> list[Job]:
        """The prepare stage's compile warm-ups: one per problem of ``todo`` whose ``compile`` baseline (PyTorch's
        default flags) is still to be measured under a protocol that has one (see ``_worker.warm_baseline``)."""
        jobs: dict[str, Job] = {}
        for protocol, c in todo:
            problem = self.problems[c.problem_key]
            if c.problem_key in jobs or "compile" not in self.protocols[protocol].BASELINE_KINDS:
                continue
            path = baseline_path(self.config.out_dir, self.env, self.infos[protocol], problem, "compile")
            if (protocol, problem.key, "compile") not in self._baselines and \
                    self._reuse_baseline(path, problem, self.infos[protocol]) is None:
                jobs[c.problem_key] = self.job_of(protocol, problem, kind="compile")
        return list(jobs.values())

    def beside(self, jobs: list[Job]) -> list[Job]:
        """Those of a chunk's prepare jobs that may run while the chunk before it is evaluated (``prepare_ahead``):
        candidates whose custom code is a C++/CUDA extension, whose builds (minutes of host work) let go of the device
        (``_extensions``). A Triton candidate's compilations and a compile baseline's warm-up hold the device shared
        while they compile, so they stay in the stage that runs with nothing timed."""
        return [job for job in jobs if job.candidate is not None
                and kernel_language(job.candidate.source) in ("cuda", "cpp")]

    def prepare(self, jobs: list[Job], advance: Any, beside: bool = False) -> None:
        """Run the prepare stage's jobs, ``config.jobs`` at once, each in a fresh process (see
        ``_worker.warm_candidate``), before anything is timed: candidate code (an import, a constructor) may use the
        device, and none may run beside a timing (but see ``beside``). An import that fails is the candidate's
        ``compile_error``. The compile warm-ups (jobs with no candidate) share their processes, several problems one
        after the other in each (``_worker.warm_baselines``): no candidate code runs there, and each process would
        otherwise spend most of its time importing torch and Inductor. With ``beside`` (jobs of :meth:`beside`, while
        other workers time: the next chunk's, or this chunk's own beside its baselines), half as many at once, each
        at a lower CPU priority and holding the device shared like an evaluation's worker
        (``_worker.warm_candidate_beside``)."""
        target = "evaluations.worker._worker:" + ("warm_candidate_beside" if beside else "warm_candidate")

        workers = max(1, self.config.jobs // 2 if beside else self.config.jobs)
        warms = [job for job in jobs if job.candidate is None]
        groups = [warms[i::workers] for i in range(min(workers, len(warms)))]

        def one(job: Job | list[Job]) -> None:
            if isinstance(job, list):
                self._warm(job, advance)
                return
            c = job.candidate
            assert c is not None
            try:
                self._build(job, c, target)
            finally:
                if c.sha256 in self._building:  # an evaluation of it may wait for this (build_beside)
                    self._building[c.sha256].set()
            advance()

        with ThreadPoolExecutor(max_workers=workers) as pool:
            try:
                list(pool.map(one, [*(job for job in jobs if job.candidate is not None), *groups]))  # builds first
            except BaseException:
                self.cancel.set()
                raise

    def _warm(self, group: list[Job], advance: Any) -> None:
        """Compile warm-ups of several problems in one process; a failure is each baseline's to meet, when timed."""
        first = group[0]
        self._isolated("evaluations.worker._worker:warm_baselines", group,
                       f"warm-{first.protocol}-{first.problem.sha256[:12]}-{first.baseline_kind}-{len(group)}",
                       self.config.build_timeout_s, "build", spare=False)
        for _ in group:
            advance()

    def _build(self, job: Job, c: Candidate, target: str) -> None:
        """Prepare one candidate in a worker of ``target``, unless marked prepared; a failure is its ``compile_error``."""
        marker = self._prepared_marker(c)
        if marker.exists():  # prepared in an earlier run with this build folder: its caches are there
            return
        result = self._isolated(target, job, f"build-{c.sha256[:16]}",
                                self.config.build_timeout_s, "build", spare=False)  # parallel: cold workers
        if not result.ok and not (result.failure and result.failure.kind == "cancelled"):
            outcome = failed_outcome(result, building=True)
            if outcome.status == "timeout":  # say which deadline: the build's, not the evaluation's --timeout
                outcome.error = error_text(f"its preparation (extension builds, import, construction and warm-up "
                                           f"call) ran past the build deadline of {self.config.build_timeout_s:g} s "
                                           f"(--build-timeout) and was killed", result.output_tail)
            self._build_errors[c.sha256] = outcome
        elif result.ok and result.value.error is not None:
            self._build_errors[c.sha256] = no_answer("build", error_text(result.value.error, result.output_tail))
        elif result.ok:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"{c.sha256}\n", encoding="ascii")

    def build_beside(self, jobs: list[Job]) -> None:
        """Mark ``jobs`` (of :meth:`beside`) as building beside their own chunk's baselines: an evaluation of one of
        their candidates waits for its build (:meth:`built`) before it starts."""
        for job in jobs:
            if job.candidate is not None:
                self._building.setdefault(job.candidate.sha256, threading.Event())

    def built(self, candidate: Candidate) -> bool:
        """Wait until the candidate's build beside the timings (:meth:`build_beside`) ended, if it has one; False if
        the run was interrupted meanwhile."""
        event = self._building.get(candidate.sha256)
        while event is not None and not event.wait(0.5):
            if self.cancel.is_set():
                return False
        return not self.cancel.is_set()

    def _prepared_marker(self, candidate: Candidate) -> Path:
        """Marks a candidate whose import, construction and warm-up call succeeded with this build folder, torch
        and device, so a later run (a resumed sitting on a warm machine) does not prepare it again: its extension
        builds and compiler caches are in the folder. Removing the build folder removes the marks."""
        env = self.env
        tag = sha256_text(f"{candidate.sha256}\0{env.torch}\0{env.triton}\0{env.device_name}\0{self.config.device}")
        return self.config.build_dir / "prepared" / f"{tag[:32]}.ok"
