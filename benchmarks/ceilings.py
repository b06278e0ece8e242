"""Measure a GPU's roofline ceilings: copy bandwidth and float32, TF32 and bf16 matrix rates.

Writes ``$OUT/ceilings/<hardware>.json`` (``OUT`` defaults to ``./.data/out``) in the format
``evaluations.suite.load_ceilings`` reads; copy it to ``evaluations/data/ceilings/`` to use it.
Each figure is the median over several timed repetitions (CUDA events) after warm-up:

- copy: ``dst.copy_(src)`` of a 4 GiB buffer; bandwidth = bytes read + bytes written per second;
- matrix rates: ``a @ b`` of random square matrices, 2 n^3 FLOPs per product; float32 with TF32
  off (``set_float32_matmul_precision("highest")``), float32 with TF32 on (``"high"``), bfloat16.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
from datetime import UTC, datetime
from pathlib import Path

import torch

REPEATS = 15
WARMUP = 5


def _median_ms(fn, repeats: int = REPEATS) -> float:
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_bandwidth(gib: float = 4.0) -> dict:
    """Device-to-device copy: (read + written bytes) / median time."""
    n = int(gib * 1024**3) // 4
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ms = _median_ms(lambda: dst.copy_(src))
    moved = 2 * src.nbytes
    src = dst = None  # free 8 GiB before the matrix runs
    torch.cuda.empty_cache()
    return {"bytes_moved": moved, "median_ms": ms, "bytes_per_s": moved / (ms * 1e-3)}


def matmul_rate(n: int, dtype: torch.dtype, precision: str) -> dict:
    """Dense square matrix product rate at ``precision`` (float32 matmul precision setting)."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ms = _median_ms(lambda: a @ b)
    finally:
        torch.set_float32_matmul_precision(previous)
    return {"n": n, "dtype": str(dtype).removeprefix("torch."), "precision": precision, "median_ms": ms,
            "flops_per_s": 2.0 * n**3 / (ms * 1e-3)}


def hardware_slug(name: str) -> str:
    """``NVIDIA H200`` -> ``h200`` (the same rule as record paths)."""
    match = re.search(r"\b([a-z]{1,3}\d{2,4}[a-z]?)\b", name.lower().replace("nvidia", ""))
    return match.group(1) if match else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", ".data/out"), help="output folder (default: $OUT)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("ceilings.py needs a CUDA GPU")
    name = torch.cuda.get_device_name(0)
    samples = {
        "copy": copy_bandwidth(),
        "fp32": matmul_rate(8192, torch.float32, "highest"),
        "tf32": matmul_rate(8192, torch.float32, "high"),
        "bf16": matmul_rate(16384, torch.bfloat16, "highest"),
    }
    data = {
        "hardware": hardware_slug(name), "device_name": name, "date": datetime.now(UTC).date().isoformat(),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "rates": {"copy_bytes_per_s": samples["copy"]["bytes_per_s"], "fp32_flops_per_s": samples["fp32"]["flops_per_s"],
                  "tf32_flops_per_s": samples["tf32"]["flops_per_s"], "bf16_flops_per_s": samples["bf16"]["flops_per_s"]},
        "samples": samples,
        "method": f"median of {REPEATS} CUDA-event timings after {WARMUP} warm-ups; copy counts bytes read + written",
    }
    path = Path(args.out) / "ceilings" / f"{data['hardware']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    r = data["rates"]
    print(f"{name}: copy {r['copy_bytes_per_s'] / 1e12:.2f} TB/s, fp32 {r['fp32_flops_per_s'] / 1e12:.1f}, "
          f"tf32 {r['tf32_flops_per_s'] / 1e12:.1f}, bf16 {r['bf16_flops_per_s'] / 1e12:.1f} TFLOP/s -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
