"""The prepare stage on the CPU: candidate imports and extension builds before anything is timed, compile warm-ups
of the baselines, a run taken chunk by chunk, and the next chunk's builds beside this chunk's timings."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from cli_runs import copy_candidates, eval_args

import schemas
from evaluations import Overrides
from evaluations.cli import main


def test_the_prepare_stage_gives_a_failing_import_its_compile_error_once_for_both_protocols(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "3_tiny_scale.py").write_text(  # a Triton import that does not exist: a build failure
        "import torch\nfrom triton_missing_module import jit  # noqa\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n", encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard", "verified"), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1, trials=2),
                       progress=False)
    summary = run(loaded, config, capture_environment("cpu"))
    assert sorted(r.status for r in summary.records) == ["compile_error", "compile_error"]
    assert all("triton_missing_module" in (r.error or "") for r in summary.records)
    logs = tmp_path / "build" / "logs"
    assert len(list(logs.glob("build-*.log"))) == 1 and not list(logs.glob("eval-*.log"))
    assert {t.phase: t.jobs for t in summary.phases.totals()}["build"] == 1


def test_a_run_prepares_and_evaluates_its_problems_chunk_by_chunk(tmp_path, fixtures_dir, monkeypatch):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    names = ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py", "3_tiny_scale.py")
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, names)
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_WINDOWS", 1)
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard", "verified"), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    todo = runner.pending()
    chunks = runner.chunks(todo)
    problems = [sorted({c.problem_key.rsplit("/", 1)[1] for _, c, _ in chunk}) for chunk in chunks]
    assert problems == [["1", "2"], ["3"]]  # whole problems, in order, one window of two problems each
    assert sorted(map(str, (p for chunk in chunks for _, _, p in chunk))) == sorted(str(p) for _, _, p in todo)
    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_PROBLEMS", 2)
    single = Runner(loaded, RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu",
                                      build_dir=tmp_path / "build", progress=False), capture_environment("cpu"))
    assert [len({c.problem_key for _, c, _ in ch}) for ch in single.chunks(single.pending())] == [2, 1]


def _as_candidate(fixtures_dir: Path, problem: str) -> str:
    """A fixture problem's reference as a candidate (its class renamed ``ModelNew``)."""
    text = (fixtures_dir / "problems" / problem).read_text(encoding="utf-8")
    return text.replace("class Model(", "class ModelNew(")


def _builds_cpp(fixtures_dir: Path, problem: str) -> str:
    """A fixture problem's reference as a candidate whose text names ``load_inline``: the prepare stage takes it for a
    C++ extension's candidate."""
    return _as_candidate(fixtures_dir, problem) + "\n# built with torch.utils.cpp_extension.load_inline\n"


def test_a_candidate_prepared_once_is_not_prepared_again_with_the_same_build_folder(tmp_path, fixtures_dir):

    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "3_tiny_scale.py").write_text(_builds_cpp(fixtures_dir, "3_tiny_scale.py"), encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def once():
        config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1),
                           progress=False)
        summary = run(loaded, config, capture_environment("cpu"))
        shutil.rmtree(tmp_path / "out")  # the next run evaluates it again
        return summary

    first, second = once(), once()
    assert [r.status for r in first.records] == [r.status for r in second.records] == ["correct"]
    assert {t.phase: t.jobs for t in first.phases.totals()}["build"] == 1
    assert "build" not in {t.phase for t in second.phases.totals()}  # prepared before: no build job
    assert len(list((tmp_path / "build" / "prepared").glob("*.ok"))) == 1


def test_the_prepare_stage_compiles_each_compile_baseline_still_to_measure_into_the_baselines_cache(tmp_path,
                                                                                                   fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "1_tiny_relu__wrong.py", "2_tiny_add.py"))
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("verified", "standard"), device="cpu",
                       build_dir=tmp_path / "build", progress=False)
    runner = Runner(loaded, config, capture_environment("cpu"))
    todo = [(p, c) for p in ("standard", "verified") for c in runner.candidates]
    jobs = runner.compile_warmups(todo)
    # one per problem, whatever its number of candidates; none for the standard protocol, which has no such baseline
    assert sorted(j.problem.key for j in jobs) == sorted({c.problem_key for c in runner.candidates})
    assert {(j.protocol, j.baseline_kind, j.candidate) for j in jobs} == {("verified", "compile", None)}
    advanced: list[int] = []
    runner.prepare(jobs, lambda: advanced.append(1))
    assert len(advanced) == len(jobs)
    cache = tmp_path / "build" / "caches" / "baselines" / "inductor"
    assert cache.is_dir() and any(p.is_file() for p in cache.rglob("*")), "nothing was compiled into the cache"
    # one process (--jobs 1) warmed both problems, one after the other: a compiled graph of each in the cache
    assert [s.phase for s in runner.summary.phases.spans] == ["build"]
    assert len([p for p in (cache / "fxgraph").rglob("*") if p.is_file()]) >= len(jobs) == 2
    assert not (tmp_path / "out").exists()  # a warm-up measures and records nothing
    measured = jobs[0].problem
    runner.baseline("verified", measured, "compile")  # once measured, its problem needs no warm-up
    assert measured.key not in {j.problem.key for j in runner.compile_warmups(todo)}


