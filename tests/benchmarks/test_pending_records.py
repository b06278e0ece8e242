"""benchmarks/pending_records.py: a card's re-judged records kept in a results folder, and brought back."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from schemas import Manifest, digest_text, parse_manifest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "pending_records.py"
sys.path.insert(0, str(ROOT / "benchmarks"))

import pending_records  # noqa: E402

CUDA_L1 = "records/h100/cuda-l1/verified/kernelbench-v0/level-1/0001-a__s0.json"
BASELINE = "records/h100/_baselines/verified/kernelbench-v0/level-1/0001-a__eager_tf32.json"
ZOO = "records/h100/exploit-zoo/verified/kernelverdict-zoo/level-1/0001-b__s0.json"
OTHER_CARD = "records/h200/cuda-l1/verified/kernelbench-v0/level-1/0001-a__s0.json"


def _tgz(path: Path, files: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _manifest(*names_texts: tuple[str, str]) -> str:
    return "".join(f"{digest_text(text)}  {name.removeprefix('records/')}\n" for name, text in names_texts)


def _members(path: Path) -> dict[str, str]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read().decode("utf-8") for m in tar.getmembers() if m.isfile()}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_pack_keeps_the_cards_rejudged_lanes_and_only_their_manifest_lines(tmp_path: Path) -> None:
    run = _tgz(tmp_path / "records.tgz", {
        CUDA_L1: '{"a": 1}', BASELINE: '{"b": 1}', ZOO: '{"z": 1}', OTHER_CARD: '{"o": 1}',
        "records/MANIFEST.sha256": _manifest((CUDA_L1, '{"a": 1}'), (ZOO, '{"z": 1}'), (OTHER_CARD, '{"o": 1}')),
    })
    dest = tmp_path / "results" / "h100" / "session41" / "records-h100-rejudge.tgz"
    done = _run("pack", str(run), "h100", str(dest))
    assert done.returncode == 0, done.stderr
    assert "packed 2 files of h100" in done.stdout
    members = _members(dest)
    assert set(members) == {CUDA_L1, BASELINE, "records/MANIFEST.sha256"}
    assert members["records/MANIFEST.sha256"] == _manifest((CUDA_L1, '{"a": 1}'))


def test_pack_of_a_run_without_the_cards_records_is_an_error(tmp_path: Path) -> None:
    run = _tgz(tmp_path / "records.tgz", {OTHER_CARD: "{}"})
    done = _run("pack", str(run), "h100", str(tmp_path / "out.tgz"))
    assert done.returncode == 2
    assert "no records under records/h100/cuda-l1/" in done.stderr
    assert not (tmp_path / "out.tgz").exists()


def test_restore_replaces_a_committed_record_in_place_and_the_manifest_then_matches(tmp_path: Path) -> None:
    records = tmp_path / "records"
    committed = records / CUDA_L1.removeprefix("records/")
    committed.parent.mkdir(parents=True)
    committed.write_text('{"old": 1}')
    kept = records / "h200" / "x.json"
    kept.parent.mkdir(parents=True)
    kept.write_text("{}")
    manifest = Manifest(records)
    manifest.add(committed, '{"old": 1}')
    manifest.add(kept, "{}")
    new = '{"new": 1}'
    _tgz(tmp_path / "results" / "h100" / "session41" / "records-h100-rejudge.tgz",
         {CUDA_L1: new, BASELINE: "{}", "records/MANIFEST.sha256": _manifest((CUDA_L1, new), (BASELINE, "{}"))})
    done = _run("restore", "h100", "--results", str(tmp_path / "results"), "--records", str(records))
    assert done.returncode == 0, done.stderr
    assert "restored 2 files of h100" in done.stdout and "_baselines 1, cuda-l1 1" in done.stdout
    assert committed.read_text() == new
    fresh = Manifest(records)
    assert not fresh.contradicts(committed)
    assert not fresh.contradicts(records / BASELINE.removeprefix("records/"))
    assert parse_manifest((records / "MANIFEST.sha256").read_text(encoding="utf-8"))["h200/x.json"] == digest_text("{}")  # other lines kept


def test_restore_without_manifest_lines_warns_where_it_replaces_a_listed_record(tmp_path: Path) -> None:
    records = tmp_path / "records"
    committed = records / CUDA_L1.removeprefix("records/")
    committed.parent.mkdir(parents=True)
    committed.write_text("{}")
    Manifest(records).add(committed, "{}")
    tgz = _tgz(tmp_path / "p.tgz", {CUDA_L1: '{"new": 1}'})
    pending_records.restore(tgz, "h100", records)
    assert Manifest(records).contradicts(committed)  # the runner redoes it: the warning says so


@pytest.mark.parametrize("member", [OTHER_CARD, "records/h100/../h200/x.json", "elsewhere.txt"])
def test_restore_refuses_a_member_outside_the_cards_folder_and_writes_nothing(tmp_path: Path, member: str) -> None:
    tgz = _tgz(tmp_path / "results" / "h100" / "session41" / "records-h100-rejudge.tgz", {CUDA_L1: "{}", member: "{}"})
    with pytest.raises(pending_records.PendingError, match="nothing restored"):
        pending_records.restore(tgz, "h100", tmp_path / "records")
    assert not (tmp_path / "records").exists()


def test_restore_refuses_a_file_its_packed_manifest_contradicts(tmp_path: Path) -> None:
    tgz = _tgz(tmp_path / "p.tgz", {CUDA_L1: '{"changed": 1}', BASELINE: "{}",
                                   "records/MANIFEST.sha256": _manifest((CUDA_L1, '{"a": 1}'))})
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import pending_records as p; "
                           "from pathlib import Path; p.restore(Path(sys.argv[2]), 'h100', Path(sys.argv[3]))",
                           str(ROOT / "benchmarks"), str(tgz), str(tmp_path / "records")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "does not match its manifest line" in done.stderr
    assert not (tmp_path / "records").exists()


def test_the_newest_session_is_chosen_by_its_number(tmp_path: Path) -> None:
    for n in (9, 10, 40):
        _tgz(tmp_path / "h100" / f"session{n}" / "records-h100-rejudge.tgz", {CUDA_L1: "{}"})
    _tgz(tmp_path / "h200" / "session99" / "records-h200-rejudge.tgz", {OTHER_CARD: "{}"})
    (tmp_path / "h100" / "session41").mkdir()  # a session that kept no pending records
    assert pending_records.newest(tmp_path, "h100") == tmp_path / "h100" / "session40" / "records-h100-rejudge.tgz"
    assert pending_records.newest(tmp_path, "h300") is None
    done = _run("restore", "h300", "--results", str(tmp_path), "--records", str(tmp_path / "records"))
    assert done.returncode == 0 and "nothing to restore" in done.stdout


def test_the_committed_h100_rejudging_restores(tmp_path: Path) -> None:
    newest = pending_records.newest(ROOT / "benchmarks" / "results", "h100")
    assert newest is not None
    counts = pending_records.restore(newest, "h100", tmp_path / "records")
    assert counts["cuda-l1"] >= 125 and counts["_baselines"] > 0
    # records and the manifest only (its lock file, git-ignored, is what writing the manifest leaves beside it)
    assert all(p.suffix == ".json" for p in (tmp_path / "records").rglob("*")
               if p.is_file() and p.name not in ("MANIFEST.sha256", "MANIFEST.lock"))


def test_restore_of_one_lane_leaves_the_others_pending(tmp_path: Path) -> None:
    tgz = _tgz(tmp_path / "p.tgz", {CUDA_L1: "{}", BASELINE: "{}", "records/h100/kernelbench-triton-dump/x.json": "{}"})
    counts = pending_records.restore(tgz, "h100", tmp_path / "records", ("cuda-l1", "_baselines"))
    assert counts == {"cuda-l1": 1, "_baselines": 1}
    assert not (tmp_path / "records" / "h100" / "kernelbench-triton-dump").exists()


def test_restore_of_a_named_file_takes_that_one(tmp_path: Path) -> None:
    zoo = _tgz(tmp_path / "zoo-h100.tgz", {ZOO: '{"z": 1}', "records/MANIFEST.sha256": _manifest((ZOO, '{"z": 1}'))})
    _tgz(tmp_path / "results" / "h100" / "session41" / "records-h100-rejudge.tgz", {CUDA_L1: "{}"})
    done = _run("restore", "h100", "--results", str(tmp_path / "results"), "--records", str(tmp_path / "records"),
                "--file", str(zoo))
    assert done.returncode == 0, done.stderr
    assert "restored 1 files of h100" in done.stdout and "exploit-zoo 1" in done.stdout
    assert not (tmp_path / "records" / "h100" / "cuda-l1").exists()
