"""Attack (record tampering): rewrites the records the run has written, from inside the worker.

It finds the run's records folder on the runner's command line (``--out``), makes every baseline 100x
slower (so later speedups look 100x better) and deletes every other model's record. Partly stopped:
each record's sha256 goes into the records folder's manifest (``MANIFEST.sha256``) as the
runner writes it, so the next run redoes the changed and deleted records and ``kverdict validate``
reports them. NOT stopped: the change itself (the worker runs as the same user, with write access to
the folder), a forger who rewrites the manifest's lines too, and the rest of this run, which keeps the
baselines it holds in memory. The candidate itself computes ReLU.
Expected outcome: ``correct`` under both protocols; the changes are reported by the next run and by validate.
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
        if "kind" in data and "timing" in data:
            for name in ("mean_ms", "median_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "ci95_low_ms", "ci95_high_ms"):
                if data["timing"].get(name) is not None:
                    data["timing"][name] *= 100
            path.write_text(json.dumps(data, indent=2))
        elif data.get("model", {}).get("name") != "exploit-zoo":
            path.unlink()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _tamper()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
