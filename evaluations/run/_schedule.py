"""The order of a run's work: chunks of whole problems, windows of concurrent problems, candidates waiting on a
build last."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ..core import Candidate, Job

PREPARE_CHUNK_WINDOWS = 3
"""A concurrent run prepares and evaluates its problems this many scheduling windows at a time (:func:`chunks`)."""
PREPARE_CHUNK_PROBLEMS = 16
"""Problems per chunk for a run of one evaluation at a time."""

Work = tuple[str, str, str] | tuple[str, Candidate, Path]
"""One unit of a concurrent run: a baseline (protocol, problem key, kind) or a candidate (protocol, candidate, path)."""


def chunks(todo: list[tuple[str, Candidate, Path]], concurrent: int) -> list[list[tuple[str, Candidate, Path]]]:
    """``todo`` in chunks of whole problems, in order, each prepared just before it is evaluated: a run stopped
    after some chunks (a sitting's time limit) has built only what it evaluated, and its first records come
    after one chunk's builds rather than the whole set's. A chunk is ``PREPARE_CHUNK_WINDOWS`` windows of
    ``concurrent`` problems (``PREPARE_CHUNK_PROBLEMS`` problems for a run of one at a time)."""
    size = PREPARE_CHUNK_WINDOWS * concurrent if concurrent > 1 else PREPARE_CHUNK_PROBLEMS
    order = {key: i // size for i, key in enumerate(dict.fromkeys(c.problem_key for _, c, _ in todo))}
    parts: list[list[tuple[str, Candidate, Path]]] = [[] for _ in range(max(order.values(), default=-1) + 1)]
    for item in todo:
        parts[order[item[1].problem_key]].append(item)
    return parts


def schedule(todo: list[tuple[str, Candidate, Path]], protocols: dict[str, ModuleType], concurrent: int) -> list[Work]:
    """Every baseline the candidates in ``todo`` need and the candidates themselves, in the order a concurrent
    run starts them: problems in windows of ``concurrent``, and in each window the baselines that pace the others,
    then the paced ones, then the candidates. Records thus complete window by window (an interrupted run keeps
    whole problems), and no worker sits waiting for a baseline started long after it."""
    order = {key: i for i, key in enumerate(dict.fromkeys(c.problem_key for _, c, _ in todo))}
    window = max(1, concurrent)
    keys = {(p, c.problem_key, kind) for p, c, _ in todo for kind in protocols[p].BASELINE_KINDS}
    work: list[tuple[tuple[int, int, str], Work]] = []
    for key in keys:
        pacer = protocols[key[0]].SPEEDUP_BASELINE["vs_eager"]
        work.append(((order[key[1]] // window, 0 if key[2] == pacer else 1, "/".join(key)), key))
    for item in todo:
        protocol, c, _ = item
        work.append(((order[c.problem_key] // window, 2, f"{protocol}/{c.sha256}"), item))
    return [w for _, w in sorted(work, key=lambda pair: pair[0])]


def after_builds(work: list[Work], building: list[Job]) -> list[Work]:
    """``work`` with the candidates whose builds run beside it (``Runner.build_beside``) moved to its end, in their
    order: the baselines and the other candidates are timed while those build, and no worker waits on a build
    while work that could run stands in line behind it."""
    waiting = {job.candidate.sha256 for job in building if job.candidate is not None}

    def waits(w: Work) -> bool:
        return not isinstance(w[2], str) and w[1].sha256 in waiting  # type: ignore[union-attr]
    return [w for w in work if not waits(w)] + [w for w in work if waits(w)]
