"""Analytic counts, tags and reduced sizes of every problem of the KernelVerdict suite.

Each entry is written from the problem's size constants (``c`` is the loaded problem module, so the
same formula serves the real size and the reduced one the tests run):

- ``mm``: FLOPs of matrix products, convolutions and attention, 2 per multiply-add;
- ``ew``: an estimate of the elementwise and reduction arithmetic (about one FLOP per operation
  per element); left at 0 where it is negligible beside the matrix work (the level-3 networks);
- ``nbytes``: the fewest bytes one call must move: every input and parameter read once, every
  output written once (4 bytes per float32, 2 per bfloat16, 8 per int64);
- ``reduced``: size constants that shrink the problem for CPU tests (``evaluations.suite._meta``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

Count = Callable[[ModuleType], float]
F4 = 4


def _zero(c: ModuleType) -> float:
    return 0.0


@dataclass(frozen=True)
class Spec:
    """Metadata of one suite problem, as formulas of its size constants."""

    tags: tuple[str, ...]
    reduced: dict[str, Any]
    mm: Count
    nbytes: Count
    ew: Count = _zero
    dtype: str = "float32"
    extra: dict[str, Any] = field(default_factory=dict)


def _lin(c: ModuleType, out: int | None = None) -> float:
    """Bytes of x, W, b and y of a linear layer ``batch_size x in_features -> out``."""
    o = c.out_features if out is None else out
    return F4 * (c.batch_size * c.in_features + c.in_features * o + o + c.batch_size * o)


def _conv(c: ModuleType, k: int, out_hw: int, params_extra: int = 0, bias: bool = True, out_elems: int | None = None) -> float:
    """Bytes of a 2D convolution: input, weights (+bias, +extra parameters) and output."""
    x = c.batch_size * c.in_channels * c.height * c.width
    w = c.out_channels * c.in_channels * k * k + (c.out_channels if bias else 0) + params_extra
    y = out_elems if out_elems is not None else c.batch_size * c.out_channels * out_hw
    return F4 * (x + w + y)


def _conv_mm(c: ModuleType, k: int) -> float:
    return 2.0 * c.batch_size * c.out_channels * c.height * c.width * c.in_channels * k * k


def _rc(c: ModuleType) -> int:
    return c.rows * c.cols


def _nchw(c: ModuleType) -> int:
    return c.batch_size * c.channels * c.height * c.width


GEMM_SMALL = {"M": 64, "K": 48, "N": 32}
LIN_SMALL = {"batch_size": 32, "in_features": 48, "out_features": 64}
CONV_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 32, "height": 12, "width": 12}
RC_SMALL = {"rows": 64, "cols": 96}
NCHW_SMALL = {"batch_size": 2, "channels": 32, "height": 8, "width": 8}

LEVEL1: dict[str, Spec] = {
    "001_gemm_square.py": Spec(("gemm",), {"N": 64}, lambda c: 2.0 * c.N**3, lambda c: F4 * 3 * c.N**2),
    "002_gemm_tall_skinny.py": Spec(("gemm", "tall-skinny"), {"M": 256, "K": 64, "N": 48},
                                    lambda c: 2.0 * c.M * c.K * c.N, lambda c: F4 * (c.M * c.K + c.K * c.N + c.M * c.N)),
    "003_gemm_transposed_a.py": Spec(("gemm", "transpose"), GEMM_SMALL,
                                     lambda c: 2.0 * c.M * c.K * c.N, lambda c: F4 * (c.M * c.K + c.K * c.N + c.M * c.N)),
    "004_gemm_transposed_b.py": Spec(("gemm", "transpose"), GEMM_SMALL,
                                     lambda c: 2.0 * c.M * c.K * c.N, lambda c: F4 * (c.M * c.K + c.K * c.N + c.M * c.N)),
    "005_gemm_large_k.py": Spec(("gemm", "split-k"), {"M": 16, "K": 512, "N": 24},
                                lambda c: 2.0 * c.M * c.K * c.N, lambda c: F4 * (c.M * c.K + c.K * c.N + c.M * c.N)),
    "006_gemv.py": Spec(("gemv", "memory-bound"), {"M": 128, "K": 96},
                        lambda c: 2.0 * c.M * c.K, lambda c: F4 * (c.M * c.K + c.K + c.M)),
    "007_batched_gemm.py": Spec(("gemm", "batched"), {"B": 4, "N": 32},
                                lambda c: 2.0 * c.B * c.N**3, lambda c: F4 * 3 * c.B * c.N**2),
    "008_linear.py": Spec(("gemm", "linear"), LIN_SMALL,
                          lambda c: 2.0 * c.batch_size * c.in_features * c.out_features, _lin,
                          ew=lambda c: c.batch_size * c.out_features),
    "009_diag_matmul.py": Spec(("elementwise", "broadcast", "memory-bound"), {"M": 128, "N": 64}, _zero,
                               lambda c: F4 * (c.M + 2 * c.M * c.N), ew=lambda c: c.M * c.N),
    "010_conv2d_3x3.py": Spec(("conv", "conv2d"), CONV_SMALL, lambda c: _conv_mm(c, 3),
                              lambda c: _conv(c, 3, c.height * c.width)),
    "011_conv2d_pointwise.py": Spec(("conv", "conv2d", "pointwise"), CONV_SMALL, lambda c: _conv_mm(c, 1),
                                    lambda c: _conv(c, 1, c.height * c.width)),
    "012_conv2d_depthwise.py": Spec(("conv", "conv2d", "depthwise", "memory-bound"), NCHW_SMALL,
                                    lambda c: 2.0 * _nchw(c) * 9, lambda c: F4 * (2 * _nchw(c) + 10 * c.channels)),
    "013_conv2d_stem_7x7_stride2.py": Spec(("conv", "conv2d", "strided"), {**CONV_SMALL, "in_channels": 3, "height": 16, "width": 16},
                                           lambda c: 2.0 * c.batch_size * c.out_channels * (c.height // 2) * (c.width // 2) * c.in_channels * 49,
                                           lambda c: _conv(c, 7, (c.height // 2) * (c.width // 2), bias=False)),
    "014_conv1d.py": Spec(("conv", "conv1d"), {"batch_size": 2, "in_channels": 8, "out_channels": 16, "length": 40},
                          lambda c: 2.0 * c.batch_size * c.out_channels * c.length * c.in_channels * 5,
                          lambda c: F4 * (c.batch_size * c.in_channels * c.length + c.out_channels * (c.in_channels * 5 + 1)
                                          + c.batch_size * c.out_channels * c.length)),
    "015_conv3d.py": Spec(("conv", "conv3d"), {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 8, "width": 8},
                          lambda c: 2.0 * c.batch_size * c.out_channels * c.depth * c.height * c.width * c.in_channels * 27,
                          lambda c: F4 * ((c.batch_size * c.depth * c.height * c.width) * (c.in_channels + c.out_channels)
                                          + c.out_channels * (c.in_channels * 27 + 1))),
    "016_conv_transpose2d.py": Spec(("conv", "conv-transpose"), CONV_SMALL,
                                    lambda c: 2.0 * c.batch_size * c.in_channels * c.height * c.width * c.out_channels * 16,
                                    lambda c: _conv(c, 4, 4 * c.height * c.width)),
    "017_batchnorm2d.py": Spec(("normalization", "batchnorm", "memory-bound"), NCHW_SMALL, _zero,
                               lambda c: F4 * (2 * _nchw(c) + 2 * c.channels), ew=lambda c: 8 * _nchw(c)),
    "018_layernorm.py": Spec(("normalization", "layernorm", "memory-bound"), {"rows": 64, "hidden": 96}, _zero,
                             lambda c: F4 * (2 * c.rows * c.hidden + 2 * c.hidden), ew=lambda c: 8 * c.rows * c.hidden),
    "019_groupnorm.py": Spec(("normalization", "groupnorm", "memory-bound"), {**NCHW_SMALL, "groups": 8}, _zero,
                             lambda c: F4 * (2 * _nchw(c) + 2 * c.channels), ew=lambda c: 8 * _nchw(c)),
    "020_rmsnorm.py": Spec(("normalization", "rmsnorm", "memory-bound"), {"rows": 64, "hidden": 96}, _zero,
                           lambda c: F4 * (2 * c.rows * c.hidden + c.hidden), ew=lambda c: 5 * c.rows * c.hidden),
    "021_instancenorm2d.py": Spec(("normalization", "instancenorm", "memory-bound"), NCHW_SMALL, _zero,
                                  lambda c: F4 * (2 * _nchw(c) + 2 * c.channels), ew=lambda c: 8 * _nchw(c)),
    "022_softmax.py": Spec(("softmax", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c), ew=lambda c: 5 * _rc(c)),
    "023_log_softmax.py": Spec(("softmax", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c), ew=lambda c: 5 * _rc(c)),
    "024_sum_rows.py": Spec(("reduction", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * (_rc(c) + c.rows), ew=_rc),
    "025_max_middle_dim.py": Spec(("reduction", "memory-bound"), {"dim0": 4, "dim1": 32, "dim2": 16}, _zero,
                                  lambda c: F4 * (c.dim0 * c.dim1 * c.dim2 + c.dim0 * c.dim2), ew=lambda c: c.dim0 * c.dim1 * c.dim2),
    "026_argmin_rows.py": Spec(("reduction", "argmin", "memory-bound"), RC_SMALL, _zero,
                               lambda c: F4 * _rc(c) + 8 * c.rows, ew=_rc),
    "027_cumsum.py": Spec(("scan", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c), ew=_rc),
    "028_frobenius_normalize.py": Spec(("reduction", "normalization", "memory-bound"), {"batch_size": 4, "rows": 32, "cols": 48},
                                       _zero, lambda c: F4 * 2 * c.batch_size * _rc(c), ew=lambda c: 3 * c.batch_size * _rc(c)),
    "029_relu.py": Spec(("activation", "elementwise", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c), ew=_rc),
    "030_gelu_tanh.py": Spec(("activation", "elementwise", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c),
                             ew=lambda c: 8 * _rc(c)),
    "031_silu.py": Spec(("activation", "elementwise", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c),
                        ew=lambda c: 4 * _rc(c)),
    "032_softplus.py": Spec(("activation", "elementwise", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * 2 * _rc(c),
                            ew=lambda c: 4 * _rc(c)),
    "033_attention_sdpa.py": Spec(("attention",), {"batch_size": 2, "heads": 2, "seq_len": 32, "head_dim": 16},
                                  lambda c: 4.0 * c.batch_size * c.heads * c.seq_len**2 * c.head_dim,
                                  lambda c: F4 * 4 * c.batch_size * c.heads * c.seq_len * c.head_dim,
                                  ew=lambda c: 5 * c.batch_size * c.heads * c.seq_len**2),
    "034_attention_explicit.py": Spec(("attention",), {"batch_size": 2, "heads": 2, "seq_len": 32, "head_dim": 16},
                                      lambda c: 4.0 * c.batch_size * c.heads * c.seq_len**2 * c.head_dim,
                                      lambda c: F4 * 4 * c.batch_size * c.heads * c.seq_len * c.head_dim,
                                      ew=lambda c: 6 * c.batch_size * c.heads * c.seq_len**2),
    "035_cross_entropy.py": Spec(("loss", "softmax", "memory-bound"), {"batch_size": 64, "num_classes": 96}, _zero,
                                 lambda c: F4 * (c.batch_size * c.num_classes + 1) + 8 * c.batch_size,
                                 ew=lambda c: 5 * c.batch_size * c.num_classes),
    "036_mse_loss.py": Spec(("loss", "reduction", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * (2 * _rc(c) + 1),
                            ew=lambda c: 3 * _rc(c)),
    "037_huber_loss.py": Spec(("loss", "reduction", "memory-bound"), RC_SMALL, _zero, lambda c: F4 * (2 * _rc(c) + 1),
                              ew=lambda c: 5 * _rc(c)),
    "038_cosine_embedding_loss.py": Spec(("loss", "reduction", "memory-bound"), {"rows": 64, "dim": 96}, _zero,
                                         lambda c: F4 * (2 * c.rows * c.dim + 1), ew=lambda c: 6 * c.rows * c.dim),
    "039_maxpool2d.py": Spec(("pooling", "memory-bound"), {**NCHW_SMALL, "height": 12, "width": 12}, _zero,
                             lambda c: F4 * (_nchw(c) + c.batch_size * c.channels * (c.height // 2) * (c.width // 2)),
                             ew=lambda c: 9 * c.batch_size * c.channels * (c.height // 2) * (c.width // 2)),
    "040_gemm_bf16.py": Spec(("gemm", "bf16"), {"N": 64}, lambda c: 2.0 * c.N**3, lambda c: 2.0 * 3 * c.N**2, dtype="bfloat16"),
}


def _lin_mm(c: ModuleType, out: int | None = None) -> float:
    return 2.0 * c.batch_size * c.in_features * (c.out_features if out is None else out)


def _hw(c: ModuleType) -> int:
    return c.height * c.width


CONV128_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 32, "height": 12, "width": 12}

LEVEL2: dict[str, Spec] = {
    "001_gemm_bias_relu_scale.py": Spec(("gemm", "fused", "activation"), LIN_SMALL, _lin_mm, _lin,
                                        ew=lambda c: 3 * c.batch_size * c.out_features),
    "002_gemm_gelu_layernorm.py": Spec(("gemm", "fused", "layernorm"), LIN_SMALL, _lin_mm,
                                       lambda c: _lin(c) + F4 * 2 * c.out_features, ew=lambda c: 17 * c.batch_size * c.out_features),
    "003_gemm_sigmoid_rowsum.py": Spec(("gemm", "fused", "reduction"), LIN_SMALL, _lin_mm,
                                       lambda c: F4 * (c.batch_size * c.in_features + (c.in_features + 1) * c.out_features + c.batch_size),
                                       ew=lambda c: 6 * c.batch_size * c.out_features),
    "004_swiglu.py": Spec(("gemm", "fused", "gated"), {"batch_size": 32, "in_features": 48, "hidden": 64},
                          lambda c: 4.0 * c.batch_size * c.in_features * c.hidden,
                          lambda c: F4 * (c.batch_size * c.in_features + 2 * c.in_features * c.hidden + c.batch_size * c.hidden),
                          ew=lambda c: 5 * c.batch_size * c.hidden),
    "005_gemm_softmax.py": Spec(("gemm", "fused", "softmax"), {**LIN_SMALL, "group_size": 16}, _lin_mm, _lin,
                                ew=lambda c: 6 * c.batch_size * c.out_features),
    "006_gemm_logsumexp_relu.py": Spec(("gemm", "fused", "reduction"), {**LIN_SMALL, "group_size": 16}, _lin_mm,
                                       lambda c: F4 * (c.batch_size * c.in_features + (c.in_features + 1) * c.out_features
                                                       + c.batch_size * c.out_features // c.group_size),
                                       ew=lambda c: 4 * c.batch_size * c.out_features),
    "007_bmm_bias_tanh.py": Spec(("gemm", "batched", "fused"), {"B": 4, "N": 32}, lambda c: 2.0 * c.B * c.N**3,
                                 lambda c: F4 * (3 * c.B * c.N**2 + c.N), ew=lambda c: 5 * c.B * c.N**2),
    "008_conv2d_bias_relu.py": Spec(("conv", "fused", "activation"), CONV128_SMALL, lambda c: _conv_mm(c, 3),
                                    lambda c: _conv(c, 3, _hw(c)), ew=lambda c: 2 * c.batch_size * c.out_channels * _hw(c)),
    "009_conv2d_batchnorm_relu.py": Spec(("conv", "fused", "batchnorm"), CONV_SMALL, lambda c: _conv_mm(c, 3),
                                         lambda c: _conv(c, 3, _hw(c), params_extra=c.out_channels),
                                         ew=lambda c: 9 * c.batch_size * c.out_channels * _hw(c)),
    "010_conv2d_groupnorm_silu.py": Spec(("conv", "fused", "groupnorm"), CONV_SMALL, lambda c: _conv_mm(c, 3),
                                         lambda c: _conv(c, 3, _hw(c), params_extra=2 * c.out_channels),
                                         ew=lambda c: 12 * c.batch_size * c.out_channels * _hw(c)),
    "011_conv2d_maxpool_hardtanh.py": Spec(("conv", "fused", "pooling"), CONV128_SMALL, lambda c: _conv_mm(c, 3),
                                           lambda c: _conv(c, 3, _hw(c) // 4), ew=lambda c: 2 * c.batch_size * c.out_channels * _hw(c)),
    "012_conv_transpose2d_bias_gelu.py": Spec(("conv", "conv-transpose", "fused"), CONV_SMALL,
                                              lambda c: 2.0 * c.batch_size * c.in_channels * _hw(c) * c.out_channels * 16,
                                              lambda c: _conv(c, 4, 4 * _hw(c), params_extra=c.out_channels),
                                              ew=lambda c: 10 * c.batch_size * c.out_channels * 4 * _hw(c)),
    "013_conv3d_leakyrelu_avgpool.py": Spec(("conv", "conv3d", "fused", "pooling"),
                                            {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 8, "width": 8},
                                            lambda c: 2.0 * c.batch_size * c.out_channels * c.depth * _hw(c) * c.in_channels * 27,
                                            lambda c: F4 * (c.batch_size * c.in_channels * c.depth * _hw(c) + c.out_channels * (c.in_channels * 27 + 1)
                                                            + c.batch_size * c.out_channels * c.depth * _hw(c) // 8),
                                            ew=lambda c: 3 * c.batch_size * c.out_channels * c.depth * _hw(c)),
    "014_conv2d_mish_spatial_mean.py": Spec(("conv", "fused", "reduction"), CONV_SMALL, lambda c: _conv_mm(c, 3),
                                            lambda c: _conv(c, 3, 1), ew=lambda c: 8 * c.batch_size * c.out_channels * _hw(c)),
    "015_residual_add_layernorm.py": Spec(("layernorm", "fused", "memory-bound"), {"rows": 64, "hidden": 96}, _zero,
                                          lambda c: F4 * (3 * c.rows * c.hidden + 2 * c.hidden), ew=lambda c: 9 * c.rows * c.hidden),
    "016_scaled_softmax_with_bias.py": Spec(("softmax", "fused", "attention", "memory-bound"), {"batch_size": 8, "heads": 2, "tokens": 16},
                                            _zero, lambda c: F4 * (2 * c.batch_size + 1) * c.heads * c.tokens**2,
                                            ew=lambda c: 7 * c.batch_size * c.heads * c.tokens**2),
    "017_bias_gelu_residual.py": Spec(("activation", "fused", "memory-bound"), RC_SMALL, _zero,
                                      lambda c: F4 * (3 * _rc(c) + c.cols), ew=lambda c: 10 * _rc(c)),
    "018_gemm_groupnorm_hardtanh.py": Spec(("gemm", "fused", "groupnorm"), {**LIN_SMALL, "out_features": 128}, _lin_mm,
                                           lambda c: _lin(c) + F4 * 2 * c.out_features, ew=lambda c: 11 * c.batch_size * c.out_features),
    "019_gemm_batchnorm_tanh.py": Spec(("gemm", "fused", "batchnorm"), LIN_SMALL, _lin_mm,
                                       lambda c: _lin(c) + F4 * 2 * c.out_features, ew=lambda c: 13 * c.batch_size * c.out_features),
    "020_gemm_l2_normalize.py": Spec(("gemm", "fused", "normalization"), LIN_SMALL, _lin_mm, _lin,
                                     ew=lambda c: 4 * c.batch_size * c.out_features),
    "021_conv1d_gelu_global_maxpool.py": Spec(("conv", "conv1d", "fused", "reduction"),
                                              {"batch_size": 2, "in_channels": 8, "out_channels": 16, "length": 40},
                                              lambda c: 2.0 * c.batch_size * c.out_channels * c.length * c.in_channels * 5,
                                              lambda c: F4 * (c.batch_size * c.in_channels * c.length + c.out_channels * (c.in_channels * 5 + 1)
                                                              + c.batch_size * c.out_channels),
                                              ew=lambda c: 10 * c.batch_size * c.out_channels * c.length),
    "022_conv2d_shift_tanh_avgpool.py": Spec(("conv", "fused", "pooling"), CONV128_SMALL, lambda c: _conv_mm(c, 3),
                                             lambda c: _conv(c, 3, _hw(c) // 4), ew=lambda c: 8 * c.batch_size * c.out_channels * _hw(c)),
}


def _transformer_params(d: int, f: int) -> int:
    return 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)


def _vgg_params(classes: int) -> int:
    return (64 * 27 + 64) + (64 * 64 * 9 + 64) + (128 * 64 * 9 + 128) + (128 * 128 * 9 + 128) + 128 * 49 * classes + classes


def _ae_params() -> int:
    return (64 * 3 * 16 + 64) + (128 * 64 * 16 + 128) + (128 * 64 * 16 + 64) + (64 * 3 * 16 + 3)


def _mbconv_params(c: int, h: int) -> int:
    return c * h + 2 * h + h * 9 + 2 * h + h * c + 2 * c


def _mixer_params(t: int, ch: int, th: int, chh: int) -> int:
    return 4 * ch + (t * th + th) + (th * t + t) + (ch * chh + chh) + (chh * ch + ch)


LEVEL3: dict[str, Spec] = {
    "001_mlp_3layer.py": Spec(("mlp", "gemm"), {"batch_size": 16, "in_features": 32, "hidden": 48, "out_features": 24},
                              lambda c: 2.0 * c.batch_size * (c.in_features * c.hidden + c.hidden**2 + c.hidden * c.out_features),
                              lambda c: F4 * (c.batch_size * (c.in_features + c.out_features) + (c.in_features + 1) * c.hidden
                                              + (c.hidden + 1) * c.hidden + (c.hidden + 1) * c.out_features)),
    "002_transformer_encoder_block.py": Spec(("transformer", "attention", "gemm"),
                                             {"batch_size": 2, "seq_len": 16, "d_model": 32, "heads": 4, "d_ff": 64},
                                             lambda c: 2.0 * c.batch_size * c.seq_len * (4 * c.d_model**2 + 2 * c.d_model * c.d_ff)
                                             + 4.0 * c.batch_size * c.seq_len**2 * c.d_model,
                                             lambda c: F4 * (2 * c.batch_size * c.seq_len * c.d_model + _transformer_params(c.d_model, c.d_ff))),
    "003_resnet_basic_block.py": Spec(("cnn", "resnet", "conv", "batchnorm"), NCHW_SMALL,
                                      lambda c: 4.0 * c.batch_size * c.channels**2 * _hw(c) * 9,
                                      lambda c: F4 * (2 * _nchw(c) + 2 * 9 * c.channels**2 + 4 * c.channels)),
    "004_resnet_bottleneck_block.py": Spec(("cnn", "resnet", "conv", "batchnorm"), {**NCHW_SMALL, "mid_channels": 8},
                                           lambda c: 2.0 * c.batch_size * _hw(c) * (2 * c.channels * c.mid_channels + 9 * c.mid_channels**2),
                                           lambda c: F4 * (2 * _nchw(c) + 2 * c.channels * c.mid_channels + 9 * c.mid_channels**2
                                                           + 4 * c.mid_channels + 2 * c.channels)),
    "005_lstm.py": Spec(("rnn", "lstm", "gemm"), {"batch_size": 4, "seq_len": 6, "input_size": 16, "hidden_size": 24},
                        lambda c: 2.0 * c.batch_size * c.seq_len * 4 * c.hidden_size * (c.input_size + c.hidden_size),
                        lambda c: F4 * (c.batch_size * c.seq_len * (c.input_size + c.hidden_size)
                                        + 4 * c.hidden_size * (c.input_size + c.hidden_size + 2))),
    "006_gru.py": Spec(("rnn", "gru", "gemm"), {"batch_size": 4, "seq_len": 6, "input_size": 16, "hidden_size": 24},
                       lambda c: 2.0 * c.batch_size * c.seq_len * 3 * c.hidden_size * (c.input_size + c.hidden_size),
                       lambda c: F4 * (c.batch_size * c.seq_len * (c.input_size + c.hidden_size)
                                       + 3 * c.hidden_size * (c.input_size + c.hidden_size + 2))),
    "007_vgg_style_cnn.py": Spec(("cnn", "conv", "pooling"), {"batch_size": 2, "height": 16, "width": 16, "num_classes": 10},
                                 lambda c: 2.0 * c.batch_size * (_hw(c) * (3 + 64) * 64 * 9 + (_hw(c) // 4) * (64 + 128) * 128 * 9
                                                                 + 128 * 49 * c.num_classes),
                                 lambda c: F4 * (c.batch_size * (3 * _hw(c) + c.num_classes) + _vgg_params(c.num_classes))),
    "008_multihead_attention_layer.py": Spec(("transformer", "attention", "gemm"),
                                             {"batch_size": 2, "seq_len": 16, "embed_dim": 32, "heads": 4},
                                             lambda c: 8.0 * c.batch_size * c.seq_len * c.embed_dim**2
                                             + 4.0 * c.batch_size * c.seq_len**2 * c.embed_dim,
                                             lambda c: F4 * (2 * c.batch_size * c.seq_len * c.embed_dim + 4 * c.embed_dim**2 + 4 * c.embed_dim)),
    "009_mbconv_block.py": Spec(("cnn", "mobilenet", "conv", "depthwise"), {**NCHW_SMALL, "channels": 8},
                                lambda c: 2.0 * c.batch_size * _hw(c) * c.channels * c.expansion * (2 * c.channels + 9),
                                lambda c: F4 * (2 * _nchw(c) + _mbconv_params(c.channels, c.channels * c.expansion))),
    "010_mlp_mixer_block.py": Spec(("mlp", "mixer", "gemm"),
                                   {"batch_size": 2, "tokens": 16, "channels": 32, "token_hidden": 24, "channel_hidden": 48},
                                   lambda c: 4.0 * c.batch_size * (c.channels * c.tokens * c.token_hidden + c.tokens * c.channels * c.channel_hidden),
                                   lambda c: F4 * (2 * c.batch_size * c.tokens * c.channels
                                                   + _mixer_params(c.tokens, c.channels, c.token_hidden, c.channel_hidden))),
    "011_llama_ffn_block.py": Spec(("mlp", "gated", "rmsnorm", "gemm"), {"tokens": 16, "d_model": 32, "d_ff": 48},
                                   lambda c: 6.0 * c.tokens * c.d_model * c.d_ff,
                                   lambda c: F4 * (2 * c.tokens * c.d_model + c.d_model + 3 * c.d_model * c.d_ff)),
    "012_mlp_deep.py": Spec(("mlp", "gemm"), {"batch_size": 16, "width": 32, "depth": 3},
                            lambda c: 2.0 * c.batch_size * c.width**2 * c.depth,
                            lambda c: F4 * (2 * c.batch_size * c.width + c.depth * (c.width**2 + c.width))),
    "013_conv_autoencoder.py": Spec(("cnn", "conv", "conv-transpose"), {"batch_size": 2, "height": 16, "width": 16},
                                    lambda c: 2.0 * 2 * c.batch_size * 16 * (64 * 3 * _hw(c) // 4 + 128 * 64 * _hw(c) // 16),
                                    lambda c: F4 * (2 * c.batch_size * 3 * _hw(c) + _ae_params())),
}

SPECS: dict[int, dict[str, Spec]] = {1: LEVEL1, 2: LEVEL2, 3: LEVEL3}
"""Level -> file name -> spec."""
