"""fast_p over the suite's own problem list, the physical floor, fixtures by provider, the noise band and claims:
SQL and Python against hand-built rows with answers worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import COLUMNS, Ceiling, Floors, OutputSize, aggregate, check, physics_rows, read_suites, rows_table

REPO = Path(__file__).resolve().parents[2]


def row(model: str, pid: int, protocol: str = "standard", speedup: float | None = 1.0, **kw) -> dict:
    base = {k: None for k in COLUMNS}
    base.update(path=f"{model}/{protocol}/{pid}.json", page="p.html", hardware="h200", model=model, sample=0,
                suite="kernelbench-v0", level=1, problem_id=pid, problem_name=f"p{pid}", protocol=protocol,
                status="correct", vs_eager=speedup, failed_checks=0, labels="", cand_ms=1.0)
    base.update(kw)
    return base


SIZES = [{"suite": "kernelbench-v0", "level": 1, "n_problems": 100, "source": "KernelBench v0"},
         {"suite": "kernelbench-v0", "level": 2, "n_problems": 100, "source": "KernelBench v0"}]


def summary(agg, model: str, level: int = 0, protocol: str = "standard") -> dict:
    return next(r for r in agg.summary if (r["model"], r["level"], r["protocol"]) == (model, level, protocol))


def test_fast_p_divides_by_the_suite_size_less_the_audits_exclusions_not_by_what_was_attempted():
    excluded = [{"hardware": "h200", "suite": "kernelbench-v0", "level": 1, "problem_id": 99, "problem_name": "p99",
                 "reason": "zero-output"}]
    rows = [row("A", 0, speedup=2.0), row("A", 1, speedup=0.5)]
    s = summary(aggregate(rows_table(rows), excluded, suite_sizes=SIZES), "A")
    assert (s["n_problems"], s["suite_size"], s["n_excluded"], s["size_known"]) == (199, 200, 1, True)
    assert s["attempted"] == 2 and s["fast_1"] == pytest.approx(1 / 199)


def test_a_suite_the_site_does_not_know_falls_back_to_the_problems_seen_and_says_so():
    s = summary(aggregate(rows_table([row("A", 0, suite="mystery"), row("A", 1, suite="mystery")]), suite_sizes=SIZES), "A")
    assert s["n_problems"] == 2 and s["size_known"] is False and "not known" in s["size_source"]


def test_the_suite_list_reads_the_repositorys_own_suites_and_kernelbench_v0():
    suites = read_suites(REPO)
    sizes = {}
    for lv in suites.levels:
        sizes[lv.suite] = sizes.get(lv.suite, 0) + lv.problems
    assert sizes["kernelbench-v0"] == 250 and sizes["kernelverdict"] == 75 and sizes["kernelverdict-zoo"] == 7  # 7_bias_relu_row_mean: a <<<>>> kernel beside torch ops
    assert suites.element_size("kernelverdict", 1, 40).bytes == 2  # 040_gemm_bf16 is bfloat16


FLOORS = Floors({("h200", "kernelbench-v0", 1, 9): OutputSize(16384 * 16384 * 4, None, "output shape [16384, 16384]"),
                 ("h200", "kernelbench-v0", 1, 8): "the audit recorded no output shape for this problem"},
                {"h200": Ceiling(4.23e12, "ceilings")})


def test_a_time_below_writing_its_own_output_is_impossible_and_a_missing_size_is_not_checked():
    impossible = check(FLOORS, "h200", "kernelbench-v0", 1, 9, None, 0.0182)
    assert impossible.verdict == "impossible" and "13.9× the measured bandwidth" in impossible.reason
    assert check(FLOORS, "h200", "kernelbench-v0", 1, 9, None, 0.3).verdict == "possible"
    unknown = check(FLOORS, "h200", "kernelbench-v0", 1, 8, None, 0.001)
    assert unknown.verdict == "not-checked" and "no output bytes" in unknown.reason
    assert check(FLOORS, "a100", "kernelbench-v0", 1, 9, None, 0.001).verdict == "not-checked"


def test_an_impossible_record_leaves_every_aggregate_under_every_protocol_and_is_counted():
    rows = [row("A", 9, speedup=26.2, cand_ms=0.0182, cand_peak_bytes=2, base_peak_bytes=1000),
            row("A", 1, speedup=0.9, cand_ms=0.5),
            row("A", 9, "verified", speedup=20.0, cand_ms=0.02), row("A", 1, "verified", speedup=0.8, cand_ms=0.5)]
    table = rows_table(rows)
    agg = aggregate(table, suite_sizes=SIZES, physics=physics_rows(table, FLOORS))
    for proto in ("standard", "verified"):
        s = summary(agg, "A", protocol=proto)
        assert s["impossible"] == 1 and s["correct"] == 1
        assert s["speedup_eager"] == pytest.approx(0.9 if proto == "standard" else 0.8)
    assert summary(agg, "A")["mem_eff"] is None  # the impossible record's 500x memory saving is not counted
    flagged = next(r for r in agg.best if r["problem_id"] == 9 and r["protocol"] == "standard")
    assert flagged["status"] == "correct" and flagged["impossible"] and "measured copy bandwidth" in flagged["physics_reason"]


def test_fixture_models_are_identified_by_their_provider_and_never_ranked():
    rows = [row("A", 0), row("examples", 0, speedup=9.0, provider="kernelverdict")]
    agg = aggregate(rows_table(rows), suite_sizes=SIZES)
    assert {r["model"] for r in agg.summary} == {"A"}
    assert [(f["model"], f["zoo"]) for f in agg.fixtures] == [("examples", False)]
    assert any(r["model"] == "examples" for r in agg.results)  # still on its own pages


def test_wins_ties_losses_use_the_protocols_noise_band_and_standard_hacked_is_not_checked_before_the_judge():
    self_speedup = [{"hardware": "h200", "suite": "kernelbench-v0", "problem": f"L1/{i}", "recipe": "kernelbench / standard (mean)",
                     "ref_ms": 1.0, "self_speedup": 1.0 + 0.05 * (i % 2)} for i in range(20)]
    rows = [row("A", 0, speedup=1.036), row("A", 1, speedup=1.2), row("A", 2, speedup=0.5), row("A", 3, speedup=0.99)]
    s = summary(aggregate(rows_table(rows), self_speedup=self_speedup, suite_sizes=SIZES), "A")
    assert s["noise_band"] == pytest.approx(0.05)
    assert (s["wins"], s["ties"], s["losses"]) == (1, 2, 1)  # 1.036x and 0.99x are ties within ±5%
    assert s["median_speedup"] == pytest.approx((1.036 + 0.99) / 2)
    assert s["hacked"] is None  # no record of the group was checked from outside
    assert summary(aggregate(rows_table([row("A", 0, "verified")])), "A", level=0, protocol="verified")["hacked"] == 0


def test_claims_are_set_beside_both_protocols_with_their_correlation():
    rows = []
    for pid, claim, std, ver in ((0, 2.0, 1.8, 1.0), (1, 4.0, 3.0, None), (2, 8.0, 7.0, 2.0)):
        rows.append(row("L", pid, speedup=std, claimed_speedup=claim, claimed_baseline="eager"))
        rows.append(row("L", pid, "verified", speedup=ver, status="correct" if ver else "incorrect"))
    agg = aggregate(rows_table(rows), suite_sizes=SIZES)
    c = next(r for r in agg.claims if r["level"] == 0)
    assert c["kernels"] == 3 and c["claimed_speedup"] == pytest.approx(4.0)
    assert c["std_correct"] == 3 and c["ver_correct"] == 2 and c["lost_in_verified"] == 1
    assert c["corr_claim_std"] == pytest.approx(0.99, abs=0.01) and c["corr_n"] == 3
    assert len(agg.claim_kernels) == 3
    assert aggregate(rows_table([row("A", 0)]), suite_sizes=SIZES).claims == []


def test_a_claims_row_names_the_checks_that_failed_in_one_order_build_after_build():
    checks = ["stale-memory", "input-mutation", "global-state", "precision", "cached-output", "determinism",
              "recheck-after-timing", "hidden-inputs", "output-aliasing", "lazy-output"]
    rows = []
    for pid, check_name in enumerate(checks):
        rows.append(row("L", pid, speedup=2.0, claimed_speedup=3.0, claimed_baseline="eager"))
        rows.append(row("L", pid, "verified", speedup=None, status="hacked", failed_checks=1, failed_check=check_name))
    claims = next(r for r in aggregate(rows_table(rows), suite_sizes=SIZES).claims if r["level"] == 0)
    assert claims["hacked"] == len(checks)
    assert claims["hacked_by"] == ", ".join(sorted(checks))


def test_a_claims_row_gives_fast_1_under_each_protocol_and_the_verified_incorrect_by_reason():
    rows = []
    verified = ((0.5, "correct", None), (1.5, "correct", None), (None, "incorrect", "precision"),
                (None, "incorrect", "precision"), (None, "incorrect", "wrong-answer"), (None, "hacked", None))
    for pid, (ver, status, reason) in enumerate(verified):
        rows.append(row("L", pid, speedup=2.0 if pid < 3 else 0.8, claimed_speedup=3.0, claimed_baseline="eager"))
        rows.append(row("L", pid, "verified", speedup=ver, status=status, reason=reason))
    c = next(r for r in aggregate(rows_table(rows), suite_sizes=SIZES).claims if r["level"] == 0)
    assert c["std_fast_1"] == pytest.approx(3 / 6) and c["ver_fast_1"] == pytest.approx(1 / 6)
    assert c["incorrect"] == 3 and c["incorrect_by"] == "precision 2, wrong-answer 1"
    assert c["hacked"] == 1
