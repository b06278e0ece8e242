"""Generated pages rendered from hand-built rows: the leaderboard's opening selection, its empty-selection
message, the integrity table's folded evidence and record links, and charts without data."""

from __future__ import annotations

import dataclasses
import re

from generator import (
    COLUMNS,
    SiteData,
    aggregate,
    charts,
    claims,
    default_selection,
    headline,
    integrity,
    leaderboard,
    model_pages,
    rows_table,
)
from schemas import PublicDataset


def row(model: str, pid: int, protocol: str = "verified", **kw) -> dict:
    base = {k: None for k in COLUMNS}
    base.update(path=f"{model}/{protocol}/{pid}.json", page=f"records/{model}/{protocol}/{pid}.html", hardware="h200",
                model=model, sample=0, suite="kv", level=1, problem_id=pid, problem_name=f"p{pid}", protocol=protocol,
                status="correct", vs_eager=1.2, failed_checks=0, labels="")
    base.update(kw)
    return base


def html_of(rows: list[dict], page, manifest: list[dict] | None = None) -> str:
    data = SiteData(agg=aggregate(rows_table(rows), manifest=manifest))
    return data.slots.fill(page(data))


def checked_tab(html: str) -> str:
    """The label of the leaderboard tab whose radio input is checked."""
    tab_id = re.search(r'<input checked="checked" id="(__tabbed_1_\d)"', html).group(1)
    return re.search(rf'<label for="{tab_id}">([^<]+)</label>', html).group(1)


def no_rows_message(html: str, protocol: str) -> str:
    return re.search(rf'<p class="kv-empty kv-no-rows" data-protocol="{protocol}"[^>]*>', html).group(0)


def test_default_selection_opens_on_every_dataset_of_the_strictest_protocol_with_rows():
    rows = [row("A", 0, "standard", hardware="a100"), row("B", 0, "standard", hardware="a100"),
            row("A", 0, hardware="h200", suite="zz"), row("C", 0, hardware="a100", suite="kv")]
    sel = default_selection(aggregate(rows_table(rows)).summary)
    assert (sel.protocol, sel.hardware, sel.suite, sel.level) == ("verified", "", "", 0)


def test_default_selection_falls_back_to_standard_and_to_none():
    rows = [row("A", 0, "standard", hardware="a100"), row("A", 1, "standard", hardware="h200", suite="other")]
    sel = default_selection(aggregate(rows_table(rows)).summary)
    assert (sel.protocol, sel.hardware, sel.suite) == ("standard", "", "")
    assert default_selection([]) is None


def test_leaderboard_without_verified_records_opens_on_standard_and_says_verified_is_empty():
    html = html_of([row("A", 0, "standard"), row("B", 1, "standard", suite="other")], leaderboard)
    assert checked_tab(html) == "standard"
    assert " hidden" not in no_rows_message(html, "verified")  # visible even before the script runs
    assert " hidden" in no_rows_message(html, "standard")
    assert "No verified records for this selection" in html
    assert '<option value="" selected>all suites</option>' in html and '<option value="0" selected>' in html


def test_the_leaderboard_ranks_within_a_suite_by_fast_1_and_only_where_several_models_are():
    rows = [row("A", pid, vs_eager=1.5) for pid in range(2)] + [row("B", 0, vs_eager=3.0)]  # B: faster, fewer
    rows += [row("C", 0, suite="solo")]
    site = SiteData(agg=aggregate(rows_table(rows)))
    ranks = {(r["suite"], r["model"]): (r["rank"], r["models"]) for r in site.agg.ranking if r["level"] == 0}
    assert ranks == {("kv", "A"): (1, 2), ("kv", "B"): (2, 2), ("solo", "C"): (1, 1)}
    html = site.slots.fill(leaderboard(site))
    assert ">1 of 2</td>" in html and ">2 of 2</td>" in html and "1 of 1" not in html
    assert html.index(">A</a>") < html.index(">B</a>")  # in rank order within the suite


