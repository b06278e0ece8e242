"""Each metric's SQL against hand-built rows whose answers are worked out by hand."""

from __future__ import annotations

import math

import pytest

from generator import COLUMNS, aggregate, rows_table


def row(model: str, pid: int, status: str = "correct", speedup: float | None = 1.0, **kw) -> dict:
    base = {k: None for k in COLUMNS}
    base.update(path=f"{model}/{kw.get('protocol', 'verified')}/{pid}/{kw.get('sample', 0)}.json", page="p.html",
                hardware="h200", model=model, sample=0, suite="kv", level=1, problem_id=pid, problem_name=f"p{pid}",
                protocol="verified", status=status, vs_eager=speedup if status in ("correct", "hacked") else None,
                failed_checks=0, labels="")
    base.update(kw)
    return base


def summary_of(agg, model: str, level: int = 1, protocol: str = "verified") -> dict:
    return next(r for r in agg.summary if (r["model"], r["level"], r["protocol"]) == (model, level, protocol))


def test_fast_p_counts_failing_and_missing_problems_as_not_fast():
    rows = [row("B", pid, speedup=1.0) for pid in range(4)]  # B makes all 4 problems part of the suite
    rows += [row("A", 0, speedup=1.2), row("A", 1, speedup=0.7), row("A", 2, status="incorrect")]  # p3 missing
    s = summary_of(aggregate(rows_table(rows)), "A")
    assert s["n_problems"] == 4 and s["attempted"] == 3 and s["correct"] == 2
    assert s["correct_share"] == pytest.approx(2 / 3)
    assert (s["fast_0"], s["fast_0_5"], s["fast_0_8"], s["fast_1"], s["fast_1_5"], s["fast_2"]) == (
        0.5, 0.5, 0.25, 0.25, 0.0, 0.0)


def test_fast_p_curve_steps_at_each_speedup():
    rows = [row("A", 0, speedup=1.2), row("A", 1, speedup=0.7), row("A", 2, status="incorrect"), row("A", 3, speedup=2.5)]
    curve = {float(r["p"]): r["fast_p"] for r in aggregate(rows_table(rows)).fast_p_curve if r["level"] == 1}
    assert len(curve) == 61 and min(curve) == 0.0 and max(curve) == 3.0
    assert curve[0.0] == 0.75 and curve[0.65] == 0.75 and curve[0.7] == 0.5  # strictly greater than p
    assert curve[1.15] == 0.5 and curve[1.2] == 0.25 and curve[2.45] == 0.25 and curve[2.5] == 0.0


def test_correct_speedup_is_the_geometric_mean_over_correct_problems_only():
    rows = [row("A", 0, speedup=2.0, vs_compile=4.0), row("A", 1, speedup=0.5, vs_compile=1.0),
            row("A", 2, status="incorrect"), row("A", 3, status="timeout")]
    s = summary_of(aggregate(rows_table(rows)), "A")
    assert s["speedup_eager"] == pytest.approx(1.0)
    assert s["speedup_compile"] == pytest.approx(2.0)


def test_best_of_k_takes_the_fastest_correct_sample_and_its_fields():
    rows = [row("A", 0, speedup=1.5, sample=0, cand_peak_bytes=50, base_peak_bytes=100),
            row("A", 0, speedup=3.0, sample=1, cand_peak_bytes=300, base_peak_bytes=100),
            row("A", 0, status="hacked", speedup=9.0, sample=2, failed_checks=1, failed_check="timer-patching")]
    agg = aggregate(rows_table(rows))
    best = next(r for r in agg.best if r["model"] == "A")
    assert (best["sample"], best["vs_eager"], best["samples"], best["correct_samples"]) == (1, 3.0, 3, 2)
    s = summary_of(agg, "A")
    assert s["speedup_eager"] == pytest.approx(3.0) and s["max_samples"] == 3
    assert s["memory_regression_share"] == 1.0  # the chosen sample's memory, not the thriftier sample 0


def test_memory_share_and_mem_eff_use_correct_kernels_with_both_peaks():
    rows = [row("A", 0, cand_peak_bytes=200, base_peak_bytes=100), row("A", 1, cand_peak_bytes=50, base_peak_bytes=100),
            row("A", 2), row("A", 3, status="incorrect", cand_peak_bytes=900, base_peak_bytes=100)]
    s = summary_of(aggregate(rows_table(rows)), "A")
    assert s["memory_measured"] == 2
    assert s["memory_regression_share"] == 0.5
    assert s["mem_eff"] == pytest.approx(1.0)  # geomean(100/200, 100/50)


