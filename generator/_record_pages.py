"""Each record's own page: a small self-contained HTML file, rendered cheaply so that 100,000 fit in a build.

These pages are written straight into the built site (not through MkDocs), which keeps a build with
many records fast; they link back to the model, problem and leaderboard pages of the MkDocs site.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import jinja2

from schemas import Record

from ._urls import model_url, problem_url, up_to_root

MAX_SOURCE_BYTES = 200_000
"""Kernel sources larger than this are linked, not shown."""

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja environment of every generated page; autoescape is on for all templates."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["ms"] = lambda v: "–" if v is None else f"{v:.4g} ms"
    env.filters["x"] = lambda v: "–" if v is None else f"{v:.3g}×"
    env.filters["bytes"] = _human_bytes
    env.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    env.filters["num"] = lambda v, fmt="{:.3g}": "–" if v is None else fmt.format(v)
    return env


def _human_bytes(value: int | None) -> str:
    if value is None:
        return "–"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} GiB"


def kernel_source(record: Record, repo_root: Path) -> str | None:
    """The kernel's text when it lives in this repository as its own file and matches its sha256."""
    k = record.kernel
    if k.path is None or k.url is not None or k.row is not None:
        return None
    path = repo_root / k.path
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if hashlib.sha256(text.encode("utf-8")).hexdigest() == k.sha256 else None


def kernel_link(record: Record) -> str | None:
    """Web address of the kernel in its public repository, when the record names one."""
    k = record.kernel
    if k.url is None or not k.url.startswith(("https://", "http://")):
        return None
    if "github.com/" in k.url:
        return f"{k.url.rstrip('/')}/blob/{k.commit}/{k.path}"
    return k.url


def render_record_page(record: Record, row: dict, repo_root: Path, badge: dict | None = None) -> str:
    """HTML of one record's page."""
    root = up_to_root(row["page"])
    p = record.problem
    return environment().get_template("record.html.j2").render(
        r=record, row=row, root=root, badge=badge,
        model_href=root + model_url(record.model.name),
        problem_href=root + problem_url(p.suite, p.level, p.id, p.name),
        source=kernel_source(record, repo_root), link=kernel_link(record),
    )


def write_record_page(site_dir: Path, repo_root: Path, record: Record, row: dict, badge: dict | None = None) -> Path:
    """Render and write one record's page into the built site."""
    out = site_dir / row["page"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_record_page(record, row, repo_root, badge), encoding="utf-8")
    return out
