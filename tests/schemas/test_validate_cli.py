"""``kverdict validate``: exit status, one line per problem, ``--json`` and ``--github`` output, no torch needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _record_factory import as_data, make_baseline, make_record, place

from evaluations.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout-like folder with two good records and a baseline under ./records."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "records"
    place(root, make_record())
    place(root, make_record(protocol_name="verified"))
    place(root, make_baseline())
    return root


def _plant_bad(root: Path) -> Path:
    data = as_data(make_record(pid=20, name="20_LeakyReLU"))
    data["speedup"]["vs_eager"] = 9.0
    return place(root, make_record(pid=20, name="20_LeakyReLU"), data)


def test_all_good_exits_zero_with_a_summary(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.strip() == "3 file(s) checked, 0 problem(s) found"


def test_problems_print_one_line_each_and_exit_one(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _plant_bad(tree)
    assert main(["validate"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    rel = bad.relative_to(tree.parent).as_posix()
    assert lines[0].startswith(f"{rel}: speedup.vs_eager: 9.0 disagrees with")
    assert lines[-1] == "4 file(s) checked, 1 problem(s) found"


def test_paths_narrow_the_check(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant_bad(tree)
    good = next(tree.rglob("0019-19_relu__s0.json"))
    assert main(["validate", str(good)]) == 0
    assert "1 file(s) checked" in capsys.readouterr().out


def test_json_output_for_machines(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant_bad(tree)
    assert main(["validate", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["files_checked"] == 4
    assert [f["field"] for f in report["findings"]] == ["speedup.vs_eager"]
    assert set(report["findings"][0]) == {"path", "field", "reason"}


def test_github_annotations(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant_bad(tree)
    assert main(["validate", "--github"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("::error file=records/h200/cuda-l1/standard/kernelbench-v0/level-1/0020-20_leakyrelu__s0.json,")
    assert ",title=speedup.vs_eager::9.0 disagrees" in first


def test_missing_path_is_a_one_line_user_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "no/such/file.json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "kverdict validate: error: no such file or folder: no/such/file.json"


def test_a_checkout_without_records_has_nothing_to_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.strip() == "records: no records folder, nothing to check"
    assert main(["validate", "--root", "elsewhere", "elsewhere"]) == 2


def test_root_option_lays_out_paths_under_another_folder(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moved = tree.parent / "contributed"
    tree.rename(moved)
    assert main(["validate", "--root", str(moved)]) == 0
    assert main(["validate", str(moved)]) == 1  # laid out against ./records, which they are not under
    assert "not under the records folder" in capsys.readouterr().out


def test_a_records_folder_named_from_elsewhere_is_checked_as_its_own_root(
        tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from schemas import Manifest

    manifest = Manifest(tree)
    for path in sorted(tree.rglob("*.json")):
        manifest.add(path, path.read_text(encoding="utf-8"))
    elsewhere = tree.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no ./records here: the folder's own manifest says where its root is
    assert main(["validate", str(tree)]) == 0
    assert main(["validate", str(next(tree.rglob("*.json")))]) == 0
    _plant_bad(tree)
    assert main(["validate", str(tree)]) == 1
    assert "not under the records folder" not in capsys.readouterr().out


def test_validate_runs_without_torch(tree: Path) -> None:
    code = ("import sys; sys.modules['torch'] = None; from evaluations.cli import main; "
            "sys.exit(main(['validate']))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tree.parent, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 file(s) checked, 0 problem(s) found" in done.stdout


def _plant_hostile_folder(root: Path) -> Path:
    """A malformed file in a folder whose name holds a newline and a workflow command."""
    path = root / "h200\n::warning file=x::pwned" / "%0A::error::x.json"
    path.parent.mkdir(parents=True)
    path.write_text("{", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", [[], ["--github"], ["--json"]])
def test_hostile_folder_names_never_reach_the_log_raw(tree: Path, capsys: pytest.CaptureFixture[str],
                                                      mode: list[str]) -> None:
    _plant_hostile_folder(tree)
    assert main(["validate", *mode]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert not any(line.lstrip().startswith(("::warning", "::error::x")) for line in lines), out
    if mode == []:
        assert lines[0].startswith("records/h200\\n::warning file=x::pwned/%0A::error::x.json: (file): malformed")
    if mode == ["--json"]:
        assert json.loads(out)["findings"][0]["path"] == "records/h200\\n::warning file=x::pwned/%0A::error::x.json"
    if mode == ["--github"]:
        assert len(lines) == 2 and lines[0].startswith("::error file=records/h200\\n%3A%3Awarning")
        assert "%250A" in lines[0]  # a '%' of the name cannot decode into a line break


def test_a_path_that_looks_like_a_command_is_printed_as_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "::warning::x.json").write_text("{", encoding="utf-8")
    assert main(["validate", "::warning::x.json"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("./::warning::x.json: (file): malformed JSON")


def test_a_file_too_deep_to_parse_hides_no_other_finding(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tree / "h200" / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    bad = _plant_bad(tree)
    assert main(["validate"]) == 1
    out = capsys.readouterr().out
    assert "h200/deep.json: (file): malformed JSON: nested more than 16 levels deep" in out
    assert f"{bad.relative_to(tree.parent).as_posix()}: speedup.vs_eager: 9.0 disagrees" in out


def test_a_new_name_is_checked_against_the_models_already_there(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = place(tree, make_record(model="Cuda-L1", pid=21, name="21_Sigmoid"))
    assert main(["validate", str(new)]) == 1
    out = capsys.readouterr().out
    assert "model.name: 'Cuda-L1' collides with 'CUDA-L1'" in out and "models/cuda-l1/" in out
