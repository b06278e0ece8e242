"""Records a re-judging has made on one card but not yet published: packed into a results folder after a device
session, and brought back into ``records/`` before the next session goes on (or once a lane is complete, to
publish it).

A re-judging of a whole public set takes several device sessions. Its records stay out of ``records/`` until the
lane is complete (the site shows no half-judged lane), so each session's are kept in
``benchmarks/results/<hw>/session<N>/records-<hw>-rejudge.tgz``: every re-judged record of that card so far (the
device's run packs all of ``records/``, which held the earlier sessions' when it started), with their lines of the
records' manifest.

    python3 benchmarks/pending_records.py pack RECORDS_TGZ HW DEST [--lane LANE ...]
    python3 benchmarks/pending_records.py restore HW [--results benchmarks/results] [--records records] [--file F]

``pack`` keeps, of a device run's ``records.tgz``, the files under ``records/<hw>/<lane>/`` (default lanes:
``cuda-l1``, ``kernelbench-triton-dump`` and ``_baselines``) and their manifest lines, into ``DEST``.
``restore`` unpacks the newest such file of ``<hw>`` (by session number; ``--lane``: those lanes only) into
``--records``, and adds its manifest lines to that folder's manifest: a record that replaces a committed one in
place (a re-judging on the card that made the committed records) then matches the manifest, and the runner skips it
as finished rather than redo it as changed. It refuses, writing nothing, a file whose bytes contradict the packed manifest line, and any member outside
``records/<hw>/``. ``benchmarks/run_h200.sh``'s ``resume`` step runs ``restore`` on the device.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tarfile
from collections import Counter
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemas import MANIFEST_RELPATH, Manifest, digest_text, manifest_text, parse_manifest  # noqa: E402 - the checkout's own package

LANES = ("cuda-l1", "kernelbench-triton-dump", "_baselines")
"""The lanes a re-judging of the public sets writes (their verified records, and the baselines they are timed
against)."""
MANIFEST_MEMBER = f"records/{MANIFEST_RELPATH}"
_SESSION = re.compile(r"^session(\d+)$")


class PendingError(Exception):
    """A pack or restore that cannot be done as asked: the message says which file and why."""


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(member)
    if handle is None:
        raise PendingError(f"{member.name}: not a regular file")
    return handle.read()


def _lane(rel: str) -> str:
    """The lane of a path under the records folder (``h100/cuda-l1/...`` -> ``cuda-l1``)."""
    return rel.split("/")[1]


def pack(records_tgz: Path, hw: str, dest: Path, lanes: tuple[str, ...] = LANES) -> Counter[str]:
    """Write ``dest`` from a device run's ``records_tgz``: its files under ``records/<hw>/<lane>/`` for ``lanes``
    and a manifest of their lines (those the run's manifest lists). Returns the files per lane."""
    prefixes = tuple(f"{hw}/{lane}/" for lane in lanes)
    kept: dict[str, bytes] = {}  # path under the records folder -> bytes
    listed: dict[str, str] = {}
    with tarfile.open(records_tgz, "r:gz") as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            rel = name.removeprefix("records/")
            if member.isfile() and name != rel and rel.startswith(prefixes) and rel.endswith(".json"):
                kept[rel] = _read(tar, member)
            elif member.isfile() and name == MANIFEST_MEMBER:
                listed = parse_manifest(_read(tar, member).decode("utf-8"))
    if not kept:
        raise PendingError(f"{records_tgz}: no records under {', '.join('records/' + p for p in prefixes)}")
    lines = {rel: listed[rel] for rel in kept if rel in listed}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:gz") as out:
        for rel in sorted(kept):
            _add(out, f"records/{rel}", kept[rel])
        if lines:
            _add(out, MANIFEST_MEMBER, manifest_text(lines).encode("utf-8"))
    return Counter(map(_lane, kept))


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def newest(results: Path, hw: str) -> Path | None:
    """The pending records of ``hw`` of the highest-numbered session under ``results/<hw>/``, if any."""
    found = []
    for path in (results / hw).glob(f"session*/records-{hw}-rejudge.tgz"):
        match = _SESSION.match(path.parent.name)
        if match:
            found.append((int(match.group(1)), path))
    return max(found)[1] if found else None


def restore(tgz: Path, hw: str, records: Path, lanes: tuple[str, ...] | None = None) -> Counter[str]:
    """Unpack ``tgz`` into the records folder ``records`` and add its manifest lines to that folder's manifest:
    every lane, or ``lanes`` only (to publish a complete one). Everything is checked before anything is written.
    Returns the files per lane."""
    prefix = f"records/{hw}/"
    files: dict[str, bytes] = {}  # path under the records folder -> bytes
    lines: dict[str, str] = {}
    with tarfile.open(tgz, "r:gz") as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./")
            if member.isdir() and (prefix.startswith(name.rstrip("/") + "/") or name.startswith(prefix)):
                continue
            parts = PurePosixPath(name).parts
            if not member.isfile() or ".." in parts or (name != MANIFEST_MEMBER and not name.startswith(prefix)):
                raise PendingError(f"{tgz}: {member.name} is not a record file under {prefix}; nothing restored")
            if name == MANIFEST_MEMBER:
                lines = parse_manifest(_read(tar, member).decode("utf-8"))
            else:
                files[name.removeprefix("records/")] = _read(tar, member)
    if lanes is not None:
        files = {rel: data for rel, data in files.items() if _lane(rel) in lanes}
    for rel, data in files.items():
        if rel in lines and digest_text(data.decode("utf-8")) != lines[rel]:
            raise PendingError(f"{tgz}: records/{rel} does not match its manifest line (changed after it was "
                               "written); nothing restored")
    manifest = Manifest(records)
    unlisted = [rel for rel in files if rel not in lines and rel in manifest.entries]
    if unlisted:
        print(f"pending_records: {len(unlisted)} files replace committed records without a manifest line of their own "
              f"(e.g. records/{unlisted[0]}): the runner will take them for changed records and redo them",
              file=sys.stderr)
    for rel, data in sorted(files.items()):
        path = records / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel in lines:
            manifest.add(path, data.decode("utf-8"))
    return Counter(map(_lane, files))


def _summary(counts: Counter[str]) -> str:
    return ", ".join(f"{lane} {n}" for lane, n in sorted(counts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="keep a device run's re-judged records of one card in a results file")
    p.add_argument("records_tgz", type=Path, help="the records.tgz a device run brought back")
    p.add_argument("hw", help="the card's records folder name (h100, h200)")
    p.add_argument("dest", type=Path, help="e.g. benchmarks/results/h100/session41/records-h100-rejudge.tgz")
    p.add_argument("--lane", action="append", help=f"lanes to keep (default: {', '.join(LANES)})")
    r = sub.add_parser("restore", help="bring a card's newest pending records back into a records folder")
    r.add_argument("hw", help="the card's records folder name (h100, h200)")
    r.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results")
    r.add_argument("--records", type=Path, default=ROOT / "records")
    r.add_argument("--lane", action="append", help="lanes to restore (default: every lane the file holds)")
    r.add_argument("--file", type=Path, help="this packed file rather than the newest of the card's sessions")
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            counts = pack(args.records_tgz, args.hw, args.dest, tuple(args.lane or LANES))
            print(f"packed {sum(counts.values())} files of {args.hw} into {args.dest}: {_summary(counts)}")
            return 0
        tgz = args.file or newest(args.results, args.hw)
        if tgz is None:
            print(f"no pending records of {args.hw} under {args.results / args.hw}: nothing to restore")
            return 0
        counts = restore(tgz, args.hw, args.records, tuple(args.lane) if args.lane else None)
        print(f"restored {sum(counts.values())} files of {args.hw} from {tgz}: {_summary(counts)}")
        return 0
    except (PendingError, OSError, tarfile.TarError, UnicodeDecodeError) as exc:
        print(f"pending_records: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
