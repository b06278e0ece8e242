"""The command line: help text on every command, and user errors as one line with a non-zero exit."""

from __future__ import annotations

import argparse
import sys

import pytest

from evaluations.cli import build_parser, main
from evaluations.protocols import PROTOCOLS


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_and_option_has_help(capsys):
    commands = _subcommands()
    assert "eval" in commands
    for name, sub in commands.items():
        with pytest.raises(SystemExit) as exit_info:
            main([name, "--help"])
        assert exit_info.value.code == 0
        assert capsys.readouterr().out.strip(), name
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings} has no help text"


def _one_line_error(capsys, argv: list[str], match: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kverdict eval: error:") and "\n" not in err and match in err, err


def test_missing_candidates_path(capsys, tmp_path):
    _one_line_error(capsys, ["eval", "--candidates", str(tmp_path / "nope"), "--model", "m"], "no such file")


def test_folder_needs_problems_and_model(capsys, fixtures_dir):
    cands = str(fixtures_dir / "candidates")
    _one_line_error(capsys, ["eval", "--candidates", cands, "--model", "m"], "--problems is required")
    _one_line_error(capsys, ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", cands],
                    "--model is required")


def test_only_pattern_matching_nothing(capsys, fixtures_dir):
    _one_line_error(capsys, ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates",
                             str(fixtures_dir / "candidates"), "--model", "m", "--only", "nothing*"], "matches no problem")


def test_only_takes_several_patterns_separated_by_commas(fixtures_dir):
    from evaluations import load_inputs
    from evaluations.cli.eval import only_matches

    problems = load_inputs(fixtures_dir / "problems", fixtures_dir / "candidates", model="m").problems
    picked = sorted(p.name for p in problems if only_matches("*relu*, */2", p))
    assert len(picked) == 2 and "add" in picked[1] and "relu" in picked[0]
    assert not [p for p in problems if only_matches("nothing*,", p)]


def test_empty_problem_folder(capsys, tmp_path, fixtures_dir):
    _one_line_error(capsys, ["eval", "--problems", str(tmp_path), "--candidates", str(fixtures_dir / "candidates"),
                             "--model", "m"], "no problem files")


def test_unavailable_protocol_is_a_clear_error(capsys, monkeypatch, fixtures_dir):
    monkeypatch.setitem(PROTOCOLS, "verified", "evaluations.protocols._absent_for_test")
    _one_line_error(capsys, ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates",
                             str(fixtures_dir / "candidates"), "--model", "m", "--protocol", "both"],
                    "verified protocol is not available")


def test_bad_numbers(capsys, fixtures_dir):
    base = ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", str(fixtures_dir / "candidates"),
            "--model", "m"]
    _one_line_error(capsys, [*base, "--timeout", "0"], "must be positive")
    _one_line_error(capsys, [*base, "--timed-calls", "0"], "--timed-calls: must be an integer of at least 1")
    _one_line_error(capsys, [*base, "--source-url", "https://example.org/x"], "--source-commit")


def test_concurrent_evaluations_need_a_gpu(capsys, fixtures_dir, tmp_path):
    base = ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", str(fixtures_dir / "candidates"),
            "--model", "m", "--out", str(tmp_path)]
    _one_line_error(capsys, [*base, "--device", "cpu", "--concurrent", "3"], "--concurrent above 1 needs --device cuda")
    _one_line_error(capsys, [*base, "--concurrent", "0"], "must be positive")
    assert not any(tmp_path.iterdir())


def test_a_runner_command_without_torch_says_how_to_install_it(capsys, monkeypatch, fixtures_dir, tmp_path):
    # None in sys.modules makes `import torch` raise ModuleNotFoundError(name="torch"), as on a machine without it
    monkeypatch.setitem(sys.modules, "torch", None)
    _one_line_error(capsys, ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates",
                             str(fixtures_dir / "candidates"), "--model", "m", "--out", str(tmp_path)],
                    "needs torch, which is not installed; install the runner extra")
    assert not any(tmp_path.iterdir())


def test_a_missing_module_other_than_the_runners_is_not_hidden(monkeypatch, fixtures_dir, tmp_path):
    monkeypatch.setitem(sys.modules, "pydantic", None)
    monkeypatch.setattr("evaluations.cli.eval.run_command", lambda args: __import__("pydantic"))
    with pytest.raises(ModuleNotFoundError):
        main(["eval", "--candidates", str(tmp_path), "--model", "m"])
