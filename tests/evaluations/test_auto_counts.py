"""Automatic FLOP and byte counts: real KernelBench problems on the meta device, and the cases that must not crash."""

from __future__ import annotations

import pytest

from evaluations import Origin, Problem, ProblemMeta
from evaluations.suite import count_source, with_automatic_counts

F4 = 4


def _source(body: str, inputs: str, init: str = "[]", header: str = "") -> str:
    return (f"import torch\nimport torch.nn as nn\n{header}\nclass Model(nn.Module):\n{body}\n\n"
            f"def get_inputs():\n    return {inputs}\n\ndef get_init_inputs():\n    return {init}\n")


def _kb(datasets_dir, revision: str, level: int, name: str) -> str:
    return (datasets_dir / "kernelbench" / revision / "KernelBench" / f"level{level}" / name).read_text(encoding="utf-8")


def test_matmul_is_two_flops_per_multiply_add_and_reads_both_operands(datasets_dir):
    count = count_source(_kb(datasets_dir, "main", 1, "1_Square_matrix_multiplication_.py"))
    n = 4096  # N = 2048 * 2 in that file
    assert count.reason is None and count.flops == 2 * n**3
    assert count.min_bytes == F4 * 3 * n * n and count.dtype == "float32"


def test_rectangular_matmul_of_v0(datasets_dir):
    source = _kb(datasets_dir, "v0", 1, "2_Standard_matrix_multiplication_.py")
    sizes = {k: int(v) for k, v in (line.split(" = ") for line in source.splitlines() if line[:2] in ("M ", "K ", "N "))}
    count = count_source(source)
    m, k, n = sizes["M"], sizes["K"], sizes["N"]
    assert count.flops == 2 * m * n * k and count.min_bytes == F4 * (m * k + k * n + m * n)


def test_elementwise_op_moves_its_input_and_output_once(datasets_dir):
    count = count_source(_kb(datasets_dir, "main", 1, "19_ReLU.py"))
    assert count.flops == 0
    assert count.min_bytes == 2 * F4 * 4096 * 393216  # batch_size x dim of that file, read once and written once


def test_weights_count_once_beside_input_and_output(datasets_dir):
    count = count_source(_kb(datasets_dir, "v0", 2, "1_Conv2D_ReLU_BiasAdd.py"))
    b, c_in, c_out, h, k = 128, 3, 16, 32, 3  # that file's sizes; the convolution has no padding
    out = b * c_out * (h - k + 1) ** 2
    assert count.flops == 2 * out * c_in * k * k
    params = c_out * c_in * k * k + c_out + c_out  # conv weight and bias, the extra bias of shape (16, 1, 1)
    assert count.min_bytes == F4 * (b * c_in * h * h + params + out)


def test_a_problem_of_a_terabyte_is_counted_without_allocating_it():
    source = _source("    def forward(self, x):\n        return x * 2", "[torch.randn(2**38)]")
    count = count_source(source)
    assert count.reason is None and count.min_bytes == 2 * F4 * 2**38


def test_a_problem_that_asks_for_cuda_stays_on_the_meta_device():
    body = ("    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(8, 4).cuda()\n"
            "    def forward(self, x):\n        return self.lin(x.to('cuda'))")
    count = count_source(_source(body, "[torch.randn(16, 8, device='cuda').cuda()]"))
    assert count.reason is None and count.flops == 2 * 16 * 8 * 4
    assert count.min_bytes == F4 * (16 * 8 + 8 * 4 + 4 + 16 * 4)


def test_unused_inputs_and_parameters_are_not_bytes_a_kernel_must_move():
    body = ("    def __init__(self):\n        super().__init__()\n        self.unused = nn.Parameter(torch.randn(1000))\n"
            "    def forward(self, x, y):\n        return x + 1")
    count = count_source(_source(body, "[torch.randn(10), torch.randn(10**6)]"))
    assert count.min_bytes == F4 * 20


def test_half_precision_problems_say_so():
    body = "    def forward(self, q, k, v):\n        return nn.functional.scaled_dot_product_attention(q, k, v)"
    shape = "(2, 4, 128, 64)"
    count = count_source(_source(body, f"[torch.rand(*{shape}, dtype=torch.float16) for _ in range(3)]"))
    assert count.dtype == "float16" and count.flops == 2 * 2 * (2 * 4 * 128 * 128 * 64)


def test_failures_become_a_one_line_reason():
    item = _source("    def forward(self, x):\n        return x * x.sum().item()", "[torch.randn(4)]")
    assert count_source(item).reason == "RuntimeError: Tensor.item() cannot be called on meta tensors"
    broken = count_source("import nonexistent_module_xyz\n")
    assert broken.flops is None and broken.reason.startswith("ModuleNotFoundError")
    loop = _source("    def forward(self, x):\n        for _ in range(10**6):\n            x = x + 1\n        return x",
                   "[torch.randn(4)]")
    assert count_source(loop, time_cap_s=0.05).reason == "CountTimeout: counting stopped after 0.05 s"


def test_only_problems_without_hand_counts_are_counted():
    relu = _source("    def forward(self, x):\n        return torch.relu(x)", "[torch.randn(64, 64)]")
    hand = Problem(suite="s", level=1, id=1, name="hand", source=relu, origin=Origin(path="a.py"),
                   meta=ProblemMeta(flops=1.0, min_bytes=2.0, counted="hand"))
    auto = Problem(suite="s", level=1, id=2, name="auto", source=relu, origin=Origin(path="b.py"))
    broken = Problem(suite="s", level=1, id=3, name="broken", source="raise SystemError('no')\n", origin=Origin(path="c.py"))
    out = {p.name: p.meta for p in with_automatic_counts([hand, auto, broken])}
    assert out["hand"] == hand.meta
    assert (out["auto"].counted, out["auto"].flops, out["auto"].min_bytes) == ("automatic", 0.0, 2 * F4 * 64 * 64)
    assert out["broken"].counted is None and out["broken"].not_counted == "SystemError: no"


@pytest.mark.gpu
def test_counting_on_a_gpu_machine_touches_no_device_memory():
    import torch

    body = "    def forward(self, a, b):\n        return a @ b"
    count = count_source(_source(body, "[torch.randn(8192, 8192, device='cuda'), torch.randn(8192, 8192).cuda()]"))
    assert count.flops == 2 * 8192**3
    assert not torch.cuda.is_initialized() or torch.cuda.memory_allocated() == 0
