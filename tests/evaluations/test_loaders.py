"""Loading problems and candidates: folders, KernelBench checkouts, and both public bundles."""

from __future__ import annotations

import json
import shutil
from itertools import islice
from pathlib import Path

import pytest

from evaluations import (
    REVISIONS,
    Claim,
    LoadError,
    SourceOverride,
    load_bundle,
    load_candidate_folder,
    load_inputs,
    load_problem_folder,
)
from schemas import DATASETS

REVISION_SUITES = {label: rev.suite for label, rev in REVISIONS.items()}

PROBLEM = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n\n" \
          "def get_inputs():\n    return [torch.randn(2)]\n\ndef get_init_inputs():\n    return []\n"


def test_folder_of_problems_with_meta(tmp_path, fixtures_dir):
    suite = tmp_path / "my-suite"
    shutil.copytree(fixtures_dir / "problems", suite)
    (suite / "meta.json").write_text(json.dumps({"suite": "kernelverdict", "problems": {
        "1_tiny_relu.py": {"level": 2, "id": 7, "name": "relu", "tags": ["activation"], "dtype": "float32",
                           "flops": 4096, "min_bytes": 32768}}}))
    problems = {p.file_name: p for p in load_problem_folder(suite)}
    relu = problems["1_tiny_relu.py"]
    assert (relu.suite, relu.level, relu.id, relu.name) == ("kernelverdict", 2, 7, "relu")
    assert relu.meta.tags == ("activation",) and relu.meta.flops == 4096 and relu.meta.min_bytes == 32768
    add = problems["2_tiny_add.py"]
    assert (add.level, add.id, add.name) == (1, 2, "2_tiny_add")  # no meta entry: number prefix, file stem


def test_folder_without_meta_is_named_after_the_folder(fixtures_dir):
    problems = load_problem_folder(fixtures_dir / "problems")
    assert {p.suite for p in problems} == {"problems"}
    assert all(not p.origin.path.startswith("/") and p.origin.path.endswith(".py") for p in problems)


def _checkout(tmp_path):
    root = tmp_path / "KernelBench-main"
    for level, name in ((1, "1_Square_matrix_multiplication_.py"), (1, "19_ReLU.py"), (2, "1_Conv2D_ReLU_BiasAdd.py")):
        folder = root / "KernelBench" / f"level{level}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(PROBLEM)
    return root


def test_kernelbench_checkout_levels_and_ids(tmp_path):
    problems = load_problem_folder(_checkout(tmp_path))
    assert sorted(p.key for p in problems) == ["kernelbench/1/1", "kernelbench/1/19", "kernelbench/2/1"]
    assert {p.name for p in problems if p.level == 2} == {"1_Conv2D_ReLU_BiasAdd"}


def test_candidates_with_labels_and_level_folders(tmp_path):
    problems = load_problem_folder(_checkout(tmp_path))
    cands = tmp_path / "cands"
    (cands / "level2").mkdir(parents=True)
    for name in ("19_ReLU.py", "19_ReLU__b.py", "19_ReLU__a.py"):
        (cands / name).write_text("class ModelNew: pass\n")
    (cands / "level2" / "1_Conv2D_ReLU_BiasAdd.py").write_text("class ModelNew: pass\n")
    found = load_candidate_folder(cands, problems, model="m")
    relu = sorted((c.sample, c.label) for c in found if c.problem_key == "kernelbench/1/19")
    assert relu == [(0, ""), (1, "a"), (2, "b")]
    assert [c.problem_key for c in found if "Conv" in c.origin.path] == ["kernelbench/2/1"]


def test_candidate_for_unknown_problem_is_a_one_line_error(tmp_path, fixtures_dir):
    (tmp_path / "99_missing.py").write_text("class ModelNew: pass\n")
    with pytest.raises(LoadError, match="no problem named 99_missing.py among the loaded problems") as err:
        load_candidate_folder(tmp_path, load_problem_folder(fixtures_dir / "problems"), model="m")
    assert "\n" not in str(err.value)


def _head(src, dst, n):
    with src.open() as fh:
        dst.write_text("".join(islice(fh, n)))
    return dst


def test_cuda_l1_bundle_rows(tmp_path, datasets_dir):
    bundle = _head(datasets_dir / "cuda-l1-h100" / "h100.jsonl", tmp_path / "h100.jsonl", 4)
    loaded = load_bundle(bundle)
    assert [p.key for p in loaded.problems] == [f"kernelbench-v0/1/{i}" for i in (1, 2, 3, 4)]
    assert [p.name for p in loaded.problems][:2] == ["1_Square_matrix_multiplication_", "2_Standard_matrix_multiplication_"]
    first = loaded.candidates[0]
    assert first.model == "CUDA-L1" and "ModelNew" in first.source
    assert first.origin.url == "https://github.com/deepreinforce-ai/CUDA-L1"
    assert first.origin.commit == "51e8356bf844101cab2aeeca4bdff47ebb1953b8"
    assert first.origin.path == "optimized_cuda_code/h100.json" and first.origin.row == 0
    row = json.loads(bundle.read_text().splitlines()[0])
    assert first.claimed == Claim(source_field="score_default", speedup=row["score_default"], baseline="eager")


