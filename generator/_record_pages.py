"""Each record's own page: a small self-contained HTML file, written straight into the built site.

A site may hold 100,000 records, so these pages bypass MkDocs' page pipeline and a template engine:
the HTML is assembled from f-strings in which every value taken from a record passes through
``_e`` (``html.escape``) and every number through the formatters of ``_format``. Pages link back to
the model, problem and leaderboard pages and use the site's own stylesheet
(``assets/kverdict-record.css``), follow the palette chosen on the other pages (``assets/kverdict-record.js``),
link the record's JSON file (copied beside the page) and the same kernel's record under the other protocol,
and say whether the record's time leaves room to write its output (``_physics``).
"""

from __future__ import annotations

import functools
import hashlib
import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from schemas import Record, TimingStats, superseded

from ._datasets import kernel_text
from ._format import MISSING, human_bytes, ms, times
from ._physics import Floors, PhysicsCheck, check
from ._protocols import OTHER_PROTOCOL, STANDARD
from ._urls import model_url, problem_url, up_to_root

_STATUS_RE = re.compile(rb'\n  "status": "([a-z_]+)"')
"""The top-level status of a record file as ``schemas.dump_record`` writes it (two-space indent)."""


@dataclass(frozen=True)
class RecordContext:
    """What a record page needs beside its record: the records folder (for the other-protocol record), the
    physical floors, and the local datasets folder (for public kernels' code)."""

    records_dir: str = ""
    floors: Floors = field(default_factory=lambda: Floors({}, {}))
    datasets_dir: str | None = None


def other_protocol_path(relpath: str, protocol: str) -> str:
    """Where the same kernel's record under the other protocol lives (``record_relpath``'s layout)."""
    parts = relpath.split("/")
    if len(parts) > 2 and parts[2] == protocol:
        parts[2] = OTHER_PROTOCOL[protocol]
    return "/".join(parts)


def _other_status(path: str) -> str | None:
    """The status of a record file, read from its first few kilobytes; ``None`` when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16384)
    except OSError:
        return None
    found = _STATUS_RE.search(head) or re.search(rb'"status"\s*:\s*"([a-z_]+)"', head)
    return found.group(1).decode() if found else None

MAX_SOURCE_BYTES = 200_000
"""Kernel sources larger than this are linked, not shown."""

TIMING_HEAD = ("<tr><th>What</th><th>method</th><th>calls</th><th>calls per timer pair</th><th>mean</th><th>median</th>"
               "<th>95% CI of median</th><th>IQR</th><th>min</th><th>max</th><th>SM clock</th><th>peak memory</th></tr>")
CHECKS_HEAD = ("<tr><th>Trial</th><th>distribution</th><th>seed</th><th>result</th><th>max |error|</th>"
               "<th>error budget used</th><th>fp32 strict</th><th>fp32 TF32</th><th>message</th></tr>")


@functools.lru_cache(maxsize=16384)
def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _e(value: object) -> str:
    """Escaped text of any value from a record ("" for None); repeated strings are escaped once."""
    return "" if value is None else _escape(str(value))


def _g(value: float | None) -> str:
    return MISSING if value is None else f"{value:.3g}"


def kernel_source(record: Record, repo_root: Path) -> str | None:
    """The kernel's text when it lives in this repository as its own file and matches its sha256."""
    k = record.kernel
    if k.path is None or k.url is not None or k.row is not None:
        return None
    path = os.path.join(repo_root, k.path)
    try:
        if os.stat(path).st_size > MAX_SOURCE_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return text if hashlib.sha256(text.encode("utf-8")).hexdigest() == k.sha256 else None


def kernel_link(record: Record) -> str | None:
    """Web address of the kernel in its public repository, when the record names one."""
    k = record.kernel
    if k.url is None or not k.url.startswith(("https://", "http://")):
        return None
    if "github.com/" in k.url:
        return f"{k.url.rstrip('/')}/blob/{k.commit}/{k.path}"
    return k.url


def _range(low: float | None, high: float | None) -> str:
    return MISSING if low is None else f"{ms(low)} – {ms(high)}"


