"""Reference outputs for the precision policy: float64, float32 strict (no TF32), float32 with TF32."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from ...core import gpulock, outputs_of
from ._granted import matmul_settings, put_matmul


@contextmanager
def float32_mode(tf32: bool) -> Iterator[None]:
    """Run the body with TF32 matmul and cuDNN TF32 switched on or off, then restore the flags."""
    saved, cudnn = matmul_settings(), torch.backends.cudnn.allow_tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield
    finally:
        put_matmul(saved)
        torch.backends.cudnn.allow_tf32 = cudnn


@dataclass(frozen=True)
class ReferenceOutputs:
    """The three reference results of one input draw, each a list of tensors."""

    ref64: list[torch.Tensor]
    strict32: list[torch.Tensor]
    tf32: list[torch.Tensor]


def _as_double(values: list[Any]) -> list[Any]:
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


class References:
    """The problem's model in float32 and, where it supports it, float64."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.model64: torch.nn.Module | None = copy.deepcopy(model).double()
        self.note: str | None = None

    def run(self, inputs: list[Any]) -> ReferenceOutputs:
        """Reference outputs for ``inputs`` (which are not modified)."""
        with torch.no_grad():
            with float32_mode(tf32=False):
                strict = [o.detach() for o in outputs_of(self.model(*inputs))]
            gpulock.yield_to_timing()  # each reference is a step: a large model's three calls take seconds
            with float32_mode(tf32=True):
                tf32 = [o.detach() for o in outputs_of(self.model(*inputs))]
            gpulock.yield_to_timing()
            ref64 = self._float64(inputs, strict)
        return ReferenceOutputs(ref64, strict, tf32)

    def _float64(self, inputs: list[Any], strict: list[torch.Tensor]) -> list[torch.Tensor]:
        if self.model64 is not None:
            try:
                with float32_mode(tf32=False):
                    out = [o.detach() for o in outputs_of(self.model64(*_as_double(inputs)))]
                if len(out) == len(strict) and all(o.shape == s.shape for o, s in zip(out, strict, strict=True)):
                    return out
                raise RuntimeError("float64 outputs differ in number or shape")
            except Exception as exc:  # the model does not support float64: fall back to strict float32
                self.model64 = None
                self.note = f"reference in float32 with TF32 off (float64 failed: {type(exc).__name__})"
        return [s.double() if s.is_floating_point() else s for s in strict]