def test_cuda_l1_bundle_skips_rows_without_a_kernel(datasets_dir):
    loaded = load_bundle(datasets_dir / "cuda-l1-h100" / "h100.jsonl")
    rows = [json.loads(line) for line in (datasets_dir / "cuda-l1-h100" / "h100.jsonl").open()]
    assert len(loaded.problems) == 250
    assert len(loaded.candidates) == sum(1 for r in rows if (r["custom_code"] or "").strip())
    assert {p.level for p in loaded.problems} == {1, 2, 3}


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda d: d.name)
def test_each_known_dataset_holds_the_kernels_its_table_counts_and_names_its_provenance(datasets_dir, dataset):
    """``schemas.DATASETS`` is what the site divides by ("n of its k kernels evaluated"): it must be the kernels
    the loader reads from the dataset, and their records must name the table's repository and commit."""
    loaded = load_bundle(datasets_dir / dataset.name / dataset.file_name)  # the datasets folder names them so
    assert len(loaded.candidates) == dataset.kernels
    assert {(c.model, c.origin.url, c.origin.commit) for c in loaded.candidates} == {
        (dataset.model, dataset.url, dataset.commit)}


def test_triton_dump_bundle_rows(tmp_path, datasets_dir):
    bundle = _head(datasets_dir / "kernelbench-triton-h200" / "dump.jsonl", tmp_path / "dump.jsonl", 3)
    loaded = load_bundle(bundle)
    problem = loaded.problems[0]
    assert problem.key == "kernelbench/1/1" and problem.name == "1_Square_matrix_multiplication_"
    assert problem.origin.path == "KernelBench/level1/1_Square_matrix_multiplication_.py"
    kernel = loaded.candidates[0]
    assert kernel.model == "KernelBench Triton dump" and "triton" in kernel.source
    assert "does not report which model" in (kernel.provider or "")
    assert kernel.origin.url == "https://github.com/ScalingIntelligence/KernelBench"
    assert kernel.origin.commit == "6842d4f293f6736d758f5e1d19fee7cd1982e3fa"
    assert kernel.origin.path == "triton_runs/level1_triton/kernels/level1_problem1_triton.py"
    assert kernel.origin.row is None  # the kernel is a file of its own at that path
    claim = json.loads(bundle.read_text().splitlines()[0])["claimed"]
    assert kernel.claimed == Claim(source_field="claimed.speedup", speedup=claim["speedup"], baseline="eager",
                                   ms=claim["runtime_triton_us"])
    assert load_bundle(bundle, model="some-model").candidates[0].model == "some-model"


def test_bundle_problems_get_their_kernelbench_names_and_counts(datasets_dir):
    cuda_l1 = load_bundle(datasets_dir / "cuda-l1-h100" / "h100.jsonl")
    by_key = {p.key: p for p in cuda_l1.problems}
    assert by_key["kernelbench-v0/2/23"].name == "23_Conv3d_GroupNorm_Mean"
    assert not any(p.name.startswith("task_") for p in cuda_l1.problems)
    counted = [p for p in cuda_l1.problems if p.meta.counted == "automatic"]
    assert len(counted) >= 245 and all(p.meta.flops is not None and p.meta.min_bytes > 0 for p in counted)
    assert {p.name for p in cuda_l1.problems if p.meta.counted is None} >= {"48_Mamba2ReturnY"}
    triton = load_bundle(datasets_dir / "kernelbench-triton-h200" / "dump.jsonl")
    unknown = sorted(p.name for p in triton.problems if p.meta.counted is None and p.meta.not_counted is None)
    assert unknown == ["12_Matmul_with_diagonal_matrices_", "97_ScaledDotProductAttention"]  # this source's own revision


def test_claims_with_bad_values_are_one_line_errors(tmp_path, datasets_dir):
    row = json.loads(_head(datasets_dir / "cuda-l1-h100" / "h100.jsonl", tmp_path / "one.jsonl", 1).read_text())
    bundle = tmp_path / "h100.jsonl"
    bundle.write_text(json.dumps({**row, "score_default": "fast"}) + "\n")
    with pytest.raises(LoadError, match=r"h100.jsonl: row 0: field score_default: expected a finite") as err:
        load_bundle(bundle)
    assert "\n" not in str(err.value)


