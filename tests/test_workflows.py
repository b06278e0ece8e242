"""The GitHub workflows: valid per actionlint, torch-free, never executing submitted kernels, deploying Pages."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def _load(name: str) -> dict[Any, Any]:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def _runs(workflow: dict[Any, Any]) -> list[str]:
    return [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]


def _uses(workflow: dict[Any, Any]) -> list[str]:
    return [step.get("uses", "") for job in workflow["jobs"].values() for step in job["steps"]]


def _actionlint() -> str | None:
    beside = Path(sys.executable).with_name("actionlint")
    return str(beside) if beside.is_file() else shutil.which("actionlint")


def test_actionlint_accepts_the_workflows() -> None:
    tool = _actionlint()
    if tool is None:
        pytest.skip("actionlint is not installed (the test extra provides it)")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert len(files) >= 2
    done = subprocess.run([tool, "-no-color", *files], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", ["pr.yml", "pages.yml"])
def test_workflows_never_run_kernels(name: str) -> None:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    workflow = _load(name)
    runs = "\n".join(_runs(workflow))
    assert "kverdict eval" not in runs and "kverdict reproduce" not in runs
    assert "[runner]" not in runs and "pip install torch" not in runs
    assert "pull_request_target" not in text
    assert "kverdict validate" in runs and "mkdocs build --strict" in runs


def test_pull_request_workflow_is_read_only() -> None:
    workflow = _load("pr.yml")
    assert "pull_request" in workflow[True]  # YAML reads the key `on` as True
    assert workflow["permissions"] == {"contents": "read"}
    checkout = next(s for j in workflow["jobs"].values() for s in j["steps"] if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["persist-credentials"] is False


def test_pages_workflow_deploys_from_main_with_the_right_permissions() -> None:
    workflow = _load("pages.yml")
    assert workflow[True]["push"]["branches"] == ["main"]
    uses = _uses(workflow)
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    deploy = workflow["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages" and deploy["needs"] == "build"
    assert workflow["permissions"] == {"contents": "read"}


def test_pull_request_template_has_the_checklist() -> None:
    template = (REPO / ".github" / "pull_request_template.md").read_text(encoding="utf-8")
    assert template.count("- [ ]") >= 5
    assert "kverdict validate" in template and "kverdict eval" in template
