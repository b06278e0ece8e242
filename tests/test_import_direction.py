"""The evaluator's imports run one way: from the CLI down to ``evaluations.core``, never back up.

Every module under ``evaluations/`` (the harness, not the zoo's kernels nor the problems) is parsed, and each
import, at module level or inside a function, becomes an edge between stages: ``evaluations.core`` (the floor),
then the stages in :data:`ORDER`. A stage imports the stages below it, through their faces (``__init__``); a
private module (a name starting with ``_``) is imported only from inside its own stage. What still breaks these
rules is listed in :data:`KNOWN` with its reason, so a new break fails here and a mended one must leave the list.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE_CODE = ("evaluations/zoo/exploits", "evaluations/zoo/honest", "evaluations/zoo/attacks/",
                  "evaluations/problems")
"""Kernels and problems the harness evaluates: candidate code, not the harness's own imports."""

ORDER = ("evaluations.core", "evaluations.suite", "evaluations", "evaluations.worker", "evaluations.timing",
         "evaluations.protocols", "evaluations.run", "evaluations.audit", "evaluations.zoo", "evaluations.executors",
         "evaluations.cli")
"""The stages from the floor up (``evaluations`` itself: loading problems and candidates, the environment); each
may import those before it and ``schemas``."""

KNOWN: dict[tuple[str, str], str] = {}
"""(importing module, imported module) -> why it stays, for each import that breaks the rules (none today)."""


class Edge(NamedTuple):
    """One import: the importing module, the imported one, and the line."""

    source: str
    target: str
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def harness_modules() -> dict[str, Path]:
    """Module name -> file, for the harness's modules and the schemas they import."""
    found = {}
    for top in ("evaluations", "schemas"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if not str(path.relative_to(ROOT)).startswith(CANDIDATE_CODE):
                found[_module_name(path)] = path
    return found


def imports(modules: dict[str, Path]) -> list[Edge]:
    """Every import of a module of ``evaluations`` or ``schemas`` by a module of ``evaluations``; ``from P import
    name`` where ``P.name`` is a module is an import of that module."""
    edges = []
    for name, path in modules.items():
        if not name.startswith("evaluations"):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    origin = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    origin = node.module or ""
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]
            edges += [Edge(name, t, node.lineno) for t in dict.fromkeys(targets)
                      if t.partition(".")[0] in ("evaluations", "schemas")]
    return edges


def stage_of(module: str) -> str:
    """The stage a module belongs to: ``schemas``, a subpackage of ``evaluations``, or ``evaluations`` itself."""
    if module.partition(".")[0] == "schemas":
        return "schemas"
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and ".".join(parts[:2]) in ORDER else "evaluations"


def private_across(edge: Edge) -> bool:
    """An import of another stage's private module."""
    stage = stage_of(edge.target)
    inside = edge.target.split(".")[len(stage.split(".")) if stage != "evaluations" else 1:]
    return stage != stage_of(edge.source) and any(part.startswith("_") for part in inside)


def back_arrow(edge: Edge) -> bool:
    """An import of a stage above the importing one (``schemas`` is below them all)."""
    source, target = stage_of(edge.source), stage_of(edge.target)
    return target != "schemas" and ORDER.index(target) > ORDER.index(source)


