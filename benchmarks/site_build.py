"""Site-build benchmark: 100,000 synthetic records -> aggregation time and a full `mkdocs build`.

Usage: python benchmarks/site_build.py [--records 100000] [--keep DIR]
Prints the load/validate time, the aggregation (SQL) time, the full strict build time (cold: a fresh
process, an empty site folder, nothing cached) and the size of the leaderboard page, each with the
machine's 1-minute load average and the CPU seconds spent, since other work on the machine slows the
wall-clock figures. Goals on a 2-core machine: aggregation < 3 s, build < 60 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator import aggregate, corpus_specs, load_rows, write_specs  # noqa: E402


def _write_chunk(args: tuple[str, list]) -> int:
    root, specs = args
    return len(write_specs(Path(root), specs))


def generate(root: Path, n: int) -> int:
    """Write about ``n`` valid synthetic records under ``root`` using every core."""
    specs = corpus_specs(n)
    chunks = [(str(root), specs[i:i + 2000]) for i in range(0, len(specs), 2000)]
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        return sum(pool.map(_write_chunk, chunks))


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def _cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="folder to keep the records and site in (default: a temp folder)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="kv-bench-"))
    records, site = base / "records", base / "site"
    start = time.perf_counter()
    count = generate(records, args.records) if not records.is_dir() else sum(1 for _ in records.rglob("*.json"))
    print(f"records: {count} in {records} ({time.perf_counter() - start:.1f} s to generate)")

    os.sync()  # the generator's writes are flushed now, not during the timed build
    print(f"before timing: {_load()}")
    start, cpu = time.perf_counter(), _cpu_s(resource.RUSAGE_SELF) + _cpu_s(resource.RUSAGE_CHILDREN)
    loaded = load_rows(records)
    load_s = time.perf_counter() - start
    load_cpu = _cpu_s(resource.RUSAGE_SELF) + _cpu_s(resource.RUSAGE_CHILDREN) - cpu
    print(f"load + validate: {load_s:.2f} s ({load_cpu:.1f} CPU s; {_load()})")
    start, cpu = time.perf_counter(), time.process_time()
    agg = aggregate(loaded.table)
    agg_s = time.perf_counter() - start
    print(f"aggregation (SQL, all metrics): {agg_s:.2f} s ({time.process_time() - cpu:.1f} CPU s; {_load()}; "
          f"{len(agg.summary)} leaderboard rows)")

    shutil.rmtree(site, ignore_errors=True)  # a cold build: MkDocs does not spend its time deleting a site
    env = {**os.environ, "KVERDICT_RECORDS": str(records), "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cpu = _cpu_s(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                             "-d", str(site)], env=env, cwd=ROOT, capture_output=True, text=True)
    build_s = time.perf_counter() - start
    build_cpu = _cpu_s(resource.RUSAGE_CHILDREN) - cpu
    if result.returncode != 0:
        print(result.stderr[-3000:])
        return 1
    timing = [line for line in result.stderr.splitlines() if "kverdict:" in line]
    board = site / "leaderboard" / "index.html"
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"full mkdocs build --strict: {build_s:.1f} s ({build_cpu:.1f} CPU s; {_load()}; {pages} HTML pages)")
    if timing:
        print(f"  inside the build: {timing[0].split('-  ')[-1]}")
    print(f"leaderboard page: {board.stat().st_size / 1024:.0f} KiB")
    print(f"goals: aggregation < 3 s: {'met' if agg_s < 3 else 'MISSED'}; build < 60 s: {'met' if build_s < 60 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
