"""Markdown of every generated MkDocs page, rendered from Jinja templates (autoescaped).

Page bodies are HTML blocks with escaped text, so nothing from a record is read as Markdown or HTML.
Large blocks (tables, chart payloads) are kept out of the Markdown: a template wraps them in
``{% call slot() %}``, the page's Markdown holds a placeholder comment, and the hook puts the block
into the finished page (``on_post_page``). With 100,000 records that spares Markdown and the search
index from parsing megabytes of table rows; headings and summaries stay searchable.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from markupsafe import Markup

from schemas import AuditReport, superseded

from ._attacks import Attack
from ._board import COLUMNS as BOARD_COLUMNS
from ._board import columns_of
from ._charts import (
    PROTOCOL_COLOURS,
    chart_attr,
    chart_table,
    claims_chart,
    dumbbell_chart,
    fast_p_chart,
    has_data,
    memory_chart,
)
from ._datasets import problem_files
from ._headline import PROTOCOL_ORDER, headline_lines
from ._inputs import Finding
from ._jinja import environment
from ._pairs import problem_pairs
from ._protocols import VERIFIED
from ._sql import Aggregates
from ._suites import Suites
from ._urls import model_doc, model_url, problem_doc, problem_url, up_to_root

PROBLEM_FOLDERS = ("evaluations/problems", "evaluations/zoo/problems")
"""Repository folders searched for problem sources by their sha256."""


EVIDENCE_EXCERPT = 60
"""Characters of a failed check's evidence shown in the integrity table; the rest folds into <details>."""

SLOT_RE = re.compile(r"<!--kv-slot:\d+-->")
"""Placeholder of a block in a generated page's Markdown."""


class Slots:
    """Blocks of finished HTML keyed by their placeholder; called from a template's ``{% call slot() %}``."""

    def __init__(self) -> None:
        self.blocks: dict[str, str] = {}

    def __call__(self, caller) -> Markup:
        """Keep the block's HTML and leave its placeholder, on a line of its own, in the Markdown."""
        key = f"<!--kv-slot:{len(self.blocks)}-->"
        self.blocks[key] = str(caller())
        return Markup(f"\n\n{key}\n\n")

    def fill(self, html: str) -> str:
        """A finished page with every placeholder replaced by its block."""
        return SLOT_RE.sub(lambda m: self.blocks.get(m.group(0), m.group(0)), html) if "<!--kv-slot:" in html else html


@dataclass
class SiteData:
    """Everything the pages are rendered from."""

    agg: Aggregates
    findings: list[Finding] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)
    problem_sources: dict[str, Path] = field(default_factory=dict)
    repo_root: Path = Path(".")
    slots: Slots = field(default_factory=Slots)
    suites: Suites = field(default_factory=lambda: Suites([], {}, {}, {}))
    reports: list[tuple[Path, AuditReport]] = field(default_factory=list)
    datasets_dir: Path | None = None
    attacks: list[Attack] = field(default_factory=list)
    """The zoo's attacks on the harness, for the integrity page."""

    @cached_property
    def fixtures(self) -> dict[str, bool]:
        """Fixture models (written by the project itself) -> whether they belong to the exploit zoo."""
        return {r["model"]: bool(r["zoo"]) for r in self.agg.fixtures}

    @cached_property
    def in_progress(self) -> dict[tuple[str, str, str, str], dict]:
        """(hardware, suite, model, protocol) -> the coverage row of a public dataset whose records there cover
        fewer kernels than it holds: its figures are those of the kernels evaluated so far."""
        return {(c["hardware"], c["suite"], c["model"], c["protocol"]): c for c in self.agg.coverage
                if c["evaluated"] < c["kernels"]}

    @cached_property
    def superseded(self) -> dict[tuple[str, str, str, str], dict]:
        """(hardware, suite, model, protocol) -> ``old`` (the versions of its records that a newer version of the
        protocol has replaced, ``schemas.superseded``) and ``newest``, where it has such records: their verdicts are
        the old version's rules', not the newest's, until they are judged again."""
        out: dict[tuple[str, str, str, str], dict] = {}
        for p in self.agg.provenance:
            versions = [v for v in (p["protocol_versions"] or "").split(", ") if v]
            old = [v for v in versions if superseded(p["protocol"], v)]
            if old:
                out[(p["hardware"], p["suite"], p["model"], p["protocol"])] = {
                    "old": ", ".join(old), "newest": superseded(p["protocol"], old[0]), "all_old": old == versions}
        return out

    @cached_property
    def verified_groups(self) -> set[tuple[str, str, str]]:
        """(hardware, suite, model) of every ranked model that has verified results."""
        return {(r["hardware"], r["suite"], r["model"]) for r in self.agg.summary if r["protocol"] == VERIFIED}


