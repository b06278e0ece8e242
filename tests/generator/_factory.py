"""Fixture record folders for the generator and site tests, built from synthetic specs (``generator.Spec``)."""

from __future__ import annotations

import json
from pathlib import Path

from generator import Spec, write_specs

XSS_MODEL = '<script>window.__kv_pwned = 1</script><img src=x onerror="window.__kv_pwned = 2">'
"""A model name that would run script if any page inserted it as HTML."""
IMPOSSIBLE_MODEL = "gamma"
"""A model with one standard record whose time is physically impossible."""
SEARCHED_PROBLEM = "40_LayerNorm"
"""A problem named the KernelBench way, which the site search finds by "layernorm"."""
FIXTURE_MODEL = "harness-examples"
"""Records of the project's own test fixtures (provider ``kernelverdict``)."""


def site_fixture(root: Path) -> Path:
    """A small but complete records folder: two models plus a hostile name, both protocols, two levels,
    several samples, every status, a reproduction, an audit report and zoo records; returns ``root``.
    Also writes ``root/../manifest.json`` for the zoo."""
    specs: list[Spec] = []
    for model, scale in (("alpha", 1.5), ("beta", 0.9), (XSS_MODEL, 1.1)):
        for pid in range(4):
            level = 1 if pid < 3 else 2
            for sample in range(2):
                s = scale * (1 + 0.1 * pid) * (1 + 0.05 * sample)
                std_status = "correct" if pid != 2 or model != "beta" else "incorrect"
                ver_status = "hacked" if (model == "alpha" and pid == 1) else std_status
                specs.append(Spec(model=model, problem_id=pid, level=level, sample=sample, protocol="standard",
                                  status=std_status, speedup=s, base_peak_bytes=1000, cand_peak_bytes=900 + 100 * pid))
                specs.append(Spec(model=model, problem_id=pid, level=level, sample=sample, protocol="verified",
                                  status=ver_status, speedup=s * 0.8, vs_eager_fp32=s * 0.95, vs_compile=s * 0.6,
                                  base_peak_bytes=1000, cand_peak_bytes=900 + 100 * pid, sol_score=0.5,
                                  failed_check="hidden-inputs" if ver_status == "hacked" else None,
                                  evidence="D4 x(-1): error budget 4.2e3 used of 1.0",
                                  precision_class=("TF32-like" if pid == 2 else "float32-like")
                                  if ver_status == "correct" else None,
                                  shape_passed={0: True, 2: False}.get(pid) if ver_status == "correct" else None))
    specs.append(Spec(model="beta", problem_id=0, protocol="verified", status="timeout", sample=5))
    originals = write_specs(root, specs)
    original = next(p for p in originals if "/alpha/verified/" in p.as_posix() and p.name.startswith("0000-"))
    write_specs(root, [Spec(model="alpha", problem_id=0, protocol="verified", speedup=1.5 * 0.8 * 1.001,
                            vs_eager_fp32=1.5 * 0.95, vs_compile=0.9, sample=0,
                            reproduces="records/" + original.relative_to(root).as_posix())])
    zoo = [Spec(model="exploit-zoo", provider="kernelverdict", problem_id=50, suite="zoo", protocol=p, status=st, speedup=40.0,
                vs_eager_fp32=41.0 if p == "verified" else None, vs_compile=30.0 if p == "verified" else None,
                failed_check="output-aliasing", evidence="output storage overlaps input 0", problem_name="relu")
           for p, st in (("standard", "correct"), ("verified", "hacked"))]
    zoo_paths = write_specs(root, zoo)
    manifest = [{"file": json.loads(zoo_paths[0].read_text())["kernel"]["path"].split("/")[-1], "kind": "exploit",
                 "problem": "relu.py", "hack": "output aliases input", "expected_check": "output-aliasing"}]
    (root.parent / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    audit = {"suite": "kernelverdict", "source": "evaluations/problems/kernelverdict", "hardware": "h200",
             "device_name": "NVIDIA H200", "torch": "2.11.0", "harness_version": "0.1.0",
             "timestamp": "2026-11-01T12:00:00Z", "atol": 1e-5, "draws": 4, "timing_checked": True, "problems": [
                 {"key": "kernelverdict/2/3", "level": 2, "id": 3, "name": "problem_2_3", "excluded": True,
                  "reason": "output is zero for every input",
                  "findings": [{"code": "zero-output", "severity": "exclude", "message": "output is zero for every input",
                                "evidence": "max |out| = 0.0 over 4 draws"}]},
                 {"key": "kernelverdict/1/0", "level": 1, "id": 0, "name": "problem_1_0",
                  "findings": [{"code": "launch-bound", "severity": "warn", "message": "launch overhead is 30% of the time"}]}]}
    (root / "_audits" / "h200").mkdir(parents=True, exist_ok=True)
    (root / "_audits" / "h200" / "kernelverdict.json").write_text(json.dumps(audit), encoding="utf-8")
    return root


def reader_fixture(root: Path) -> Path:
    """``site_fixture`` plus what a reader must be warned of: a model with a physically impossible standard
    record (its output shape is in the audit) and the project's own fixture records, which are never ranked."""
    site_fixture(root)
    write_specs(root, [
        Spec(model=IMPOSSIBLE_MODEL, problem_id=1, protocol="standard", speedup=2000.0, base_peak_bytes=1000,
             cand_peak_bytes=10),
        Spec(model=IMPOSSIBLE_MODEL, problem_id=0, protocol="standard", speedup=1.2),
        *(Spec(model=FIXTURE_MODEL, provider="kernelverdict", problem_id=pid, protocol=proto, speedup=9.0,
               vs_eager_fp32=9.0 if proto == "verified" else None) for pid in (0, 1) for proto in ("standard", "verified")),
        Spec(model=FIXTURE_MODEL, provider="kernelverdict", problem_id=40, problem_name=SEARCHED_PROBLEM,
             protocol="standard", speedup=1.1),
    ])
    audit_path = root / "_audits" / "h200" / "kernelverdict.json"
    audit = json.loads(audit_path.read_text(encoding="utf-8"))
    audit["problems"].append({"key": "kernelverdict/1/1", "level": 1, "id": 1, "name": "problem_1_1",
                              "output_shapes": [[4096, 4096]]})
    audit_path.write_text(json.dumps(audit), encoding="utf-8")
    return root