def timing_row(what: str, t: TimingStats, peak: int | None) -> str:
    """The row of a record page's timing table for ``what`` (the candidate or a baseline) timed as ``t``, with its
    peak memory ``peak`` in bytes."""
    clock = MISSING if t.sm_clock_mhz is None else f"{t.sm_clock_mhz:.0f} MHz"
    method = _e(t.method) + (", host-bound" if t.host_bound else "")
    return (f"<tr><td>{_e(what)}</td><td>{method}</td><td>{t.calls}</td><td>{t.calls_per_sample}</td>"
            f"<td>{ms(t.mean_ms)}</td><td>{ms(t.median_ms)}</td><td>{_range(t.ci95_low_ms, t.ci95_high_ms)}</td>"
            f"<td>{_range(t.q1_ms, t.q3_ms)}</td><td>{ms(t.min_ms)}</td><td>{ms(t.max_ms)}</td><td>{clock}</td>"
            f"<td>{human_bytes(peak)}</td></tr>")


def _badge(badge: dict, root: str) -> str:
    ok = badge["agrees"]
    words = "reproduced" if ok else "reproduction disagrees"
    other = "original" if badge["is_repro"] else "reproduction"
    return (f'<p class="badge {"badge-ok" if ok else "badge-bad"}">{words}: {times(badge["repro_speedup"])} against '
            f'{times(badge["orig_speedup"])} (accepted {times(badge["low"])} – {times(badge["high"])}) · '
            f'<a href="{_e(root + badge["other_page"])}">{other}</a></p>')


def _facts(r: Record, row: dict) -> list[str]:
    m, p, pr, env, sp, mem = r.model, r.problem, r.protocol, r.environment, r.speedup, r.memory
    provider = f" ({_e(m.provider)})" if m.provider else ""
    flush = ", L2 flushed" if pr.timing.l2_flush else ""
    out = [
        '<table class="facts">',
        f"<tr><th>Model</th><td>{_e(m.name)}{provider}, sample {m.sample}</td></tr>",
        f"<tr><th>Problem</th><td>{_e(p.suite)} level {p.level} #{p.id} {_e(p.name)}</td></tr>",
        f"<tr><th>Protocol</th><td>{_e(pr.name)} {_e(pr.version)} · atol {pr.atol} rtol {pr.rtol} · "
        f"{_e(pr.timing.statistic)} of {pr.timing.timed_calls} calls{flush} · distributions "
        f"{_e(', '.join(pr.distributions))}</td></tr>",
        f"<tr><th>Environment</th><td>{_e(env.device_name)} ({_e(env.hardware)}) · torch {_e(env.torch)}"
        + (f" · CUDA {_e(env.cuda)}" if env.cuda else "") + (f" · triton {_e(env.triton)}" if env.triton else "")
        + f" · python {_e(env.python)} · harness {_e(env.harness_version)} · {_e(row['timestamp'])}</td></tr>",
        f"<tr><th>Speedup</th><td>vs eager {times(sp.vs_eager)}{_ci_note(r, row)} · vs eager fp32 "
        f"{times(sp.vs_eager_fp32)} · vs torch.compile {times(sp.vs_compile)}</td></tr>",
        f"<tr><th>Memory</th><td>candidate {human_bytes(mem.candidate_peak_bytes)}{_why(mem.candidate_peak_missing)} · "
        f"baseline {human_bytes(mem.baseline_peak_bytes)}{_why(mem.baseline_peak_missing)}</td></tr>",
    ]
    out += _v12_facts(r)
    if r.roofline:
        roof = r.roofline
        frac = MISSING if roof.fraction_of_roofline is None else f"{100 * roof.fraction_of_roofline:.1f}"
        score = MISSING if roof.sol_score is None else f"{roof.sol_score:.3f}"
        how = {"automatic": " · FLOPs and bytes counted automatically", "hand": " · FLOPs and bytes counted by hand"}.get(
            roof.counted or "", "")
        out.append(f"<tr><th>Roofline</th><td>T_SOL {ms(roof.t_sol_ms)} · {frac}% of roofline · SOL score {score}"
                   f"{how}</td></tr>")
    claimed = getattr(r, "claimed", None)
    if claimed is not None:
        against = f" against {_e(claimed.baseline)}" if claimed.baseline else ""
        out.append(f"<tr><th>Claimed by the source</th><td>{times(claimed.speedup)}{against}"
                   + (f" · {ms(claimed.ms)}" if claimed.ms is not None else "")
                   + f" (field <code>{_e(claimed.source_field)}</code>; not measured here)</td></tr>")
    if r.labels:
        out.append(f"<tr><th>Labels</th><td>{_e(', '.join(r.labels))}</td></tr>")
    if r.reproduces:
        out.append(f"<tr><th>Reproduces</th><td>{_e(r.reproduces)}</td></tr>")
    out.append(f"<tr><th>Record file</th><td><code>records/{_e(row['path'])}</code> · "
               f'<a href="{_e(os.path.basename(row["page"])[:-len(".html")] + ".json")}" download>download JSON</a></td></tr></table>')
    return out


