"""What fingerprinting an answer costs by its memory layout: the outside clock (``evaluations.worker._evidence``) counts
fingerprinting a candidate's answers as host overhead only as far as it costs for the reference's layout, so a
layout that costs more is charged to the candidate's time.

Times ``fingerprint`` on one output shape held contiguously and as a transposed view (the layout CUDA-L1's L1/59
returns) and prints milliseconds per fingerprint for each:

    python3 benchmarks/fingerprint_layout.py [--device cuda] [--shape 4,64,126,126,10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from evaluations.worker._evidence import fingerprint  # noqa: E402 - after the repository is on the path


def _ms(t: torch.Tensor, repeats: int) -> float:
    fingerprint([t]).tolist()  # the weights are drawn here, off the clock
    start = time.perf_counter()
    for _ in range(repeats):
        fingerprint([t]).tolist()  # .tolist() waits for the device
    return (time.perf_counter() - start) / repeats * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--shape", default="4,64,126,126,10", help="the output's shape (its last dim is swapped with dim 1)")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    shape = [int(n) for n in args.shape.split(",")]
    device = torch.device(args.device)
    flat = torch.randn(shape, device=device)
    swapped = [shape[0], shape[-1], *shape[2:-1], shape[1]]
    order = (0, len(shape) - 1, *range(2, len(shape) - 1), 1)
    view = torch.randn(swapped, device=device).permute(order)
    assert tuple(view.shape) == tuple(flat.shape) and not view.is_contiguous()
    print(f"shape {tuple(shape)} on {device}, {args.repeats} repeats")
    for name, t in (("contiguous", flat), ("transposed view", view)):
        print(f"  {name:<16} {_ms(t, args.repeats):9.1f} ms per fingerprint")


if __name__ == "__main__":
    main()
