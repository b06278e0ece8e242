"""Attack (record tampering): rewrites the records the run has written, from inside the worker.

It finds the run's records folder on the runner's command line (``--out``), tries to make every baseline
100x slower (so later speedups look 100x better) and to delete every other model's record, and carries on
quietly where it is refused. Stopped: a candidate's worker may write only its private temporary folder, its
own builds and caches and its evidence file (Landlock, ``evaluations/worker/_landlock.py``), so each change is
refused by the kernel. Where a kernel has no Landlock, ``kverdict eval`` says at start that workers run
unconfined, and the records folder's manifest (``MANIFEST.sha256``) still makes the next run redo a changed
or deleted record and ``kverdict validate`` report it. NOT stopped there: the change itself, and a forger who
rewrites the manifest's lines too. The candidate itself computes ReLU.
Expected outcome: ``correct`` under both protocols, and no record changed.
"""

import json
import os
from pathlib import Path

import torch
import torch.nn as nn


def _out_dir():
    args = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().decode().split("\0")
    return Path(args[args.index("--out") + 1]) if "--out" in args else None


def _tamper():
    out = _out_dir()
    if out is None:
        return
    for path in out.rglob("*.json"):
        data = json.loads(path.read_text())
        try:
            if "kind" in data and "timing" in data:
                for name in ("mean_ms", "median_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "ci95_low_ms", "ci95_high_ms"):
                    if data["timing"].get(name) is not None:
                        data["timing"][name] *= 100
                path.write_text(json.dumps(data, indent=2))
            elif data.get("model", {}).get("name") != "exploit-zoo":
                path.unlink()
        except OSError:
            continue  # refused: stay unnoticed


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _tamper()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
