"""Run the metric SQL of ``generator/sql/`` in DuckDB over the flattened records.

Each ``NN_name.sql`` file is one SELECT; it becomes table ``name``, in file order, so later queries
read earlier ones. Inputs are: ``records`` (see ``_load.COLUMNS``), ``excluded`` (problems the audit
excluded), ``zoo_manifest``, ``self_speedup`` (the timing-faithfulness benchmark's rows,
``_inputs.read_self_speedup``), ``suite_sizes`` (``_suites``), ``physics`` (each record's physical-floor
verdict, ``_physics``), ``project`` (the provider name of the project's own records), ``datasets`` (the public
kernel datasets the project knows, ``schemas.DATASETS``: repository, commit and how many kernels each holds) and
``protocols`` (the protocols of ``schemas.PROTOCOLS`` with their baseline kinds, ``_protocols``: the standard one is
``WHERE reproduces_kernelbench``, the verified one ``WHERE NOT reproduces_kernelbench``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from schemas import DATASETS, PublicDataset

from ._protocols import protocols_table

SQL_DIR = Path(__file__).resolve().parent / "sql"

PROJECT_PROVIDER = "kernelverdict"
"""Provider of the records the project wrote itself (test fixtures, the exploit zoo, honest reference
kernels): a model with this provider has its own pages and is never ranked."""

EXCLUDED_SCHEMA = pa.schema([("hardware", pa.string()), ("suite", pa.string()), ("level", pa.int32()),
                             ("problem_id", pa.int32()), ("problem_name", pa.string()), ("reason", pa.string())])
SELF_SPEEDUP_SCHEMA = pa.schema([("hardware", pa.string()), ("suite", pa.string()), ("problem", pa.string()),
                                 ("recipe", pa.string()), ("ref_ms", pa.float64()), ("self_speedup", pa.float64())])
SUITE_SIZES_SCHEMA = pa.schema([("suite", pa.string()), ("level", pa.int32()), ("n_problems", pa.int64()),
                                 ("source", pa.string())])
PHYSICS_SCHEMA = pa.schema([("path", pa.string()), ("verdict", pa.string()), ("reason", pa.string()),
                            ("floor_ms", pa.float64())])
DATASETS_SCHEMA = pa.schema([("dataset", pa.string()), ("model", pa.string()), ("url", pa.string()),
                             ("commit", pa.string()), ("kernels", pa.int64())])
MANIFEST_SCHEMA = pa.schema([("file", pa.string()), ("kind", pa.string()), ("problem", pa.string()),
                             ("hack", pa.string()), ("expected_check", pa.string())])


@functools.cache
def queries() -> dict[str, str]:
    """SQL text of every metric table, keyed by table name, in execution order."""
    out = {}
    for path in sorted(SQL_DIR.glob("*.sql")):
        out[path.stem.split("_", 1)[1]] = path.read_text(encoding="utf-8")
    return out


@dataclass
class Aggregates:
    """Every metric table as a list of row dicts."""

    fixtures: list[dict] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    summary: list[dict] = field(default_factory=list)
    fast_p_curve: list[dict] = field(default_factory=list)
    speedup_ci: list[dict] = field(default_factory=list)
    drop: list[dict] = field(default_factory=list)
    reproductions: list[dict] = field(default_factory=list)
    zoo: list[dict] = field(default_factory=list)
    best: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    faithfulness: list[dict] = field(default_factory=list)
    noise_band: list[dict] = field(default_factory=list)
    claim_kernels: list[dict] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)
    coverage: list[dict] = field(default_factory=list)
    verdict_reasons: list[dict] = field(default_factory=list)
    ranking: list[dict] = field(default_factory=list)
    suite_overlap: list[dict] = field(default_factory=list)
    suite_pairs: list[dict] = field(default_factory=list)
    shared_speedups: list[dict] = field(default_factory=list)
    provenance: list[dict] = field(default_factory=list)


def connect(records: pa.Table, excluded: list[dict] | None = None, manifest: list[dict] | None = None,
            threads: int | None = None, self_speedup: list[dict] | None = None, suite_sizes: list[dict] | None = None,
            physics: list[dict] | None = None,
            datasets: tuple[PublicDataset, ...] = DATASETS) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding the input tables; ``records`` is a view over the Arrow table (no copy)."""
    con = duckdb.connect(":memory:")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.register("records_arrow", records)
    con.execute("CREATE VIEW records AS SELECT * FROM records_arrow")
    inputs = {
        "excluded": pa.Table.from_pylist(excluded or [], schema=EXCLUDED_SCHEMA),
        "zoo_manifest": pa.Table.from_pylist(manifest or [], schema=MANIFEST_SCHEMA),
        "project": pa.table({"provider": [PROJECT_PROVIDER]}),
        "self_speedup": pa.Table.from_pylist(self_speedup or [], schema=SELF_SPEEDUP_SCHEMA),
        "suite_sizes": pa.Table.from_pylist(suite_sizes or [], schema=SUITE_SIZES_SCHEMA),
        "physics": pa.Table.from_pylist(physics or [], schema=PHYSICS_SCHEMA),
        "datasets": pa.Table.from_pylist([{"dataset": d.name, "model": d.model, "url": d.url, "commit": d.commit,
                                           "kernels": d.kernels} for d in datasets], schema=DATASETS_SCHEMA),
        "protocols": protocols_table(),
    }
    for name, table in inputs.items():
        con.register(f"{name}_input", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_input")
        con.unregister(f"{name}_input")
    return con


def run_queries(con: duckdb.DuckDBPyConnection, names: list[str] | None = None) -> None:
    """Create each metric table (all of them, or ``names`` and what precedes them in order)."""
    for name, sql in queries().items():
        con.execute(f"CREATE OR REPLACE TABLE {name} AS {sql}")
        if names and name == names[-1]:
            return


def fetch(con: duckdb.DuckDBPyConnection, table: str, order_by: str = "") -> list[dict]:
    """Rows of a table as dicts."""
    sql = f"SELECT * FROM {table}" + (f" ORDER BY {order_by}" if order_by else "")
    return con.sql(sql).to_arrow_table().to_pylist()


ORDER = {
    "fixtures": "model",
    "problems": "hardware, protocol, suite, level_group",
    "summary": "hardware, protocol, suite, level, speedup_eager DESC NULLS LAST, model",
    "fast_p_curve": "hardware, protocol, suite, level, model, p",
    "speedup_ci": "hardware, protocol, suite, level, model",
    "drop": "hardware, suite, level, model",
    "reproductions": "repro_path",
    "zoo": "",
    "best": "suite, level, problem_id, model, protocol, hardware",
    "results": "suite, level, problem_id, model, protocol, hardware",
    "faithfulness": "hardware, suite, problems DESC, recipe",
    "noise_band": "hardware, protocol",
    "claim_kernels": "hardware, suite, model, level, problem_id",
    "claims": "hardware, suite, model, level",
    "coverage": "hardware, suite, model, protocol",
    "verdict_reasons": "hardware, model, protocol_version, status, reason",
    "ranking": "hardware, protocol, suite, level, rank, model",
    "suite_overlap": "suite_a, suite_b, level_a, id_a, level_b, id_b",
    "suite_pairs": "suite_a, suite_b",
    "shared_speedups": "suite_a, suite_b, hardware, protocol, suite, model",
    "provenance": "hardware, suite, model, protocol",
}


def aggregate(records: pa.Table, excluded: list[dict] | None = None, manifest: list[dict] | None = None,
              self_speedup: list[dict] | None = None, suite_sizes: list[dict] | None = None,
              physics: list[dict] | None = None, datasets: tuple[PublicDataset, ...] = DATASETS) -> Aggregates:
    """Compute every metric table from the flattened records and the other inputs (see the module docstring)."""
    con = connect(records, excluded, manifest, self_speedup=self_speedup, suite_sizes=suite_sizes, physics=physics,
                  datasets=datasets)
    run_queries(con)
    return Aggregates(**{name: fetch(con, name, order) for name, order in ORDER.items()})
