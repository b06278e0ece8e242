"""Global settings a candidate may change because the protocol's baselines already run with them.

The verified protocol's eager baseline allows TF32 matmul (``torch.set_float32_matmul_precision("high")``), so a
candidate that switches it on process-wide gains nothing the baseline lacks: the change is kept for the candidate's
own calls, as a user running it would have it, labelled ``sets:<label>``, and the harness's value is put back
after each of its calls, so that the references and checks in the same process run as the protocol says. Which
settings, and to which values, is the protocol table's (``schemas.Pinned.granted_state``). A change to any other
value (``"medium"``: bfloat16 matmul, which no baseline uses) is left in place for the state checks to report.

PyTorch has two ways to set the float32 matmul precision (``allow_tf32`` / ``set_float32_matmul_precision`` and,
newer, ``torch.backends.cuda.matmul.fp32_precision``); the older getters refuse to answer once the newer setter
was used (a ``RuntimeError``), so :func:`matmul_settings` reads both and says what either means.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

ALLOW_TF32 = "torch.backends.cuda.matmul.allow_tf32"
PRECISION = "float32_matmul_precision"
MATMUL_FP32 = "torch.backends.cuda.matmul.fp32_precision"
_FROM_NEW_API = {"tf32": ("True", "high"), "ieee": ("False", "highest")}
"""What the newer API's matmul setting means in the older one's terms, where the older getters refuse."""


def _read(get: Any) -> str | None:
    """A setting's value as text; ``None`` where this PyTorch has no such setting."""
    try:
        return str(get())
    except AttributeError:
        return None
    except RuntimeError as exc:  # PyTorch refuses to answer (the two APIs mixed)
        return f"unreadable ({type(exc).__name__})"


def matmul_settings() -> dict[str, str]:
    """The float32 matmul precision, by each API's name for it."""
    new = _read(lambda: torch.backends.cuda.matmul.fp32_precision)
    allow, precision = _read(lambda: torch.backends.cuda.matmul.allow_tf32), _read(torch.get_float32_matmul_precision)
    if new in _FROM_NEW_API and (str(allow).startswith("unreadable") or str(precision).startswith("unreadable")):
        allow, precision = _FROM_NEW_API[new]
    found = {ALLOW_TF32: allow, PRECISION: precision, MATMUL_FP32: new}
    return {name: value for name, value in found.items() if value is not None}


def other_precision_settings() -> dict[str, str]:
    """The newer API's process-wide and cuDNN float32 precision settings, where this PyTorch has them."""
    found = {
        "torch.backends.fp32_precision": _read(lambda: torch.backends.fp32_precision),
        "torch.backends.cudnn.conv.fp32_precision": _read(lambda: torch.backends.cudnn.conv.fp32_precision),
        "torch.backends.cudnn.rnn.fp32_precision": _read(lambda: torch.backends.cudnn.rnn.fp32_precision),
    }
    return {name: value for name, value in found.items() if value is not None}


def put_matmul(values: dict[str, str]) -> None:
    """Set the float32 matmul precision through the older API (which keeps the newer one's setting in step): the
    precision where it is given, as it decides ``allow_tf32`` (setting that afterwards would turn ``"medium"`` into
    ``"high"``); a value that is not one of its settings (one read as unreadable) is left alone."""
    if values.get(PRECISION) in ("highest", "high", "medium"):  # it sets allow_tf32 too (off only for "highest")
        torch.set_float32_matmul_precision(values[PRECISION])
    elif values.get(ALLOW_TF32) in ("True", "False"):
        torch.backends.cuda.matmul.allow_tf32 = values[ALLOW_TF32] == "True"


class GrantedState:
    """The granted settings of one evaluation: the harness's values, and those the candidate chose."""

    def __init__(self, granted: tuple[tuple[str, str, str], ...]) -> None:
        self.granted = {name: (value, label) for name, value, label in granted}
        now = matmul_settings()
        self.harness = {name: now[name] for name in self.granted if name in now}
        self.chosen: dict[str, str] = {}
        """Granted settings the candidate changed, and to what."""

    def settle(self) -> None:
        """After candidate code ran: keep what it changed to granted values and put the harness's values back. A
        change to a value the baselines do not run with stays (the state checks report it)."""
        now = matmul_settings()
        changed = {name: now.get(name) for name, value in self.harness.items() if now.get(name) != value}
        if not changed or any(value != self.granted[name][0] for name, value in changed.items()):
            return
        self.chosen.update({name: str(value) for name, value in changed.items()})
        put_matmul(self.harness)

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The candidate's chosen settings in effect for the body (its calls), the harness's again after it."""
        put_matmul(self.chosen)
        try:
            yield
        finally:
            self.settle()

    @property
    def labels(self) -> list[str]:
        """``sets:<label>`` of each granted setting the candidate changed, each label once."""
        labels = [f"sets:{label}" for name, (_, label) in self.granted.items() if name in self.chosen]
        return list(dict.fromkeys(labels))
