"""What fingerprinting an answer costs by its memory layout, in time and memory: the outside clock
(``evaluations.worker``) counts fingerprinting a candidate's answers as host overhead only as far as it
costs for the reference's layout, so a layout that costs more is charged to the candidate's time; and the memory
it takes beside the output is taken from every other evaluation sharing the device.

Times ``fingerprint`` on one output shape held contiguously and as a transposed view (the layout CUDA-L1's L1/59
returns) and prints milliseconds per fingerprint for each, and the peak memory the first fingerprint took beyond
the output (on CUDA the allocator's peak; on the CPU the process's peak resident size, so measure the larger
output first or alone):

    python3 benchmarks/fingerprint_layout.py [--device cuda] [--shape 4,64,126,126,10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from evaluations.worker import fingerprint  # noqa: E402 - after the repository is on the path


def _peak_bytes(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _extra_peak(t: torch.Tensor) -> int:
    """Bytes beyond what was held before that the first fingerprint of ``t`` took at its peak (weights kept
    included)."""
    if t.device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(t.device)
    before = torch.cuda.memory_allocated(t.device) if t.device.type == "cuda" else _peak_bytes(t.device)
    fingerprint([t]).tolist()
    return max(0, _peak_bytes(t.device) - before)


def _ms(t: torch.Tensor, repeats: int) -> float:
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
    size = flat.numel() * flat.element_size()
    for name, t in (("contiguous", flat), ("transposed view", view)):
        extra = _extra_peak(t)
        print(f"  {name:<16} {_ms(t, args.repeats):9.1f} ms per fingerprint; peak beyond the output "
              f"{extra / 2**20:8.0f} MiB ({extra / size:.2f}x its {size / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
