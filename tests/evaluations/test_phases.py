"""The run's phase log: wall time in progress versus worker-seconds, per phase."""

from __future__ import annotations

from evaluations.run import PhaseLog, Span, union_s


def test_union_counts_overlapping_spans_once():
    assert union_s([]) == 0.0
    assert union_s([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]) == 4.0
    assert union_s([(0.0, 10.0), (2.0, 3.0)]) == 10.0


def test_totals_per_phase_separate_wall_time_from_worker_seconds():
    log = PhaseLog(origin=0.0)
    for start, end in ((0.0, 4.0), (1.0, 5.0), (2.0, 6.0)):  # three baselines at once
        log.add(Span("baseline", f"b{start}", start, end))
    log.add(Span("candidate", "c", 6.0, 9.0, timed_ms=1500.0, waited_s=1.25))
    log.add(Span("candidate", "d", 6.0, 7.0, waited_s=0.5, admitted_s=0.25))  # waited for room on the device
    totals = {t.phase: t for t in log.totals()}
    assert set(totals) == {"baseline", "candidate"}
    assert totals["baseline"].jobs == 3 and totals["baseline"].wall_s == 6.0 and totals["baseline"].worker_s == 12.0
    assert (totals["candidate"].first_s, totals["candidate"].last_s) == (6.0, 9.0)
    assert totals["candidate"].waited_s == 1.75 and totals["baseline"].waited_s == 0.0
    assert totals["candidate"].admitted_s == 0.25 and totals["baseline"].admitted_s == 0.0
    data = log.as_json()
    assert len(data["spans"]) == 5 and data["spans"][3]["timed_ms"] == 1500.0 and data["spans"][3]["waited_s"] == 1.25
    assert data["spans"][4]["admitted_s"] == 0.25
