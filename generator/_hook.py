"""MkDocs hook functions: generate the site's pages from the records at build time.

``generator/hook.py`` (registered under ``hooks:`` in mkdocs.yml) re-exports these. The records
folder is ``records/`` beside mkdocs.yml, or ``$KVERDICT_RECORDS``; ``mkdocs serve`` watches it.
"""

from __future__ import annotations

import configparser
import html
import logging
import os
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from schemas import SCHEMA_DIR, RecordError

from ._build import BuildData, build_data
from ._downloads import write_downloads
from ._search import add_record_pages

log = logging.getLogger("mkdocs.plugins.kverdict")

HEADLINE_MARKER = "<!-- kverdict:headline -->"
"""Placeholder in site_src/index.md replaced by the headline table."""
FAITHFULNESS_MARKER = "<!-- kverdict:faithfulness -->"
"""Placeholder in site_src/methodology.md replaced by the timing-faithfulness tables."""
VERDICT_REASONS_MARKER = "<!-- kverdict:verdict-reasons -->"
"""Placeholder in site_src/methodology.md replaced by the verified records by status and reason."""
REPOSITORY_MARKER = "<!-- kverdict:repository -->"
"""Placeholder in site_src/index.md and contributing.md replaced by where the repository lives, how to clone it and
where pull requests go."""
DATASETS_ENV = "KVERDICT_DATASETS"
"""Environment variable naming a local copy of the public datasets (see ``_datasets``)."""
ASSETS = Path(__file__).resolve().parent / "assets"
PLOTLY_JS = ASSETS / "plotly-scatter.min.js"
"""The site's partial Plotly bundle: the scatter trace alone (every chart here is a scatter), 1.0 MB against the full
bundle's 4.8 MB; ``generator/plotly/build.sh`` builds it, and its first line names the plotly.js version."""
RECORDS_ENV = "KVERDICT_RECORDS"
MANIFEST_ENV = "KVERDICT_ZOO_MANIFEST"
"""Environment variables that point a build at another records folder or zoo manifest (tests, benchmarks)."""

_state: dict[str, object] = {}


def _repo_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def records_dir(config: MkDocsConfig) -> Path:
    """The records folder this build reads."""
    configured = os.environ.get(RECORDS_ENV) or config.extra.get("kverdict_records", "records")
    path = Path(configured)
    return path if path.is_absolute() else _repo_root(config) / path


def datasets_dir(config: MkDocsConfig) -> Path | None:
    """The local copy of the public datasets this build reads, when there is one."""
    configured = os.environ.get(DATASETS_ENV) or config.extra.get("kverdict_datasets")
    if not configured:
        return None
    path = Path(configured)
    path = path if path.is_absolute() else _repo_root(config) / path
    return path if path.is_dir() else None


def repository_url(config: MkDocsConfig) -> str | None:
    """The repository the site is built from: mkdocs.yml's ``repo_url``, else the CI's repository, else the
    checkout's ``origin`` remote (an https address only); None when none of them names one."""
    if config.repo_url:
        return config.repo_url
    server, repo = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    if server and repo:
        return f"{server.rstrip('/')}/{repo}"
    git = _repo_root(config) / ".git"
    if git.is_file():  # a worktree or submodule: "gitdir: <path>"; its config is in the common dir
        return None
    parser = configparser.ConfigParser(strict=False)
    try:
        parser.read(git / "config", encoding="utf-8")
        url = parser.get('remote "origin"', "url", fallback="")
    except (configparser.Error, OSError):
        return None
    if url.startswith("git@") and ":" in url:
        host, path = url[4:].split(":", 1)
        url = f"https://{host}/{path}"
    url = url.removesuffix(".git")
    return url if url.startswith("https://") else None


def pages_url(repo_url: str) -> str | None:
    """The GitHub Pages address of a GitHub repository (``https://owner.github.io/name/``), else None."""
    parts = repo_url.rstrip("/").split("/")
    if len(parts) == 5 and parts[2] == "github.com":
        return f"https://{parts[3].lower()}.github.io/{parts[4]}/"
    return None


def repository_html(url: str | None) -> str:
    """The paragraph on where the code and records live, how to clone them and where pull requests go."""
    if url is None:
        return ("<p>Everything here is built from the project's repository: its <code>records/</code> folder holds every "
                "record file. This build was made without the repository's address (a build names it with "
                "<code>KVERDICT_REPO_URL</code>); in a copy of the repository, the commands on this site run from "
                "its root folder.</p>")
    u = html.escape(url, quote=True)
    return (f'<p>Code, records and this site\'s sources: <a href="{u}">{u}</a>. Clone it with '
            f"<code>git clone {u}.git</code>; every record file is under <code>records/</code>. "
            f'Contributions arrive as pull requests: <a href="{u}/pulls">open ones</a>, '
            f'<a href="{u}/compare">open a new one</a>.</p>')


