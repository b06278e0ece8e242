#!/usr/bin/env bash
# Audit KernelBench v0 (the ref_code of the CUDA-L1 H100 bundle) and the KernelVerdict suite on the GPU.
# Usage: OUT=/path bash benchmarks/audit_kernelbench.sh [BUNDLE]   (BUNDLE default: .data/h100.jsonl)
# Writes $OUT/audits/<hardware>/kernelbench-v0.json and kernelverdict.json, and prints whether the
# always-zero problems that KernelBench-Verified excluded (level 2: 23, 80, 83) are excluded here.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-.data/out}"
BUNDLE="${1:-.data/h100.jsonl}"
PY="${PYTHON:-python3}"
HW="$($PY -c 'import torch; from evaluations._env import hardware_slug; print(hardware_slug(torch.cuda.get_device_name(0), "cuda"))')"
mkdir -p "$OUT/audits/$HW"
$PY -m evaluations.cli audit --problems "$BUNDLE" --device cuda --timeout 120 --no-progress \
  --log "$OUT/audits/worker-kernelbench.log" --out "$OUT/audits/$HW/kernelbench-v0.json"
$PY -m evaluations.cli audit --problems evaluations/problems/kernelverdict --device cuda --timeout 120 --no-progress \
  --log "$OUT/audits/worker-kernelverdict.log" --out "$OUT/audits/$HW/kernelverdict.json"
$PY - "$OUT/audits/$HW/kernelbench-v0.json" <<'PYEOF'
import json, sys
report = json.load(open(sys.argv[1]))
excluded = {p["key"] for p in report["problems"] if p["excluded"]}
for pid in (23, 80, 83):
    key = f"kernelbench-v0/2/{pid}"
    print(f"{key}: {'excluded' if key in excluded else 'NOT EXCLUDED'}")
print(f"{len(excluded)} of {len(report['problems'])} KernelBench v0 problems excluded")
PYEOF