def test_suites_are_compared_on_the_problems_whose_source_hash_they_share():
    rows = [row("A", 0, suite="old", problem_sha256="s0"), row("A", 1, suite="old", problem_sha256="s1"),
            row("B", 0, suite="new", problem_sha256="s0", vs_eager=2.0),
            row("B", 1, suite="new", problem_sha256="t1")]  # same number, new source
    site = SiteData(agg=aggregate(rows_table(rows)))
    (pair,) = site.agg.suite_pairs
    assert (pair["suite_a"], pair["suite_b"], pair["same_source"], pair["same_number_other_source"]) == \
        ("new", "old", 1, 1)
    shared = {(r["model"], r["attempted"]): r["speedup_eager"] for r in site.agg.shared_speedups}
    assert shared == {("A", 1): 1.2, ("B", 1): 2.0}  # problem 0 only: problem 1 changed its source
    html = site.slots.fill(leaderboard(site))
    assert "<strong>1</strong> with the same source; 1 with the same level and number but a different source" in html


def test_leaderboard_with_both_protocols_opens_on_verified_with_rows():
    html = html_of([row("A", 0, "standard"), row("A", 0, "verified")], leaderboard)
    assert checked_tab(html) == "verified"
    assert " hidden" in no_rows_message(html, "verified") and " hidden" in no_rows_message(html, "standard")


def test_integrity_folds_long_evidence_escaped_and_links_both_records():
    evidence = "D4 x(-1) seed 1310205339: error budget 1e+03 used of 1 <b>bold</b> " + "x" * 200
    manifest = [{"file": "exploits/relu.py", "kind": "exploit", "problem": "relu.py", "hack": "identity ReLU",
                 "expected_check": "hidden-inputs"}]
    zoo = [row("exploit-zoo", 1, "standard", provider="kernelverdict", kernel_path="evaluations/zoo/exploits/relu.py", vs_eager=5.0),
           row("exploit-zoo", 1, "verified", provider="kernelverdict", kernel_path="evaluations/zoo/exploits/relu.py", status="hacked",
               failed_check="hidden-inputs", failed_evidence=evidence, failed_names=["hidden-inputs"],
               failed_evidences=[evidence])]
    html = html_of(zoo, integrity, manifest)
    cell = re.search(r'<td class="kv-evidence">(.*?)</td>', html, re.S).group(1)
    summary = re.search(r"<summary>(.*?)</summary>", cell).group(1)
    assert summary.startswith("D4 x(-1) seed") and summary.endswith("…") and len(summary) < 80
    assert "&lt;b&gt;bold&lt;/b&gt;" in cell and "<b>" not in cell  # the full text, escaped, inside <details>
    assert '<a href="../records/exploit-zoo/standard/1.html">standard</a>' in html
    assert '<a href="../records/exploit-zoo/verified/1.html">verified</a>' in html
    assert "<strong>1 of 1</strong> exploits run were flagged" in html
    assert "<strong>1</strong> of them by their expected check" in html


def test_a_chart_without_data_says_so_instead_of_drawing_empty_axes():
    html = html_of([row("A", 0, "standard"), row("B", 0, "standard")], charts)  # no peak memory measured
    assert "No correct standard result with both peak memories measured" in html
    assert 'data-chart="memory-' not in html and 'data-chart="fastp-1"' in html
    assert "This comparison needs records under both protocols" in html


