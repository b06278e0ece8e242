"""Record pages in the site search: they are written straight into the site folder (not MkDocs pages), so the
search index MkDocs wrote gets one entry per record page, found by model, problem, protocol and status. The theme
writes an entry's title and text into the results as HTML, so what comes from a record is escaped."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import pyarrow as pa

INDEX = Path("search/search_index.json")
"""The search plugin's index, relative to the site folder."""
FIELDS = ["page", "model", "suite", "level", "problem_id", "problem_name", "protocol", "status"]


def add_record_pages(site_dir: Path, records: pa.Table) -> int:
    """Append an entry per record page to the search index (where the build wrote one); returns how many."""
    path = site_dir / INDEX
    if not path.is_file() or records.num_rows == 0:
        return 0
    index = json.loads(path.read_text(encoding="utf-8"))
    docs = index.setdefault("docs", [])
    rows = records.select(FIELDS).to_pylist()
    for r in rows:
        title = f"{r['problem_name']} · {r['model']} · {r['protocol']}"
        text = f"{r['suite']} level {r['level']} problem {r['problem_id']}: {r['status']}"
        docs.append({"location": r["page"], "title": escape(title, quote=False), "text": escape(text, quote=False)})
    path.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
    return len(rows)
