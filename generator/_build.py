"""One site build's data: read records, audits, suites and the zoo manifest, run the SQL, render the pages."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from schemas import Record, load_record

from ._attacks import ATTACKS, read_attacks
from ._downloads import FILES
from ._inputs import excluded_rows, read_audit_reports, read_audits, read_manifest, read_self_speedup
from ._load import PageTarget, load_rows
from ._pages import SiteData, all_pages, faithfulness, headline, problem_source_index, verdict_reasons
from ._physics import Floors, check, output_sizes, read_ceilings
from ._record_pages import RecordContext, write_record_page
from ._sql import aggregate
from ._suites import read_suites

MANIFEST = Path("evaluations/zoo/manifest.json")
"""The exploit-zoo manifest, relative to the repository root."""
PHYSICS_COLUMNS = ["path", "hardware", "suite", "level", "problem_id", "problem_sha256", "cand_ms"]


@dataclass
class BuildData:
    """What one build computed: the flattened records, the site data, the pages, and timings in seconds."""

    records: pa.Table
    site: SiteData
    pages: dict[str, str]
    headline: str
    faithfulness: str = ""
    """HTML of the methodology page's timing-faithfulness tables."""
    verdict_reasons: str = ""
    """HTML of the methodology page's table of verified records by status and reason."""
    timings_s: dict[str, float] = field(default_factory=dict)


def _badge_pages(site_dir: Path, records_dir: Path, repo_root: Path, data: SiteData, rows: dict[str, dict],
                 context: RecordContext) -> None:
    """Re-render the pages of originals and reproductions with their badge."""
    for rep in data.agg.reproductions:
        for path, other, is_repro in ((rep["orig_path"], rep["repro_page"], False), (rep["repro_path"], rep["orig_page"], True)):
            record = load_record(records_dir / path)
            if isinstance(record, Record):
                badge = {**rep, "other_page": other, "is_repro": is_repro}
                write_record_page(site_dir, repo_root, record, rows[path], badge, context)


def physics_rows(records: pa.Table, floors: Floors) -> list[dict]:
    """Each record's physical-floor verdict (the ``physics`` input of the SQL)."""
    rows = records.select(PHYSICS_COLUMNS).to_pylist()
    out = []
    for r in rows:
        result = check(floors, r["hardware"], r["suite"], r["level"], r["problem_id"], r["problem_sha256"], r["cand_ms"])
        out.append({"path": r["path"], "verdict": result.verdict, "reason": result.reason, "floor_ms": result.floor_ms})
    return out


def copy_record_files(records_dir: Path, site_dir: Path, relpaths: list[str]) -> None:
    """Put each record's JSON file beside its page (``records/<path>.json``), so the page can offer it."""
    made: set[str] = set()
    for rel in relpaths:
        out = os.path.join(site_dir, "records", rel)
        folder = os.path.dirname(out)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        shutil.copyfile(os.path.join(records_dir, rel), out)


def build_data(records_dir: Path, repo_root: Path, site_dir: Path | None = None,
               display_root: Path | None = None, manifest: Path | None = None,
               datasets_dir: Path | None = None, attacks: Path | None = None) -> BuildData:
    """Validate every record, compute every metric and render every generated page.

    With ``site_dir``, record pages are written there as the records are read, each beside a copy of
    its record file. ``attacks`` replaces the zoo's attack list (``evaluations/zoo/attacks.json``). ``datasets_dir`` is a local copy of the public datasets, whose kernel and problem
    texts the pages then show. Raises ``schemas.RecordError`` naming the file and field of the first
    invalid record.
    """
    timings = {}
    start = time.perf_counter()
    reports = read_audit_reports(records_dir)
    suites = read_suites(repo_root)
    floors = Floors(output_sizes(reports, suites), read_ceilings(repo_root))
    context = RecordContext(str(records_dir), floors, str(datasets_dir) if datasets_dir else None)
    pages_target = PageTarget(str(site_dir), str(repo_root), context) if site_dir is not None else None
    loaded = load_rows(records_dir, display_root, pages_target)
    if site_dir is not None:
        copy_record_files(records_dir, site_dir, loaded.table.column("path").to_pylist())
    findings = read_audits(records_dir, reports)
    excluded = excluded_rows(findings)
    zoo = read_manifest(manifest if manifest is not None else repo_root / MANIFEST)
    self_speedup = read_self_speedup(repo_root)
    sizes = [{"suite": s.suite, "level": s.level, "n_problems": s.problems, "source": s.source} for s in suites.levels]
    timings["load"] = time.perf_counter() - start
    start = time.perf_counter()
    agg = aggregate(loaded.table, excluded, zoo, self_speedup, sizes, physics_rows(loaded.table, floors))
    timings["aggregate"] = time.perf_counter() - start
    start = time.perf_counter()
    site = SiteData(agg, findings, excluded, problem_source_index(repo_root), repo_root, suites=suites,
                    reports=reports, datasets_dir=datasets_dir,
                    attacks=read_attacks(attacks if attacks is not None else repo_root / ATTACKS))
    if site_dir is not None and agg.reproductions:
        by_path = {r["path"]: r for r in loaded.table.to_pylist()}
        _badge_pages(site_dir, records_dir, repo_root, site, by_path, context)
    pages = all_pages(site, FILES)
    timings["render"] = time.perf_counter() - start
    return BuildData(loaded.table, site, pages, headline(site), faithfulness(site), verdict_reasons(site), timings)
