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


def _maintainer_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("maintainer_files", REPO / ".github" / "scripts" / "maintainer_files.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def pull_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A repository whose base commit lists 'alice' as a maintainer; returns (repo, base sha, commit(files))."""
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / ".github" / "MAINTAINERS").write_text("# maintainers\n@Alice  # lead\n", encoding="utf-8")
    (repo / "records").mkdir()
    (repo / "records" / "README.md").write_text("records\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.chdir(repo)

    def commit(files: dict[str, str]) -> None:
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "change")
    return repo, base, commit


RECORD = "records/h200/m/standard/kernelbench-v0/level-1/0019-19_relu__s0.json"


@pytest.mark.parametrize(("path", "only"), [
    (RECORD, False),
    ("records/h200/m/standard/kernelbench-v0/level-1/0019-19_relu__s0__repro.json", True),
    ("records/_audits/h200/kernelbench-v0.json", True),
    ("records/_audits/.hidden/kernelbench-v0.json", True),
    ("records/h200/_baselines/standard/kernelbench-v0/level-1/0019-19_relu__eager_fp32.json", True),
    ("benchmarks/results/h200/self_speedup.jsonl", True),
    (".github/workflows/pr.yml", True),
    ("evaluations/zoo/honest/1_relu.py", False),
])
def test_maintainer_only_paths(path: str, only: bool) -> None:
    assert _maintainer_check().maintainer_only(path) is only


def test_a_contributor_touching_an_audit_fails_the_check(pull_request, capsys: pytest.CaptureFixture[str]) -> None:
    _, base, commit = pull_request
    commit({RECORD: "{}", "records/_audits/.x/kernelbench-v0.json": "{}"})
    check = _maintainer_check()
    assert check.main(["--base", base, "--author", "mallory", "--association", "CONTRIBUTOR"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("::error file=records/_audits/.x/kernelbench-v0.json,title=maintainer-only file::")
    assert lines[-1] == "1 maintainer-only file(s) touched by a pull request from a non-maintainer"


def test_listed_maintainers_and_collaborators_pass_and_records_alone_pass_for_anyone(pull_request) -> None:
    _, base, commit = pull_request
    check = _maintainer_check()
    commit({RECORD: "{}"})
    assert check.main(["--base", base, "--author", "mallory", "--association", "FIRST_TIME_CONTRIBUTOR"]) == 0
    commit({"records/_audits/h200/kernelbench-v0.json": "{}"})
    assert check.main(["--base", base, "--author", "alice", "--association", "CONTRIBUTOR"]) == 0  # listed
    assert check.main(["--base", base, "--author", "bob", "--association", "COLLABORATOR"]) == 0
    assert check.main(["--base", base, "--author", "mallory", "--association", "NONE"]) == 1


def test_a_pull_request_cannot_make_its_author_a_maintainer(pull_request) -> None:
    _, base, commit = pull_request
    commit({".github/MAINTAINERS": "alice\nmallory\n", "records/h200/_baselines/x.json": "{}"})
    assert _maintainer_check().main(["--base", base, "--author", "mallory", "--association", "CONTRIBUTOR"]) == 1


def test_a_deleted_file_or_a_hostile_name_is_reported_inert(pull_request, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, commit = pull_request
    commit({"records/_audits/h200\n::warning::x/a.json": "{}"})
    assert _maintainer_check().main(["--base", base, "--author", "m", "--association", "NONE"]) == 1
    out = capsys.readouterr().out
    assert not any(line.startswith("::warning") for line in out.splitlines())
    assert "h200\\u000a%3A%3Awarning%3A%3Ax/a.json" in out


def test_pull_request_workflow_runs_the_maintainer_check_from_the_base_branch() -> None:
    job = _load("pr.yml")["jobs"]["maintainer-files"]
    checkout, step = job["steps"]
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert step["env"]["ASSOCIATION"] == "${{ github.event.pull_request.author_association }}"
    assert step["env"]["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    assert 'git show "$BASE_SHA:$check"' in step["run"] and "${{" not in step["run"]


def test_codeowners_protects_every_maintainer_only_folder() -> None:
    owners = (REPO / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    rules = [line.split()[0] for line in owners.splitlines() if line.strip() and not line.startswith("#")]
    assert rules == ["/records/_audits/", "/records/**/_baselines/", "/records/**/*__repro.json",
                     "/benchmarks/results/", "/.github/"]
    check = _maintainer_check()
    examples = ["records/_audits/h200/s.json", "records/h200/_baselines/a.json", "records/h200/m/p/s/l/x__repro.json",
                "benchmarks/results/h200/r.jsonl", ".github/CODEOWNERS"]
    assert len(examples) == len(check.MAINTAINER_ONLY) and all(check.maintainer_only(p) for p in examples)
