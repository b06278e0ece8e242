"""Every ``kverdict`` command has help text and is documented in the README or the contributing page."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from evaluations.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CONTRIBUTING = REPO / "site_src" / "contributing.md"


def _docs() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (README, CONTRIBUTING) if p.is_file())


def _commands() -> dict[str, tuple[str, argparse.ArgumentParser]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    return {name: (helps.get(name, ""), p) for name, p in sub.choices.items()}


COMMANDS = _commands()


def test_the_expected_commands_exist() -> None:
    assert {"validate", "reproduce"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_has_help_text(name: str) -> None:
    summary, parser = COMMANDS[name]
    assert summary.strip(), f"kverdict {name} has no one-line help"
    assert (parser.description or "").strip(), f"kverdict {name} has no description"
    missing = [a.option_strings or [a.dest] for a in parser._actions
               if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()]
    assert missing == [], f"kverdict {name}: arguments without help: {missing}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_documented(name: str) -> None:
    assert re.search(rf"\bkverdict {re.escape(name)}\b", _docs()), \
        f"kverdict {name} is mentioned neither in README.md nor in site_src/contributing.md"


@pytest.mark.parametrize("name", ["validate", "reproduce"])
def test_contributor_options_are_explained_on_the_contributing_page(name: str) -> None:
    page = CONTRIBUTING.read_text(encoding="utf-8")
    options = [o for a in COMMANDS[name][1]._actions for o in a.option_strings
               if o.startswith("--") and o != "--help"]
    assert options
    assert [o for o in options if o not in page] == []


def test_contributing_page_links_the_json_schemas() -> None:
    page = CONTRIBUTING.read_text(encoding="utf-8")
    for name in ("record.schema.json", "baseline.schema.json"):
        assert f"]({name})" in page
        assert (REPO / "schemas" / name).is_file()


def test_layout_on_the_contributing_page_matches_record_paths() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_record_factory", REPO / "tests" / "schemas" / "_record_factory.py")
    factory = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(factory)  # type: ignore[union-attr]
    from schemas import baseline_relpath, record_relpath

    page = CONTRIBUTING.read_text(encoding="utf-8")
    rec = record_relpath(factory.make_record()).as_posix()  # h200/cuda-l1/standard/kernelbench-v0/level-1/0019-19_relu__s0.json
    assert re.fullmatch(r"[^/]+/[^/]+/[^/]+/[^/]+/level-\d+/\d{4}-[^/]+__s\d+\.json", rec)
    assert "<id>-<name>__s<sample>.json" in page and "level-<N>/" in page
    base = baseline_relpath(factory.make_baseline()).as_posix()
    assert base.split("/")[1] == "_baselines" and base.endswith("__eager_fp32.json")
    assert "<id>-<name>__<kind>.json" in page and "_audits/" in page


def test_the_cluster_page_explains_every_executor_option() -> None:
    page = (REPO / "site_src" / "cluster.md").read_text(encoding="utf-8")
    from evaluations.executors import EXECUTORS

    options = ["--executor", "--lanes", "--address", "--cpus-per-task"]
    eval_options = {o for a in COMMANDS["eval"][1]._actions for o in a.option_strings}
    assert set(options) <= eval_options
    assert [o for o in options if o not in page] == []
    assert all(f"--executor {name}" in page for name in EXECUTORS)