def test_a_v0_checkout_is_the_v0_suite_and_folder_problems_get_counts(datasets_dir, tmp_path):
    level1 = datasets_dir / "kernelbench" / "v0" / "KernelBench" / "level1"
    checkout = tmp_path / "KernelBench" / "KernelBench" / "level1"
    checkout.mkdir(parents=True)
    for name in ("19_ReLU.py", "1_Square_matrix_multiplication_.py"):
        shutil.copy(level1 / name, checkout / name)
    (checkout / "3_mine.py").write_text(PROBLEM.replace("return x\n", "return x * 2\n"))
    problems = {p.name: p for p in load_problem_folder(tmp_path / "KernelBench")}
    assert problems["19_ReLU"].suite == "kernelbench-v0" and problems["19_ReLU"].meta.counted == "automatic"
    assert problems["3_mine"].suite == "kernelbench" and problems["3_mine"].meta.counted is None
    named = load_problem_folder(tmp_path / "KernelBench", suite="mine")
    assert {p.suite for p in named} == {"mine"}
    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "3_mine.py").write_text("class ModelNew: pass\n")
    loaded = load_inputs(tmp_path / "KernelBench", cands, model="m")
    mine = next(p for p in loaded.problems if p.name == "3_mine")
    assert (mine.meta.counted, mine.meta.flops, mine.meta.min_bytes) == ("automatic", 0.0, 4 * 2 + 4 * 2)


def test_meta_json_counts_are_hand_written_and_checked(tmp_path, fixtures_dir):
    suite = tmp_path / "suite"
    shutil.copytree(fixtures_dir / "problems", suite)
    entry = {"flops": 1, "min_bytes": 2}
    (suite / "meta.json").write_text(json.dumps({"problems": {"1_tiny_relu.py": entry}}))
    assert {p.name: p.meta.counted for p in load_problem_folder(suite)}["1_tiny_relu"] == "hand"
    (suite / "meta.json").write_text(json.dumps({"problems": {"1_tiny_relu.py": {**entry, "counted": "guessed"}}}))
    with pytest.raises(LoadError, match=r"meta.json: problems.1_tiny_relu.py.counted: expected 'hand' or 'automatic'"):
        load_problem_folder(suite)


def test_candidate_names_with_double_underscores_and_trailing_underscores(tmp_path):
    root = tmp_path / "problems"
    root.mkdir()
    for name in ("54_conv_standard_3D__square_input__square_kernel.py", "12_Matmul_with_diagonal_matrices_.py",
                 "conv.py", "conv__square.py"):
        (root / name).write_text(PROBLEM)
    problems = load_problem_folder(root)
    key = {p.file_name: p.key for p in problems}
    expected = {  # candidate file -> (problem file, label): the longest problem name the candidate continues
        "54_conv_standard_3D__square_input__square_kernel.py": ("54_conv_standard_3D__square_input__square_kernel.py", ""),
        "54_conv_standard_3D__square_input__square_kernel__fast.py": ("54_conv_standard_3D__square_input__square_kernel.py", "fast"),
        "12_Matmul_with_diagonal_matrices___b.py": ("12_Matmul_with_diagonal_matrices_.py", "b"),
        "conv__square__a.py": ("conv__square.py", "a"),
        "conv__squared.py": ("conv.py", "squared"),
    }
    cands = tmp_path / "cands"
    cands.mkdir()
    for name in expected:
        (cands / name).write_text("class ModelNew: pass\n")
    found = {Path(c.origin.path).name: (c.problem_key, c.label) for c in load_candidate_folder(cands, problems, model="m")}
    assert found == {name: (key[problem], label) for name, (problem, label) in expected.items()}
    (cands / "12_Matmul_with_diagonal_matrices.py").write_text("class ModelNew: pass\n")
    with pytest.raises(LoadError, match="no problem named 12_Matmul_with_diagonal_matrices.py"):
        load_candidate_folder(cands, problems, model="m")


@pytest.mark.parametrize("revision", ["v0", "main"])
def test_every_kernelbench_problem_takes_its_own_candidate(revision, tmp_path, datasets_dir):
    checkout = datasets_dir / "kernelbench" / revision
    problems = load_problem_folder(checkout)
    assert len(problems) == 250 and {p.suite for p in problems} == {REVISION_SUITES[revision]}
    cands = tmp_path / "cands"
    for p in problems:  # a labelled candidate in a level folder, and a plain one beside all levels
        (cands / f"level{p.level}").mkdir(parents=True, exist_ok=True)
        (cands / f"level{p.level}" / f"{Path(p.file_name).stem}__try1.py").write_text(f"# {p.key}\nclass ModelNew: pass\n")
        (cands / f"level{p.level}" / p.file_name).write_text(f"# {p.key}\nclass ModelNew: pass\n")
    found = load_candidate_folder(cands, problems, model="m")
    assert len(found) == 500
    assert all(c.source.startswith(f"# {c.problem_key}\n") for c in found)
    assert {(c.sample, c.label) for c in found} == {(0, ""), (1, "try1")}


