"""benchmarks/lock_trace.py on two workers' traces written by hand: the timing lane and the gaps with no timing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import lock_trace  # noqa: E402

CANDIDATE = "candidate:verified:kernelbench/1/1:abc"
BASELINE = "baseline:verified:kernelbench/1/2:eager_tf32"


def _trace(folder: Path, pid: int, lines: list[tuple[float, str, str]]) -> None:
    (folder / f"trace-{pid}.txt").write_text("".join(f"{t:.6f} {e} {s}\n" for t, e, s in lines), encoding="utf-8")


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    # a candidate that times from 2.5 s to 4 s (waiting from 2 s), and a baseline whose worker starts at once but
    # whose job begins only at 10 s and times from 11 s to 12 s: no timing is ready over [0, 2] and [4, 11]
    _trace(tmp_path, 1, [(0, "born", CANDIDATE), (1, "begin", CANDIDATE), (1.5, "in", "a.py:1:f"),
                         (2, "want", "a.py:2:f"), (2.5, "alone", "a.py:3:f"), (4, "in", "a.py:4:f"),
                         (5, "end", "a.py:5:f")])
    _trace(tmp_path, 2, [(0, "born", BASELINE), (10, "begin", BASELINE), (10.5, "in", "b.py:1:g"),
                         (11, "want", "b.py:2:g"), (11, "alone", "b.py:3:g"), (12, "end", "b.py:4:g")])
    return tmp_path


def test_the_timing_lane_splits_the_span(traces: Path) -> None:
    figures = lock_trace.summarise(traces, 10)
    assert figures["span_s"] == 12.0 and figures["workers"] == 2
    assert figures["timing_alone_share"] == round(2.5 / 12, 3)
    assert figures["timing_waiting_share"] == round(0.5 / 12, 3)
    assert figures["no_timing_ready_share"] == round(9 / 12, 3)


def test_the_gaps_with_no_timing_ready_say_who_stood_where(traces: Path) -> None:
    figures = lock_trace.summarise(traces, 10)
    assert figures["idle_s"] == 9.0
    assert figures["idle_gaps"] == [{"from_s": 4.0, "seconds": 7.0}, {"from_s": 0.0, "seconds": 2.0}]
    rows = {(r["state"], r["kind"]): r["workers"] for r in figures["while_idle"]}
    # the baseline's worker was starting for 2 s of the first gap and 6 s of the second: 8 of the 9 idle seconds
    assert rows[("starting", "baseline:verified:eager_tf32")] == round(8 / 9, 2)
    assert rows[("shared", "candidate:verified")] == round(1.5 / 9, 2)
    assert rows[("starting", "candidate:verified")] == round(1 / 9, 2)
    assert figures["while_idle"][0]["state"] == "starting"  # most first
    # the candidate's worker lives through 3 of the idle seconds (it ends at 5 s), the baseline's through all 9
    assert sum(rows.values()) == pytest.approx((3 + 9) / 9, abs=0.03)


def test_gaps_are_the_parts_no_interval_covers() -> None:
    assert lock_trace.gaps([(1, 2), (1.5, 3), (5, 6)], 0, 8) == [(0, 1), (3, 5), (6, 8)]
    assert lock_trace.gaps([(0, 8)], 0, 8) == []