_BROKEN_BUILD = '''"""A candidate whose extension does not compile: it falls back to PyTorch, as many public kernels do."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = "torch::Tensor combine(torch::Tensor a, torch::Tensor b) { return a + not_declared_anywhere; }"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self.ext = load_inline(name="fused_kernel", cpp_sources=_SOURCE, functions=["combine"])
        except RuntimeError:
            self.ext = None

    def forward(self, a, b):
        return self.ext.combine(a, b) if self.ext is not None else a + b
'''


def test_an_extension_that_failed_to_build_is_not_built_again_by_the_candidates_next_process(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "2_tiny_add__broken_build.py").write_text(_BROKEN_BUILD, encoding="utf-8")
    args = eval_args(fixtures_dir, cands, tmp_path / "out", tmp_path / "build", "--protocol", "both", "--timeout", "120")
    assert main(args) == 0
    records = [schemas.load_record(p) for p in (tmp_path / "out").rglob("*__s0.json")]
    assert sorted(r.protocol.name for r in records) == ["standard", "verified"]
    assert {r.status for r in records} == {"correct"}  # its fallback is right: the failed build is no verdict
    logs = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "build" / "logs").glob("eval-*")}
    again = [name for name, text in logs.items() if "failed to build in an earlier process; not built again" in text]
    assert len(again) == 1, logs.keys()  # the first evaluation built it and failed; the second did not build
    marks = list((tmp_path / "build" / "extensions").rglob("kverdict-build-failed.txt"))
    assert len(marks) == 1 and "not_declared_anywhere" in marks[0].read_text(encoding="utf-8")  # the compiler's words


