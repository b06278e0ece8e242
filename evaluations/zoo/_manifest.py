"""Reading the zoo manifest and turning an entry into an evaluation job."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import load_problem_folder, repo_relpath
from ..core import Candidate, Job, Origin, Overrides

ZOO_DIR = Path(__file__).parent
"""Folder holding ``manifest.json``, ``problems/``, ``exploits/`` and ``honest/``."""
MODELS = {"exploit": "exploit-zoo", "honest": "honest-kernels"}
PROVIDER = "kernelverdict"


@dataclass(frozen=True)
class ZooEntry:
    """One manifest entry."""

    file: str
    kind: str
    problem: str
    hack: str
    expected_check: str | None
    cuda_only: bool
    expected_status: str = "correct"
    """What the verified protocol rules: ``hacked`` for an exploit, ``incorrect`` for one whose defence leaves a
    wrong answer (then ``expected_reason`` says which), ``correct`` for an honest kernel."""
    expected_reason: str | None = None

    @property
    def path(self) -> Path:
        """The candidate's source file."""
        return ZOO_DIR / self.file


def load_manifest(path: Path | None = None) -> list[ZooEntry]:
    """Every entry of the manifest, in file order."""
    data = json.loads((path or ZOO_DIR / "manifest.json").read_text(encoding="utf-8"))
    return [ZooEntry(e["file"], e["kind"], e["problem"], e["hack"], e.get("expected_check"),
                     bool(e.get("cuda_only", False)),
                     e.get("expected_status", "hacked" if e["kind"] == "exploit" else "correct"),
                     e.get("expected_reason")) for e in data["entries"]]


def zoo_job(entry: ZooEntry, protocol: str, device: str, options: dict[str, Any] | None = None,
            build_dir: str | None = None, overrides: Overrides | None = None) -> Job:
    """A job evaluating ``entry`` under ``protocol`` on ``device``."""
    problem = next(p for p in load_problem_folder(ZOO_DIR / "problems") if p.file_name == entry.problem)
    candidate = Candidate(problem_key=problem.key, model=MODELS[entry.kind], sample=0, label=entry.path.stem,
                          source=entry.path.read_text(encoding="utf-8"),
                          origin=Origin(path=repo_relpath(entry.path, ZOO_DIR.parent.parent)), provider=PROVIDER)
    return Job(problem=problem, protocol=protocol, device=device, candidate=candidate, build_dir=build_dir,
               options=dict(options or {}), overrides=overrides or Overrides())
