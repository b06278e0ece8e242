"""benchmarks/dataset_summary.py: a records folder's per-dataset figures and verdict counts, as the site has them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_records_summary_counts_each_verdict_as_the_record_files_hold_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dataset_summary.py")], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("| hardware | suite | model | kernels | claimed | standard | verified |")
    assert any(line.startswith("| h200 | kernelbench-v0 | CUDA-L1 | ") for line in lines)
    # the verdict table against a count made here, file by file
    counted: Counter[tuple[str, str, str]] = Counter()
    for path in (ROOT / "records" / "h200" / "cuda-l1" / "verified").rglob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        counted[(record["protocol"]["version"], record["status"], record.get("reason") or "–")] += 1
    for (version, status, reason), n in counted.items():
        assert f"| h200 | CUDA-L1 | {version} | {status} | {reason} | {n} |" in lines, (version, status, reason, n)


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dataset_summary.py"), str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no folder" in done.stderr