def test_median_sol_score_over_correct_problems():
    rows = [row("A", 0, sol_score=0.2), row("A", 1, sol_score=0.4), row("A", 2, sol_score=0.9),
            row("A", 3, status="hacked", sol_score=0.99, failed_checks=1)]
    assert summary_of(aggregate(rows_table(rows)), "A")["median_sol_score"] == pytest.approx(0.4)


def test_level_zero_aggregates_every_level_of_the_suite():
    rows = [row("A", 0, speedup=2.0, level=1), row("A", 1, speedup=8.0, level=2), row("B", 2, speedup=1.0, level=2)]
    agg = aggregate(rows_table(rows))
    overall, level2 = summary_of(agg, "A", level=0), summary_of(agg, "A", level=2)
    assert overall["n_problems"] == 3 and overall["speedup_eager"] == pytest.approx(4.0)
    assert overall["fast_1"] == pytest.approx(2 / 3)
    assert level2["n_problems"] == 2 and level2["fast_1"] == 0.5


def test_standard_to_verified_drop_splits_into_tf32_hidden_inputs_and_timing():
    rows = [row("M", 0, protocol="standard", speedup=2.0), row("M", 1, protocol="standard", speedup=4.0),
            row("M", 0, speedup=1.0, vs_eager_fp32=1.6),
            row("M", 1, status="hacked", speedup=5.0, vs_eager_fp32=6.0, failed_checks=1, failed_check="hidden-inputs")]
    d = next(r for r in aggregate(rows_table(rows)).drop if r["level"] == 0)
    assert d["n_problems"] == 2 and d["lost_to_verdict"] == 1
    assert d["standard_speedup"] == pytest.approx(math.sqrt(8))  # failing verified problem counts as 1x
    assert d["verified_speedup"] == pytest.approx(1.0)
    assert d["drop_factor"] == pytest.approx(math.sqrt(8))
    assert d["tf32_factor"] == pytest.approx(math.sqrt(1.6))
    assert d["hidden_inputs_factor"] == pytest.approx(2.0)
    assert d["timing_factor"] == pytest.approx(math.sqrt(2.0 / 1.6))
    assert d["tf32_factor"] * d["hidden_inputs_factor"] * d["timing_factor"] == pytest.approx(d["drop_factor"])


def test_drop_split_is_withheld_when_the_fp32_speedup_is_missing():
    rows = [row("M", 0, protocol="standard", speedup=2.0), row("M", 0, speedup=1.0)]
    d = next(r for r in aggregate(rows_table(rows)).drop if r["level"] == 0)
    assert d["drop_factor"] == pytest.approx(2.0)
    assert d["tf32_factor"] is None and d["hidden_inputs_factor"] is None


def test_bootstrap_ci_is_deterministic_and_brackets_the_geometric_mean():
    rows = [row("A", pid, speedup=s) for pid, s in enumerate([0.5, 0.8, 1.0, 1.3, 2.0, 3.0, 1.1, 0.9, 1.7, 2.4])]
    rows += [row("C", pid, speedup=1.5) for pid in range(5)]
    first, second = aggregate(rows_table(rows)), aggregate(rows_table(list(reversed(rows))))
    ci = {r["model"]: r for r in first.speedup_ci if r["level"] == 1}
    again = {r["model"]: r for r in second.speedup_ci if r["level"] == 1}
    for model in ("A", "C"):  # same interval whatever the row order (up to float summation order)
        for key in ("speedup_eager_ci_low", "speedup_eager_ci_high"):
            assert again[model][key] == pytest.approx(ci[model][key], rel=1e-12)
    g = summary_of(first, "A")["speedup_eager"]
    assert ci["A"]["speedup_eager_ci_low"] < g < ci["A"]["speedup_eager_ci_high"]
    assert 0.8 < ci["A"]["speedup_eager_ci_low"] and ci["A"]["speedup_eager_ci_high"] < 2.0
    assert ci["C"]["speedup_eager_ci_low"] == pytest.approx(1.5) == ci["C"]["speedup_eager_ci_high"]


