#!/usr/bin/env bash
# One GPU session's worth of KernelVerdict measurements on an H200 or an H100, in priority order, resumable: a
# session with a device loan runs the steps it needs and a later one continues where it stopped (finished records
# are skipped), whatever card it gets (records name their card: records/<hw>/).
#
#   OUT=/path/to/results bash benchmarks/run_h200.sh [STEP ...]
#
# Steps (default: all, in this order): zoo (CONCURRENT evaluations at once, ZOO_S seconds at most, ZOO_PROTOCOLS
# (default "verified standard") in that order; ZOO_FRESH=1: this card's zoo records of those protocols
# removed first, so that every one is made again; ZOO_OUT: into
# a folder of its own, afresh, packed into $OUT/zoo-records.tgz, to check the verdicts against the committed ones;
# to resume it in a later call, keep it out of the folders a call carries, e.g. .kv-cache/zoo-check: a carried
# folder replaces the device's copy at every call, so a zoo in .data starts afresh each time),
# attacks (not in the default: the zoo's attacks on the harness, into a records folder of their own, $OUT/attacks.tgz),
# zoocheck (not in the default: benchmarks/zoo_verdicts.py on this card's zoo records, in ZOO_OUT where set, into $OUT/zoocheck.txt; a
# rejudge, cudal1 or triton after it in the same call runs only when every zoo verdict is the manifest's),
# resume (not in the default: this card's re-judged records kept in benchmarks/results, benchmarks/pending_records.py
# restore; put it first), rejudge (not in the default: every committed verified record of the public datasets made again under the newest
# verified protocol, REJUDGE_SETS: bundle[:--only pattern] ...),
# selfspeed, audit, extdiag (not in the default: benchmarks/ext_reload.py on EXT_KEYS), gputests (one process per test file), cudal1; selfsample (the verified self-speedup of a
# fixed 50-problem sample of KernelBench v0, every 5th problem, measured afresh into $OUT/self_speedup_sample.jsonl
# within SAMPLE_S seconds: the check that a change left the timing faithful); triton (the Triton dump, .data/dump.jsonl) and drift
# (not in the default) times DRIFT_KEYS' reference and copy in the order A B B A (timing_drift.py;
# DRIFT_ARGS adds options, e.g. "--variant copy,deepcopy,read-flush,placements --order AB").
# Records are written under records/ (finished ones are skipped, so re-running continues where the
# last call stopped); each step has a time budget so the whole call ends inside BUDGET_S (default 560).
# After every evaluation (cudal1, rejudge: every PACK_S seconds, default 30), records/ and the logs are packed into
# $OUT/records.tgz and $OUT/logs.tgz (LOGS_TGZ names it otherwise: two calls of this script in one device call
# would overwrite each other's; the logs folder itself is removed once packed).
# Needs pydantic on PYTHONPATH (carry wheels) and, for selfspeed/audit/cudal1, the CUDA-L1 bundle at
# .data/h100.jsonl (copy it from the public datasets folder; it is git-ignored).
# SELF_ARGS adds options to benchmarks/self_speedup.py (e.g. --essential-only, --retry-errors); passes
# separated by ';' run one after another (e.g. "--keys L3/43,L3/44;--bundle /dev/null" then the own suite).
# throughput (not in the default): benchmarks/throughput.py's cold slice (TP_EVERY, TP_BUNDLE, TP_S, TP_TAG).
# protomem (not in the default): benchmarks/protocol_memory.py on the device, one call of MEM_MIB MiB.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-.data/out}"
BUDGET_S="${BUDGET_S:-560}"
LOGS="$OUT/logs"; mkdir -p "$LOGS"
T0=$(date +%s)
# Records and logs are packed into $OUT after every evaluation, so a call cut off by its time limit
# still brings back what finished (the device's copy of the tree does not outlive the call).
# every hardware's records: the card lent may be an H200 or an H100, and records name their card (records/<hw>/)
pack() { tar czf "$OUT/records.tgz.part" records 2>/dev/null && mv -f "$OUT/records.tgz.part" "$OUT/records.tgz"
        tar czf "$OUT/${LOGS_TGZ:-logs.tgz}" -C "$OUT" logs; }
