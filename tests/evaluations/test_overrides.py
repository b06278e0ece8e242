"""Counts a run overrides (``--trials``, ``--warmup-calls``, ``--timed-calls``) are typed from the command line to
the timer, applied by both protocols, and recorded as what ran: a record that claims an override its run did not
apply fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import schemas
from evaluations import Job, Overrides
from evaluations.cli import main


def test_overrides_are_typed_and_never_travel_as_job_options(fixtures_dir):
    from evaluations import load_problem_folder

    problem = load_problem_folder(fixtures_dir / "problems")[0]
    with pytest.raises(ValueError, match="Overrides"):
        Job(problem=problem, protocol="verified", device="cpu", options={"timed_calls": 5})
    with pytest.raises(ValueError, match="at least 1"):
        Overrides(trials=0)
    with pytest.raises(ValueError, match="integer"):
        Overrides(timed_calls="30")  # type: ignore[arg-type]
    assert Overrides(warmup_calls=0).given() == {"warmup_calls": 0}


def test_the_verified_timing_makes_the_warm_up_and_timed_calls_it_is_given():
    import torch

    from evaluations.timing import TimingPlan, time_calls

    calls = []

    def call(k: int) -> torch.Tensor:
        calls.append(k)
        return torch.ones(4) * k

    plan = TimingPlan.of({"warmup_s": 0.0, "min_time_s": 0.0, "time_cap_s": 5.0, "ci_target_rel": 1.0},
                         Overrides(warmup_calls=60, timed_calls=75))
    assert (plan.warmup_calls, plan.min_calls) == (60, 75)
    run = time_calls(call, [[torch.zeros(4)], [torch.zeros(4)]], torch.device("cpu"), plan)
    assert len(run.samples_ms) >= 75 and run.stats.calls == len(run.samples_ms)
    assert len(calls) - len(run.samples_ms) >= 60  # the warm-up calls: made before the first timed one


def test_the_command_line_refuses_more_trials_than_a_protocol_runs(tmp_path, fixtures_dir, capsys):
    args = ["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", str(fixtures_dir / "candidates"),
            "--model", "m", "--out", str(tmp_path), "--device", "cpu", "--no-progress"]
    for protocol, trials, says in (("verified", "4", "at most 3 per hidden distribution"),
                                   ("standard", "6", "at most 5")):
        assert main([*args, "--protocol", protocol, "--trials", trials]) == 2
        assert says in capsys.readouterr().err
    assert main([*args, "--timed-calls", "0"]) == 2
    assert "--timed-calls: must be an integer of at least 1" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.slow
def test_every_recorded_override_is_what_ran_under_both_protocols(tmp_path, fixtures_dir):
    cands = tmp_path / "cands"
    cands.mkdir()
    shutil.copy(fixtures_dir / "candidates" / "1_tiny_relu.py", cands / "1_tiny_relu.py")
    out = tmp_path / "out"
    assert main(["eval", "--problems", str(fixtures_dir / "problems"), "--candidates", str(cands), "--model", "m",
                 "--out", str(out), "--build-dir", str(tmp_path / "build"), "--device", "cpu", "--no-progress",
                 "--protocol", "both", "--trials", "1", "--warmup-calls", "7", "--timed-calls", "30"]) == 0
    records = {r.protocol.name: r for r in map(schemas.load_record, out.rglob("*.json")) if isinstance(r, schemas.Record)}
    assert set(records) == {"standard", "verified"}
    for record in records.values():
        assert record.status == "correct", (record.protocol.name, record.error)
        assert (record.protocol.timing.warmup_calls, record.protocol.timing.timed_calls) == (7, 30)
    standard, verified = records["standard"], records["verified"]
    assert len(standard.correctness) == 1 and standard.protocol.seeds == schemas.protocol_info("standard").seeds[:1]
    assert standard.timing.calls == 30  # exactly the timed calls it records
    assert len(verified.correctness) == 4  # one fresh seed for each of the four hidden distributions
    assert {c.distribution for c in verified.correctness} == set(verified.protocol.distributions)
    assert verified.timing.calls >= 30  # at least the timed calls it records, before its confidence target stops it
    assert Path(verified.kernel.path).name == "1_tiny_relu.py"
