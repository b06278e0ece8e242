"""``kverdict reproduce``: sources found by sha256, device checks, agreement, and a CPU reproduction end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from evaluations import Overrides
from evaluations.cli import main
from evaluations.run import (
    ReproduceError,
    agreement,
    check_device,
    find_kernel,
    find_problem,
    load_original,
    protocol_options,
    records_root_of,
    reproduce,
)
from schemas import KernelSource, ProblemRef, TimingConfig, load_record, record_relpath, validate

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO.parent / "shared" / "datasets"
EXAMPLES = REPO / "tests" / "fixtures" / "gpu" / "problems"
"""Problems of the committed ``kernelverdict-examples`` records (kept with the GPU test fixtures)."""
_spec = importlib.util.spec_from_file_location("_record_factory", REPO / "tests" / "schemas" / "_record_factory.py")
factory = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(factory)  # type: ignore[union-attr]

PROBLEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(32, 128)]


def get_init_inputs():
    return []
"""
KERNEL = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)
"""


def _checkout(tmp_path: Path, hardware: str = "cpu", **fields: object) -> tuple[Path, Path]:
    """A checkout with one problem, one kernel and its record; returns (repo, record path)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "probs").mkdir()
    (repo / "probs" / "19_ReLU.py").write_text(PROBLEM, encoding="utf-8")
    (repo / "cands").mkdir()
    (repo / "cands" / "19_ReLU.py").write_text(KERNEL, encoding="utf-8")
    proto = factory.protocol("standard").model_copy(
        update={"timing": TimingConfig(warmup_calls=2, timed_calls=10, statistic="mean", l2_flush=False)})
    record = factory.make_record(
        model="Tester", hardware=hardware, protocol=proto,
        problem=ProblemRef(suite="probs", level=1, id=19, name="19_ReLU", source_sha256=factory.sha(PROBLEM)),
        kernel=KernelSource(sha256=factory.sha(KERNEL), language="pytorch", path="cands/19_ReLU.py"), **fields)
    return repo, factory.place(repo / "records", record)


def test_kernel_and_problem_are_found_by_sha256(tmp_path: Path) -> None:
    repo, path = _checkout(tmp_path)
    record = load_original(path)
    candidate = find_kernel(record, repo, [])
    assert candidate.source == KERNEL and candidate.model == "Tester"
    problem = find_problem(record, [repo / "probs"], [])
    assert (problem.suite, problem.level, problem.id, problem.source) == ("probs", 1, 19, PROBLEM)


def test_a_changed_kernel_is_refused(tmp_path: Path) -> None:
    repo, path = _checkout(tmp_path)
    (repo / "cands" / "19_ReLU.py").write_text(KERNEL + "# edited\n", encoding="utf-8")
    with pytest.raises(ReproduceError, match="the kernel changed since it was evaluated"):
        find_kernel(load_original(path), repo, [])


def test_a_missing_problem_names_the_way_out(tmp_path: Path) -> None:
    repo, path = _checkout(tmp_path)
    (repo / "probs" / "19_ReLU.py").write_text(PROBLEM.replace("32, 128", "64, 128"), encoding="utf-8")
    with pytest.raises(ReproduceError, match="not found; give its folder or bundle with --problems"):
        find_problem(load_original(path), [repo / "probs"], [])


@pytest.mark.skipif(not (DATASETS / "cuda-l1-h100" / "h100.jsonl").is_file(), reason="public datasets not present")
def test_dataset_kernel_is_found_in_a_local_copy() -> None:
    rows = (DATASETS / "cuda-l1-h100" / "h100.jsonl").read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(rows) if json.loads(line)["custom_code"].strip())
    data = json.loads(rows[row])
    record = factory.make_record(
        problem=ProblemRef(suite="kernelbench-v0", level=data["level_id"], id=data["task_id"], name="task",
                           source_sha256=factory.sha(data["ref_code"])),
        kernel=KernelSource(sha256=factory.sha(data["custom_code"]), language="cuda", url=factory.DATASET_URL,
                            commit=factory.DATASET_COMMIT, path="optimized_cuda_code/h100.json", row=row))
    assert find_kernel(record, REPO, [DATASETS]).source == data["custom_code"]
    assert find_problem(record, [], [DATASETS]).source == data["ref_code"]
    with pytest.raises(ReproduceError, match="give the dataset's folder with --dataset-root"):
        find_kernel(record, REPO, [REPO / "no-such-folder"])


