"""A package face whose names are imported on first use (PEP 562): for faces that workers import at start-up, or
whose parts import each other's packages in turn."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_face(package: str, part_of: dict[str, str], namespace: dict[str, Any], modules: dict[str, str] | None = None,
              faces: dict[str, str] | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``namespace`` (its ``globals()``) gets each name of
    ``part_of`` (name -> the module of the package that holds it) from that module when first asked for, each
    name of ``modules`` (name -> a module of the package) as that module itself (a part whose attributes are set from
    outside, a test's patch, must be set where its own code reads them), and each name of ``faces`` (name -> the
    face of another package, ``evaluations.core``) from that face."""
    whole = modules or {}
    other = faces or {}

    def get(name: str) -> Any:
        if name in other:
            value = getattr(importlib.import_module(other[name]), name)
        elif name in whole:
            value = importlib.import_module(f"{package}.{whole[name]}")
        else:
            part = part_of.get(name)
            if part is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(f"{package}.{part}"), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *part_of, *whole, *other})

    return get, names
