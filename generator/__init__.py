"""Site generator of KernelVerdict: records -> DuckDB metrics (generator/sql) -> MkDocs pages.

``load`` is the record loader's module (``_load``) itself, where it reads how large a folder it reads in parallel.
"""

from . import _load as load
from ._attacks import ATTACKS, read_attacks
from ._build import BuildData, build_data, physics_rows
from ._inputs import read_self_speedup
from ._load import COLUMNS, PageTarget, load_rows, record_files, rows_table
from ._pages import (
    VERDICT_STATUSES,
    SiteData,
    charts,
    claims,
    default_selection,
    faithfulness,
    headline,
    integrity,
    leaderboard,
    model_pages,
    verdict_reasons,
)
from ._physics import Ceiling, Floors, OutputSize, check
from ._protocols import EAGER_KIND, OTHER_PROTOCOL, SITE_PROTOCOLS, STANDARD, VERIFIED, SiteProtocol, protocols_table
from ._record_pages import render_record_page, timing_row
from ._sql import Aggregates, aggregate, queries
from ._suites import read_suites
from ._synthetic import Spec, corpus_specs, write_specs

__all__ = [
    "ATTACKS", "COLUMNS", "EAGER_KIND", "OTHER_PROTOCOL", "SITE_PROTOCOLS", "STANDARD", "VERIFIED", "SiteProtocol",
    "protocols_table", "Aggregates", "BuildData", "Ceiling", "Floors", "OutputSize", "PageTarget", "SiteData", "Spec", "VERDICT_STATUSES",
    "aggregate", "build_data", "charts", "check", "claims", "default_selection", "faithfulness", "headline", "integrity",
    "leaderboard", "load", "load_rows", "model_pages", "physics_rows", "queries", "read_attacks", "read_self_speedup",
    "read_suites", "record_files", "render_record_page", "rows_table", "timing_row", "verdict_reasons", "corpus_specs",
    "write_specs",
]
