"""Screenshots of the site as a reader sees it: home, leaderboard, charts and a record page, light and dark,
desktop and 390 px wide, with Playwright and Debian's chromium (no browser download).

Usage: python tests/site/screenshots.py SITE_DIR OUT_DIR [RECORD_PAGE]
SITE_DIR is a built site (``mkdocs build -d SITE_DIR``); RECORD_PAGE is a record page's path inside it.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": {"width": 1280, "height": 900}, "390px": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def shoot(site: Path, out: Path, record_page: str) -> list[Path]:
    """Take every screenshot; returns the files written."""
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = {"home": "", "leaderboard": "leaderboard/?tab=standard", "charts": "charts/", "record": record_page}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for size, viewport in SIZES.items():
            for scheme in SCHEMES:
                context = browser.new_context(viewport=viewport, color_scheme=scheme)
                page = context.new_page()
                for name, path in pages.items():
                    page.goto(base + path)
                    page.wait_for_load_state("load")
                    if name == "charts":
                        page.wait_for_function("[...document.querySelectorAll('.kv-chart')].every(c => c.querySelector('.main-svg'))")
                        page.wait_for_timeout(300)
                    target = out / f"{name}-{scheme}-{size}.png"
                    page.screenshot(path=str(target))
                    written.append(target)
                context.close()
        browser.close()
    server.shutdown()
    return written


if __name__ == "__main__":
    site_dir, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    record = sys.argv[3] if len(sys.argv) > 3 else "records/h200/cuda-l1/standard/kernelbench-v0/level-1/0009-task_9__s0.html"
    for f in shoot(site_dir, out_dir, record):
        print(f, f.stat().st_size)
