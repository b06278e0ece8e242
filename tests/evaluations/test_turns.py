"""Timings taken in turns: the turns file's round, its stop and its gone parties, then a verified run on the CPU."""

from __future__ import annotations

import json
import os
import statistics
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import schemas
from evaluations.cli import main
from evaluations.timing import Abandoned, Turns, create, mark_gone, take_turns
from schemas import validate


def _party(path: Path, party: int, rounds: int, log: list[tuple[int, bool]], lock: threading.Lock) -> None:
    """Take turns until told to stop; satisfied after ``rounds`` turns of its own."""
    turns = Turns(path, party)
    taken = 0
    while True:
        stop = turns.take()
        with lock:
            log.append((party, stop))
        if stop:
            turns.leave()
            return
        taken += 1
        turns.give(taken >= rounds)


def _run(path: Path, rounds: dict[int, int]) -> list[tuple[int, bool]]:
    """Run the parties of ``rounds`` (party -> its turns until satisfied) in threads; the log of their turns."""
    log: list[tuple[int, bool]] = []
    lock = threading.Lock()
    threads = [threading.Thread(target=_party, args=(path, p, r, log, lock)) for p, r in rounds.items()]
    for t in reversed(threads):  # the last party starts first: the order comes from the file, not the start
        t.start()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive()
    return log


def test_parties_take_turns_in_a_fixed_round_until_every_one_is_satisfied(tmp_path):
    path = create(tmp_path / "t.json", 3)
    log = _run(path, {0: 2, 1: 5, 2: 3})

    # party 1, the slowest, is satisfied at its fifth turn: the stop comes then, and each has one last turn
    assert [p for p, _ in log] == [0, 1, 2] * 4 + [0, 1] + [2, 0, 1]
    assert [stop for _, stop in log] == [False] * 14 + [True] * 3
    state = json.loads(path.read_text())
    assert state["stop"] and all(state["gone"])


def test_a_gone_party_is_skipped_and_the_others_go_on(tmp_path):
    path = create(tmp_path / "t.json", 3)
    mark_gone(path, 1)  # its worker ended before its first turn (a baseline that failed to load)
    log = _run(path, {0: 2, 2: 2})
    assert [p for p, _ in log] == [0, 2, 0, 2, 0, 2]
    assert [stop for _, stop in log] == [False] * 4 + [True] * 2


def test_the_others_are_abandoned_when_the_lead_ends_before_the_stop(tmp_path):
    path = create(tmp_path / "t.json", 2)
    waiting = Turns(path, 1)
    lead = Turns(path, 0)
    assert lead.take() is False
    lead.give(False)
    assert waiting.take() is False
    waiting.give(False)  # the turn is the lead's again; its worker then dies
    mark_gone(path, 0)
    with pytest.raises(Abandoned, match="nothing to compare with"):
        waiting.take()


def test_the_lead_alone_stops_by_its_own_rule_once_the_others_are_gone(tmp_path):
    path = create(tmp_path / "t.json", 2)
    lead = Turns(path, 0)
    assert lead.take() is False
    lead.give(False)
    mark_gone(path, 1)  # a baseline's worker crashed mid-way
    assert lead.take() is False  # its turn again at once: nobody else is left
    lead.give(True)
    assert lead.take() is True


def test_the_wait_for_the_parties_marks_each_gone_as_it_ends_and_gives_their_results_in_order(tmp_path):
    path = create(tmp_path / "t.json", 2)

    def lead() -> str:
        turns = Turns(path, 0)
        turns.take()
        turns.give(False)
        turns.take()  # the baseline's turn is skipped: it was marked gone once its call returned
        turns.give(True)
        assert turns.take() is True
        turns.leave()
        return "candidate"

    done: list[list[str]] = []
    waiting = threading.Thread(target=lambda: done.append(take_turns(path, [lead, lambda: "baseline"])), daemon=True)
    waiting.start()
    waiting.join(timeout=30)
    assert done == [["candidate", "baseline"]]
    assert json.loads(path.read_text())["gone"] == [True, True]


def test_an_interrupted_wait_stops_the_parties_first(tmp_path):
    path = create(tmp_path / "t.json", 2)
    stopped = threading.Event()

    def waits() -> str:
        assert stopped.wait(10)  # a process the stop kills: its wait ends
        return "killed"

    def fails() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        take_turns(path, [fails, waits], stop=stopped.set)
    assert json.loads(path.read_text())["gone"] == [True, True]


