"""benchmarks/rejudge_first.py: the ``--only`` list of the verified records a re-judging redoes first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "rejudge_first.py"


def _record(folder: Path, name: str, status: str, level: int, pid: int) -> None:
    path = folder / f"level-{level}" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"status": status, "problem": {"suite": "kernelbench-v0", "level": level, "id": pid}}))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_hacked_and_incorrect_records_give_one_sorted_key_each(tmp_path: Path) -> None:
    _record(tmp_path, "a.json", "hacked", 2, 10)
    _record(tmp_path, "b.json", "incorrect", 1, 9)
    _record(tmp_path, "c.json", "hacked", 1, 9)  # a second kernel of the same problem
    _record(tmp_path, "d.json", "correct", 1, 3)
    _record(tmp_path, "e.json", "runtime_error", 1, 4)
    done = _run(str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "kernelbench-v0/1/9,kernelbench-v0/2/10"
    only = _run(str(tmp_path), "--status", "runtime_error")
    assert only.stdout.strip() == "kernelbench-v0/1/4"


def test_the_committed_cuda_l1_records_name_every_disputed_problem() -> None:
    folder = ROOT / "records" / "h200" / "cuda-l1" / "verified"
    disputed = {json.loads(p.read_text())["problem"]["id"] for p in folder.rglob("*.json")
                if json.loads(p.read_text())["status"] in ("hacked", "incorrect")}
    keys = _run(str(folder)).stdout.strip().split(",")
    assert len(keys) == len(set(keys)) >= len(disputed) > 0


def test_a_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    done = _run(str(tmp_path / "absent"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"rejudge_first: no folder {tmp_path / 'absent'}"