def problem_source_index(repo_root: Path) -> dict[str, Path]:
    """sha256 of each Python file in the problem folders -> its path."""
    out: dict[str, Path] = {}
    for folder in PROBLEM_FOLDERS:
        for path in sorted((repo_root / folder).rglob("*.py")):
            out.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return out


def _render(data: SiteData, template: str, page_url: str, **context) -> str:
    verified, partial, old = data.verified_groups, data.in_progress, data.superseded
    return environment().get_template(template).render(
        root=up_to_root(page_url), model_url=model_url, problem_url=problem_url, chart_attr=chart_attr, chart_table=chart_table,
        has_data=has_data, slot=data.slots, fixtures=data.fixtures,
        unverified=lambda hw, suite, model: (hw, suite, model) not in verified,
        in_progress=lambda hw, suite, model, protocol: partial.get((hw, suite, model, protocol)),
        superseded=lambda hw, suite, model, protocol: old.get((hw, suite, model, protocol)), **context)


def _combos(rows: list[dict], *keys: str) -> list[tuple]:
    return sorted({tuple(r[k] for k in keys) for r in rows})


def _badges(data: SiteData) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for rep in data.agg.reproductions:
        out.setdefault(rep["orig_path"], rep)
    return out


def headline(data: SiteData) -> str:
    """HTML of the home page's headline: one line per dataset (claimed -> standard -> verified, with CIs and n), then
    the standard -> verified drop (per model where public models have verified records, else on the project's own
    zoo and honest kernels)."""
    drops = {(d["hardware"], d["suite"], d["model"]): d for d in data.agg.drop if d["level"] == 0}
    honest = [z for z in data.agg.zoo if z["kind"] != "exploit" and z["standard_speedup"] and z["verified_speedup"]]
    exploits = [z for z in data.agg.zoo if z["kind"] == "exploit" and z["standard_status"] == "correct"
                and z["verified_status"] == "hacked"]
    return _render(data, "headline.html.j2", "", lines=headline_lines(data.agg), drops=drops,
                   protocol_order=PROTOCOL_ORDER,
                   honest=sorted(honest, key=lambda z: z["verified_speedup"] / z["standard_speedup"]), exploits=exploits)


def faithfulness(data: SiteData) -> str:
    """HTML of the methodology page's tables: per hardware and suite, each timing recipe's self-speedup figures."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in data.agg.faithfulness:
        groups[(r["hardware"], r["suite"])].append(r)
    return _render(data, "faithfulness.html.j2", "methodology/", groups=sorted(groups.items()))


VERDICT_STATUSES = ("correct", "incorrect", "hacked", "compile_error", "runtime_error", "timeout")
"""The verdict table's status columns, in order."""


def verdict_reasons(data: SiteData) -> str:
    """HTML of the methodology page's table of verified records by status and, for incorrect ones, by reason."""
    groups: dict[tuple[str, str, str], dict] = {}
    for r in data.agg.verdict_reasons:
        key = (r["model"], r["hardware"], r["protocol_version"])
        g = groups.setdefault(key, {"model": key[0], "hardware": key[1], "version": key[2], "total": 0,
                                    "by_status": defaultdict(int), "reasons": []})
        g["total"] += r["records"]
        g["by_status"][r["status"]] += r["records"]
        if r["status"] == "incorrect":
            g["reasons"].append((r["reason"], r["records"]))
    for g in groups.values():
        g["reasons"].sort(key=lambda x: (-x[1], x[0]))
    return _render(data, "verdict_reasons.html.j2", "methodology/", groups=[groups[k] for k in sorted(groups)],
                   statuses=VERDICT_STATUSES)


LEADERBOARD_PROTOCOLS: tuple[str, ...] = tuple(reversed(PROTOCOL_ORDER))
"""The leaderboard's tabs, strictest protocol first; the first with rows is the one it opens on."""


class Selection(NamedTuple):
    """The leaderboard's initial choice of protocol tab, hardware, suite and level ("" = all of them)."""

    protocol: str
    hardware: str
    suite: str
    level: int