def _ci_note(r: Record, row: dict) -> str:
    """" (95% CI a – b, not distinguishable from 1)" where the candidate time's CI gives the speedup one."""
    low, high, base = row.get("cand_ci_low_ms"), row.get("cand_ci_high_ms"), row.get("base_ms")
    if r.status != "correct" or not (low and high and base) or r.speedup.vs_eager is None:
        return ""
    s_low, s_high = base / high, base / low
    crosses = " — not distinguishable from 1×" if s_low <= 1 <= s_high else ""
    return f" (95% CI {times(s_low)} – {times(s_high)}{crosses})"


def _physics_block(result: PhysicsCheck) -> str:
    cls = {"impossible": "warn impossible", "possible": "physics-ok", "not-checked": "physics-unchecked"}[result.verdict]
    head = {"impossible": "Physically impossible", "possible": "Physical floor", "not-checked": "Physical floor"}[result.verdict]
    head += " (not checked)" if result.verdict == "not-checked" else ""
    tail = (" This record is flagged under every protocol and kept out of every aggregate."
            if result.verdict == "impossible" else "")
    return f'<p class="{cls}" id="physics"><strong>{head}:</strong> {_e(result.reason)}.{tail}</p>'


def _other_protocol(r: Record, row: dict, context: RecordContext | None, root: str) -> str:
    """The line that links the same kernel's record under the other protocol, or says there is none."""
    if context is None or not context.records_dir:
        return ""
    other = OTHER_PROTOCOL[r.protocol.name]
    rel = other_protocol_path(row["path"], r.protocol.name)
    status = _other_status(os.path.join(context.records_dir, rel)) if rel != row["path"] else None
    if status is None:
        only = f" — {STANDARD} protocol only, unverified" if r.protocol.name == STANDARD else ""
        return f'<p class="other-protocol" id="other-protocol">No {other}-protocol record of this kernel yet{only}.</p>'
    page = "records/" + rel[: -len(".json")] + ".html"
    return (f'<p class="other-protocol" id="other-protocol">The {other} protocol on this kernel: '
            f'<a href="{_e(root + page)}"><span class="status status-{_e(status)}">{_e(status)}</span> '
            f"({other} record)</a></p>")


def _why(reason: str | None) -> str:
    return f" ({_e(reason)})" if reason else ""