def test_a_public_dataset_evaluated_in_part_says_how_far_on_every_table_and_a_complete_one_does_not():
    """A dataset whose records cover some of its kernels ranks on the kernels evaluated so far: its fast_p and
    means would read as the model's own without the count of what is still to come."""
    data = PublicDataset(name="set", file_name="set.jsonl", model="M", provider="p", url="https://example.org/set",
                         commit="c" * 40, kernel_path="k.json", problem_path="k.json", kernels=5)
    src = {"kernel_url": data.url, "kernel_commit": data.commit, "claimed_speedup": 2.0, "claimed_baseline": "eager"}
    rows = [row("M", pid, "standard", **src) for pid in range(3)] + [row("M", pid, **src) for pid in range(2)]
    rows += [row("M", 1, "standard", sample=1, **src)]  # a second sample of a problem is a kernel of its own
    rows += [row("N", pid, p, kernel_url="https://example.org/other", kernel_commit="d" * 40)
             for pid in range(2) for p in ("standard", "verified")]
    site = SiteData(agg=aggregate(rows_table(rows), datasets=(data,)))
    assert [(c["model"], c["protocol"], c["evaluated"], c["kernels"]) for c in site.agg.coverage] == [
        ("M", "standard", 4, 5), ("M", "verified", 2, 5)]
    home = site.slots.fill(headline(site))
    assert "(4 of the dataset's 5 kernels evaluated so far)" in home
    assert "(2 of the dataset's 5 kernels evaluated so far)" in home
    board = site.slots.fill(leaderboard(site))
    assert board.count("kernels evaluated so far: 4 of 5<") == 2 and board.count("kernels evaluated so far: 2 of 5<") == 2
    page = next(html for doc, html in model_pages(site).items() if "/m" in doc.lower())
    assert "Of the public dataset set, the records cover 4 of its 5 kernels under the standard protocol (h200), 2 of its " \
           "5 kernels under the verified protocol (h200)." in site.slots.fill(page)
    assert "of the dataset's 5 kernels, 4 under the standard protocol and 2 under the verified protocol" in \
           site.slots.fill(claims(site))
    whole = dataclasses.replace(data, kernels=4)
    done = SiteData(agg=aggregate(rows_table([r for r in rows if r["protocol"] == "standard"]), datasets=(whole,)))
    assert done.in_progress == {} and "evaluated so far" not in done.slots.fill(headline(done))
    assert not any("in part" in done.slots.fill(html) for html in [claims(done), *model_pages(done).values()])


def test_records_judged_under_a_replaced_protocol_version_say_so_wherever_their_verdicts_are_shown():
    """A verdict is the rules' of its version: where a newer version has replaced them, the home page, the leaderboard,
    the models index, the model page and the claims page say which records were judged under the old one, so a
    reader does not take their hacked counts for the newest rules'; records of the newest version carry no note."""
    from schemas import PROTOCOLS

    old, newest = PROTOCOLS["verified"]["versions"][-2:]
    src = {"kernel_url": "https://example.org/set", "kernel_commit": "c" * 40, "claimed_speedup": 2.0,
           "claimed_baseline": "eager"}
    rows = [row("M", pid, protocol_version=old, **src) for pid in range(2)]
    rows += [row("M", pid, "standard", protocol_version="1.0", **src) for pid in range(2)]
    rows += [row("N", pid, protocol_version=newest) for pid in range(2)]
    site = SiteData(agg=aggregate(rows_table(rows)))
    assert site.superseded == {("h200", "kv", "M", "verified"): {"old": old, "newest": newest, "all_old": True}}
    badge, short = f"verified {old}: superseded by {newest}</span>", 'kv-superseded" title='
    home = site.slots.fill(headline(site))
    note = re.search(r'<p class="kv-note kv-superseded-note">(.*?)</p>', home, re.S)
    assert note and f"the verified records of M on kv (h200), verified {old}" in note.group(1)
    assert " N " not in note.group(1) and home.count(short) == 1  # beside its version: "verified 1.2 [superseded by 1.3]"
    assert re.search(rf"verified {re.escape(old)} <span[^>]*>superseded by {re.escape(newest)}</span>", home)
    board = site.slots.fill(leaderboard(site))
    # its rows (one per level shown) in full, and its provenance line short
    assert board.count(badge) >= 1 and board.count(short) == board.count(badge) + 1
    assert f"N on kv (verified {newest}):" in board
    page = next(html for doc, html in model_pages(site).items() if doc.lower().endswith("m.md"))
    assert short in site.slots.fill(page)
    assert f"judged under verified {old}, whose rules verified {newest} has replaced" in site.slots.fill(claims(site))
    current = SiteData(agg=aggregate(rows_table([r for r in rows if r["model"] == "N"])))
    assert current.superseded == {}
    assert "superseded" not in current.slots.fill(headline(current)) + current.slots.fill(leaderboard(current))