left() { local l=$(( BUDGET_S - ($(date +%s) - T0) )); [ "$l" -gt 5 ] && echo "$l" || echo 5; }
step() { echo "=== $1 at +$(( $(date +%s) - T0 ))s"; }
# this card's records folder name (h200, h100: records/<hw>/), as the runner names it
hw() { python3 -c "from evaluations import capture_environment; print(capture_environment('cuda').hardware)"; }
GPU_TESTS="${GPU_TESTS:-tests/evaluations/test_gpu_standard.py tests/evaluations/test_gpu_graph.py tests/evaluations/test_gpu_timing.py tests/evaluations/test_gpu_zoo_graphs.py tests/evaluations/test_zoo.py tests/evaluations/test_reproduce.py tests/evaluations/test_verified_12.py}"  # no site deps
KV="python3 -m evaluations.cli eval --device cuda --out records --timeout 200 --no-progress"
SAMPLE_KEYS="L1/1,L1/6,L1/11,L1/16,L1/21,L1/26,L1/31,L1/36,L1/41,L1/46,L1/51,L1/56,L1/61,L1/66,L1/71,L1/76,L1/81,L1/86,L1/91,L1/96,L2/1,L2/6,L2/11,L2/16,L2/21,L2/26,L2/31,L2/36,L2/41,L2/46,L2/51,L2/56,L2/61,L2/66,L2/71,L2/76,L2/81,L2/86,L2/91,L2/96,L3/1,L3/6,L3/11,L3/16,L3/21,L3/26,L3/31,L3/36,L3/41,L3/46"
STEPS=("$@"); [ ${#STEPS[@]} -eq 0 ] && STEPS=(zoo selfspeed audit gputests cudal1)

for s in "${STEPS[@]}"; do
  # STOP_FILE (h200_detached.sh stop): no further step starts once it exists
  [ -n "${STOP_FILE:-}" ] && [ -e "$STOP_FILE" ] && { echo "=== stopped before $s"; break; }
  case "$s" in
    zoo)
      # CONCURRENT evaluations at once (default 6); each timing holds the GPU alone (evaluations/worker/_gpulock.py).
      # The GPU tests run in their own step: run beside the zoo, most of them failed (2026-11-29).
      step "$s (verified first: it is the protocol under test)"
      # a lock named from outside is kept: the zoo then shares the GPU fairly with a detached run (h200_detached.sh)
      OWN_LOCK="${KVERDICT_GPU_LOCK:-}"; export KVERDICT_GPU_LOCK="${OWN_LOCK:-$(mktemp -d)/gpu.lock}"
      # ZOO_FRESH=1: this card's zoo records of those protocols removed first, so that all are made again on this code
      # (records of an older protocol version are redone anyway; a change that keeps the version needs this)
      if [ "${ZOO_FRESH:-0}" = 1 ] && [ -z "${ZOO_OUT:-}" ]; then
        ZHW=$(hw); for proto in ${ZOO_PROTOCOLS:-verified standard}; do
          rm -rf "records/$ZHW/exploit-zoo/$proto" "records/$ZHW/honest-kernels/$proto"; done
        echo "zoo records of $ZHW (${ZOO_PROTOCOLS:-verified standard}) removed, to be made again"
      fi
      Z=$(( $(left) < ${ZOO_S:-100000} ? $(left) : ${ZOO_S:-100000} ))
      ZT0=$(date +%s)
      for proto in ${ZOO_PROTOCOLS:-verified standard}; do
        for set in exploits:exploit-zoo honest:honest-kernels; do
          timeout -k 5 $(( Z - ($(date +%s) - ZT0) > 5 ? Z - ($(date +%s) - ZT0) : 5 )) $KV ${ZOO_OUT:+--out "$ZOO_OUT"} --concurrent "${CONCURRENT:-6}" \
            --protocol $proto --problems evaluations/zoo/problems --candidates evaluations/zoo/${set%%:*} \
            --model ${set##*:} --provider kernelverdict >> "$LOGS/zoo.log" 2>&1
          pack; [ -n "${ZOO_OUT:-}" ] && tar czf "$OUT/zoo-records.tgz" -C "$(dirname "$ZOO_OUT")" "$(basename "$ZOO_OUT")"
        done
      done
      [ -n "$OWN_LOCK" ] || unset KVERDICT_GPU_LOCK
      tail -8 "$LOGS/zoo.log" ;;
    resume)
      # this card's re-judged records of earlier sessions, kept in benchmarks/results/<hw>/session<N>/ until their lane
      # is complete (benchmarks/pending_records.py), brought back so that the work goes on where it stopped (finished
      # records are skipped). A failed restore is reported and the steps after it still run: they redo that work.
      step "$s (this card's pending re-judged records, from benchmarks/results)"
      python3 benchmarks/pending_records.py restore "$(hw)" || echo "=== resume failed: the records it names are made again" ;;
    attacks)
      # the zoo's attacks on the harness (evaluations/zoo/attacks), both protocols, into a records folder of their
      # own (one of them rewrites and deletes the records it finds): packed into $OUT/attacks.tgz. setsid: one attack
      # signals the runner's process group, which must hold the runner alone, not this script or timeout.
      step "$s (the harness under attack, into .data/attack-records)"
      rm -rf .data/attack-records
      for proto in verified standard; do
        timeout -k 5 "$(left)" setsid -w python3 -m evaluations.cli eval --device cuda --out .data/attack-records \
          --timeout 200 --no-progress --concurrent "${CONCURRENT:-6}" --protocol $proto --problems evaluations/zoo/problems \
          --candidates evaluations/zoo/attacks --model exploit-zoo --provider kernelverdict >> "$LOGS/attacks.log" 2>&1
        tar czf "$OUT/attacks.tgz" -C .data attack-records
      done
      tail -12 "$LOGS/attacks.log" ;;
    audit)
      step "audit of the own suite"
      mkdir -p "$OUT/audits"
      timeout "$(left)" python3 -m evaluations.cli audit --problems evaluations/problems/kernelverdict \
        --device cuda --timeout 120 --no-progress --out records/_audits/h200/kernelverdict.json \
        > "$LOGS/audit_kernelverdict.log" 2>&1; tail -3 "$LOGS/audit_kernelverdict.log" ;;
    selfspeed)
      step "self-speedup (KernelBench v0 and the own suite, all recipes)"
      # Rows of earlier sessions are kept in benchmarks/results/h200/; the script skips problems already there.
      R=benchmarks/results/h200/self_speedup.jsonl; [ -f "$R" ] && [ ! -f "$OUT/self_speedup.jsonl" ] && cp "$R" "$OUT/self_speedup.jsonl"
      # SELF_ARGS may hold several passes separated by ';', run in that order (e.g. some --keys first)
      IFS=';' read -ra PASSES <<< "${SELF_ARGS:-}"; [ ${#PASSES[@]} -eq 0 ] && PASSES=("")
      for pass in "${PASSES[@]}"; do
        echo "--- pass: ${pass:-all}" >> "$LOGS/self_speedup.log"
        OUT="$OUT" timeout -k 5 "$(left)" python3 benchmarks/self_speedup.py --bundle .data/h100.jsonl \
          --suite evaluations/problems/kernelverdict --budget-s $(( $(left) - 45 )) $pass >> "$LOGS/self_speedup.log" 2>&1
      done
      tail -20 "$LOGS/self_speedup.log" ;;
    selfsample)
      step "self-speedup of the 50-problem sample (verified recipe first)"
      mkdir -p "$OUT/sample"
      OUT="$OUT/sample" timeout -k 5 "$(left)" python3 benchmarks/self_speedup.py --bundle .data/h100.jsonl \
        --essential-only --keys "$SAMPLE_KEYS" --budget-s "${SAMPLE_S:-240}" > "$LOGS/self_sample.log" 2>&1
      cp "$OUT/sample/self_speedup.jsonl" "$OUT/self_speedup_sample.jsonl" 2>/dev/null; rm -rf "$OUT/sample"
      tail -20 "$LOGS/self_sample.log" ;;
    scaleout)
      # issue 20: one cold slice of CUDA-L1 through each executor; Ray only where it is installed. Its wheel (79 MB) is
      # over what one call may carry: carry .ray-a/ (split's first part) in one call and .ray-b/ in the next on the same
      # warm machine (a folder not named in carry stays there), with jsonschema and its needs in .whl/; joined here.
      step "$s (serial, lanes, ray: the same slice, cold each time)"
      if ls .ray-a/ray.part-* .ray-b/ray.part-* >/dev/null 2>&1; then
        W=/tmp/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl; cat .ray-a/ray.part-* .ray-b/ray.part-* > "$W"
        python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$W" || echo "ray did not install"
      fi
      python3 -c "import ray" 2>/dev/null && M="serial lanes ray" || M="serial lanes"
      timeout "$(left)" python3 benchmarks/scaleout.py --bundle .data/h100.jsonl --every "${SCALE_EVERY:-25}" \
        --modes $M --budget-s "${SCALE_S:-150}" > "$LOGS/scaleout.log" 2>&1; tail -6 "$LOGS/scaleout.log" ;;
    throughput)
      # issue 17: benchmarks/throughput.py on every TP_EVERY-th row of a bundle (TP_BUNDLE, default CUDA-L1's), cold
      # caches, both protocols, EVAL_CONCURRENT at once, stopped after TP_S seconds (default: what the call has left)
      # the workers' lock traces go to the logs and their summary to $OUT/throughput-locktrace.json
      step "$s (every ${TP_EVERY:-5}th row of ${TP_BUNDLE:-.data/h100.jsonl}, cold, both protocols)"
      export KVERDICT_GPU_TRACE="$LOGS/throughput-locktrace"; mkdir -p "$KVERDICT_GPU_TRACE"
      OUT="$OUT" timeout -k 5 "$(left)" python3 benchmarks/throughput.py --bundle "${TP_BUNDLE:-.data/h100.jsonl}" \
        --every "${TP_EVERY:-5}" --concurrent "${EVAL_CONCURRENT:-12}" --tag "${TP_TAG:-cold}" \
        --budget-s "${TP_S:-$(( $(left) - 30 ))}" > "$LOGS/throughput.log" 2>&1; tail -40 "$LOGS/throughput.log"
      unset KVERDICT_GPU_TRACE
      timeout 10 python3 benchmarks/lock_trace.py "$LOGS/throughput-locktrace" --json "$OUT/throughput-locktrace.json" \
        --top 25 | tee "$LOGS/throughput-locktrace.txt" ;;
    drift)
      step "order or instance: A B B A timings of ${DRIFT_KEYS:-}"
      OUT="$OUT" timeout "$(left)" python3 benchmarks/timing_drift.py --bundle .data/h100.jsonl --keys "${DRIFT_KEYS:?set DRIFT_KEYS}" \
        ${DRIFT_ARGS:-} > "$LOGS/timing_drift.log" 2>&1; cat "$LOGS/timing_drift.log" ;;
    protomem)
      # the largest worker's device-memory peak per protocol, by one call's size (benchmarks/protocol_memory.py):
      # what the runner's admission by memory assumes (evaluations/run/_admission.py, FOOTPRINT_FACTOR)
      step "$s (one call of ${MEM_MIB:-2048} MiB, both protocols)"
      timeout -k 5 "$(left)" python3 benchmarks/protocol_memory.py --device cuda --mib "${MEM_MIB:-2048}" \
        > "$LOGS/protocol_memory.log" 2>&1; cat "$LOGS/protocol_memory.log" ;;
    extdiag)
      # issue 17: what a built extension costs a fresh process (benchmarks/ext_reload.py), EXT_KEYS' CUDA-L1 rows
      step "$s (built extensions reloaded in fresh processes: ${EXT_KEYS:-L1/27,L1/50})"
      OUT="$OUT" timeout -k 5 "$(left)" python3 benchmarks/ext_reload.py --bundle .data/h100.jsonl \
        --keys "${EXT_KEYS:-L1/27,L1/50}" > "$LOGS/ext_reload.log" 2>&1; tail -12 "$LOGS/ext_reload.log" ;;
    gputests)
      step "GPU tests"
      # first, whether this machine's kernel confines candidate workers (Landlock) and the CPU tests of it pass here
      python3 -c "from evaluations.worker import _landlock as l; print('Landlock ABI', l.abi(), l.unavailable() or '')" >> "$LOGS/gpu_tests.log" 2>&1
      timeout -k 5 "$(left)" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider ${CONFINE_TESTS:-tests/evaluations/test_landlock.py} >> "$LOGS/gpu_tests.log" 2>&1
      # one pytest process per file: a test that leaves the CUDA context broken fails only its own file
      for f in $GPU_TESTS; do
        timeout -k 5 "$(left)" python3 -m pytest -v -rfE --tb=short -m gpu -p no:cacheprovider "$f" >> "$LOGS/gpu_tests.log" 2>&1
        pack
      done
      grep -E "PASSED|FAILED|ERROR|passed|failed" "$LOGS/gpu_tests.log" | tail -40 ;;
    zoocheck)
      step "$s (the zoo's verified verdicts against its manifest)"
      HW=$(hw)
      # ZOO_OUT: the zoo made afresh into a folder of its own (the zoo step's), checked there
      if python3 benchmarks/zoo_verdicts.py "${ZOO_OUT:-records}/$HW" > "$OUT/zoocheck.txt" 2>&1; then ZOO_OK=1; else ZOO_OK=0; fi
      cat "$OUT/zoocheck.txt" ;;
    rejudge)
      [ "${ZOO_OK:-1}" = 1 ] || { echo "=== rejudge skipped: the zoo's verdicts differ from its manifest (zoocheck.txt)"; continue; }
      # every committed verified record made again under the newest verified protocol, resumably: CUDA-L1's bundle,
      # then the Triton dump (level 2, then the rest); records of an older version are redone in place, finished
      # ones skipped, and baselines of a version the newest reuses (schemas.baseline_versions) are not timed again.
      # The zoo's are the zoo step's. EVAL_CONCURRENT at once (default 12); REJUDGE_SETS names the bundles.
      export KVERDICT_GPU_TRACE="$LOGS/rejudge-locktrace"; mkdir -p "$KVERDICT_GPU_TRACE"
      n=0
      for spec in ${REJUDGE_SETS:-.data/h100.jsonl .data/dump.jsonl:kernelbench/2/* .data/dump.jsonl}; do
        n=$((n + 1)); bundle=${spec%%:*}; only=""; [ "$spec" != "$bundle" ] && only=${spec#*:}
        step "$s pass $n: verified on $bundle ${only:+(only $only)}"
        timeout -k 5 "$(( $(left) - 15 > 5 ? $(left) - 15 : 5 ))" $KV --protocol verified --candidates "$bundle" \
          --concurrent "${EVAL_CONCURRENT:-12}" ${only:+--only "$only"} --stats-json "$OUT/rejudge-stats-$n.json" \
          >> "$LOGS/rejudge.log" 2>&1 &
        EVAL=$!
        while kill -0 "$EVAL" 2>/dev/null; do
          for _ in $(seq "${PACK_S:-30}"); do kill -0 "$EVAL" 2>/dev/null || break; sleep 1; done
          pack
        done
        wait "$EVAL"; pack
        [ "$(left)" -gt 30 ] || break
      done
      unset KVERDICT_GPU_TRACE
      tail -12 "$LOGS/rejudge.log" ;;
    cudal1|triton)
      [ "${ZOO_OK:-1}" = 1 ] || { echo "=== $s skipped: the zoo's verdicts differ from its manifest (zoocheck.txt)"; continue; }
      # public datasets under both protocols, EVAL_CONCURRENT at once (default 12), EVAL_ONLY (cudal1) or TRITON_ONLY
      # (triton) limiting the problems; passes separated by ';' run one after another, each resuming the last (triton
      # by default: level 2 first, whose inputs are megabytes, then the rest, KernelBench's current level 1 moving
      # gigabytes a call);
      # the run's phase times and GPU busy samples go to $OUT/<step>-stats.json (<step>-stats-<pass>.json for passes
      # after the first)
      bundle=.data/h100.jsonl; ONLY="${EVAL_ONLY:-}"
      [ "$s" = triton ] && bundle=.data/dump.jsonl ONLY="${TRITON_ONLY-kernelbench/2/*;}"
      step "$s kernels ($bundle, public dataset) under both protocols"
      # hundreds of evaluations: packed every PACK_S seconds meanwhile, so a call cut off from outside keeps them;
      # the workers' lock traces (benchmarks/lock_trace.py) and the host's load go into the logs
      export KVERDICT_GPU_TRACE="$LOGS/$s-locktrace"; mkdir -p "$KVERDICT_GPU_TRACE"
      IFS=';' read -ra ONLYS <<< "$ONLY"; [[ "$ONLY" == *";" || ${#ONLYS[@]} -eq 0 ]] && ONLYS+=("")
      n=0
      for only in "${ONLYS[@]}"; do
        n=$((n + 1)); stats="$OUT/$s-stats.json"; [ "$n" -gt 1 ] && stats="$OUT/$s-stats-$n.json"
        echo "--- pass: ${only:-all}" >> "$LOGS/$s.log"
        timeout -k 5 "$(( $(left) - 15 > 5 ? $(left) - 15 : 5 ))" $KV --protocol both --candidates "$bundle" --concurrent "${EVAL_CONCURRENT:-12}" \
          ${only:+--only "$only"} --stats-json "$stats" >> "$LOGS/$s.log" 2>&1 &
        EVAL=$!
        while kill -0 "$EVAL" 2>/dev/null; do
          for _ in $(seq "${PACK_S:-30}"); do kill -0 "$EVAL" 2>/dev/null || break; sleep 1; done
          echo "+$(( $(date +%s) - T0 ))s $(cat /proc/loadavg)" >> "$LOGS/$s-load.log"
          pack
        done
        wait "$EVAL"
        [ "$(left)" -gt 30 ] || break
      done
      unset KVERDICT_GPU_TRACE
      # the workers' logs and the extensions' ninja files (no sources or binaries), to tell a rebuild from a load
      tar czf "$OUT/$s-buildlogs.tgz" --exclude='*.so' --exclude='*.o' --exclude='*.cu' --exclude='*.cpp' \
        .kv-cache/build/logs .kv-cache/build/extensions 2>/dev/null
      tail -12 "$LOGS/$s.log"
      timeout 10 python3 benchmarks/lock_trace.py "$LOGS/$s-locktrace" --json "$OUT/$s-locktrace.json" --top 25 \
        | tee "$LOGS/$s-locktrace.txt" ;;
    *) echo "unknown step: $s" >&2 ;;
  esac
done
step done
pack && rm -rf "$LOGS"