def circles(edges: list[Edge]) -> list[set[str]]:
    """The stages that import each other, in turn (strongly connected sets of more than one)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if stage_of(e.source) != stage_of(e.target):
            graph[stage_of(e.source)].add(stage_of(e.target))

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reached = {s: reach(s) for s in ORDER}
    found = {frozenset({s, *(t for t in reached[s] if s in reached.get(t, set()))}) for s in ORDER}
    return [set(c) for c in found if len(c) > 1]


def broken(edges: list[Edge]) -> dict[tuple[str, str], str]:
    """(importing module, imported module) -> the rule it breaks, for every import that breaks one."""
    out = {}
    for e in edges:
        if stage_of(e.source) == "evaluations.core" and stage_of(e.target) not in ("evaluations.core", "schemas"):
            out[(e.source, e.target)] = f"line {e.line}: the floor imports a stage"
        elif private_across(e):
            out[(e.source, e.target)] = f"line {e.line}: another stage's private module"
        elif back_arrow(e):
            out[(e.source, e.target)] = f"line {e.line}: a back-arrow"
    return out


def test_every_stage_of_the_evaluator_has_a_place_in_the_order() -> None:
    packages = {_module_name(p.parent) for p in (ROOT / "evaluations").glob("*/__init__.py")} - {"evaluations.zoo"}
    assert packages - {"evaluations.problems"} <= set(ORDER)


def test_the_rules_see_a_private_import_a_back_arrow_and_the_floor_looking_up() -> None:
    assert private_across(Edge("evaluations.timing.cuda", "evaluations.protocols.verified._stats", 1))
    assert not private_across(Edge("evaluations.protocols.standard", "evaluations.protocols.verified._integrity", 1))
    assert private_across(Edge("evaluations.run._base", "evaluations._loaders", 1))
    assert not private_across(Edge("evaluations.run._base", "evaluations", 1))
    assert back_arrow(Edge("evaluations.worker._worker", "evaluations.protocols", 1))
    assert not back_arrow(Edge("evaluations.protocols.standard", "evaluations.worker", 1))
    assert broken([Edge("evaluations.core._x", "evaluations.run", 1)]) == {
        ("evaluations.core._x", "evaluations.run"): "line 1: the floor imports a stage"}
    two_way = [Edge("evaluations.worker.a", "evaluations.run", 1), Edge("evaluations.run.b", "evaluations.worker", 1)]
    assert circles(two_way) == [{"evaluations.worker", "evaluations.run"}]


def test_imports_run_from_the_cli_down_to_the_floor_but_for_the_known_exceptions() -> None:
    found = broken(imports(harness_modules()))
    new = {k: v for k, v in found.items() if k not in KNOWN}
    mended = sorted(k for k in KNOWN if k not in found)
    assert not new, "imports that break the direction:\n" + "\n".join(f"{a} -> {b} ({why})" for (a, b), why in
                                                                      sorted(new.items()))
    assert not mended, f"exceptions no longer needed (take them out of KNOWN): {mended}"


def test_no_stages_import_each_other_in_a_circle() -> None:
    assert circles(imports(harness_modules())) == []


def missing_names(modules: dict[str, Path]) -> list[str]:
    """``from P import name`` statements of ``evaluations`` and ``schemas`` (function bodies too, which only the
    call that reaches them would import) whose module ``P`` has no ``name``: 'module:line P.name' for each."""
    import importlib

    missing = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            if origin.partition(".")[0] not in ("evaluations", "schemas"):
                continue
            target = importlib.import_module(origin)
            missing += [f"{name}:{node.lineno} {origin}.{a.name}" for a in node.names
                        if a.name != "*" and not hasattr(target, a.name) and f"{origin}.{a.name}" not in modules]
    return missing


def test_every_name_imported_from_the_harness_exists_even_inside_functions() -> None:
    pytest.importorskip("torch")
    assert missing_names(harness_modules()) == []


_STAMPS = "it times the steps of a run by wrapping functions in the modules that look them up"
BENCHMARKS_KNOWN = {f"runner_overhead.py {m}": _STAMPS for m in (
    "evaluations.run._base", "evaluations.protocols.verified._candidate", "evaluations.protocols.verified._protocol",
    "evaluations.worker._worker")}
"""'benchmark module' -> why it stays, for each benchmark that imports a private module."""


def test_benchmarks_import_the_project_through_its_faces_only() -> None:
    private = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
                     if isinstance(node, ast.ImportFrom) and not node.level else [])
            private += [f"{path.name}:{node.lineno} {n}" for n in dict.fromkeys(names)
                        if n.partition(".")[0] in ("evaluations", "schemas", "generator")
                        and any(part.startswith("_") and part != "__version__" for part in n.split(".")[1:])
                        and f"{path.name} {n}" not in BENCHMARKS_KNOWN]
    assert private == [], "benchmarks importing another package's private module:\n" + "\n".join(private)
