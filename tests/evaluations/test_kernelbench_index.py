"""The committed KernelBench index: in step with the checkouts, and what it finds in the public kernel sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluations import INDEX_PATH, REVISIONS, build_index, identify, index_main, normalized
from evaluations.suite import count_source

COUNT_FIELDS = ("flops", "min_bytes", "dtype", "not_counted")


@pytest.fixture(scope="module")
def checkouts(datasets_dir: Path) -> dict[str, Path]:
    roots = {label: datasets_dir / "kernelbench" / label for label in REVISIONS}
    missing = [str(p) for p in roots.values() if not p.is_dir()]
    if missing:
        pytest.skip(f"KernelBench checkouts not present: {', '.join(missing)}")
    return roots


def _committed() -> dict:
    return json.loads(INDEX_PATH.read_text(encoding="utf-8"))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def test_committed_index_names_every_file_of_the_checkouts(checkouts):
    committed = _committed()
    fresh = build_index(checkouts, counts=False)
    assert fresh["revisions"] == committed["revisions"]
    stripped = {sha: [{k: v for k, v in e.items() if k not in COUNT_FIELDS} for e in entries]
                for sha, entries in committed["problems"].items()}
    assert stripped == fresh["problems"], "stale index: run python -m evaluations._kernelbench_index v0=... main=..."
    assert sum(len(e) for e in fresh["problems"].values()) == 500


def test_committed_counts_equal_a_fresh_count(checkouts):
    sample = [("v0", 1, "1_Square_matrix_multiplication_.py"), ("v0", 2, "23_Conv3d_GroupNorm_Mean.py"),
              ("main", 1, "19_ReLU.py"), ("main", 1, "54_conv_standard_3D__square_input__square_kernel.py"),
              ("main", 3, "1_MLP.py")]
    for label, level, name in sample:
        text = (checkouts[label] / "KernelBench" / f"level{level}" / name).read_text(encoding="utf-8")
        known = identify(text)
        fresh = count_source(text, time_cap_s=None)
        assert known is not None and (known.flops, known.min_bytes, known.dtype) == (fresh.flops, fresh.min_bytes, fresh.dtype)
    counted = [e for entries in _committed()["problems"].values() for e in entries if "flops" in e]
    assert len(counted) >= 490  # a few need a module that is not installed or read a value back (.item())
    assert all("not_counted" in e for entries in _committed()["problems"].values() for e in entries if "flops" not in e)


def test_cuda_l1_rows_are_all_kernelbench_v0_problems(datasets_dir):
    rows = _rows(datasets_dir / "cuda-l1-h100" / "h100.jsonl")
    found = [identify(r["ref_code"]) for r in rows]
    assert len(rows) == 250 and all(k is not None and k.exact for k in found)
    assert {(k.suite, k.level, k.id) for k in found} == {("kernelbench-v0", r["level_id"], r["task_id"]) for r in rows}


def test_triton_dump_rows_are_current_kernelbench_but_two(datasets_dir):
    rows = _rows(datasets_dir / "kernelbench-triton-h200" / "dump.jsonl")
    found = {r["problem_name"]: identify(r["problem_source"]) for r in rows}
    missing = sorted(name for name, k in found.items() if k is None)
    assert missing == ["12_Matmul_with_diagonal_matrices_.py", "97_ScaledDotProductAttention.py"]
    assert len(rows) == 134 and all(k.exact and k.suite == "kernelbench" and k.file_name == name
                                    for name, k in found.items() if k is not None)


def test_whitespace_differences_still_match_but_other_changes_do_not(checkouts):
    text = (checkouts["v0"] / "KernelBench" / "level1" / "19_ReLU.py").read_text(encoding="utf-8")
    for variant in (text.replace("\n", "\r\n"), text + "\n\n", text.replace("\n", "  \n")):
        known = identify(variant)
        assert known is not None and known.name == "19_ReLU" and known.suite == "kernelbench-v0" and not known.exact
    assert normalized(text.replace("\n", "\r\n")) == normalized(text)
    assert identify(text.replace("torch.relu", "torch.nn.functional.relu")) is None


def test_the_index_regenerates_and_reports_staleness(tmp_path, capsys):
    root = tmp_path / "kb" / "KernelBench" / "level1"
    root.mkdir(parents=True)
    problem = (root / "1_Copy.py")
    problem.write_text("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                       "        return x.clone()\ndef get_inputs():\n    return [torch.randn(8)]\n"
                       "def get_init_inputs():\n    return []\n")
    index = tmp_path / "index.json"
    assert index_main(["v0=" + str(tmp_path / "kb"), "--index", str(index)]) == 0
    entry = next(iter(json.loads(index.read_text())["problems"].values()))[0]
    assert (entry["file_name"], entry["level"], entry["id"], entry["min_bytes"]) == ("1_Copy.py", 1, 1, 64.0)
    assert index_main(["--check", "v0=" + str(tmp_path / "kb"), "--index", str(index)]) == 0
    problem.write_text(problem.read_text().replace("randn(8)", "randn(9)"))
    assert index_main(["--check", "v0=" + str(tmp_path / "kb"), "--index", str(index)]) == 1
    assert "stale" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        index_main(["v9=" + str(tmp_path / "kb")])
