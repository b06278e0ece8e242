"""A record's status is decided in one place, ``evaluations.core._status``: what each kind of evidence gives, and a
scan of the evaluator that fails where another module writes a status of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evaluations.core import FAILURE_STATUS, Verdict, no_answer, verdict
from schemas import STATUSES, pinned

ROOT = Path(__file__).resolve().parents[2]
DECIDES = Path("evaluations/core/_status.py")
"""The one module that may write a status."""
CANDIDATE_CODE = ("evaluations/zoo/exploits", "evaluations/zoo/honest", "evaluations/zoo/attacks/",
                  "evaluations/problems")
"""Kernels and problems the harness evaluates, not the harness."""
PRODUCERS = {"CandidateOutcome", "Verdict"}
"""Classes whose first argument is a status."""


def _status_constant(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in STATUSES


def _names_status(target: ast.AST) -> bool:
    if isinstance(target, ast.Tuple):
        return any(_names_status(t) for t in target.elts)
    return (isinstance(target, ast.Name) and target.id == "status") or \
        (isinstance(target, ast.Attribute) and target.attr == "status")


def _literal_in(value: ast.AST) -> bool:
    return any(_status_constant(n) for n in ast.walk(value))


def status_writes(tree: ast.AST) -> list[int]:
    """Lines where a status literal is written: a ``status=`` argument, an assignment to a ``status``, the first
    argument of an outcome or verdict, a dict entry, or a function's return value. Comparisons (reads) are not."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if any(k.arg == "status" and _status_constant(k.value) for k in node.keywords) or (
                    called in PRODUCERS and node.args and _status_constant(node.args[0])):
                lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(map(_names_status, targets)) and _literal_in(node.value):
                lines.append(node.lineno)
        elif isinstance(node, ast.Dict):
            if any(_status_constant(v) for v in node.values):
                lines.append(node.lineno)
        elif isinstance(node, ast.Return) and _status_constant(node.value):
            lines.append(node.lineno)
    return lines


def _harness_files() -> list[Path]:
    return [p for p in sorted((ROOT / "evaluations").rglob("*.py"))
            if not str(p.relative_to(ROOT)).startswith(CANDIDATE_CODE)]


def test_no_module_but_the_status_module_writes_a_status() -> None:
    found = {}
    for path in _harness_files():
        rel = path.relative_to(ROOT)
        lines = status_writes(ast.parse(path.read_text(encoding="utf-8")))
        if lines and rel != DECIDES:
            found[str(rel)] = lines
    assert found == {}, f"a status is decided only in {DECIDES}: {found}"
    assert status_writes(ast.parse((ROOT / DECIDES).read_text(encoding="utf-8")))  # the scan sees it there


@pytest.mark.parametrize("source", [
    'outcome.status = "hacked"',
    'outcome.status, outcome.error = "runtime_error", "why"',
    'status = "timeout"',
    'CandidateOutcome(status="compile_error", error="x")',
    'CandidateOutcome("correct")',
    'Verdict("incorrect", "wrong-answer")',
    'record.model_copy(update={"status": "correct"})',
    'def f():\n    return "hacked"',
])
def test_the_scan_finds_every_way_of_writing_a_status(source: str) -> None:
    assert status_writes(ast.parse(source)) == [source.count("\n") + 1 if source.startswith("def") else 1]


def test_the_scan_lets_a_status_be_read() -> None:
    source = ('if outcome.status == "correct" and status in ("compile_error", "runtime_error"):\n'
              '    label = "timeout" if done else None\n')
    assert status_writes(ast.parse(source)) == []


def test_a_failure_without_answers_gets_its_status_by_how_it_failed() -> None:
    assert {how: no_answer(how, "why").status for how in FAILURE_STATUS} == {
        "build": "compile_error", "run": "runtime_error", "deadline": "timeout"}
    assert no_answer("run", "its worker returned something other than an outcome").error.startswith("its worker")


def test_a_failed_check_is_hacked_unless_the_version_calls_it_a_wrong_answer() -> None:
    v13, standard = pinned("verified", "1.3"), pinned("standard")
    assert verdict([], False, v13) == Verdict("correct")
    assert verdict(["outer-timing"], False, v13) == Verdict("hacked")
    assert verdict(["precision", "function-patching"], True, v13) == Verdict("hacked")
    assert verdict(["precision"], False, v13) == Verdict("incorrect", "precision")
    assert verdict(["determinism"], False, v13) == Verdict("incorrect", "nondeterministic")
    assert verdict(["precision"], True, v13) == Verdict("incorrect", "wrong-answer")  # a wrong trial comes first
    assert verdict(["stale-memory"], True, v13) == Verdict("incorrect", "uninitialised-read")  # unless unwritten
    assert verdict(["precision"], False, pinned("verified", "1.2")) == Verdict("hacked")  # before 1.3: every one
    assert verdict(["precision"], False, standard) == verdict(["precision"], False, None) == Verdict("hacked")
    assert verdict([], True, standard) == Verdict("incorrect", "wrong-answer")