def _drop_missing_nav(nav: list, docs_dir: Path) -> list:
    kept = []
    for item in nav:
        target = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(target, str) and target.endswith(".md") and target == "contributing.md" \
                and not (docs_dir / target).is_file():
            log.info("contributing.md is not in %s yet; left out of the navigation", docs_dir.name)
            continue
        kept.append(item)
    return kept


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Leave the contributing page out of the navigation while it does not exist; name the repository."""
    if config.nav:
        config.nav = _drop_missing_nav(config.nav, Path(config.docs_dir))
    url = repository_url(config)
    if url and not config.repo_url:
        config.repo_url = url
    if url and not config.site_url:  # the sitemap and canonical links need the site's own address
        config.site_url = pages_url(url)
    config.edit_uri = config.extra.get("kverdict_edit_uri") if url else None
    _state["repository"] = url
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Read and validate the records, write record pages, and add every generated page and asset."""
    root = _repo_root(config)
    records = records_dir(config)
    shown = Path(os.path.relpath(records, Path.cwd())) if records.is_relative_to(Path.cwd()) else records
    try:
        manifest = os.environ.get(MANIFEST_ENV)
        data = build_data(records, root, Path(config.site_dir), display_root=shown,
                          manifest=Path(manifest) if manifest else None, datasets_dir=datasets_dir(config))
    except RecordError as exc:
        raise PluginError(f"invalid record: {exc}") from None
    _state["data"] = data
    log.info("kverdict: %d records; load %.2fs, aggregate %.2fs, render %.2fs", data.records.num_rows,
             *(data.timings_s[k] for k in ("load", "aggregate", "render")))
    for uri, markdown in data.pages.items():
        files.append(File.generated(config, uri, content=markdown))
    for name in ("kverdict.js", "kverdict-search.js", "kverdict.css", "kverdict-record.css", "kverdict-record.js"):
        files.append(File.generated(config, f"assets/{name}", abs_src_path=str(ASSETS / name)))
    files.append(File.generated(config, f"assets/{PLOTLY_JS.name}", abs_src_path=str(PLOTLY_JS)))
    for name in ("record.schema.json", "baseline.schema.json"):  # linked from the contributing page
        if files.get_file_from_path(name) is None:
            files.append(File.generated(config, name, abs_src_path=str(SCHEMA_DIR / name)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Put the headline and the repository into the home and contributing pages and the faithfulness and verdict tables into
    the methodology page; a generated page has no source to edit, so no edit link."""
    if page.file.generated_by is not None:
        page.edit_url = None
    data = _state.get("data")
    if isinstance(data, BuildData):
        markdown = (markdown.replace(HEADLINE_MARKER, data.headline).replace(FAITHFULNESS_MARKER, data.faithfulness)
                    .replace(VERDICT_REASONS_MARKER, data.verdict_reasons))
    url = _state.get("repository")
    return markdown.replace(REPOSITORY_MARKER, repository_html(url if isinstance(url, str) else None))


SEARCH_DIALOG = 'class="md-search" data-md-component="search" role="dialog"'
"""The theme's search dialog, which it leaves without a name; ``on_post_page`` names it."""
THEME_BUNDLE = re.compile(r'<script src="(?P<root>[^"]*?)assets/javascripts/bundle\.[0-9a-f]+\.min\.js"></script>')
"""The theme's script tag; ``assets/kverdict-search.js`` must run before it, to hold its search index request."""


def hold_search_index(output: str) -> str:
    """Put ``assets/kverdict-search.js`` before the theme's script, so the search index loads on first use of search."""
    match = THEME_BUNDLE.search(output)
    if match is None:
        return output
    tag = f'<script src="{match["root"]}assets/kverdict-search.js"></script>'
    return output[:match.start()] + tag + output[match.start():]


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Put the large blocks of a generated page (kept out of its Markdown) into the finished HTML; name the search
    dialog for assistive technology; load the search index on first use of search."""
    data = _state.get("data")
    output = output.replace(SEARCH_DIALOG, SEARCH_DIALOG + ' aria-label="Search the site"', 1)
    output = hold_search_index(output)
    return data.site.slots.fill(output) if isinstance(data, BuildData) else output


def on_post_build(config: MkDocsConfig) -> None:
    """Write the downloads (records as Parquet and CSV, aggregates as JSON, JSON Schemas) and put the record pages
    into the search index."""
    data = _state.get("data")
    if isinstance(data, BuildData):
        write_downloads(Path(config.site_dir), data.records, data.site.agg)
        add_record_pages(Path(config.site_dir), data.records)


def on_serve(server, config: MkDocsConfig, builder) -> None:
    """Rebuild when a record, a template, a query, the zoo or a self-speedup rows file changes."""
    if records_dir(config).is_dir():
        server.watch(str(records_dir(config)))
    server.watch(str(Path(__file__).resolve().parent))
    for folder in (_repo_root(config) / "evaluations" / "zoo", _repo_root(config) / "benchmarks" / "results"):
        if folder.is_dir():
            server.watch(str(folder))
