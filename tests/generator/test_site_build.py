"""`mkdocs build --strict` over fixture records: every page, download and escape a reader relies on."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _factory import XSS_MODEL, reader_fixture, site_fixture
from _sitebuild import mkdocs_build

from generator import Spec, write_specs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("fixture")
    records = reader_fixture(base / "records")
    out = base / "site"
    result = mkdocs_build(records, out, base / "manifest.json")
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_every_page_kind_is_built(site: Path):
    for page in ("index.html", "leaderboard/index.html", "charts/index.html", "integrity/index.html",
                 "methodology/index.html", "downloads/index.html", "models/alpha/index.html",
                 "problems/kernelverdict/level-1/0000-problem_1_0/index.html", "assets/plotly-scatter.min.js"):
        assert (site / page).is_file(), page
    records = list((site / "records").rglob("*.html"))
    assert len(records) == 59  # one page per record: 49 model records, 1 reproduction, 2 zoo, 2 gamma, 5 fixture records


def test_blocks_kept_out_of_markdown_are_filled_into_every_page(site: Path):
    for page in site.rglob("*.html"):
        assert "<!--kv-slot:" not in page.read_text(), page
    assert '<select class="kv-filter" data-key="level">' in (site / "leaderboard" / "index.html").read_text()
    model = (site / "models" / "alpha" / "index.html").read_text()
    assert "<h2>Summary</h2>" in model and "<h2>Standard → verified</h2>" in model
    search = json.loads((site / "search" / "search_index.json").read_text())
    assert any("alpha" in doc["text"] or "alpha" in doc["title"] for doc in search["docs"])  # names stay searchable


def test_leaderboard_shows_both_protocols_with_every_column(site: Path):
    html = (site / "leaderboard" / "index.html").read_text()
    assert 'data-protocol="verified"' in html and 'data-protocol="standard"' in html
    for column in ("fast<sub>0.8</sub>", "Speedup vs compile", "Mem Eff", "Median SOL score", "95% CI"):
        assert column in html
    assert "zero-output: output is zero for every input" in html  # the audit's exclusion, with its reason


def test_record_strings_are_escaped_everywhere(site: Path):
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "<script>window.__kv_pwned" not in text, page
        assert 'onerror="window.__kv_pwned' not in text, page
    assert "&lt;script&gt;window.__kv_pwned = 1&lt;/script&gt;" in (site / "leaderboard" / "index.html").read_text()
    charts = (site / "charts" / "index.html").read_text()
    assert "&amp;lt;script&amp;gt;window.__kv_pwned" in charts  # escaped for Plotly, then for the data-fig attribute


def test_record_page_shows_checks_evidence_timings_and_badge(site: Path):
    hacked = next((site / "records" / "h200" / "alpha" / "verified").rglob("0001-problem_1_1__s0.html")).read_text()
    assert "status-hacked" in hacked and "D4 x(-1): error budget 4.2e3 used of 1.0" in hacked
    assert "95% CI of median" in hacked and "baseline eager_tf32" in hacked
    assert "calls per timer pair" in hacked and "SM clock" in hacked
    original = next((site / "records" / "h200" / "alpha" / "verified").rglob("0000-problem_1_0__s0.html")).read_text()
    assert "reproduced" in original


def test_problem_page_lists_audit_findings_and_every_model(site: Path):
    page = (site / "problems" / "kernelverdict" / "level-2" / "0003-problem_2_3" / "index.html").read_text()
    assert "zero-output" in page and "excluded from aggregates" in page
    assert "alpha" in page and "beta" in page and "&lt;script&gt;" in page


def test_integrity_page_joins_manifest_and_zoo_records(site: Path):
    page = (site / "integrity" / "index.html").read_text()
    assert "output aliases input" in page and "output-aliasing" in page
    assert "output storage overlaps input 0" in page and "40×" in page


def test_downloads_hold_every_record_and_the_aggregates(site: Path):
    table = pq.read_table(site / "downloads" / "records.parquet")
    assert table.num_rows == 59
    csv = (site / "downloads" / "records.csv").read_text()
    assert csv.count("\n") == 60  # a header line and one line per record
    assert "failed_names" in csv.splitlines()[0] and "output-aliasing" in csv  # list columns as text
    assert any(v for v in table.column("failed_names").to_pylist())
    agg = json.loads((site / "downloads" / "aggregates.json").read_text())
    assert {"summary", "fast_p_curve", "speedup_ci", "drop", "reproductions", "zoo"} <= set(agg)
    assert any(r["model"] == XSS_MODEL for r in agg["summary"])


def test_zero_records_build_strictly(tmp_path: Path):
    (tmp_path / "records").mkdir()
    result = mkdocs_build(tmp_path / "records", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "No records yet" in (tmp_path / "site" / "leaderboard" / "index.html").read_text()


def test_a_model_measured_under_one_protocol_only_builds(tmp_path: Path):
    write_specs(tmp_path / "records", [Spec(model="solo", problem_id=0, protocol="standard", speedup=1.3)])
    result = mkdocs_build(tmp_path / "records", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text()
    assert "solo" in home and "1.3×" in home
    board = (tmp_path / "site" / "leaderboard" / "index.html").read_text()
    checked = board.index('checked="checked" id="__tabbed_1_')
    assert board[checked:].startswith('checked="checked" id="__tabbed_1_2"')  # tab 2 = standard, the one with rows
    assert '<label for="__tabbed_1_2">standard</label>' in board
    assert '<p class="kv-empty kv-no-rows" data-protocol="verified">No verified records for this selection' in board


def test_an_invalid_record_fails_the_build_naming_file_and_field(tmp_path: Path):
    records = site_fixture(tmp_path / "records")
    bad = next(records.rglob("0000-problem_1_0__s0.json"))
    data = json.loads(bad.read_text())
    data["timing"]["median_ms"] = -1.0
    bad.write_text(json.dumps(data))
    result = mkdocs_build(records, tmp_path / "site")
    assert result.returncode != 0
    assert bad.name in result.stderr and "timing" in result.stderr and "median_ms" in result.stderr


def test_a_timing_row_shows_calls_per_pair_and_the_sm_clock_when_measured():
    from generator import timing_row
    from schemas import TimingStats

    base = {"calls": 100, "mean_ms": 0.01, "median_ms": 0.01, "min_ms": 0.009, "max_ms": 0.012, "std_ms": 0.001}
    with_clock = TimingStats(method="cuda_events", calls_per_sample=8, sm_clock_mhz=1980.4, **base)
    row = timing_row("candidate", with_clock, None)
    assert "<td>8</td>" in row and "1980 MHz" in row
    assert "MHz" not in timing_row("candidate", TimingStats(method="host_clock", **base), None)


def test_a_host_bound_timing_is_marked_and_an_eager_one_warned_about():
    from generator import render_record_page, timing_row
    from schemas import Record, TimingStats

    base = {"calls": 100, "mean_ms": 12.0, "median_ms": 12.0, "min_ms": 11.0, "max_ms": 20.0, "std_ms": 1.0}
    assert "cuda_graph, host-bound" in timing_row("candidate", TimingStats(method="cuda_graph", host_bound=True, **base), None)
    assert "host-bound" not in timing_row("candidate", TimingStats(method="cuda_events", **base), None)
    path = next(p for p in sorted((REPO / "records" / "h200").rglob("*.json")) if "_baselines" not in p.parts)
    record = Record.model_validate_json(path.read_text(encoding="utf-8"))
    row = {"timestamp": "2026-11-29T12:00:00Z", "path": path.relative_to(REPO / "records").as_posix(),
           "page": "records/h200/x/index.html"}

    def page(timing: TimingStats) -> str:
        plain = record.model_copy(update={"baselines": [b.model_copy(update={"timing": timing.model_copy(
            update={"host_bound": False})}) for b in record.baselines]})
        return render_record_page(plain.model_copy(update={"timing": timing}), row, REPO)
    assert "Host-bound eager timing" not in page(TimingStats(method="cuda_events", **base))
    assert "Host-bound eager timing: the host, not the GPU, set this time" in page(
        TimingStats(method="cuda_events", host_bound=True, **base))
    assert "Host-bound eager timing" not in page(TimingStats(method="cuda_graph", host_bound=True, **base))
    assert "per-round ratios" not in page(TimingStats(method="cuda_events", **base))
    in_turns = record.model_copy(update={
        "timing": TimingStats(method="cuda_events", round_medians_ms=[12.0, 12.5, 13.0], **base),
        "baselines": [b.model_copy(update={"timing": b.timing.model_copy(update={"round_medians_ms": [14.0, 15.0]})})
                      for b in record.baselines]})
    kinds = ", ".join(b.kind for b in record.baselines)
    assert f"Timed in turns with {kinds} (2 rounds): the speedups against" in render_record_page(in_turns, row, REPO)


def test_methodology_page_shows_the_committed_self_speedup_figures(site: Path):
    html = (site / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "<!-- kverdict:faithfulness -->" not in html and html.count('class="kv-table kv-sortable kv-faithfulness"') >= 1
    assert "kernelbench / standard (3 warm-ups, 100 calls, mean)" in html  # a recipe of the repository's rows


def test_record_pages_carry_their_json_the_physical_floor_and_the_other_protocol(site: Path):
    base = site / "records" / "h200"
    flagged = (base / "gamma" / "standard" / "kernelverdict" / "level-1" / "0001-problem_1_1__s0.html").read_text()
    assert "Physically impossible:" in flagged and "records/_audits/h200/kernelverdict.json" in flagged
    assert "No verified-protocol record of this kernel yet — standard protocol only, unverified." in flagged
    copied = base / "gamma" / "standard" / "kernelverdict" / "level-1" / "0001-problem_1_1__s0.json"
    assert json.loads(copied.read_text())["model"]["name"] == "gamma"
    assert 'href="0001-problem_1_1__s0.json" download' in flagged
    unchecked = (base / "alpha" / "standard" / "kernelverdict" / "level-1" / "0002-problem_1_2__s0.html").read_text()
    assert "Physical floor (not checked):" in unchecked and "no output bytes" in unchecked
    assert '0002-problem_1_2__s0.html"><span class="status status-correct">correct</span> (verified record)' in unchecked
    assert "Not checked: this protocol runs no integrity checks." in unchecked


def test_plotly_is_a_script_of_no_page_and_claims_say_none_yet(site: Path):
    for page in site.rglob("*.html"):
        assert "plotly-scatter.min.js" not in page.read_text(), page  # kverdict.js loads it where a chart is
    assert "No record carries a claimed speedup yet" in (site / "claims" / "index.html").read_text()
    board = (site / "leaderboard" / "index.html").read_text()
    assert "not checked" in board and "physically-impossible" in board


def test_record_and_problem_pages_are_in_the_search_index(site: Path):
    docs = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    locations = {d["location"] for d in docs}
    assert any(loc.startswith("records/h200/alpha/verified/") and loc.endswith(".html") for loc in locations)
    assert any(loc.startswith("problems/kernelverdict/level-1/") for loc in locations)


def test_the_repository_address_comes_from_one_setting_and_gives_links_a_sitemap_and_no_placeholder(tmp_path: Path,
                                                                                                     monkeypatch):
    from generator._hook import pages_url, repository_html

    assert "&lt;address&gt;" not in repository_html(None) and "KVERDICT_REPO_URL" in repository_html(None)
    text = repository_html("https://github.com/example/kv")
    assert 'href="https://github.com/example/kv/compare"' in text and "git clone https://github.com/example/kv.git" in text
    assert pages_url("https://github.com/Example/kv") == "https://example.github.io/kv/"
    assert pages_url("https://gitlab.example.org/a/b/c") is None
    monkeypatch.setenv("KVERDICT_REPO_URL", "https://github.com/example/kv")
    site = tmp_path / "site"
    assert mkdocs_build(tmp_path / "records", site).returncode == 0
    assert "<loc>https://example.github.io/kv/</loc>" in (site / "sitemap.xml").read_text()
    contributing = (site / "contributing" / "index.html").read_text()
    assert 'href="https://github.com/example/kv/edit/main/site_src/contributing.md"' in contributing
    assert "/edit/main/site_src/leaderboard.md" not in (site / "leaderboard" / "index.html").read_text()


LONGEST_PASSAGE_WORDS = 200
"""Words a paragraph, list item or definition may hold on its own before a reader loses the thread."""
PASSAGE_TAGS = ("p", "li", "dd")


class _Passages(HTMLParser):
    """The words of each paragraph, list item and definition of a page's article, a nested block's words counted
    in that block only."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[list[str]] = []
        self.done: list[str] = []
        self.in_article = False

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.in_article = True
        elif self.in_article and tag in PASSAGE_TAGS:
            self.open.append([])

    def handle_endtag(self, tag):
        if tag == "article":
            self.in_article = False
        elif self.in_article and tag in PASSAGE_TAGS and self.open:
            self.done.append(" ".join(self.open.pop()))

    def handle_data(self, data):
        if self.open:
            self.open[-1].append(data)