def _v12_facts(r: Record) -> list[str]:
    """Rows of the verified facts of records from 1.2 on: precision class, held-out shape, flags the baselines were
    timed with."""
    out = []
    if r.precision_class:
        out.append(f"<tr><th>Precision class</th><td>{_e(r.precision_class)}</td></tr>")
    if r.shape_check:
        sc = r.shape_check
        what = "not run" if sc.passed is None else ("passed" if sc.passed else "failed (shape-specific)")
        where = f"{_e(sc.constant)} {sc.original} → {sc.changed}: " if sc.constant else ""
        out.append(f"<tr><th>Held-out shape</th><td>{where}{what}{_why(sc.message)}</td></tr>")
    if r.judged:
        j = r.judged
        out.append(f"<tr><th>Judged outside</th><td>{j.trials} of {j.trials_reported} trials' outputs judged in a "
                   "process that never imported the candidate</td></tr>")
        if j.outer:
            o = j.outer
            out.append(f"<tr><th>Outside clock</th><td>{o.calls} answers on fresh inputs ({_e(o.method)}): "
                       f"{_g(o.per_call_ms)} ms per answer on the runner's clock, {_g(o.reported_ms)} ms reported "
                       f"(batch {_g(o.wall_ms)} ms, of it {_g(o.overhead_ms)} ms drawing and fingerprinting)</td></tr>")
    flags = sorted({f.token for b in r.baselines for f in b.algorithm_flags})
    if flags:
        out.append(f"<tr><th>Baseline flags</th><td>baselines timed with {_e(', '.join(flags))}, as the candidate "
                   "set them</td></tr>")
    return out


def _checks(r: Record) -> list[str]:
    out = ["<h2>Correctness checks</h2>"]
    if r.correctness:
        out.append('<div class="scroll"><table>' + CHECKS_HEAD)
        for c in r.correctness:
            word = "pass" if c.passed else "fail"
            out.append(f'<tr class="{word}"><td>{_e(c.name)}</td><td>{_e(c.distribution)}</td><td>{c.seed}</td>'
                       f"<td>{word}</td><td>{_g(c.max_abs_error)}</td><td>{_g(c.error_budget_used)}</td>"
                       f"<td>{_g(c.fp32_strict_budget_used)}</td><td>{_g(c.fp32_tf32_budget_used)}</td>"
                       f"<td>{_e(c.message)}</td></tr>")
        out.append("</table></div>")
    else:
        out.append("<p>No correctness trial ran.</p>")
    out.append("<h2>Integrity checks</h2>")
    if r.integrity:
        out.append('<div class="scroll"><table><tr><th>Check</th><th>result</th><th>evidence</th></tr>')
        for c in r.integrity:
            out.append(f'<tr class="{"pass" if c.passed else "fail"}"><td>{_e(c.name)}</td>'
                       f'<td>{"pass" if c.passed else "FAILED"}</td><td>{_e(c.evidence)}</td></tr>')
        out.append("</table></div>")
    else:
        out.append("<p>Not checked: this protocol runs no integrity checks.</p>")
    return out


def _kernel(r: Record, source: str | None, link: str | None) -> list[str]:
    k = r.kernel
    where = (f" · <code>{_e(k.path)}</code>" if k.path else "") + (f" row {k.row}" if k.row is not None else "")
    where += f" at commit <code>{_e(k.commit)}</code>" if k.commit else ""
    out = ["<h2>Kernel</h2>", f"<p>{_e(k.language)} · sha256 <code>{_e(k.sha256)}</code>{where}</p>"]
    if link:
        out.append(f'<p><a href="{_e(link)}" rel="nofollow noopener">Kernel source in its public repository</a></p>')
    if source:
        out.append(f'<pre class="source"><code>{_e(source)}</code></pre>')
    elif not link:
        out.append("<p>The kernel's source is not stored in this repository.</p>")
    return out


def _public_source(r: Record, context: RecordContext | None) -> str | None:
    """A public kernel's text from the local datasets folder, when its sha256 is the record's."""
    k = r.kernel
    if context is None or k.url is None:
        return None
    return kernel_text(context.datasets_dir, k.row, k.sha256)