def test_unknown_bundle_name_points_at_itself_unless_overridden(tmp_path, datasets_dir):
    bundle = _head(datasets_dir / "kernelbench-triton-h200" / "dump.jsonl", tmp_path / "mine.jsonl", 2)
    plain = load_bundle(bundle, model="m")
    assert plain.candidates[1].origin.url is None and plain.candidates[1].origin.row == 1
    given = load_bundle(bundle, model="m", override=SourceOverride(url="https://example.org/r", commit="abc", path="k.jsonl"))
    assert (given.candidates[1].origin.url, given.candidates[1].origin.path, given.candidates[1].origin.row) == \
        ("https://example.org/r", "k.jsonl", 1)
    with pytest.raises(LoadError, match="names no model"):
        load_bundle(bundle)


def test_bad_bundles_are_refused_with_one_line(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"a": 1}\n')
    with pytest.raises(LoadError, match="unknown JSON-lines layout"):
        load_bundle(bad, model="m")
    bad.write_text("{not json\n")
    with pytest.raises(LoadError, match="line 1: malformed JSON"):
        load_bundle(bad, model="m")


def test_folder_candidates_need_problems_and_model(fixtures_dir):
    with pytest.raises(LoadError, match="--problems is required"):
        load_inputs(None, fixtures_dir / "candidates", model="m")
    with pytest.raises(LoadError, match="--model is required"):
        load_inputs(fixtures_dir / "problems", fixtures_dir / "candidates", model=None)


def test_kernelbench_files_under_other_names_take_level_id_and_name_from_the_index(datasets_dir, tmp_path):
    v0 = datasets_dir / "kernelbench" / "v0" / "KernelBench"
    flat = tmp_path / "flat"
    flat.mkdir()
    sources = {"L2_74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max.py":
               v0 / "level2" / "74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max.py",
               "L1_19_ReLU.py": v0 / "level1" / "19_ReLU.py",
               "L3_1_MLP.py": v0 / "level3" / "1_MLP.py"}
    for name, source in sources.items():
        shutil.copy(source, flat / name)
    (flat / "L1_900_mine.py").write_text(PROBLEM)  # in no index: the folder's own placing
    problems = {p.file_name: p for p in load_problem_folder(flat)}
    placed = {name: (p.suite, p.level, p.id, p.name) for name, p in problems.items()}
    assert placed == {
        "L2_74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max.py":
            ("kernelbench-v0", 2, 74, "74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max"),
        "L1_19_ReLU.py": ("kernelbench-v0", 1, 19, "19_ReLU"),
        "L3_1_MLP.py": ("kernelbench-v0", 3, 1, "1_MLP"),
        "L1_900_mine.py": ("flat", 1, 2, "L1_900_mine"),  # the second file of the folder
    }
    cands = tmp_path / "cands"
    cands.mkdir()
    (cands / "L2_74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max__a.py").write_text("class ModelNew: pass\n")
    found = load_candidate_folder(cands, list(problems.values()), model="m")
    assert [c.problem_key for c in found] == ["kernelbench-v0/2/74"]
    mine = {p.file_name: (p.suite, p.level, p.id) for p in load_problem_folder(flat, suite="mine")}
    assert mine["L2_74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max.py"] == ("mine", 1, 3)  # the third file: another suite keeps the folder's placing


def test_a_checkout_copied_without_git_names_its_root_for_repository_paths(tmp_path, monkeypatch):
    """A detached device run works in a copy of the checkout without .git: KVERDICT_CHECKOUT keeps the paths."""
    problems = load_problem_folder(_checkout(tmp_path))
    cands = tmp_path / "copy" / "evaluations" / "zoo" / "exploits"
    cands.mkdir(parents=True)
    (cands / "19_ReLU.py").write_text("class ModelNew: pass\n")
    monkeypatch.delenv("KVERDICT_CHECKOUT", raising=False)
    assert [c.origin.path for c in load_candidate_folder(cands, problems, model="m")] == ["exploits/19_ReLU.py"]
    monkeypatch.setenv("KVERDICT_CHECKOUT", str(tmp_path / "copy"))
    assert [c.origin.path for c in load_candidate_folder(cands, problems, model="m")] == \
        ["evaluations/zoo/exploits/19_ReLU.py"]
