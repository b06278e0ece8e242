"""The Jinja environment of the generated MkDocs pages (autoescape on for every template)."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from ._format import human_bytes, ms, num, pct, times, title_text
from ._protocols import STANDARD, VERIFIED

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja environment of every generated page; autoescape is on for all templates."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters.update(ms=ms, x=times, bytes=human_bytes, pct=pct, num=num, title_text=title_text)
    env.globals.update(STANDARD=STANDARD, VERIFIED=VERIFIED)  # the protocols' names, from schemas.PROTOCOLS
    return env
