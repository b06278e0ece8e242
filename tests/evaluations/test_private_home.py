"""A candidate's worker has a home and a working directory of its own, and a write confinement refuses is labelled.

``kverdict eval`` on the CPU, standard protocol, the zoo's ReLU problem: a kernel that writes its sources and a
cache where a KernelBench harness lets it (the working directory, ``~``) is judged on its merits, and none of
what it wrote reaches the repository or the user's home; a kernel that writes to a fixed folder outside its own
fails there, under confinement, and its record says the write was refused and where.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import schemas
from evaluations.worker import unavailable
from evaluations.zoo import ZOO_DIR

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = REPO / "tests" / "fixtures" / "private_home"


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, schemas.Record]:
    base = tmp_path_factory.mktemp("private-home")
    home, fixed = base / "user-home", base / "fixed-build"
    home.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), HOME=str(home), KVERDICT_TEST_FIXED_PATH=str(fixed))
    args = [sys.executable, "-m", "evaluations.cli", "eval", "--problems", str(ZOO_DIR / "problems"),
            "--candidates", str(CANDIDATES), "--model", "home-test", "--provider", "kernelverdict",
            "--out", str(base / "out"), "--build-dir", str(base / "build"), "--protocol", "standard",
            "--timed-calls", "5", "--warmup-calls", "1", "--no-progress", "--device", "cpu", "--timeout", "120"]
    done = subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = {}
    for path in (base / "out").rglob("*.json"):
        record = schemas.load_record(path)
        if isinstance(record, schemas.Record):
            found[Path(record.kernel.path).stem.split("__")[-1]] = record
    return {**found, "home": home, "fixed": fixed}  # type: ignore[dict-item]


def test_a_kernel_that_writes_beside_itself_and_under_home_is_judged_on_its_merits(records):
    record = records["writes_beside"]
    assert record.status == "correct", record.error
    assert "write-refused" not in record.labels
    assert not (REPO / "kernel.cu").exists() and not (REPO / "kernel_build").exists()  # not the repository's
    assert list(records["home"].iterdir()) == []  # nor the user's home


@pytest.mark.skipif(unavailable() is not None, reason="this kernel has no Landlock")
def test_a_write_confinement_refused_is_labelled_with_its_path(records):
    record = records["writes_fixed_path"]
    assert record.status == "compile_error"  # it fails where it imports, as it would on any confined machine
    assert "write-refused" in record.labels
    assert any(str(records["fixed"]) in note and "refused" in note for note in record.notes), record.notes
    assert not records["fixed"].exists()
