"""Where an evaluation runs: device, driver, library versions, and the hardware slug of record paths."""

from __future__ import annotations

import importlib.metadata
import platform
import re
import subprocess
from datetime import UTC, datetime

from schemas import Environment

HARNESS_FALLBACK_VERSION = "0.2.0"
"""Version reported when the ``kernelverdict`` distribution is not installed (a source checkout); the
same as ``pyproject.toml``'s (what each version changed: ``CHANGELOG.md``)."""


def harness_version() -> str:
    """Version of the installed ``kernelverdict`` distribution."""
    try:
        return importlib.metadata.version("kernelverdict")
    except importlib.metadata.PackageNotFoundError:
        return HARNESS_FALLBACK_VERSION


def hardware_slug(device_name: str, device: str) -> str:
    """Slug used in record paths: ``cpu``, ``h200`` for an NVIDIA H200, else a slug of the GPU name."""
    if device == "cpu":
        return "cpu"
    name = device_name.lower().replace("nvidia", "").strip()
    match = re.search(r"\b([a-z]{1,3}\d{2,4}[a-z]?)\b", name)  # h200, a100, l40s, b200
    if match:
        return match.group(1)
    return re.sub(r"[^a-z0-9]+", "-", name).strip("-")[:64] or "gpu"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else None


def _triton_version() -> str | None:
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return None


def resolve_device(requested: str) -> str:
    """``auto`` becomes ``cuda`` when a CUDA device is visible, else ``cpu``."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was requested but torch sees no CUDA device")
    return requested


def capture_environment(device: str) -> Environment:
    """The environment record of this machine for ``device`` (``cuda`` or ``cpu``)."""
    import torch

    if device == "cuda":
        name = torch.cuda.get_device_name(0)
        driver, cuda = _driver_version(), torch.version.cuda
    else:
        name, driver, cuda = cpu_name(), None, None
    return Environment(
        hardware=hardware_slug(name, device), device_name=name[:120], driver=driver, cuda=cuda,
        torch=torch.__version__, triton=_triton_version(), python=platform.python_version(),
        harness_version=harness_version(), timestamp=datetime.now(UTC),
    )
