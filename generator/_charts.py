"""Chart payloads (Plotly traces as plain JSON) built from the metric tables.

Strings from records are HTML-escaped before they reach Plotly, which renders a subset of HTML in
labels; the front end adds layout and colours for the current palette. A payload travels in the
``data-fig`` attribute of its chart element (``chart_attr``), not in a script element: MkDocs
Material's instant navigation re-creates script elements, and the preview server's copies lose
their type, so JSON there would run as JavaScript.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict

from schemas import PROTOCOLS

from ._protocols import STANDARD, VERIFIED

NICE_TICKS = tuple(m * 10.0 ** e for e in range(-3, 4) for m in (1, 1.5, 2, 3, 5, 7))
"""Tick values of log axes (1, 1.5, 2, 3, 5, 7 in every decade), so short ranges are not labelled with bare minor digits."""


def has_data(fig: dict) -> bool:
    """Whether a chart payload has at least one plotted point (an empty chart is replaced by a message)."""
    return any(x is not None and y is not None
               for trace in fig["data"] for x, y in zip(trace.get("x", []), trace.get("y", []), strict=False))


def log_axis(values: list[float], title: str) -> dict:
    """A log axis that spans ``values`` with some margin and labels round ticks inside it."""
    pos = [v for v in values if v is not None and v > 0]
    lo, hi = (min(pos), max(pos)) if pos else (0.5, 2.0)
    lo, hi = math.log10(lo) - 0.15, math.log10(hi) + 0.15
    ticks = [v for v in NICE_TICKS if lo <= math.log10(v) <= hi]
    return {"title": {"text": title}, "type": "log", "range": [lo, hi], "tickvals": ticks,
            "ticktext": [f"{v:g}" for v in ticks]}


def _t(text: str) -> str:
    return html.escape(str(text), quote=True)


def chart_attr(data: object) -> str:
    """A chart payload as JSON text for the ``data-fig`` attribute (the template's autoescape quotes it)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False, default=float)


PALETTE = ("#c75000", "#0063a8", "#6a3d9a", "#1b7837")
"""Colour-blind-safe hues (after Okabe and Ito), dark enough for text contrast on white."""
PROTOCOL_COLOURS: dict[str, str] = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(PROTOCOLS)}
"""One colour per protocol, the same on every chart of the site."""
DASHES = ("solid", "dot", "dash", "longdash", "dashdot", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross")
"""Line dashes and marker symbols that tell models apart where colour tells the protocol."""


def chart_table(fig: dict) -> dict:
    """A chart's points as a table (its text alternative, and what a reader without JavaScript sees): one row per
    point with its series, x and y (and the point's label where it has one)."""
    layout = fig.get("layout", {})
    x_title = layout.get("xaxis", {}).get("title", {}).get("text", "x")
    y_title = layout.get("yaxis", {}).get("title", {}).get("text", "y")
    rows = []
    for trace in fig["data"]:
        if trace.get("hoverinfo") == "skip":
            continue
        texts = trace.get("text") or [None] * len(trace.get("x", []))
        for x, y, t in zip(trace.get("x", []), trace.get("y", []), texts, strict=False):
            if x is not None and y is not None:
                rows.append((html.unescape(trace.get("name", "")), t and html.unescape(t), x, y))
    return {"x": x_title, "y": y_title, "rows": rows}


HOVER_NAME = "%{fullData.name}"
"""Plotly's placeholder for the trace's own (already escaped) name, so hover text names the model."""


def fast_p_chart(curve: list[dict], hardware: str, suite: str, level: int = 0) -> dict:
    """fast_p curves of every model under every protocol on one chart: colour tells the protocol, dash the model."""
    by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in curve:
        if (row["hardware"], row["suite"], row["level"]) == (hardware, suite, level):
            by_key[(row["model"], row["protocol"])].append(row)
    models = sorted({m for m, _ in by_key})
    order = {p: i for i, p in enumerate(PROTOCOLS)}
    traces = [{"type": "scatter", "mode": "lines", "name": f"{_t(m)} · {proto}", "x": [float(r["p"]) for r in rows],
               "y": [r["fast_p"] for r in rows],
               "line": {"shape": "hv", "color": PROTOCOL_COLOURS.get(proto), "dash": DASHES[models.index(m) % len(DASHES)]},
               "hovertemplate": HOVER_NAME + ": fast_p %{y:.1%} at p = %{x}<extra></extra>"}
              for (m, proto), rows in sorted(by_key.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9)))]
    return {"data": traces, "layout": {"showlegend": True,
                                       "xaxis": {"title": {"text": "speedup threshold p"}, "range": [0, 3]},
                                       "yaxis": {"title": {"text": "fast_p"}, "range": [0, 1.02]}}}