def default_selection(summary: list[dict]) -> Selection | None:
    """The selection the leaderboard opens on: the first protocol (strictest first) that has rows, on every
    hardware and every suite at level "all", so each dataset shows; None when empty."""
    for proto in LEADERBOARD_PROTOCOLS:
        if any(r["protocol"] == proto and r["level"] == 0 for r in summary):
            return Selection(proto, "", "", 0)
    return None


def leaderboard(data: SiteData) -> str:
    """Markdown of the leaderboard page: every dataset by default, each ranked within its suite."""
    summary = data.agg.summary
    ci = {(r["hardware"], r["protocol"], r["suite"], r["model"], r["level"]): r for r in data.agg.speedup_ci}
    ranks = {(r["hardware"], r["protocol"], r["suite"], r["level"], r["model"]): r for r in data.agg.ranking}
    rows = sorted(summary, key=lambda r: (r["hardware"], r["suite"], r["level"],
                                          ranks[(r["hardware"], r["protocol"], r["suite"], r["level"], r["model"])]["rank"],
                                          r["model"]))
    filled = {p: {r["level"] for r in summary if r["protocol"] == p} for p in LEADERBOARD_PROTOCOLS}
    ranked = {(r["hardware"], r["suite"], r["model"]) for r in summary}
    provenance = [p for p in data.agg.provenance if (p["hardware"], p["suite"], p["model"]) in ranked]
    return _render(data, "leaderboard.md.j2", "leaderboard/", summary=summary, rows=rows, ci=ci, ranks=ranks,
                   hardware=_combos(summary, "hardware"), suites=_combos(summary, "suite"),
                   levels=sorted({r["level"] for r in summary}), excluded=data.excluded,
                   impossible=[r for r in data.agg.best if r["impossible"]], columns=BOARD_COLUMNS,
                   columns_of=columns_of, protocols=LEADERBOARD_PROTOCOLS, default=default_selection(summary),
                   filled=filled, provenance=provenance, pairs=data.agg.suite_pairs, overlap=data.agg.suite_overlap,
                   shared=data.agg.shared_speedups)


def charts(data: SiteData) -> str:
    """Markdown of the charts page."""
    figures = []
    for hardware, suite in _combos(data.agg.summary, "hardware", "suite"):
        protos = sorted({r["protocol"] for r in data.agg.summary if (r["hardware"], r["suite"]) == (hardware, suite)})
        figures.append({
            "hardware": hardware, "suite": suite,
            "protocols": protos,
            "fast_p": fast_p_chart(data.agg.fast_p_curve, hardware, suite),
            "memory": [(p, memory_chart(data.agg.summary, hardware, p, suite)) for p in protos],
            "dumbbell": dumbbell_chart(data.agg.summary, hardware, suite, data.agg.speedup_ci) if len(protos) == 2 else None,
        })
    return _render(data, "charts.md.j2", "charts/", figures=figures, colours=PROTOCOL_COLOURS)


def claims(data: SiteData) -> str:
    """Markdown of the claims-vs-measurements page: per dataset and level, the source's claim and our figures."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in data.agg.claims:
        groups[(r["hardware"], r["suite"], r["model"])].append(r)
    drops = {(d["hardware"], d["suite"], d["model"], d["level"]): d for d in data.agg.drop}
    scatters = {key: claims_chart(data.agg.claim_kernels, *key) for key in groups}
    return _render(data, "claims.md.j2", "claims/", groups=sorted(groups.items()), drops=drops, scatters=scatters,
                   kernels=data.agg.claim_kernels)


def model_pages(data: SiteData) -> dict[str, str]:
    """Markdown of each model's page, keyed by docs path; plus the models index."""
    summary, best, drops = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in data.agg.summary:
        summary[r["model"]].append(r)
    for r in data.agg.results:
        best[r["model"]].append(r)
    for r in data.agg.drop:
        drops[r["model"]].append(r)
    provenance = defaultdict(list)
    for r in data.agg.provenance:
        provenance[r["model"]].append(r)
    pages = {model_doc(m): _render(data, "model.md.j2", model_url(m), model=m, summary=summary[m], best=best[m],
                                   drops=drops[m], pairs=problem_pairs(best[m]), provenance=provenance[m],
                                   fixture=m in data.fixtures, zoo=data.fixtures.get(m, False))
             for m in sorted(set(summary) | set(best))}
    pages["models/index.md"] = _render(data, "models_index.md.j2", "models/", models=sorted(set(summary) | set(best)),
                                       summary=[r for r in data.agg.summary if r["level"] == 0])
    return pages