def test_audit_excluded_problems_leave_every_aggregate():
    rows = [row("A", 0, speedup=2.0), row("A", 1, speedup=100.0)]
    excluded = [{"hardware": "h200", "suite": "kv", "level": 1, "problem_id": 1, "problem_name": "p1",
                 "reason": "zero-output: output is zero"}]
    agg = aggregate(rows_table(rows), excluded)
    s = summary_of(agg, "A")
    assert (s["n_problems"], s["attempted"], s["speedup_eager"]) == (1, 1, pytest.approx(2.0))
    assert any(r["problem_id"] == 1 and r["excluded"] for r in agg.results)


def test_zoo_and_reproduction_records_are_not_ranked():
    rows = [row("A", 0, speedup=2.0), row("exploit-zoo", 0, provider="kernelverdict", speedup=50.0),
            row("A", 0, speedup=40.0, path="A/repro.json", reproduces="records/A/verified/0/0.json")]
    agg = aggregate(rows_table(rows))
    assert {r["model"] for r in agg.summary} == {"A"}
    assert summary_of(agg, "A")["speedup_eager"] == pytest.approx(2.0)


@pytest.mark.parametrize(("repro", "ci", "agrees"), [
    (1.02, (0.95, 1.05), True), (1.2, (0.95, 1.05), False), (1.04, None, True), (1.06, None, False)])
def test_reproduction_agrees_within_the_original_ci_or_five_percent(repro, ci, agrees):
    ci_cols = {"cand_ci_low_ms": ci[0], "cand_ci_high_ms": ci[1]} if ci else {}
    original = row("A", 0, speedup=1.0, base_ms=1.0, cand_ms=1.0, **ci_cols)
    reproduction = row("A", 0, speedup=repro, path="A/r.json", reproduces="records/" + original["path"])
    (rep,) = aggregate(rows_table([original, reproduction])).reproductions
    assert rep["orig_path"] == original["path"] and rep["agrees"] is agrees


def test_zoo_table_joins_the_manifest_with_both_protocols_verdicts():
    rows = [row("exploit-zoo", 0, provider="kernelverdict", protocol="standard", speedup=30.0, kernel_path="evaluations/zoo/exploits/alias.py"),
            row("exploit-zoo", 0, provider="kernelverdict", status="hacked", speedup=30.0, kernel_path="evaluations/zoo/exploits/alias.py",
                failed_checks=2, failed_check="input-mutation", failed_evidence="the call changed input 0",
                failed_names=["input-mutation", "output-aliasing"],
                failed_evidences=["the call changed input 0", "output storage overlaps input 0"]),
            row("exploit-zoo", 1, provider="kernelverdict", status="hacked", kernel_path="evaluations/zoo/exploits/cache.py", failed_checks=1,
                failed_check="cached-output", failed_evidence="bit-identical", failed_names=["cached-output"],
                failed_evidences=["bit-identical"])]
    manifest = [{"file": "exploits/alias.py", "kind": "exploit", "problem": "relu.py", "hack": "output aliases input",
                 "expected_check": "output-aliasing"},
                {"file": "exploits/cache.py", "kind": "exploit", "problem": "relu.py", "hack": "stale output",
                 "expected_check": "stale-memory"},
                {"file": "honest/relu.py", "kind": "honest", "problem": "relu.py", "hack": None, "expected_check": None}]
    zoo = {z["file"]: z for z in aggregate(rows_table(rows), manifest=manifest).zoo}
    alias = zoo["exploits/alias.py"]
    assert (alias["standard_status"], alias["standard_speedup"]) == ("correct", 30.0)
    # the expected check is shown where it failed, even when another failed first
    assert (alias["verified_status"], alias["verified_check"]) == ("hacked", "output-aliasing")
    assert alias["verified_evidence"] == "output storage overlaps input 0"
    assert alias["verified_checks"] == "input-mutation, output-aliasing"
    cache = zoo["exploits/cache.py"]  # the expected check did not fire: the first failed one is shown
    assert (cache["verified_check"], cache["verified_evidence"]) == ("cached-output", "bit-identical")
    assert zoo["honest/relu.py"]["verified_status"] is None  # listed, not yet run
