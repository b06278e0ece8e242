"""What every stage does to a call's inputs and outputs: move them to a device, list them, count their bytes."""

from __future__ import annotations

from typing import Any

import torch


def to_device(values: Any, device: torch.device) -> list[Any]:
    """Tensors of ``values`` moved to ``device``; other values unchanged."""
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def outputs_of(value: Any) -> list[Any]:
    """A call's result as a list of values (a tuple or list of outputs, or one output)."""
    return list(value) if isinstance(value, tuple | list) else [value]


def tensor_bytes(values: Any) -> int:
    """Bytes of the tensors among ``values`` (a list, or one tensor)."""
    items = values if isinstance(values, tuple | list) else [values]
    return sum(v.numel() * v.element_size() for v in items if isinstance(v, torch.Tensor))
