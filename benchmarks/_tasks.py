"""The problems the timing benchmarks measure: those of a CUDA-L1-shaped bundle (its ``ref_code``) or of a suite
folder, each a :class:`Task`, and a problem's reference built beside a separately built copy of itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import torch
from _verified_recipe import build_model


class Task(NamedTuple):
    """One problem of the bundle."""

    level: int
    task_id: int
    source: str
    suite: str = "kernelbench-v0"

    @property
    def key(self) -> str:
        prefix = "" if self.suite == "kernelbench-v0" else f"{self.suite}/"
        return f"{prefix}L{self.level}/{self.task_id}"


def load_suite_tasks(folder: Path) -> list[Task]:
    """Every problem of a suite folder (``levelN/NNN_name.py``), level 0-padded ids kept."""
    tasks = []
    for path in sorted(folder.glob("level*/*.py")):
        level = int(path.parent.name.removeprefix("level"))
        task_id = int(path.name.split("_", 1)[0])
        tasks.append(Task(level, task_id, path.read_text(encoding="utf-8"), folder.name))
    return tasks


def load_tasks(bundle: Path) -> list[Task]:
    """Every distinct problem of a CUDA-L1-shaped bundle, in file order."""
    tasks: dict[tuple[int, int], Task] = {}
    with bundle.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                key = (int(row["level_id"]), int(row["task_id"]))
                tasks.setdefault(key, Task(key[0], key[1], row["ref_code"]))
    return list(tasks.values())


def tasks_by_key(bundle: Path, keys: list[str]) -> dict[str, Task]:
    """The problems of ``bundle`` named by ``keys`` (``L3/30``, ...); ValueError naming any it lacks."""
    tasks = {t.key: t for t in load_tasks(bundle) if t.key in keys}
    missing = [k for k in keys if k not in tasks]
    if missing:
        raise ValueError(f"not in {bundle}: {', '.join(missing)}")
    return tasks


def gpu_tasks(tool: str, bundle: Path, keys: list[str]) -> dict[str, Task] | None:
    """For a GPU tool's command line: the problems named by ``keys``, or ``None`` after saying on stderr
    why not (no CUDA GPU, or keys the bundle lacks)."""
    if not torch.cuda.is_available():
        print(f"{tool} needs a CUDA GPU", file=sys.stderr)
        return None
    try:
        return tasks_by_key(bundle, keys)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return None


def build_pair(source: str, tag: str, folder: Path) -> tuple[ModuleType, torch.nn.Module, torch.nn.Module]:
    """The problem's module, its ``Model`` on the GPU, and a separately built copy (``Model`` renamed
    ``ModelNew``, imported as its own module), each constructed after the same seed (``build_model``)."""
    reference, ref_model = build_model(source, tag, folder)
    return reference, ref_model, build_model(source, tag, folder, copy=True)[1]
