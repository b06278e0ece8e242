"""Build the site from a records folder with ``mkdocs build --strict`` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mkdocs_build(records: Path, site: Path, manifest: Path | None = None) -> subprocess.CompletedProcess:
    """Run a strict build of the project's mkdocs.yml against ``records`` into ``site``."""
    env = {**os.environ, "KVERDICT_RECORDS": str(records), "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    if manifest is not None:
        env["KVERDICT_ZOO_MANIFEST"] = str(manifest)
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