def problem_pages(data: SiteData) -> dict[str, str]:
    """Markdown of each problem's page, keyed by docs path; plus the problems index."""
    results: dict[tuple, list[dict]] = defaultdict(list)
    for r in data.agg.results:
        results[(r["suite"], r["level"], r["problem_id"], r["problem_name"])].append(r)
    findings = defaultdict(list)
    for f in data.findings:
        findings[(f.suite, f.level, f.problem_id)].append(f)
    badges = _badges(data)
    shapes = _output_shapes(data)
    public = problem_files(str(data.datasets_dir) if data.datasets_dir else None)
    pages = {}
    for key, rows in sorted(results.items()):
        suite, level, pid, name = key
        sha = rows[0]["problem_sha256"]
        path = data.problem_sources.get(sha)
        source = path.read_text(encoding="utf-8") if path else None
        rel = path.relative_to(data.repo_root).as_posix() if path else None
        upstream = _upstream_link(data, suite, level, public.get(sha))
        if source is None and public.get(sha) is not None:
            source = public[sha].read_text(encoding="utf-8")
        t_sol = next((r["t_sol_ms"] for r in rows if r["t_sol_ms"] is not None), None)
        pages[problem_doc(*key)] = _render(
            data, "problem.md.j2", problem_url(*key), suite=suite, level=level, pid=pid, name=name, rows=rows,
            sha=sha, source=source, source_path=rel, t_sol=t_sol, upstream=upstream,
            sizes=size_constants(source) if source else [], inputs=function_source(source, "get_inputs") if source else None,
            shapes=shapes.get((suite, level, pid), []), findings=findings[(suite, level, pid)], badges=badges)
    pages["problems/index.md"] = _render(data, "problems_index.md.j2", "problems/", problems=sorted(results),
                                         excluded=data.excluded)
    return pages


def _output_shapes(data: SiteData) -> dict[tuple[str, int, int], list[tuple[str, list[list[int]]]]]:
    """(suite, level, id) -> [(hardware, output shapes)] from the audits."""
    out: dict[tuple[str, int, int], list] = defaultdict(list)
    for _path, report in data.reports:
        for p in report.problems:
            if p.output_shapes:
                out[(report.suite, p.level, p.id)].append((report.hardware, p.output_shapes))
    return out


def _upstream_link(data: SiteData, suite: str, level: int, local: Path | None) -> str | None:
    """Web address of a public problem's file at the suite's pinned commit, when the file was identified by sha256."""
    up = data.suites.upstream.get(suite)
    if up is None or local is None or not up.url.startswith("https://"):
        return None
    return f"{up.url.rstrip('/')}/blob/{up.commit}/{up.folder.format(level=level)}/{local.name}"


def size_constants(source: str) -> list[tuple[str, str]]:
    """Module-level constants of a problem source (``N = 16384``): the sizes ``get_inputs()`` builds from."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, int | float | tuple | list) and not isinstance(value, bool):
                out.append((node.targets[0].id, repr(value)))
    return out


def function_source(source: str, name: str) -> str | None:
    """The text of a module-level function of a problem source (the input builder), or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    return ast.get_source_segment(source, node) if node is not None else None


def integrity(data: SiteData) -> str:
    """Markdown of the integrity page (the exploit zoo, the honest kernels and the attacks on the harness)."""
    zoo_models = {model for model, zoo in data.fixtures.items() if zoo}
    old = sorted({(hw, o["old"], o["newest"]) for (hw, _, model, protocol), o in data.superseded.items()
                  if model in zoo_models and protocol == VERIFIED})
    return _render(data, "integrity.md.j2", "integrity/", zoo=data.agg.zoo, excerpt_chars=EVIDENCE_EXCERPT,
                   attacks=data.attacks, old_zoo=old)


def downloads(data: SiteData, files: list[dict]) -> str:
    """Markdown of the downloads page."""
    return _render(data, "downloads.md.j2", "downloads/", files=files)


def all_pages(data: SiteData, download_files: list[dict]) -> dict[str, str]:
    """Every generated page, keyed by its path inside the docs folder."""
    pages = {"leaderboard.md": leaderboard(data), "charts.md": charts(data), "integrity.md": integrity(data),
             "claims.md": claims(data), "downloads.md": downloads(data, download_files)}
    pages.update(model_pages(data))
    pages.update(problem_pages(data))
    return pages
