"""What one host draw of a problem's inputs costs: ``get_inputs()`` under a seed on the CPU, as the standard protocol
draws (KernelBench's harness draws so) and as the verified protocol drew before it drew on the device.

For each problem file given, prints the inputs' bytes, the seconds of one seeded ``get_inputs()`` on this host
(the median of ``--repeats``) and its rate. A verified evaluation's candidate worker and judge drew some 25 times
between them (12 trials each, the determinism and shape checks), a standard one 11 times (5 trials each and the
timing's draw): multiply to see what a problem's evaluations spent drawing on the host.

    python3 benchmarks/draw_cost.py PROBLEM.py [PROBLEM.py ...] [--repeats 3] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import time
import types
from pathlib import Path

import torch


def _load(path: Path) -> types.ModuleType:
    module = types.ModuleType(path.stem)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)  # noqa: S102 - a problem file
    return module


def _bytes(values: list) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="+", type=Path, help="KernelBench-format problem files")
    parser.add_argument("--repeats", type=int, default=3, help="draws per problem (the median is printed)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's own)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"host draws on {torch.get_num_threads()} torch thread(s), torch {torch.__version__}")
    print(f"{'problem':<44} {'inputs':>10} {'s / draw':>9} {'GB/s':>6}")
    for path in args.problems:
        problem = _load(path)
        times, size = [], 0
        for k in range(args.repeats):
            torch.manual_seed(10_000_019 + k)
            start = time.perf_counter()
            values = list(problem.get_inputs())
            times.append(time.perf_counter() - start)
            size = _bytes(values)
            del values
        t = statistics.median(times)
        print(f"{path.name[:44]:<44} {size / 1e9:8.2f} GB {t:9.2f} {size / 1e9 / t:6.2f}")


if __name__ == "__main__":
    main()
