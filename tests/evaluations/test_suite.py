"""The KernelVerdict suite: every problem loads, runs at a reduced size, and its metadata is right.

FLOPs are checked against torch's own FlopCounterMode (an independent count of matrix products,
convolutions and attention) and bytes against the tensors the problem really creates, both at the
real size on the meta device (no memory, no arithmetic) and at the reduced size on the CPU.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from evaluations.suite import META_PATH, build_meta, load_problem_module, render_meta, suite_files

FILES = suite_files()
IDS = [f"level{f.level}/{f.path.stem}" for f in FILES]
GIB = 1024**3
FUSED_ON_CPU = {"033_attention_sdpa.py", "002_transformer_encoder_block.py", "008_multihead_attention_layer.py",
                "005_lstm.py"}
"""Problems whose CPU path runs fused attention or LSTM kernels that FlopCounterMode cannot see
(their FLOPs are still checked at real size on the meta device)."""


class Measured:
    """What one forward call really touches: matrix FLOPs and the bytes of inputs, parameters and outputs."""

    def __init__(self, module, device: str) -> None:
        torch.manual_seed(0)
        with torch.device(device):
            model = module.Model(*module.get_init_inputs())
            inputs = module.get_inputs()
            counter = FlopCounterMode(display=False)
            with torch.no_grad(), counter:
                out = model(*inputs)
        self.outputs = list(out) if isinstance(out, (tuple, list)) else [out]
        self.flops = counter.get_total_flops()
        self.bytes = (sum(t.nbytes for t in inputs if isinstance(t, torch.Tensor))
                      + sum(p.nbytes for p in model.parameters()) + sum(o.nbytes for o in self.outputs))


def test_suite_is_large_and_covers_every_level() -> None:
    levels = [f.level for f in FILES]
    assert len(FILES) >= 60
    assert levels.count(1) >= 30 and levels.count(2) >= 15 and levels.count(3) >= 10
    tags = {t for f in FILES for t in f.spec.tags}
    for needed in ("gemm", "batched", "transpose", "conv", "normalization", "softmax", "reduction", "scan",
                   "activation", "attention", "loss", "rnn", "transformer", "resnet"):
        assert needed in tags, needed


def test_file_names_are_unique_across_levels() -> None:
    names = [f.path.name for f in FILES]
    assert len(names) == len(set(names))


def test_meta_json_is_in_sync_with_the_formulas() -> None:
    assert META_PATH.read_text(encoding="utf-8") == render_meta(build_meta()), \
        "meta.json is stale: run python -m evaluations.suite"


def test_meta_json_entries_are_complete() -> None:
    meta = json.loads(META_PATH.read_text(encoding="utf-8"))
    assert meta["suite"] == "kernelverdict"
    assert set(meta["problems"]) == {f.path.name for f in FILES}
    for f in FILES:
        entry = meta["problems"][f.path.name]
        assert set(entry) == {"level", "id", "name", "tags", "dtype", "flops", "min_bytes"}
        assert (entry["level"], entry["id"], entry["name"]) == (f.level, f.id, f.name)
        assert entry["tags"] and entry["dtype"] in ("float32", "bfloat16")
        assert entry["min_bytes"] > 0 and entry["flops"] > 0 and math.isfinite(entry["flops"])


@pytest.mark.parametrize("f", FILES, ids=IDS)
def test_real_size_counts_match_an_independent_count(f) -> None:
    module = load_problem_module(f.path)
    measured = Measured(module, "meta")
    assert measured.flops == f.spec.mm(module), "matrix FLOPs differ from FlopCounterMode"
    assert measured.bytes == f.spec.nbytes(module), "fewest bytes differ from inputs + parameters + outputs"
    assert measured.bytes < 24 * GIB / 2, "inputs, parameters and outputs alone take half of 24 GiB"


@pytest.mark.parametrize("f", FILES, ids=IDS)
def test_runs_on_the_cpu_at_reduced_size(f) -> None:
    module = load_problem_module(f.path, reduced=f.spec)
    measured = Measured(module, "cpu")
    if f.path.name not in FUSED_ON_CPU:
        assert measured.flops == f.spec.mm(module)
    assert measured.bytes == f.spec.nbytes(module)
    for out in measured.outputs:
        assert isinstance(out, torch.Tensor) and out.device.type == "cpu"
        if out.is_floating_point():
            assert torch.isfinite(out).all(), "reference output is not finite"
    assert measured.bytes < 4 * 1024**2, "reduced size is not small"
