"""The generator takes the protocols and their baseline kinds from ``schemas.PROTOCOLS``, the one table of them."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from generator import EAGER_KIND, OTHER_PROTOCOL, SITE_PROTOCOLS, STANDARD, VERIFIED, protocols_table
from schemas import PROTOCOLS

GENERATOR = Path(__file__).resolve().parents[2] / "generator"
LITERAL = re.compile(r"""(['"])(standard|verified|eager_fp32|eager_tf32|compile)\1""")
"""A protocol's or baseline kind's name written out as a string where the code decides by it."""


def test_the_protocols_are_those_of_the_schema_table_in_its_order():
    assert [p.name for p in SITE_PROTOCOLS] == list(PROTOCOLS)
    assert (STANDARD, VERIFIED) == ("standard", "verified")
    assert OTHER_PROTOCOL == {STANDARD: VERIFIED, VERIFIED: STANDARD}
    assert EAGER_KIND == {name: entry["speedups"]["vs_eager"] for name, entry in PROTOCOLS.items()}
    con = duckdb.connect()
    con.register("protocols", protocols_table())
    assert con.sql("SELECT name FROM protocols WHERE reproduces_kernelbench").fetchall() == [(STANDARD,)]
    assert con.sql("SELECT name, eager_kind, compile_kind FROM protocols ORDER BY position").fetchall() == [
        (name, entry["speedups"]["vs_eager"], entry["speedups"].get("vs_compile")) for name, entry in PROTOCOLS.items()]


def test_no_query_template_or_module_of_the_generator_names_a_protocol_or_baseline_kind():
    """Synthetic records (``_synthetic``) are test data, written as a contributor would write them."""
    found = []
    for path in sorted(GENERATOR.rglob("*")):
        if path.suffix not in (".sql", ".j2", ".py") or path.name in ("_synthetic.py", "_protocols.py"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("--")[0] if path.suffix == ".sql" else line
            if LITERAL.search(code):
                found.append(f"{path.relative_to(GENERATOR)}:{number}: {line.strip()}")
    assert found == []