def test_only_extension_builds_are_prepared_beside_the_timings_of_the_chunk_before(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    (cands / "2_tiny_add__cpp.py").write_text(_builds_cpp(fixtures_dir, "2_tiny_add.py"), encoding="utf-8")
    triton = _builds_cpp(fixtures_dir, "3_tiny_scale.py").replace("load_inline", "a kernel of") + "import triton\n"
    (cands / "3_tiny_scale__triton.py").write_text(triton, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("verified",), device="cpu", build_dir=tmp_path / "build",
                       progress=False, concurrent=2)
    runner = Runner(loaded, config, capture_environment("cpu"))
    pairs = [("verified", c) for c in runner.candidates]
    jobs = runner.preparations(pairs) + runner.compile_warmups(pairs)
    assert {j.candidate.label if j.candidate else j.baseline_kind for j in jobs} == {
        "cpp", "triton", "compile"}  # the PyTorch candidate builds nothing
    # a Triton candidate compiles while it holds the device, a compile warm-up too: they wait for nothing timed
    assert [j.candidate.label for j in runner.beside(jobs)] == ["cpp"]


def _build_and_last_write(summary: Any, source: str, first_chunk: tuple[str, ...]) -> tuple[float, float]:
    """When the build of the candidate with ``source`` started, and when the last record of the first chunk's
    problems was written."""
    from evaluations import sha256_text

    spans = summary.phases.spans
    (build,) = [s.start_s for s in spans if s.phase == "build" and s.label == f"build-{sha256_text(source)[:16]}"]
    return build, max(s.start_s for s in spans if s.phase == "write" and s.label.startswith(first_chunk))


def test_the_next_chunks_extensions_are_built_while_this_chunk_is_evaluated(tmp_path, fixtures_dir, monkeypatch):
    import re

    from evaluations import capture_environment, load_inputs, sha256_text
    from evaluations.run import RunConfig, run
    from evaluations.worker import BESIDE_NICE

    monkeypatch.setattr("evaluations.run._schedule.PREPARE_CHUNK_WINDOWS", 1)  # chunks of two problems: (1, 2), then (3)
    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    (cands / "2_tiny_add__plain.py").write_text(_as_candidate(fixtures_dir, "2_tiny_add.py"), encoding="utf-8")
    source = _builds_cpp(fixtures_dir, "3_tiny_scale.py")
    (cands / "3_tiny_scale__cpp.py").write_text(source, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def evaluated(ahead: bool, name: str) -> tuple[Any, Path]:
        build = tmp_path / f"build-{name}"
        config = RunConfig(out_dir=tmp_path / f"out-{name}", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=build, overrides=Overrides(timed_calls=5, warmup_calls=1), progress=False,
                           concurrent=2, prepare_ahead=ahead)
        return run(loaded, config, capture_environment("cpu")), build

    summary, build = evaluated(True, "ahead")
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    started, last_of_first = _build_and_last_write(summary, source, ("0001-", "0002-"))
    assert started < last_of_first  # problem 3's build ran while problems 1 and 2 were evaluated
    log = build / "logs" / f"build-{sha256_text(source)[:16]}.log"
    niceness = re.search(r"preparing beside timings, at nice (\d+)", log.read_text(encoding="utf-8"))
    assert niceness and int(niceness.group(1)) >= BESIDE_NICE  # below the timing workers' priority

    summary, build = evaluated(False, "after")  # the same run without: the build waits for the first chunk's end
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    started, last_of_first = _build_and_last_write(summary, source, ("0001-", "0002-"))
    assert started > last_of_first
    log = build / "logs" / f"build-{sha256_text(source)[:16]}.log"
    assert "beside timings" not in log.read_text(encoding="utf-8")


def test_a_chunks_own_extension_builds_run_beside_its_baselines_and_its_candidate_waits_for_its_build(
        tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs, sha256_text
    from evaluations.run import RunConfig, run

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py", "2_tiny_add.py"))
    # an import that takes seconds stands for an extension build (the prepare stage imports the candidate)
    source = _builds_cpp(fixtures_dir, "3_tiny_scale.py") + "import time\ntime.sleep(4)\n"
    (cands / "3_tiny_scale__cpp.py").write_text(source, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")

    def spans(ahead: bool, name: str) -> tuple[Any, tuple[float, float], list[tuple[float, float]], float]:
        config = RunConfig(out_dir=tmp_path / f"out-{name}", protocols=("standard",), device="cpu", timeout_s=120,
                           build_dir=tmp_path / f"build-{name}", overrides=Overrides(timed_calls=5, warmup_calls=1),
                           progress=False, concurrent=2, prepare_ahead=ahead)
        summary = run(loaded, config, capture_environment("cpu"))
        all_spans = summary.phases.spans
        (build,) = [(s.start_s, s.end_s) for s in all_spans if s.label == f"build-{sha256_text(source)[:16]}"]
        baselines = [(s.start_s, s.end_s) for s in all_spans if s.phase == "baseline"]
        (evaluated,) = [s.start_s for s in all_spans if s.phase == "candidate"
                        and s.label == f"eval-standard-{sha256_text(source)[:16]}"]
        return summary, build, baselines, evaluated

    summary, build, baselines, evaluated = spans(True, "beside")
    assert sorted(r.status for r in summary.records) == ["correct"] * 3  # one chunk of three problems
    assert len(baselines) == 3
    assert min(start for start, _ in baselines) < build[1]  # a baseline was timed while the build ran
    assert evaluated >= build[1]  # the candidate's evaluation waited for its build

    summary, build, baselines, evaluated = spans(False, "before")  # without: the build comes before anything timed
    assert sorted(r.status for r in summary.records) == ["correct"] * 3
    assert min(start for start, _ in baselines) >= build[1]


def test_a_build_that_fails_beside_its_chunks_baselines_is_its_candidates_compile_error(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, run

    cands = copy_candidates(tmp_path / "cands", fixtures_dir, ("1_tiny_relu.py",))
    broken = _builds_cpp(fixtures_dir, "3_tiny_scale.py") + "raise RuntimeError('ninja: build stopped: subcommand failed')\n"
    (cands / "3_tiny_scale__cpp.py").write_text(broken, encoding="utf-8")
    loaded = load_inputs(fixtures_dir / "problems", cands, model="fixture-model")
    config = RunConfig(out_dir=tmp_path / "out", protocols=("standard",), device="cpu", timeout_s=120,
                       build_dir=tmp_path / "build", overrides=Overrides(timed_calls=5, warmup_calls=1), progress=False,
                       concurrent=2, prepare_ahead=True)
    summary = run(loaded, config, capture_environment("cpu"))
    by_problem = {r.problem.id: r for r in summary.records}
    assert sorted(by_problem) == [1, 3], by_problem.keys()
    assert by_problem[1].status == "correct"
    assert by_problem[3].status == "compile_error"
    assert "subcommand failed" in (by_problem[3].error or "")
