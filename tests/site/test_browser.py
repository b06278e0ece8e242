"""The site in Debian's chromium, offline, reached as a reader reaches it: from the home page through the
site's own links (instant navigation), back and forward, with the palette toggled on the way, on the built
site and under ``mkdocs serve``. Any console error fails a test."""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))
from _factory import FIXTURE_MODEL, IMPOSSIBLE_MODEL, SEARCHED_PROBLEM, XSS_MODEL, reader_fixture  # noqa: E402
from _sitebuild import ROOT, mkdocs_build  # noqa: E402

from generator import Spec, write_specs  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVE_START_S = 180
"""Longest wait for ``mkdocs serve`` to answer (its first build included)."""
NARROW = {"width": 390, "height": 844}
AXE = Path(__file__).with_name("axe.min.js")
"""axe-core 4.14.1, minified (its licence: axe.LICENSE), injected into the pages it checks."""
AXE_PAGES = ["", "leaderboard/", "charts/", "models/", "models/alpha/", "claims/", "integrity/", "methodology/",
             "threat-model/", "contributing/", "downloads/",
             "problems/kernelverdict/level-1/0001-problem_1_1/"]


def _is_contrast_or_name(rule: str) -> bool:
    return rule in ("color-contrast", "link-in-text-block", "label", "document-title") or rule.endswith("-name")

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


