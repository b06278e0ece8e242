"""benchmarks/zoo_verdicts.py run as the device script runs it: a script, from another directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "zoo_verdicts.py"


def _run(hw_dir: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(hw_dir)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_older_zoo_records_differ_from_the_manifest(tmp_path: Path) -> None:
    """The committed H200 zoo records are of verified 1.2: every entry differs and problem 7's are missing."""
    done = _run(ROOT / "records" / "h200", tmp_path)
    assert done.returncode == 1, done.stderr
    assert "MISSING  evaluations/zoo/honest/7_bias_relu_row_mean__cuda_legacy.py" in done.stdout
    assert "(v1.2)" in done.stdout and "ok      " not in done.stdout


def test_a_card_without_zoo_records_has_every_entry_missing(tmp_path: Path) -> None:
    (tmp_path / "exploit-zoo" / "verified").mkdir(parents=True)
    done = _run(tmp_path, tmp_path)
    assert done.returncode == 1, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("  ")]
    assert lines and all(ln.startswith("  MISSING") for ln in lines)


def test_the_published_h100_zoo_records_are_judged_as_the_manifest_expects(tmp_path: Path) -> None:
    """The H100's zoo records (verified 1.3, made afresh in session 41) give every entry its expected verdict, the
    `<<<grid, block>>>` kernels with no stream `correct` among them."""
    done = _run(ROOT / "records" / "h100", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 entries differ from the manifest" in done.stdout
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("  ")]
    assert len(lines) >= 53 and all(ln.startswith("  ok") and "(v1.3)" in ln for ln in lines)
    legacy = [ln for ln in lines if "7_bias_relu_row_mean__cuda_" in ln]
    assert len(legacy) == 3 and all("got correct" in ln and "legacy-stream" in ln for ln in legacy)
