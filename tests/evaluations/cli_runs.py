"""What the runner's end-to-end tests share: fixture candidates copied into a folder, the arguments of a quick
``kverdict eval`` on the CPU, and the records a run wrote."""

from __future__ import annotations

import shutil
from pathlib import Path

import schemas

REPO = Path(__file__).resolve().parents[2]
QUICK = ["--timed-calls", "5", "--warmup-calls", "1", "--no-progress", "--device", "cpu"]
"""Few timed calls and warm-ups, on the CPU, without a progress line."""


def copy_candidates(tmp: Path, fixtures: Path, names: tuple[str, ...]) -> Path:
    """``tmp`` holding copies of the fixture candidates ``names``."""
    tmp.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(fixtures / "candidates" / name, tmp / name)
    return tmp


def eval_args(fixtures: Path, cands: Path, out: Path, build: Path, *extra: str) -> list[str]:
    """The arguments of ``kverdict eval`` over the fixture problems and the candidates in ``cands``."""
    return ["eval", "--problems", str(fixtures / "problems"), "--candidates", str(cands), "--model", "fixture-model",
            "--out", str(out), "--build-dir", str(build), *QUICK, *extra]


def records_in(out: Path) -> dict[str, schemas.Record]:
    """The candidate records under ``out`` (baselines left out), keyed by their kernel's file name."""
    found = {}
    for path in out.rglob("*.json"):
        record = schemas.load_record(path)
        if isinstance(record, schemas.Record):
            found[Path(record.kernel.path).name] = record
    return found
