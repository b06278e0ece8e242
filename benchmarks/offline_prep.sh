#!/usr/bin/env bash
# Prepares a checkout for a GPU machine that has PyTorch and nvcc but no network (benchmarks/run_h200.sh's
# machine): the runner's Python packages such an image lacks, as wheels for its Python, and the public bundles
# the benchmarks read, copied into the git-ignored .data/.
#
#   bash benchmarks/offline_prep.sh [DATASETS]    # DATASETS: the public datasets folder (default ../shared/datasets)
#
# Wheels go to .whl/ (git-ignored) for PY_VERSION (default 3.12), one version of each: the versions installed
# here, so the device runs what the CPU tests ran. On the GPU machine, before anything else:
#
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
#
# .data/first-<dataset>.txt: the problems to re-judge first (benchmarks/rejudge_first.py).
# .data/commit.txt names the commit the checkout is at, for the results' README.
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS="${1:-../shared/datasets}"
PY_VERSION="${PY_VERSION:-3.12}"
# pydantic and what it needs (typing_extensions too: PyTorch brings one, maybe older than pydantic's floor); rich,
# jinja2 and numpy come with such images, and the site's packages (duckdb, mkdocs, plotly) are not needed to evaluate
PACKAGES=(pydantic pydantic-core annotated-types typing-inspection typing-extensions)

rm -rf .whl && mkdir -p .whl .data
for name in "${PACKAGES[@]}"; do
  version=$(python3 -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name")
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "$name==$version"
done
install -m 0644 "$DATASETS/cuda-l1-h100/h100.jsonl" .data/h100.jsonl
install -m 0644 "$DATASETS/kernelbench-triton-h200/dump.jsonl" .data/dump.jsonl
# the --only lists of the verified records a re-judging redoes first (hacked or incorrect), per public dataset:
# REJUDGE_SETS=".data/h100.jsonl:$(cat .data/first-cuda-l1.txt) .data/dump.jsonl:$(cat .data/first-kernelbench-triton-dump.txt) ..."
for ds in cuda-l1 kernelbench-triton-dump; do
  python3 benchmarks/rejudge_first.py "records/h200/$ds/verified" > ".data/first-$ds.txt"
done
git rev-parse HEAD > .data/commit.txt
ls -l .whl .data
du -sh .whl .data