def test_device_mismatches_are_refused() -> None:
    gpu, cpu = factory.make_record(), factory.make_record(hardware="cpu")
    with pytest.raises(ReproduceError, match="no CUDA device is visible here, and the record was measured on h200"):
        check_device(gpu, "cuda", cuda_available=False)
    with pytest.raises(ReproduceError, match="cannot be reproduced on the CPU"):
        check_device(gpu, "cpu", cuda_available=False)
    with pytest.raises(ReproduceError, match="pass --device cpu"):
        check_device(cpu, "cuda", cuda_available=True)
    check_device(cpu, "cpu", cuda_available=False)
    check_device(gpu, "cuda", cuda_available=True)


def test_gpu_record_without_a_gpu_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    _, path = _checkout(tmp_path, hardware="h200")
    assert main(["reproduce", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kverdict reproduce: error: ") and "no CUDA device is visible here" in err
    assert "\n" not in err


def test_only_original_candidate_records_are_reproduced(tmp_path: Path) -> None:
    base = factory.place(tmp_path / "records", factory.make_baseline())
    with pytest.raises(ReproduceError, match="a baseline record"):
        load_original(base)
    repro = factory.place(tmp_path / "records", factory.make_record(reproduces="records/x.json"))
    with pytest.raises(ReproduceError, match="already a reproduction"):
        load_original(repro)
    stray = factory.place(tmp_path / "records", factory.make_record(), rel="misplaced.json")
    with pytest.raises(ReproduceError, match="not at its layout path"):
        records_root_of(stray, load_original(stray))


def test_reduced_counts_of_the_original_are_recreated() -> None:
    info = factory.protocol("standard")
    short = info.model_copy(update={"seeds": info.seeds[:2], "timing": info.timing.model_copy(update={"timed_calls": 10})})
    record = factory.make_record(protocol=short)
    assert protocol_options(record, info) == Overrides(trials=2, timed_calls=10)
    assert protocol_options(factory.make_record(), info) == Overrides()


def test_agreement_uses_the_original_ci() -> None:
    original = factory.make_record(protocol_name="verified")  # candidate 1.0 ms CI [0.99, 1.01], baseline 2.0 ms
    near = factory.make_record(protocol_name="verified", candidate_ms=1.015)
    far = factory.make_record(protocol_name="verified", candidate_ms=1.3)
    inside, outside = agreement(original, near), agreement(original, far)
    assert inside.agrees and inside.low == pytest.approx(1.98 / 1.01) and inside.high == pytest.approx(2.02 / 0.99)
    assert not outside.agrees and "outside the original's 95% CI" in outside.reason


def test_the_band_of_a_speedup_from_per_round_ratios_holds_that_speedup() -> None:
    original = factory.make_record(protocol_name="verified")  # CI band of the times: [1.98 / 1.01, 2.02 / 0.99]
    data = factory.as_data(original)
    data["timing"]["round_medians_ms"] = [1.0, 1.0, 1.0]
    for b in data["baselines"]:
        b["timing"]["round_medians_ms"], b["baseline_id"] = [2.0, 2.1, 2.1], None
    data["speedup"].update(vs_eager=2.1, vs_compile=2.1)  # timed in turns: the median of per-round ratios
    in_turns = factory.Record.model_validate(data)
    verdict = agreement(in_turns, factory.make_record(protocol_name="verified", candidate_ms=2.0 / 2.09))
    assert verdict.agrees and verdict.low == pytest.approx(1.98 / 1.01) and verdict.high == pytest.approx(2.1)
    assert not agreement(in_turns, factory.make_record(protocol_name="verified", candidate_ms=2.0 / 2.12)).agrees


def test_agreement_without_ci_uses_five_percent_and_compares_status() -> None:
    no_ci = dict(ci95_low_ms=None, ci95_high_ms=None)
    original = factory.make_record(timing=factory.timing(1.0, **no_ci))
    assert agreement(original, factory.make_record(candidate_ms=1.04)).agrees
    assert not agreement(original, factory.make_record(candidate_ms=1.1)).agrees
    failed = factory.as_data(factory.make_record())
    failed["correctness"][0]["passed"] = False
    failed.update(status="incorrect", timing=None, speedup={})
    verdict = agreement(original, factory.Record.model_validate(failed))
    assert not verdict.agrees and verdict.reason == "status 'incorrect', original 'correct'"


@pytest.mark.slow
def test_cpu_record_is_reproduced_next_to_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    repo, path = _checkout(tmp_path)
    monkeypatch.chdir(repo)
    done = reproduce(path, device="cpu", problem_roots=[repo / "probs"], build_dir=tmp_path / "build",
                     dataset_roots=[], timeout_s=120)
    assert done.written == path.with_name("0019-19_relu__s0__repro.json").resolve()
    written = load_record(done.written)
    assert written.reproduces == "records/cpu/tester/standard/probs/level-1/0019-19_relu__s0.json"
    assert written.status == "correct" and written.speedup.vs_eager is not None
    assert written.protocol.timing.timed_calls == 10 and written.kernel.sha256 == factory.sha(KERNEL)
    assert done.written.relative_to(repo / "records").as_posix() == record_relpath(written).as_posix()
    # the original's reduced call counts (a quick CPU record) are carried over and recorded, never hidden, so the
    # validator says of both records exactly that they do not meet the pinned protocol, and nothing else
    findings = validate(root=repo / "records")
    assert sorted((Path(f.path).name, f.field) for f in findings) == sorted(
        (name, f"protocol.timing.{field}") for name in ("0019-19_relu__s0.json", "0019-19_relu__s0__repro.json")
        for field in ("warmup_calls", "timed_calls"))


@pytest.mark.gpu
def test_a_committed_gpu_record_reproduces(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from evaluations import hardware_slug

    # an honest kernel of the repository's own: its kernel and problem are in the checkout, wherever it runs; a
    # record is reproduced only on the hardware it was measured on (another card is refused, by design)
    here = hardware_slug(torch.cuda.get_device_name(0), "cuda")
    originals = sorted(p for p in (REPO / "records").glob(f"{here}/honest-kernels/*/*/level-*/*.json")
                       if not p.name.endswith("__repro.json"))
    if not originals:
        pytest.skip(f"no committed record of an honest kernel measured on this card ({here})")
    done = reproduce(originals[0], out_dir=tmp_path, device="cuda", dataset_roots=[DATASETS],
                     problem_roots=[EXAMPLES], build_dir=tmp_path / "build")
    assert done.record.status == load_original(originals[0]).status


def test_committed_records_of_repository_kernels_find_their_kernel_and_problem_in_the_repository() -> None:
    from evaluations.run import DEFAULT_PROBLEM_ROOTS, find_kernel, find_problem

    originals = [r for r in (load_original(p) for p in sorted((REPO / "records").glob("*/*/*/*/level-*/*.json"))
                             if "_baselines" not in p.parts and not p.name.endswith("__repro.json"))
                 if r.kernel.url is None]
    suites = {r.problem.suite for r in originals}
    if not originals:
        pytest.skip("no committed record of a kernel kept in this repository")
    for record in originals:  # the exploit zoo's records included: its problems are a suite of their own
        assert find_kernel(record, REPO, []).source
        assert find_problem(record, [*DEFAULT_PROBLEM_ROOTS, EXAMPLES], []).sha256 == record.problem.source_sha256
    assert "kernelverdict-zoo" in suites or not (REPO / "records" / "h200" / "exploit-zoo").exists()
