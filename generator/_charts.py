"""Chart payloads (Plotly traces as plain JSON) built from the metric tables.

Strings from records are HTML-escaped before they reach Plotly, which renders a subset of HTML in
labels; the front end adds layout and colours for the current palette.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict


def _t(text: str) -> str:
    return html.escape(str(text), quote=True)


def script_json(data: object) -> str:
    """JSON safe inside a ``<script type="application/json">`` element (no ``</script>`` break-out)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, default=float)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fast_p_chart(curve: list[dict], hardware: str, protocol: str, suite: str, level: int = 0) -> dict:
    """fast_p curves (one line per model) for one hardware x protocol x suite x level."""
    by_model: dict[str, list[dict]] = defaultdict(list)
    for row in curve:
        if (row["hardware"], row["protocol"], row["suite"], row["level"]) == (hardware, protocol, suite, level):
            by_model[row["model"]].append(row)
    traces = [{"type": "scatter", "mode": "lines", "name": _t(m), "x": [float(r["p"]) for r in rows],
               "y": [r["fast_p"] for r in rows], "line": {"shape": "hv"}} for m, rows in sorted(by_model.items())]
    return {"data": traces, "layout": {"xaxis": {"title": {"text": "speedup threshold p"}, "range": [0, 3]},
                                       "yaxis": {"title": {"text": "fast_p"}, "range": [0, 1.02]}}}


def dumbbell_chart(summary: list[dict], hardware: str, suite: str) -> dict:
    """Standard vs verified geometric-mean correct speedup per model, joined by a line."""
    pairs: dict[str, dict] = defaultdict(dict)
    for row in summary:
        if (row["hardware"], row["suite"], row["level"]) == (hardware, suite, 0) and row["speedup_eager"]:
            pairs[row["model"]][row["protocol"]] = row["speedup_eager"]
    models = sorted(pairs, key=lambda m: pairs[m].get("verified", 0))
    names = [_t(m) for m in models]
    lines = {"type": "scatter", "mode": "lines", "showlegend": False, "hoverinfo": "skip",
             "x": [v for m in models for v in (pairs[m].get("standard"), pairs[m].get("verified"), None)],
             "y": [n for n in names for _ in range(3)], "line": {"color": "#9e9e9e"}}
    dots = [{"type": "scatter", "mode": "markers", "name": proto, "x": [pairs[m].get(proto) for m in models],
             "y": names, "marker": {"size": 11}} for proto in ("standard", "verified")]
    return {"data": [lines, *dots], "layout": {"xaxis": {"title": {"text": "geometric-mean speedup vs eager"},
                                                         "type": "log"}, "yaxis": {"automargin": True}}}


def memory_chart(summary: list[dict], hardware: str, protocol: str, suite: str) -> dict:
    """Speed-memory scatter: each model's Mem Eff against its geometric-mean speedup."""
    rows = [r for r in summary if (r["hardware"], r["protocol"], r["suite"], r["level"]) == (hardware, protocol, suite, 0)
            and r["speedup_eager"] and r["mem_eff"]]
    traces = [{"type": "scatter", "mode": "markers", "name": _t(r["model"]), "x": [r["mem_eff"]],
               "y": [r["speedup_eager"]], "marker": {"size": 12}} for r in rows]
    return {"data": traces, "layout": {"xaxis": {"title": {"text": "Mem Eff (baseline / candidate peak)"}, "type": "log"},
                                       "yaxis": {"title": {"text": "geometric-mean speedup"}, "type": "log"}}}