def test_a_turns_file_needs_a_party(tmp_path):
    with pytest.raises(ValueError, match="at least one party"):
        create(tmp_path / "t.json", 0)
    path = create(tmp_path / "t.json", 2)
    with pytest.raises(ValueError, match="party 2 of 2"):
        Turns(path, 2)


def test_a_timing_takes_its_turns_on_the_rounds_core_and_gets_its_own_cores_back(tmp_path):
    import torch

    from evaluations.timing import TimingPlan, time_calls

    before = os.sched_getaffinity(0)
    core = min(before)
    path = create(tmp_path / "t.json", 1)
    sets = [[torch.randn(64)] for _ in range(2)]
    seen: set[frozenset[int]] = set()

    def call(k: int) -> torch.Tensor:
        seen.add(frozenset(os.sched_getaffinity(0)))
        return sets[k][0] * 2

    plan = TimingPlan(warmup_s=0.01, min_calls=20, min_time_s=0.0, time_cap_s=1.0, turns=str(path), turn_cpu=core)
    run = time_calls(call, sets, torch.device("cpu"), plan)
    assert seen == {frozenset({core})}  # every call, warm-up included, ran in a turn on the round's core
    assert os.sched_getaffinity(0) == before
    assert "timed in turns with 0 other process(es) timing the same problem" in (run.stats.note or "")
    assert f"every turn on host core {core}" in (run.stats.note or "")
    assert json.loads(path.read_text())["gone"] == [True]
    assert len(run.batches) == len(run.samples_ms) == run.stats.calls  # each sample with its turn, in order
    assert run.batches == sorted(run.batches) and run.batches[0] == 0
    rounds = run.stats.round_medians_ms  # one median per round, in order, from that round's samples
    assert rounds is not None and len(rounds) == run.batches[-1] + 1
    last = [s for s, b in zip(run.samples_ms, run.batches, strict=True) if b == run.batches[-1]]
    assert rounds[-1] == statistics.median(last)


def test_a_timing_alone_records_no_rounds():
    import torch

    from evaluations.timing import TimingPlan, time_calls

    sets = [[torch.randn(64)] for _ in range(2)]
    plan = TimingPlan(warmup_s=0.01, min_calls=20, min_time_s=0.0, time_cap_s=1.0)
    assert time_calls(lambda k: sets[k][0] * 2, sets, torch.device("cpu"), plan).stats.round_medians_ms is None


def test_verified_candidates_timed_in_turns_with_fresh_baselines(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    for name in ("1_tiny_relu.py", "1_tiny_relu__wrong.py"):
        (cands / name).write_bytes((fixtures_dir / "candidates" / name).read_bytes())
    out, build = tmp_path / "out", tmp_path / "build"
    args = ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", str(cands), "--model", "m",
            "--out", str(out), "--build-dir", str(build), "--protocol", "verified", "--device", "cpu",
            "--no-progress", "--timeout", "120", "--in-turns"]
    assert main(args) == 0
    records = {Path(r.kernel.path).name: r for r in map(schemas.load_record, out.rglob("*.json"))
               if isinstance(r, schemas.Record)}
    stored = {r.kind: r for r in map(schemas.load_record, out.rglob("*.json")) if isinstance(r, schemas.BaselineRecord)}

    honest = records["1_tiny_relu.py"]
    assert honest.status == "correct"
    assert {b.kind for b in honest.baselines} == {"eager_tf32", "compile", "eager_fp32"}
    for b in honest.baselines:  # timed anew beside the candidate: no stored baseline holds these times
        assert b.baseline_id is None
        assert "timed in turns with 3 other process(es)" in (b.timing.note or "")
        assert b.timing != stored[b.kind].timing
    assert "timed in turns with 3 other process(es)" in (honest.timing.note or "")
    assert f"every turn on host core {max(os.sched_getaffinity(0))}" in (honest.timing.note or "")
    eager = next(b for b in honest.baselines if b.kind == "eager_tf32")
    cand_rounds, eager_rounds = honest.timing.round_medians_ms, eager.timing.round_medians_ms
    assert cand_rounds and eager_rounds and abs(len(cand_rounds) - len(eager_rounds)) <= 1  # the same rounds
    ratios = [e / c for e, c in zip(eager_rounds, cand_rounds, strict=False)]  # the speedup: median of per-round ratios
    assert honest.speedup.vs_eager == pytest.approx(statistics.median(ratios))
    assert [f for f in validate(root=out) if f.field.startswith("speedup")] == []  # the validator's rule too
    state = json.loads(next((build / "turns").glob("*.json")).read_text())
    assert state["stop"] and all(state["gone"]) and state["turn"] >= 2 * state["parties"]

    wrong = records["1_tiny_relu__wrong.py"]  # never timed: its baselines' workers stopped, the stored ones named
    assert wrong.status == "incorrect" and wrong.timing is None
    assert all(b.baseline_id for b in wrong.baselines)
    assert not any("in turns" in n for n in wrong.notes)