def render_record_page(record: Record, row: dict, repo_root: Path, badge: dict | None = None,
                       context: RecordContext | None = None) -> str:
    """HTML of one record's page; ``row`` is the record's flattened row (its path, page URL and timestamp)."""
    r, p = record, record.problem
    root = up_to_root(row["page"])
    name, pname = _e(r.model.name), _e(p.name)
    parts = [
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{name} · {pname} · {_e(r.protocol.name)} — KernelVerdict</title>\n"
        f'<link rel="stylesheet" href="{root}assets/kverdict-record.css">\n<link rel="icon" href="{root}assets/images/favicon.png">\n'
        f'<script src="{root}assets/kverdict-record.js" data-root="{root}"></script>\n</head>\n<body>\n'
        f'<header><a href="{root}">KernelVerdict</a> · <a href="{root}leaderboard/">Leaderboard</a> · '
        f'<a href="{_e(root + model_url(r.model.name))}">{name}</a> · '
        f'<a href="{_e(root + problem_url(p.suite, p.level, p.id, p.name))}">{pname}</a>'
        '<button type="button" class="palette" id="palette" hidden>dark</button></header>\n<main>\n'
        f'<h1>{name} on {pname}</h1>\n<p class="status status-{_e(r.status)}">{_e(r.status)} · {_e(r.protocol.name)} protocol</p>',
    ]
    if context is not None:
        physics = check(context.floors, r.environment.hardware, p.suite, p.level, p.id, p.source_sha256, row.get("cand_ms"))
        if physics.verdict == "impossible" or r.timing is not None:
            parts.append(_physics_block(physics))
    newer = superseded(r.protocol.name, r.protocol.version)
    if newer:
        parts.append(f'<p class="warn superseded">Judged under {_e(r.protocol.name)} {_e(r.protocol.version)}, whose rules '
                     f'{_e(r.protocol.name)} {_e(newer)} has replaced (see the <a href="{root}methodology/">methodology '
                     f'page</a>): this verdict is {_e(r.protocol.version)}\'s until the record is judged again.</p>')
    parts.append(_other_protocol(r, row, context, root))
    if badge:
        parts.append(_badge(badge, root))
    parts += _facts(r, row)
    if r.error:
        parts.append(f"<h2>Error</h2><pre>{_e(r.error)}</pre>")
    parts += ["<h2>Timings</h2>", '<div class="scroll"><table>' + TIMING_HEAD]
    if r.timing:
        parts.append(timing_row("candidate", r.timing, r.memory.candidate_peak_bytes))
    parts += [timing_row(f"baseline {b.kind}", b.timing, b.peak_memory_bytes) for b in r.baselines]
    parts.append("</table></div>")
    eager_host_bound = [t for t in (r.timing, *(b.timing for b in r.baselines)) if t and t.host_bound
                        and t.method == "cuda_events"]
    if eager_host_bound:
        parts.append('<p class="warn">Host-bound eager timing: the host, not the GPU, set '
                     + ("this time" if len(eager_host_bound) == 1 else "these times")
                     + " (the call could not be timed as CUDA graph replays). Such times follow the host's speed "
                     "and can move by 10% or more between runs: read this speedup as approximate.</p>")
    paired = [b.kind for b in r.baselines if r.timing and r.timing.round_medians_ms and b.timing.round_medians_ms]
    if paired:
        rounds = min(len(r.timing.round_medians_ms or []), *(len(b.timing.round_medians_ms or [])
                                                             for b in r.baselines if b.kind in paired))
        parts.append(f"<p>Timed in turns with {_e(', '.join(paired))} ({rounds} rounds): the speedups against "
                     + ("it" if len(paired) == 1 else "them") + " are the median of the per-round ratios (the "
                     "baseline's median in a round over the candidate's), not the ratio of the medians above.</p>")
    if r.timing and r.timing.note:
        parts.append(f"<p>{_e(r.timing.note)}</p>")
    parts += _checks(r)
    if r.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in r.notes) + "</ul>")
    parts += _kernel(r, kernel_source(r, repo_root) or _public_source(r, context), kernel_link(r))
    parts.append("</main>\n</body>\n</html>\n")
    return "\n".join(parts)


def write_record_page(site_dir: Path, repo_root: Path, record: Record, row: dict, badge: dict | None = None,
                      context: RecordContext | None = None) -> Path:
    """Render and write one record's page into the built site."""
    out = Path(site_dir, row["page"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(render_record_page(record, row, repo_root, badge, context).encode("utf-8"))
    return out
