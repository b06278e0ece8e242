"""The KernelVerdict suite's ``meta.json``: built from the analytic counts in ``_counts``.

Regenerate after changing a problem's sizes (a test fails while the file is stale)::

    python -m evaluations.suite          # rewrite meta.json
    python -m evaluations.suite --check  # exit 1 if meta.json is out of date

Reduced sizes: a suite problem reads its size constants (module globals such as ``N`` or
``batch_size``) when ``get_inputs()`` and ``get_init_inputs()`` are called, so ``load_problem_module``
with ``reduced=True`` overwrites those globals with the spec's small values; the problem then runs
on a CPU in milliseconds with the same code path as at its real size.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ._counts import SPECS, Spec

SUITE = "kernelverdict"
SUITE_DIR = Path(__file__).parents[1] / "problems" / SUITE
META_PATH = SUITE_DIR / "meta.json"


@dataclass(frozen=True)
class SuiteFile:
    """One problem file of the suite with its place and spec."""

    path: Path
    level: int
    id: int
    name: str
    spec: Spec


def suite_files(suite_dir: Path = SUITE_DIR) -> list[SuiteFile]:
    """Every problem file under ``level<N>/``, in level and id order; each must have a spec."""
    files = []
    for path in sorted(suite_dir.glob("level[0-9]*/[0-9]*.py")):
        level = int(path.parent.name.removeprefix("level"))
        number, _, name = path.stem.partition("_")
        spec = SPECS.get(level, {}).get(path.name)
        if spec is None:
            raise KeyError(f"{path.relative_to(suite_dir)} has no entry in evaluations/suite/_counts.py")
        files.append(SuiteFile(path=path, level=level, id=int(number), name=name, spec=spec))
    return files


def load_problem_module(path: Path, reduced: Spec | None = None) -> ModuleType:
    """Import a problem file as a fresh module; with a spec, shrink its sizes to ``spec.reduced``."""
    spec = importlib.util.spec_from_file_location(f"kv_problem_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if reduced is not None:
        for constant, value in reduced.reduced.items():
            if not hasattr(module, constant):
                raise AttributeError(f"{path.name} has no size constant {constant!r}")
            setattr(module, constant, value)
    return module


def counts(module: ModuleType, spec: Spec) -> dict[str, float]:
    """FLOPs (matrix + elementwise) and fewest bytes of the module at its current sizes."""
    return {"flops": float(spec.mm(module) + spec.ew(module)), "min_bytes": float(spec.nbytes(module))}


def build_meta(suite_dir: Path = SUITE_DIR) -> dict:
    """The ``meta.json`` content for every problem of the suite, at real sizes."""
    problems = {}
    for f in suite_files(suite_dir):
        module = load_problem_module(f.path)
        problems[f.path.name] = {"level": f.level, "id": f.id, "name": f.name, "tags": list(f.spec.tags),
                                 "dtype": f.spec.dtype, **counts(module, f.spec)}
    return {"suite": SUITE, "problems": problems}


def render_meta(meta: dict) -> str:
    """Stable JSON text of the metadata."""
    return json.dumps(meta, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write ``meta.json``, or with ``--check`` report whether it is up to date."""
    parser = argparse.ArgumentParser(description="Regenerate the KernelVerdict suite's meta.json.")
    parser.add_argument("--check", action="store_true", help="exit 1 when meta.json is stale, write nothing")
    args = parser.parse_args(argv)
    text = render_meta(build_meta())
    if args.check:
        stale = not META_PATH.is_file() or META_PATH.read_text(encoding="utf-8") != text
        print(f"{META_PATH}: {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    META_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {META_PATH} ({len(json.loads(text)['problems'])} problems)")
    return 0