def _eager(median_ms: float, host_ms: float | None, **update: object) -> schemas.TimingStats:
    from evaluations.protocols import summarize

    stats = summarize([median_ms] * 3, "cuda_events")
    return stats.model_copy(update={"host_enqueue_ms": host_ms, **update})


def test_which_timings_follow_the_hosts_own_speed():
    from evaluations.protocols import host_speed_bound

    assert host_speed_bound(_eager(11.3, 12.4))  # L3/30: a graph was wanted, eager calls were timed
    assert host_speed_bound(_eager(4.4, 2.5))  # host over 1 ms and at least half the device time
    assert not host_speed_bound(_eager(10.0, 2.0))  # the device outruns its host: the spin hides it
    assert not host_speed_bound(_eager(0.3, 0.5))  # under 1 ms of host time: the spin hides it too
    assert not host_speed_bound(_eager(11.3, 12.4, method="cuda_graph"))  # replays leave the host out
    assert not host_speed_bound(_eager(0.01, 2.0, calls_per_sample=8))  # several short calls per pair
    assert host_speed_bound(_eager(11.3, None, host_bound=True))  # recorded before the host time was
    assert not host_speed_bound(_eager(11.3, None, host_bound=False))


def test_only_a_protocol_that_takes_turns_times_candidates_in_turns(tmp_path, fixtures_dir):
    from evaluations import capture_environment, load_inputs
    from evaluations.run import RunConfig, Runner

    loaded = load_inputs(fixtures_dir / "problems", fixtures_dir / "candidates", model="m")
    l3_30 = _eager(11.3, 12.4)

    def runner(device: str, in_turns: bool) -> Runner:
        config = RunConfig(out_dir=tmp_path / "out", protocols=("verified", "standard"), device=device,
                           build_dir=tmp_path / "build", progress=False, in_turns=in_turns)
        return Runner(loaded, config, capture_environment("cpu"))

    def baselines(timing: schemas.TimingStats) -> dict[str, object]:  # the stored baselines' timings
        return {kind: SimpleNamespace(timing=timing) for kind in ("eager_tf32", "eager_fp32")}

    cuda = runner("cuda", False)
    assert cuda.takes_turns(cuda.protocols["verified"], baselines(l3_30))  # type: ignore[arg-type]
    assert not cuda.takes_turns(cuda.protocols["verified"], baselines(_eager(10.0, 2.0)))  # type: ignore[arg-type]
    assert not cuda.takes_turns(cuda.protocols["standard"], baselines(l3_30))  # type: ignore[arg-type]
    forced = runner("cpu", True)
    assert forced.takes_turns(forced.protocols["verified"], baselines(_eager(10.0, 2.0)))  # type: ignore[arg-type]
    assert not forced.takes_turns(forced.protocols["standard"], baselines(_eager(10.0, 2.0)))  # type: ignore[arg-type]


def test_a_speedup_between_timings_in_turns_is_the_median_of_per_round_ratios():
    from evaluations.protocols import summarize
    from evaluations.protocols.verified import round_medians

    assert round_medians([3.0, 1.0, 2.0, 5.0], [0, 0, 0, 1]) == [2.0, 5.0]
    assert round_medians([1.0, 2.0], [0, 2]) is None  # a round without samples: not the same rounds as the others
    assert round_medians([0.0, 2.0], [0, 1]) is None
    cand = summarize([1.0, 1.0, 1.0], "cuda_events").model_copy(update={"round_medians_ms": [1.0, 1.0, 1.0, 1.0]})
    base = summarize([2.0, 2.0, 2.0], "cuda_events").model_copy(update={"round_medians_ms": [2.0, 2.2, 2.1]})
    assert schemas.speedup_between(cand, base) == pytest.approx(2.1)  # the lead's extra round has no pair
    alone = base.model_copy(update={"round_medians_ms": None})  # one side timed alone: the ratio of medians
    assert schemas.speedup_between(cand, alone) == pytest.approx(2.0)
    assert schemas.speedup_between(cand.model_copy(update={"round_medians_ms": None}), alone, "mean") == pytest.approx(2.0)