def dumbbell_chart(summary: list[dict], hardware: str, suite: str, ci: list[dict] | None = None) -> dict:
    """Standard vs verified geometric-mean correct speedup per model, joined by a line, each with its 95% CI."""
    pairs: dict[str, dict] = defaultdict(dict)
    for row in summary:
        if (row["hardware"], row["suite"], row["level"]) == (hardware, suite, 0) and row["speedup_eager"]:
            pairs[row["model"]][row["protocol"]] = row["speedup_eager"]
    bounds = {(c["model"], c["protocol"]): (c["speedup_eager_ci_low"], c["speedup_eager_ci_high"]) for c in ci or []
              if (c["hardware"], c["suite"], c["level"]) == (hardware, suite, 0)}
    first, last = tuple(PROTOCOLS)[0], tuple(PROTOCOLS)[-1]
    models = sorted(pairs, key=lambda m: (pairs[m].get(last, 0), m))
    names = [_t(m) for m in models]
    lines = {"type": "scatter", "mode": "lines", "showlegend": False, "hoverinfo": "skip",
             "x": [v for m in models for v in (pairs[m].get(first), pairs[m].get(last), None)],
             "y": [n for n in names for _ in range(3)], "line": {"color": "#9e9e9e"}}
    dots = []
    for proto in PROTOCOLS:
        xs = [pairs[m].get(proto) for m in models]
        lows = [bounds.get((m, proto), (None, None))[0] for m in models]
        highs = [bounds.get((m, proto), (None, None))[1] for m in models]
        dots.append({"type": "scatter", "mode": "markers", "name": proto, "x": xs, "y": names,
                     "marker": {"size": 11, "color": PROTOCOL_COLOURS[proto]},
                     "error_x": {"type": "data", "symmetric": False, "color": PROTOCOL_COLOURS[proto],
                                 "array": [h - x if h is not None and x is not None else None for x, h in zip(xs, highs, strict=True)],
                                 "arrayminus": [x - lo if lo is not None and x is not None else None
                                                for x, lo in zip(xs, lows, strict=True)]},
                     "hovertemplate": "%{y} · " + HOVER_NAME + ": %{x:.3g}×<extra></extra>"})
    values = [v for m in models for v in pairs[m].values()] + [v for b in bounds.values() for v in b if v]
    return {"data": [lines, *dots], "layout": {"showlegend": True,
                                               "xaxis": log_axis(values, "geometric-mean speedup vs eager (95% CI)"),
                                               "yaxis": {"automargin": True}}}


def memory_chart(summary: list[dict], hardware: str, protocol: str, suite: str) -> dict:
    """Speed-memory scatter: each model's Mem Eff against its geometric-mean speedup."""
    rows = [r for r in summary if (r["hardware"], r["protocol"], r["suite"], r["level"]) == (hardware, protocol, suite, 0)
            and r["speedup_eager"] and r["mem_eff"]]
    traces = [{"type": "scatter", "mode": "markers", "name": _t(r["model"]), "x": [r["mem_eff"]],
               "y": [r["speedup_eager"]],
               "marker": {"size": 12, "color": PROTOCOL_COLOURS.get(protocol), "symbol": SYMBOLS[i % len(SYMBOLS)]},
               "hovertemplate": HOVER_NAME + ": Mem Eff %{x:.3g}×, speedup %{y:.3g}×<extra></extra>"} for i, r in enumerate(rows)]
    return {"data": traces, "layout": {"showlegend": True,
        "xaxis": log_axis([r["mem_eff"] for r in rows], "Mem Eff (baseline / candidate peak)"),
        "yaxis": log_axis([r["speedup_eager"] for r in rows], "geometric-mean speedup")}}


def claims_chart(kernels: list[dict], hardware: str, suite: str, model: str) -> dict:
    """Claimed against measured speedup per kernel (standard and verified), with the line where they agree."""
    rows = [k for k in kernels if (k["hardware"], k["suite"], k["model"]) == (hardware, suite, model)]
    traces = []
    for proto, key in ((STANDARD, "std_speedup"), (VERIFIED, "ver_speedup")):
        pts = [k for k in rows if k[key] and k["claimed"]]
        traces.append({"type": "scatter", "mode": "markers", "name": f"{_t(model)} · {proto}",
                       "x": [k["claimed"] for k in pts], "y": [k[key] for k in pts],
                       "text": [_t(f"L{k['level']} #{k['problem_id']} {k['problem_name']}") for k in pts],
                       "marker": {"size": 9, "color": PROTOCOL_COLOURS.get(proto)},
                       "hovertemplate": "%{text} · " + HOVER_NAME + ": claimed %{x:.3g}×, measured %{y:.3g}×<extra></extra>"})
    values = [v for t in traces for v in (*t["x"], *t["y"])]
    axis_lo, axis_hi = (min(values), max(values)) if values else (0.5, 2.0)
    traces.append({"type": "scatter", "mode": "lines", "name": "measured = claimed", "x": [axis_lo, axis_hi],
                   "y": [axis_lo, axis_hi], "line": {"dash": "dot", "color": "#9e9e9e"}, "hoverinfo": "skip"})
    return {"data": traces, "layout": {"showlegend": True, "xaxis": log_axis(values, "claimed speedup (source)"),
                                       "yaxis": log_axis(values, "measured speedup vs eager")}}
