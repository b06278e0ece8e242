"""The built site in Debian's chromium, offline: leaderboard, sorting, charts, palette, and escaping."""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))
from _factory import XSS_MODEL, site_fixture  # noqa: E402
from _sitebuild import mkdocs_build  # noqa: E402

from generator._synthetic import Spec, write_specs  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed")]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    records = site_fixture(base / "records")
    site = base / "site"
    result = mkdocs_build(records, site, base / "manifest.json")
    assert result.returncode == 0, result.stderr[-3000:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


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


@pytest.fixture
def page(browser):
    context = browser.new_context()
    blocked: list[str] = []

    def only_local(route):
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_local)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.kv_errors = errors
    yield pg
    assert errors == [], errors
    context.close()


def _set_scheme(page, scheme: str) -> None:
    if page.evaluate("document.body.getAttribute('data-md-color-scheme')") != scheme:
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(f"document.body.getAttribute('data-md-color-scheme') === '{scheme}'")


def _numbers(page, table, column: int) -> list[float]:
    cells = table.locator(f"tbody tr:visible td:nth-child({column})")
    return [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.getAttribute('data-v'))") if v]


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_leaderboard_renders_and_sorts(page, base_url, scheme):
    page.goto(base_url + "leaderboard/")
    _set_scheme(page, scheme)
    table = page.locator("table.kv-leaderboard[data-protocol=verified]")
    assert table.locator("tbody tr:visible").count() == 3  # three models at level "all"
    header = table.locator("th", has_text="Speedup vs eager")
    header.click()
    ascending = _numbers(page, table, 10)
    assert len(ascending) == 3 and ascending == sorted(ascending)
    header.click()
    assert _numbers(page, table, 10) == sorted(ascending, reverse=True)
    page.select_option("select.kv-filter[data-key=level]", "1")
    assert table.locator("tbody tr:visible").count() == 3
    assert all(v == "1" for v in table.locator("tbody tr:visible").evaluate_all("rs => rs.map(r => r.dataset.level)"))


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_every_chart_renders_and_follows_the_palette(page, base_url, scheme):
    page.goto(base_url)
    _set_scheme(page, scheme)
    page.locator("a.md-tabs__link", has_text="Charts").click()  # instant navigation, not a full load
    page.wait_for_function("document.querySelectorAll('.kv-chart .plot-container').length > 0")
    charts = page.locator(".kv-chart")
    assert charts.count() >= 5
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.locator(".plot-container").wait_for(state="attached")
        assert chart.locator("svg").count() > 0
    font = "#e2e4e9" if scheme == "slate" else "#1f2328"
    page.wait_for_function(f"document.querySelector('.kv-chart').layout.font.color === '{font}'")
    _set_scheme(page, "default" if scheme == "slate" else "slate")
    other = "#1f2328" if scheme == "slate" else "#e2e4e9"
    page.wait_for_function(f"document.querySelector('.kv-chart').layout.font.color === '{other}'")


def test_charts_resize_inside_tabs(page, base_url):
    page.goto(base_url + "charts/")
    page.locator(".tabbed-labels label").nth(1).click()
    hidden_chart = page.locator(".tabbed-block").nth(1).locator(".kv-chart")
    page.wait_for_function("el => el.querySelector('.main-svg') && el.querySelector('.main-svg').getBoundingClientRect().width > 300",
                           arg=hidden_chart.element_handle())


@pytest.mark.parametrize("path", ["", "leaderboard/", "charts/", "models/", "problems/kernelverdict/level-1/0000-problem_1_0/"])
def test_injected_script_in_a_model_name_stays_text(page, base_url, path):
    page.goto(base_url + path)
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__kv_pwned") == "undefined"
    if path != "charts/":
        assert page.get_by_text("<script>window.__kv_pwned = 1</script>", exact=False).first.is_visible()
    else:
        page.wait_for_function("document.querySelectorAll('.kv-chart .plot-container').length > 0")
        assert "<script>window.__kv_pwned = 1</script>" in page.locator(".kv-chart").first.inner_text()


def test_record_page_of_the_hostile_model_stays_text(page, base_url):
    page.goto(base_url + "leaderboard/")
    page.locator("a", has_text=XSS_MODEL[:20]).first.click()
    page.locator("a", has_text="record").first.click()
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__kv_pwned") == "undefined"
    assert page.locator("h1").inner_text().startswith("<script>window.__kv_pwned = 1</script>")


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_leaderboard_opens_on_a_selection_with_rows_and_says_when_one_is_empty(page, standard_only_url, scheme):
    page.goto(standard_only_url + "leaderboard/")
    _set_scheme(page, scheme)
    standard = page.locator("table.kv-leaderboard[data-protocol=standard]")
    assert standard.is_visible()  # no verified records: the standard tab is the one open
    assert standard.locator("tbody tr:visible").count() == 2  # h200 has the most models
    assert page.locator("select.kv-filter[data-key=hardware]").input_value() == "h200"
    assert not page.locator(".kv-no-rows[data-protocol=standard]").is_visible()
    page.locator(".tabbed-labels label", has_text="verified").click()
    message = page.locator(".kv-no-rows[data-protocol=verified]")
    assert message.is_visible() and "No verified records for this selection" in message.inner_text()
    page.locator(".tabbed-labels label", has_text="standard").click()
    page.select_option("select.kv-filter[data-key=hardware]", "a100")
    assert standard.locator("tbody tr:visible").count() == 1
    assert not page.locator(".kv-no-rows[data-protocol=standard]").is_visible()
    page.select_option("select.kv-filter[data-key=hardware]", "h200")
    page.select_option("select.kv-filter[data-key=suite]", "other")  # "other" was only run on a100
    assert standard.locator("tbody tr:visible").count() == 0
    assert page.locator(".kv-no-rows[data-protocol=standard]").is_visible()