def _serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def fixture_records(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    reader_fixture(base / "records")
    return base


@pytest.fixture(scope="module")
def built_url(fixture_records):
    site = fixture_records / "site"
    result = mkdocs_build(fixture_records / "records", site, fixture_records / "manifest.json")
    assert result.returncode == 0, result.stderr[-3000:]
    server = _serve(site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def serve_url(fixture_records):
    """``mkdocs serve`` of the same records on a free loopback port, stopped after the module's tests."""
    port = _free_port()
    env = {**os.environ, "KVERDICT_RECORDS": str(fixture_records / "records"), "NO_MKDOCS_2_WARNING": "1",
           "KVERDICT_ZOO_MANIFEST": str(fixture_records / "manifest.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = open(fixture_records / "serve.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-f", str(ROOT / "mkdocs.yml"),
                             "-a", f"127.0.0.1:{port}"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + SERVE_START_S
    try:
        while True:
            try:
                with urllib.request.urlopen(url + "charts/", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("mkdocs serve did not start: " + (fixture_records / "serve.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module", params=["built", "serve"])
def site_url(request):
    """The fixture site, once as built files and once as ``mkdocs serve`` previews it."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="module")
def standard_only_url(tmp_path_factory):
    """A site whose records were all measured under the standard protocol, on two hardware kinds."""
    base = tmp_path_factory.mktemp("standard_only")
    write_specs(base / "records", [Spec(model=m, problem_id=0, protocol="standard", speedup=s, hardware=hw, suite=suite)
                                   for m, s, hw, suite in (("solo", 1.3, "h200", "kv"), ("duo", 0.8, "h200", "kv"),
                                                           ("solo", 1.1, "a100", "kv"), ("trio", 1.0, "a100", "other"))])
    result = mkdocs_build(base / "records", base / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    server = _serve(base / "site")
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _context(browser, **kw):
    context = browser.new_context(**kw)

    def only_local(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only_local)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    return context, pg, errors


@pytest.fixture
def page(browser):
    context, pg, errors = _context(browser)
    yield pg
    assert errors == [], errors
    context.close()


@pytest.fixture
def narrow_page(browser):
    context, pg, errors = _context(browser, viewport=NARROW)
    yield pg
    assert errors == [], errors
    context.close()


def _set_scheme(page, scheme: str) -> None:
    if page.evaluate("document.body.getAttribute('data-md-color-scheme')") != scheme:
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'")


def _tab(page, name: str) -> None:
    """Follow one of the site's top tabs, as a reader clicks it (instant navigation, not a page load)."""
    page.locator("a.md-tabs__link", has_text=name).first.click()
    page.wait_for_function(f"document.querySelector('h1') && document.querySelector('h1').textContent.includes({name!r})")


def _charts_drawn(page) -> None:
    """Every chart element of the page has a drawn Plotly figure (an SVG with its plot area)."""
    page.wait_for_function("document.querySelectorAll('.kv-chart').length > 0 && "
                           "[...document.querySelectorAll('.kv-chart')].every(c => c.querySelector('.main-svg'))",
                           timeout=15000)


def _numbers(page, table, column: int) -> list[float]:
    cells = table.locator(f"tbody tr:visible td:nth-child({column})")
    return [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.getAttribute('data-v'))") if v]


def _column(table, name: str) -> int:
    """1-based position of the column whose header reads ``name``."""
    return table.locator("thead th").all_inner_texts().index(name) + 1


def _search(page, query: str) -> None:
    """Type a query into the site search as a reader does: the theme reads the box on key-up (a filled-in value
    without key events may be read before it is there)."""
    page.locator("input.md-search__input").click()
    page.keyboard.type(query)


def _font(page) -> str:
    return page.evaluate("document.querySelector('.kv-chart').layout.font.color")


def test_charts_are_drawn_after_instant_navigation_back_forward_and_a_palette_toggle(page, site_url):
    page.goto(site_url)
    _tab(page, "Charts")
    _charts_drawn(page)
    assert page.locator(".kv-chart").count() >= 4  # fast_p (both protocols on one), dumbbell, memory per protocol
    _set_scheme(page, "slate")
    page.wait_for_function("document.querySelector('.kv-chart').layout.font.color === '#e2e4e9'")
    _tab(page, "Leaderboard")
    page.go_back()
    page.wait_for_function("location.pathname.endsWith('/charts/')")
    _charts_drawn(page)
    assert _font(page) == "#e2e4e9"  # drawn in the palette chosen before leaving
    page.go_forward()
    page.wait_for_function("location.pathname.endsWith('/leaderboard/')")
    page.go_back()
    _charts_drawn(page)
    _set_scheme(page, "default")
    page.wait_for_function("document.querySelector('.kv-chart').layout.font.color === '#1f2328'")
    _tab(page, "Claims")  # a page with no claims says so instead of drawing empty axes
    assert page.locator(".kv-empty", has_text="No record carries a claimed speedup").is_visible()


def test_a_chart_of_one_model_names_it_in_its_legend(page, site_url):
    page.goto(site_url)
    _tab(page, "Charts")
    _charts_drawn(page)
    memory = page.locator('.kv-chart[data-chart^="memory-"]').first
    assert memory.locator(".legend").count() == 1
    assert "alpha" in memory.locator(".legend").text_content()


def test_plotly_loads_only_on_pages_with_a_chart(page, site_url):
    for path in ("", "leaderboard/", "models/", "integrity/"):
        page.goto(site_url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.Plotly") == "undefined", path
        assert page.locator("script[src*=plotly]").count() == 0, path
    page.goto(site_url + "charts/")
    _charts_drawn(page)
    assert page.evaluate("typeof window.Plotly") == "object"


def test_the_physically_impossible_record_is_flagged_on_leaderboard_model_and_record_pages(page, built_url):
    page.goto(built_url)
    _tab(page, "Leaderboard")
    page.locator(".tabbed-labels label", has_text="standard").click()
    table = page.locator("table.kv-leaderboard[data-protocol=standard]")
    page.locator("input.kv-more-toggle").check()  # the column is folded away by default
    gamma = table.locator("tbody tr:visible", has=page.locator(f"a:text-is('{IMPOSSIBLE_MODEL}')"))
    cells = gamma.locator("td")
    headers = table.locator("thead th").all_inner_texts()
    assert cells.nth(headers.index("Physically impossible")).inner_text() == "1"
    assert cells.nth(headers.index("Correct")).inner_text() == "50.0%"  # the impossible record is not correct
    assert page.locator("#physically-impossible").is_visible()
    gamma.locator(f"a:text-is('{IMPOSSIBLE_MODEL}')").click()
    note = page.locator(".kv-impossible-note")
    note.wait_for()
    assert "1 physically impossible result" in note.inner_text()
    note.locator("a").first.click()
    page.wait_for_load_state("load")
    flag = page.locator("#physics")
    assert flag.inner_text().startswith("Physically impossible:")
    assert "measured copy bandwidth" in flag.inner_text()


def test_fixtures_are_not_ranked_on_the_home_page_or_the_leaderboard(page, site_url):
    page.goto(site_url)
    assert FIXTURE_MODEL not in page.locator("article").inner_text()
    assert "exploit-zoo" not in page.locator("table").first.inner_text()
    _tab(page, "Leaderboard")
    for proto in ("verified", "standard"):
        names = page.locator(f"table.kv-leaderboard[data-protocol={proto}] td.kv-name").all_inner_texts()
        assert names and not any(FIXTURE_MODEL in n or "exploit-zoo" in n for n in names), names
    _tab(page, "Models")
    assert FIXTURE_MODEL in page.locator("#not-ranked + ul").inner_text()


def test_the_home_page_states_the_drop_and_each_dataset(page, built_url):
    page.goto(built_url)
    headline = page.locator(".kv-headlines li", has_text="alpha").first.inner_text()
    assert headline.index("standard") < headline.index("verified") and headline.count("95% CI") >= 3, headline
    assert page.locator("#drop ~ div table td.kv-name", has_text="alpha").count() == 1
    gamma = page.locator(".kv-headlines li", has_text=IMPOSSIBLE_MODEL)
    assert "standard protocol only, unverified" in gamma.inner_text()
    assert "1 flagged physically impossible" in gamma.inner_text()


def test_standard_results_say_what_was_not_checked_and_link_the_verified_verdict(page, built_url):
    page.goto(built_url)
    _tab(page, "Leaderboard")
    page.locator(".tabbed-labels label", has_text="standard").click()
    table = page.locator("table.kv-leaderboard[data-protocol=standard]")
    headers = table.locator("thead th").all_inner_texts()
    hacked = table.locator("tbody tr:visible").first.locator("td").nth(headers.index("Hacked"))
    assert hacked.inner_text() == "not checked"
    assert table.locator("tbody tr:visible", has_text=IMPOSSIBLE_MODEL).locator(".kv-unverified").is_visible()
    _tab(page, "Integrity")
    page.locator("table.kv-zoo a", has_text="standard").first.click()
    page.wait_for_load_state("load")
    other = page.locator("#other-protocol")
    assert "hacked" in other.inner_text()
    other.locator("a").click()
    page.wait_for_load_state("load")
    assert page.locator("p.status").inner_text().startswith("hacked")


def test_record_pages_follow_the_palette_and_offer_their_json(page, built_url):
    page.goto(built_url)
    _set_scheme(page, "slate")
    _tab(page, "Models")
    page.locator("article a", has_text="alpha").first.click()
    page.locator("table.kv-pairs td:nth-child(3) a").first.click()
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.getAttribute('data-md-color-scheme')") == "slate"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(30, 33, 41)"
    page.locator("#palette").click()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    href = page.locator("a", has_text="download JSON").get_attribute("href")
    data = json.loads(urllib.request.urlopen(urllib.parse.urljoin(page.url, href)).read())
    assert data["model"]["name"] == "alpha"
    page.go_back()
    page.wait_for_load_state("load")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "default"  # the record page's choice


@pytest.mark.parametrize("path", ["", "leaderboard/", "charts/", "integrity/", "models/alpha/", "models/", "claims/",
                                  "problems/kernelverdict/level-1/0001-problem_1_1/", "methodology/",
                                  "records/h200/alpha/verified/kernelverdict/level-1/0001-problem_1_1__s0.html"])
def test_pages_fit_a_390_px_screen(narrow_page, built_url, path):
    narrow_page.goto(built_url + path)
    narrow_page.wait_for_load_state("load")
    width = narrow_page.evaluate("document.documentElement.scrollWidth")
    assert width <= NARROW["width"], f"{path or '/'} is {width} px wide"


def test_leaderboard_selection_tab_and_sort_live_in_the_address(page, built_url):
    page.goto(built_url)
    _tab(page, "Leaderboard")
    page.select_option("select.kv-filter[data-key=level]", "1")
    page.locator(".tabbed-labels label", has_text="standard").click()
    page.locator("table.kv-leaderboard[data-protocol=standard] th", has_text="Speedup vs eager").click()
    query = parse_qs(urlparse(page.url).query)
    assert query["level"] == ["1"] and query["tab"] == ["standard"] and "sort" in query
    page.goto(page.url)  # a shared link opens on the same view
    table = page.locator("table.kv-leaderboard[data-protocol=standard]")
    assert table.is_visible()
    assert page.locator("select.kv-filter[data-key=level]").input_value() == "1"
    ascending = _numbers(page, table, _column(table, "Speedup vs eager"))
    assert len(ascending) >= 2 and ascending == sorted(ascending)


def test_float32_like_only_changes_the_shown_figures_and_lives_in_the_address(page, built_url):
    page.goto(built_url + "leaderboard/")
    row = page.locator("table.kv-leaderboard[data-protocol=verified] tbody tr:visible", has_text="alpha")
    correct = row.locator(f"td:nth-child({_column(page.locator('table.kv-leaderboard[data-protocol=verified]'), 'Correct')})")
    assert correct.inner_text() == "66.7%"  # problems 0 and 2 correct, 1 hacked (3 is excluded); 2 is TF32-like
    page.locator("input.kv-precision-only").check()
    assert correct.inner_text() == "33.3%"
    assert parse_qs(urlparse(page.url).query)["precision"] == ["float32-like"]
    page.goto(page.url)  # a shared link opens with the filter on
    assert page.locator("input.kv-precision-only").is_checked() and correct.inner_text() == "33.3%"
    page.locator("input.kv-precision-only").uncheck()
    assert correct.inner_text() == "66.7%" and "precision" not in parse_qs(urlparse(page.url).query)


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_leaderboard_renders_and_sorts(page, built_url, scheme):
    page.goto(built_url + "leaderboard/")
    _set_scheme(page, scheme)
    table = page.locator("table.kv-leaderboard[data-protocol=verified]")
    assert table.locator("tbody tr:visible").count() == 3  # three models at level "all"
    header = table.locator("th", has_text="Speedup vs eager")
    column = _column(table, "Speedup vs eager")
    header.click()
    ascending = _numbers(page, table, column)
    assert len(ascending) == 3 and ascending == sorted(ascending)
    header.click()
    assert _numbers(page, table, column) == sorted(ascending, reverse=True)
    page.select_option("select.kv-filter[data-key=level]", "1")
    assert table.locator("tbody tr:visible").count() == 3
    assert all(v == "1" for v in table.locator("tbody tr:visible").evaluate_all("rs => rs.map(r => r.dataset.level)"))


def test_charts_fill_their_width_and_carry_their_data_as_a_table(page, built_url):
    page.goto(built_url + "charts/")
    _charts_drawn(page)
    widths = page.locator(".kv-chart .main-svg:first-child").evaluate_all("ss => ss.map(s => s.getBoundingClientRect().width)")
    assert widths and min(widths) > 300, widths
    assert page.locator(".kv-chart").count() == page.locator("details.kv-chart-data").count()
    fast_p = page.locator('.kv-chart[data-chart^="fastp-"]').first
    assert {"alpha · standard", "alpha · verified"} <= set(fast_p.locator(".legend text.legendtext").evaluate_all("ts => ts.map(t => t.textContent)"))
    table = page.locator("details.kv-chart-data").first
    table.locator("summary").click()
    assert table.locator("tbody tr").count() > 0 and "alpha · verified" in table.inner_text()


CHARTS_PAGE_BYTES = 1_500_000
"""The most the charts page may fetch, uncompressed: HTML, styles, scripts and whatever else it loads."""


def test_the_charts_page_loads_under_1_5_mb_uncompressed(page, built_url):
    """Every byte the charts page fetches until the network is idle, as sent (the test server does not compress):
    Plotly's scatter-only bundle (1.0 MB; the basic one was 1.2 MB, the full one 4.8 MB), the theme's scripts and
    styles, and not the search index, which waits for the first use of search."""
    bodies: list[tuple[str, bytes]] = []
    page.on("response", lambda r: bodies.append((r.url, r.body())) if r.ok else None)
    page.goto(built_url + "charts/")
    _charts_drawn(page)
    page.wait_for_load_state("networkidle")
    plotly = [b for url, b in bodies if "plotly" in url]
    assert len(plotly) == 1 and len(plotly[0]) < 1_100_000  # the scatter-only bundle
    assert not [url for url, _ in bodies if "search_index" in url]
    total = sum(len(b) for _, b in bodies)
    assert total < CHARTS_PAGE_BYTES, sorted(((len(b), url) for url, b in bodies), reverse=True)


def test_the_search_index_loads_on_first_use_of_search(page, built_url):
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "search_index" in r.url else None)
    page.goto(built_url)
    page.wait_for_load_state("networkidle")
    _tab(page, "Leaderboard")  # instant navigation: still not asked for
    page.wait_for_load_state("networkidle")
    assert asked == []
    page.keyboard.press("/")  # the theme's shortcut to the search box
    page.keyboard.type("layernorm")
    page.locator(".md-search-result__item a", has_text=SEARCHED_PROBLEM).first.wait_for(timeout=15000)
    assert len(asked) == 1


@pytest.mark.parametrize("path", ["", "leaderboard/", "charts/", "models/", "problems/kernelverdict/level-1/0000-problem_1_0/"])
def test_injected_script_in_a_model_name_stays_text(page, built_url, path):
    page.goto(built_url + path)
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__kv_pwned") == "undefined"
    if path != "charts/":
        assert page.get_by_text("<script>window.__kv_pwned = 1</script>", exact=False).first.is_visible()
    else:
        _charts_drawn(page)
        assert "<script>window.__kv_pwned = 1</script>" in page.locator(".kv-chart").first.inner_text()


def test_record_page_of_the_hostile_model_stays_text(page, built_url):
    page.goto(built_url + "leaderboard/")
    page.locator("a", has_text=XSS_MODEL[:20]).first.click()
    page.locator("table.kv-pairs td:nth-child(3) a").first.click()
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__kv_pwned") == "undefined"
    assert page.locator("h1").inner_text().startswith("<script>window.__kv_pwned = 1</script>")


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_leaderboard_opens_on_every_dataset_and_says_when_a_selection_is_empty(page, standard_only_url, scheme):
    page.goto(standard_only_url + "leaderboard/")
    _set_scheme(page, scheme)
    standard = page.locator("table.kv-leaderboard[data-protocol=standard]")
    assert standard.is_visible()  # no verified records: the standard tab is the one open
    shown = standard.locator("tbody tr:visible").evaluate_all(
        "rs => rs.map(r => [r.dataset.hardware, r.dataset.suite, r.querySelector('td a').innerText])")
    assert sorted(map(tuple, shown)) == [("a100", "kv", "solo"), ("a100", "other", "trio"), ("h200", "kv", "duo"),
                                         ("h200", "kv", "solo")]  # every dataset, both suites, both hardware kinds
    assert page.locator("select.kv-filter[data-key=hardware]").input_value() == ""
    assert not page.locator(".kv-no-rows[data-protocol=standard]").is_visible()
    page.locator(".tabbed-labels label", has_text="verified").click()
    message = page.locator(".kv-no-rows[data-protocol=verified]")
    assert message.is_visible() and "No verified records for this selection" in message.inner_text()
    page.locator(".tabbed-labels label", has_text="standard").click()
    page.select_option("select.kv-filter[data-key=hardware]", "a100")
    assert standard.locator("tbody tr:visible").count() == 2
    page.select_option("select.kv-filter[data-key=hardware]", "h200")
    page.select_option("select.kv-filter[data-key=suite]", "other")  # "other" was only run on a100
    assert standard.locator("tbody tr:visible").count() == 0
    assert page.locator(".kv-no-rows[data-protocol=standard]").is_visible()


@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, NARROW], ids=["1440x900", "390x844"])
def test_the_headline_line_with_its_ci_is_on_the_first_screen(browser, built_url, viewport):
    context, pg, errors = _context(browser, viewport=viewport)
    pg.goto(built_url)
    line = pg.locator(".kv-headline").first
    text = line.inner_text()
    assert "claimed" in text or "standard" in text
    assert "95% CI" in text and "n = " in text and "vs torch.compile" in text, text
    box = line.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
    assert errors == [], errors
    context.close()


def test_sortable_headers_are_reached_and_operated_by_keyboard(page, built_url):
    page.goto(built_url + "leaderboard/")
    table = page.locator("table.kv-leaderboard[data-protocol=verified]")
    column = _column(table, "Speedup vs eager")
    button = table.locator("th button.kv-sort-button", has_text="Speedup vs eager")
    shown = table.locator("th button.kv-sort-button:visible")
    at = shown.evaluate_all("bs => bs.findIndex(b => b.textContent.trim() === 'Speedup vs eager')")
    shown.nth(at - 1).focus()
    page.keyboard.press("Tab")  # the next header's button is the next stop of the tab order
    assert button.evaluate("b => b === document.activeElement")
    page.keyboard.press("Enter")
    ascending = _numbers(page, table, column)
    assert len(ascending) == 3 and ascending == sorted(ascending)
    assert table.locator("th").nth(column - 1).get_attribute("aria-sort") == "ascending"
    page.keyboard.press("Space")
    assert _numbers(page, table, column) == sorted(ascending, reverse=True)


def test_a_model_page_has_one_row_per_problem_sorted_by_the_loss_and_a_text_filter(page, built_url):
    page.goto(built_url + "models/alpha/")
    table = page.locator("table.kv-pairs")
    rows = table.locator("tbody tr")
    assert rows.count() == 4  # problems 0 to 3 of alpha, one row each (3 is excluded by the audit, and shown)
    first = rows.first.inner_text()
    assert "hacked" in first and "lost" in first  # the verified verdict that took a correct kernel away sorts first
    box = page.locator("input.kv-text-filter")
    box.fill("problem_1_2")
    assert table.locator("tbody tr:visible").count() == 1
    box.fill("")
    assert table.locator("tbody tr:visible").count() == 4


def test_the_site_search_splits_kernelbench_names_on_underscores(page, built_url):
    page.goto(built_url)
    _search(page, "layernorm")
    hit = page.locator(".md-search-result__item a", has_text=SEARCHED_PROBLEM).first
    hit.wait_for(timeout=15000)
    assert "/level-1/0040-" in hit.get_attribute("href")
    assert page.locator(".md-search[role=dialog]").get_attribute("aria-label") == "Search the site"


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_axe_finds_no_contrast_or_name_violation_on_the_main_pages(page, built_url, scheme):
    """Contrast is measured on the settled palette: transitions are switched off, so no colour is caught halfway."""
    script = AXE.read_text(encoding="utf-8")
    found = {}
    for path in AXE_PAGES:
        page.goto(built_url + path)
        _set_scheme(page, scheme)
        if path == "charts/":
            _charts_drawn(page)
        page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
        page.add_script_tag(content=script)
        violations = page.evaluate("axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map("
                                   "v => [v.id, v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary)]))")
        bad = [v for v in violations if _is_contrast_or_name(v[0])]
        if bad:
            found[path or "/"] = bad
    assert found == {}, found


FOLDED = ["fast0", "fast0.5", "fast0.8", "fast1.5", "fast2", "Median", "Mem regressions", "Mem Eff", "Median SOL score",
          "Physically impossible", "k", "Precision", "Shape-general"]
"""The verified tab's rarely used columns, folded away until "show every column" is ticked."""
SHOWN = ["Model", "Rank", "Suite", "Hardware", "Attempted", "Correct", "fast1", "Speedup vs eager", "95% CI",
         "Win / tie / loss", "Speedup vs compile", "95% CI (compile)", "Hacked"]


def _visible_headers(table) -> list[str]:
    return [t.replace("\n", "").strip() for t in table.locator("thead th:visible").all_inner_texts()]


def _model_column_stays_in_view(page, table) -> None:
    """Scrolled to its right end, the table keeps its model column at the scroll box's left edge, drawn over the
    cells that pass under it on the page's own background."""
    box = table.locator("xpath=..")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth + 50"), "the table does not scroll"
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    page.wait_for_function("b => b.scrollLeft > 50", arg=box.element_handle())
    left = box.evaluate("b => b.getBoundingClientRect().left")
    for cell in (table.locator("thead th").first, table.locator("tbody tr:visible td").first):
        cell.evaluate("c => c.scrollIntoView({block: 'center', inline: 'nearest'})")
        rect = cell.bounding_box()
        assert rect is not None and abs(rect["x"] - left) <= 1, (rect, left)
        on_top = cell.evaluate("c => { const r = c.getBoundingClientRect();"
                               " return c.contains(document.elementFromPoint(r.left + 4, r.top + r.height / 2)); }")
        assert on_top, "another column is drawn over the model column"
        background = cell.evaluate("c => getComputedStyle(c).backgroundColor")
        assert background == page.evaluate("getComputedStyle(document.body).backgroundColor"), background


@pytest.mark.parametrize("scheme", ["default", "slate"])
@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, NARROW], ids=["1440x900", "390x844"])
def test_the_leaderboard_folds_its_rare_columns_and_keeps_the_model_column_in_view(browser, built_url, viewport, scheme):
    context, pg, errors = _context(browser, viewport=viewport)
    pg.goto(built_url + "leaderboard/")
    _set_scheme(pg, scheme)
    table = pg.locator("table.kv-leaderboard[data-protocol=verified]")
    assert _visible_headers(table) == SHOWN
    assert "Median SOL score" in pg.locator("details.kv-legend").text_content()  # a folded column is still explained
    if viewport is NARROW:
        _model_column_stays_in_view(pg, table)
        width = table.locator("thead th").first.bounding_box()["width"]
        assert width <= viewport["width"] / 2, f"the sticky model column takes {width} px of {viewport['width']}"
    pg.get_by_label("show every column").check()
    assert _visible_headers(table) == SHOWN[:6] + FOLDED[:3] + ["fast1"] + FOLDED[3:5] + SHOWN[7:9] + ["Median"] \
        + SHOWN[9:12] + FOLDED[6:9] + ["Hacked"] + FOLDED[9:]
    _model_column_stays_in_view(pg, table)
    pg.get_by_label("show every column").uncheck()
    assert _visible_headers(table) == SHOWN
    assert errors == [], errors
    context.close()


def test_show_every_column_needs_no_script(browser, built_url):
    context = browser.new_context(java_script_enabled=False, viewport=NARROW)
    pg = context.new_page()
    pg.goto(built_url + "leaderboard/")
    table = pg.locator("table.kv-leaderboard[data-protocol=verified]")
    assert _visible_headers(table) == SHOWN
    pg.get_by_label("show every column").check()
    assert len(_visible_headers(table)) == len(SHOWN) + len(FOLDED)
    context.close()


def test_search_results_for_the_hostile_model_name_stay_text(page, built_url):
    """The theme writes a search entry's title and text into the results as HTML: record pages' entries, built from
    record fields, must arrive escaped."""
    page.goto(built_url)
    _search(page, "pwned")
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=15000)
    page.wait_for_timeout(500)  # let an injected image fail and its handler run, were there one
    assert page.evaluate("typeof window.__kv_pwned") == "undefined"
    assert page.locator(".md-search-result img").count() == 0
    titles = page.locator(".md-search-result__item h1").all_inner_texts()
    assert any("<script>window.__kv_pwned = 1</script>" in t and "· verified" in t for t in titles), titles