@pytest.mark.parametrize("page", ["methodology", "contributing", "threat-model", "leaderboard", "cluster", ""])
def test_no_passage_is_a_wall_of_text(site: Path, page: str):
    parser = _Passages()
    parser.feed((site / page / "index.html").read_text(encoding="utf-8"))
    assert parser.done, page
    longest = max(parser.done, key=lambda t: len(t.split()))
    assert len(longest.split()) <= LONGEST_PASSAGE_WORDS, f"{page}: {len(longest.split())} words: {longest[:200]}"


def test_every_chart_draws_only_what_the_partial_plotly_bundle_holds(site: Path):
    """The committed bundle is plotly.js's core, whose one trace type is scatter: a chart of another type would not
    draw. Its first line names the plotly.js version its build recipe pins."""
    types = set()
    for page in site.rglob("*.html"):
        for fig in re.findall(r'data-fig="([^"]*)"', page.read_text(encoding="utf-8")):
            types |= {trace.get("type", "scatter") for trace in json.loads(html.unescape(fig))["data"]}
    assert types == {"scatter"}
    pinned = json.loads((REPO / "generator" / "plotly" / "package.json").read_text())["dependencies"]["plotly.js"]
    first = (site / "assets" / "plotly-scatter.min.js").read_text(encoding="utf-8").splitlines()[0]
    assert f"plotly.js v{pinned}, scatter only" in first
