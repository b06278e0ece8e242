"""One site build's data: read records, audits and the zoo manifest, run the SQL, render the pages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from schemas import Record, load_record

from ._downloads import FILES
from ._inputs import excluded_rows, read_audits, read_manifest, read_self_speedup
from ._load import PageTarget, load_rows
from ._pages import SiteData, all_pages, faithfulness, headline, problem_source_index
from ._record_pages import write_record_page
from ._sql import aggregate

MANIFEST = Path("evaluations/zoo/manifest.json")
"""The exploit-zoo manifest, relative to the repository root."""


@dataclass
class BuildData:
    """What one build computed: the flattened records, the site data, the pages, and timings in seconds."""

    records: pa.Table
    site: SiteData
    pages: dict[str, str]
    headline: str
    faithfulness: str = ""
    """HTML of the methodology page's timing-faithfulness tables."""
    timings_s: dict[str, float] = field(default_factory=dict)


def _badge_pages(site_dir: Path, records_dir: Path, repo_root: Path, data: SiteData, rows: dict[str, dict]) -> None:
    """Re-render the pages of originals and reproductions with their badge."""
    for rep in data.agg.reproductions:
        for path, other, is_repro in ((rep["orig_path"], rep["repro_page"], False), (rep["repro_path"], rep["orig_page"], True)):
            record = load_record(records_dir / path)
            if isinstance(record, Record):
                badge = {**rep, "other_page": other, "is_repro": is_repro}
                write_record_page(site_dir, repo_root, record, rows[path], badge)


def build_data(records_dir: Path, repo_root: Path, site_dir: Path | None = None,
               display_root: Path | None = None, manifest: Path | None = None) -> BuildData:
    """Validate every record, compute every metric and render every generated page.

    With ``site_dir``, record pages are written there as the records are read. Raises
    ``schemas.RecordError`` naming the file and field of the first invalid record.
    """
    timings = {}
    start = time.perf_counter()
    pages_target = PageTarget(str(site_dir), str(repo_root)) if site_dir is not None else None
    loaded = load_rows(records_dir, display_root, pages_target)
    findings = read_audits(records_dir)
    excluded = excluded_rows(findings)
    zoo = read_manifest(manifest if manifest is not None else repo_root / MANIFEST)
    self_speedup = read_self_speedup(repo_root)
    timings["load"] = time.perf_counter() - start
    start = time.perf_counter()
    agg = aggregate(loaded.table, excluded, zoo, self_speedup)
    timings["aggregate"] = time.perf_counter() - start
    start = time.perf_counter()
    site = SiteData(agg, findings, excluded, problem_source_index(repo_root), repo_root)
    if site_dir is not None and agg.reproductions:
        by_path = {r["path"]: r for r in loaded.table.to_pylist()}
        _badge_pages(site_dir, records_dir, repo_root, site, by_path)
    pages = all_pages(site, FILES)
    timings["render"] = time.perf_counter() - start
    return BuildData(loaded.table, site, pages, headline(site), faithfulness(site), timings)
