"""Suite problems the first H200 audit flagged as degenerate now pass the audit's value checks.

The degeneracies only show at realistic sizes (a softmax over 8192 outputs, a global average over a
56x56 map, eight layers of shrinking activations), so each problem is probed on the CPU with its real
per-sample shape and a small batch: the audit's findings depend on each sample, not on how many.
"""

from __future__ import annotations

import pytest

from evaluations.audit import ATOL, findings_for, probe_problem
from evaluations.suite import SUITE_DIR

PROBE_SIZES = {
    "level1/028_frobenius_normalize.py": {"batch_size": 2, "rows": 512, "cols": 512},
    "level2/005_gemm_softmax.py": {"batch_size": 32},
    "level2/006_gemm_logsumexp_relu.py": {"batch_size": 32},
    "level2/016_scaled_softmax_with_bias.py": {"batch_size": 8},
    "level3/007_vgg_style_cnn.py": {"batch_size": 1},
    "level3/012_mlp_deep.py": {"batch_size": 64},
}
"""Problem -> size constants overridden for the probe (everything else stays at its real size)."""


def _source(rel: str, sizes: dict[str, int]) -> str:
    """The problem's source with its size constants reassigned after the originals."""
    text = (SUITE_DIR / rel).read_text(encoding="utf-8")
    return text + "\n" + "\n".join(f"{name} = {value!r}" for name, value in sizes.items()) + "\n"


@pytest.mark.parametrize("rel", sorted(PROBE_SIZES))
def test_formerly_degenerate_problem_has_no_audit_finding(rel: str) -> None:
    probe = probe_problem(_source(rel, PROBE_SIZES[rel]), "cpu", 3, ATOL, False)
    findings = findings_for(probe, ATOL)
    assert findings == [], "; ".join(f"{f.code}: {f.evidence}" for f in findings)
    assert max(probe.draw_max_abs) > 10 * ATOL, "output too close to zero for the standard tolerance to mean anything"
