"""The figures of ``benchmarks/self_speedup.py``: per suite and recipe, the share of problems whose self-speedup is
within +-1% of 1.00x (in all and per band of the reference's time), the p50/p95/max of |self-speedup - 1|, the
problems beyond +-3%, whether the SM clock explains the misses, and the problems whose reference runs under 20 us."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaluations.core import quantile

FAST_MS = 0.020
"""Problems whose reference takes less than this are listed (launch overhead dominates)."""
WITHIN = 0.01
"""A self-speedup within this of 1.0 counts as faithful."""
BEYOND = 0.03
"""The verified timing's target: within +-1% (``WITHIN``) on >= 95% of problems, none beyond +-3%."""
REFERENCE_RECIPE = "kernelbench / standard (3 warm-ups, 100 calls, mean)"
"""Recipe whose reference time decides which problems count as under 20 us."""
BANDS_MS = (0.03, 0.1, 1.0, 10.0)
"""Edges of the reference-time bands in which the report splits each recipe's share within +-1%."""


def _by_band(members: list[dict[str, Any]], name: str) -> str:
    """'<30us 12/37, 30-100us ...': within +-1% / measured, per band of the reference's time."""
    edges = (0.0, *BANDS_MS, float("inf"))
    parts = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        band = [r for r in members if name in r["self_speedup"] and lo <= r["ref_ms"][name] < hi]
        if band:
            ok = sum(abs(r["self_speedup"][name] - 1.0) <= WITHIN for r in band)
            label = (f"<{hi * 1000:g}us" if lo == 0 else f">={lo:g}ms" if hi == float("inf")
                     else f"{lo * 1000:g}-{hi * 1000:g}us" if hi <= 1 else f"{lo:g}-{hi:g}ms")
            parts.append(f"{label} {ok}/{len(band)}")
    return ", ".join(parts)


def _clock_summary(members: list[dict[str, Any]], name: str) -> str | None:
    """Whether the SM clock explains the misses: clock ratios of misses vs hits, and how often the
    slower of the two timings also ran at the lower clock."""
    pairs = []
    for r in members:
        c = r.get("clock_mhz", {}).get(name) or {}
        if name in r["self_speedup"] and c.get("ref") and c.get("copy"):
            pairs.append((r["self_speedup"][name], c["ref"] / c["copy"]))
    if not pairs:
        return None
    misses = [(s, c) for s, c in pairs if abs(s - 1.0) > WITHIN]
    hits = [c for s, c in pairs if abs(s - 1.0) <= WITHIN]
    # s = ref time / copy time (< 1: the copy was slower); c = ref clock / copy clock (> 1: the copy's lower)
    same_side = sum((s < 1) == (c > 1) for s, c in misses if c != 1.0)

    def med(ratios: list[float]) -> str:
        return f"{quantile([abs(x - 1) for x in ratios], 0.5):.2%}" if ratios else "-"

    return (f"SM clock ref/copy: median |ratio-1| {med([c for _, c in misses])} on misses, {med(hits)} on hits; "
            f"slower timing at the lower clock in {same_side}/{len(misses)} misses (n={len(pairs)})")


def report(rows: dict[str, dict[str, Any]], recipes: Iterable[str]) -> None:
    """Per suite and recipe (``recipes``, in order): share within +-1%, p50/p95/max of |self-speedup - 1|; failures
    and sub-20-us problems."""
    recipes = list(recipes)
    good = [(k, r) for k, r in rows.items() if "error" not in r]
    print(f"\n{len(good)} problems measured, {len(rows) - len(good)} skipped (reference failed)")
    suites = sorted({k.split("/L", 1)[0] if "/L" in k else "kernelbench-v0" for k, _ in good})
    for suite in suites:
        members = [r for k, r in good if (k.split("/L", 1)[0] if "/L" in k else "kernelbench-v0") == suite]
        print(f"-- {suite} ({len(members)} problems)")
        for name in recipes:
            devs = [abs(r["self_speedup"][name] - 1.0) for r in members if name in r["self_speedup"]]
            if devs:
                within = sum(d <= WITHIN for d in devs) / len(devs)
                print(f"{name:55s} within +-1%: {within:6.1%}   p50 |s-1|: {quantile(devs, 0.5):6.2%}   "
                      f"p95 |s-1|: {quantile(devs, 0.95):6.2%}   max: {max(devs):6.2%}   (n={len(devs)})")
                print(f"{'':55s} within +-1% by the reference's time under this recipe: {_by_band(members, name)}")
                far = sorted(((abs(r["self_speedup"][name] - 1.0), r["key"]) for r in members
                              if abs(r["self_speedup"].get(name, 1.0) - 1.0) > BEYOND), reverse=True)
                listed = f" ({', '.join(k for _, k in far)})" if 0 < len(far) <= 12 else ""
                print(f"{'':55s} beyond +-{BEYOND:.0%}: {len(far)}{listed}")
                clock_line = _clock_summary(members, name)
                if clock_line:
                    print(f"{'':55s} {clock_line}")
                graphs = [r for r in members if (r.get("method", {}).get(name) or {}).get("ref") == "cuda_graph"]
                if graphs:
                    ok = sum(abs(r["self_speedup"][name] - 1.0) <= WITHIN for r in graphs)
                    print(f"{'':55s} timed as CUDA graph replays (short or host-bound calls): {len(graphs)} problems, {ok} within +-1%: "
                          + ", ".join(f"{r['key']} {r['self_speedup'][name]:.3f}" for r in graphs))
    for key, row in rows.items():
        if "error" in row:
            print(f"reference failed: {key}: {row['error']}")
    fast = sorted((r["ref_ms"][REFERENCE_RECIPE], k) for k, r in rows.items()
                  if "error" not in r and r["ref_ms"].get(REFERENCE_RECIPE, 1.0) < FAST_MS)
    print(f"{len(fast)} problems under {FAST_MS * 1000:g} us: " + ", ".join(f"{k} ({ms * 1000:.1f} us)" for ms, k in fast))
