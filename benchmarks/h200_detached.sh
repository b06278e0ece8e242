#!/usr/bin/env bash
# A run of benchmarks/run_h200.sh that outlives one device call. Every call to the device is capped at ten
# minutes and a fresh machine starts cold (empty build and compile caches, a prepare stage with nothing timed),
# while a machine stays warm between calls that follow each other closely. So the run is started once, detached
# (its own session, from a copy of the tree that later calls' copies of the tree do not touch), and later calls
# on the same machine only wait for it and bring back what it has written so far.
#
#   bash benchmarks/h200_detached.sh start STEP...  # copy the tree to $KV_HOME and start run_h200.sh STEP... there
#   bash $KV_HOME/benchmarks/h200_detached.sh collect S   # wait S seconds (less if the run ends), copy its files to $OUT
#   bash $KV_HOME/benchmarks/h200_detached.sh stop S      # end the run: SIGTERM to its evaluation (finished records
#                                                          # are kept, the stats written), no further step; then collect
#
# DETACHED_BUDGET_S is the run's whole budget (run_h200.sh's BUDGET_S, default 1650). The run's GPU lock is
# $KV_HOME-lock/gpu.lock, in a folder of its own: another kverdict command on the machine with KVERDICT_GPU_LOCK set to
# it shares the GPU with the run as one more concurrent worker would (its timings hold the device alone). Call
# collect and stop by the copy in $KV_HOME: the tree a later call brings may differ from the one the run started
# with. A machine goes back once no call holds it for 30 s, and the run ends with it: call collect again at once.
set -u
KV_HOME="${KV_HOME:-/tmp/kv-detached}"
RUN_OUT="$KV_HOME-out"
cmd="${1:?start, collect or stop}"; shift

running() { [ -f "$KV_HOME.pid" ] && kill -0 "$(cat "$KV_HOME.pid")" 2>/dev/null; }

copy_out() { [ -n "${OUT:-}" ] && find "$RUN_OUT" -maxdepth 1 -type f ! -name '*.part' -exec cp -f {} "$OUT"/ \; ; }

collect() {
  local until=$(( $(date +%s) + ${1:-0} )) last=0
  # the run's files are copied to $OUT every 30 s meanwhile: a call cut short still brings back the latest
  while running && [ "$(date +%s)" -lt "$until" ]; do
    sleep 5; [ $(( $(date +%s) - last )) -ge 30 ] && { copy_out; last=$(date +%s); }
  done
  running && echo "run still going at $(date -u +%T)" || echo "run ended"
  # every file the run has made so far, the last lines of its log first
  tail -25 "$RUN_OUT/run.log"
  copy_out && ls -la "$OUT"
}

case "$cmd" in
  start)
    running && { echo "a run is already going (pid $(cat "$KV_HOME.pid"))"; exit 2; }
    rm -rf "$KV_HOME" "$RUN_OUT" "$KV_HOME.stop" "$KV_HOME-lock"; mkdir -p "$KV_HOME" "$RUN_OUT" "$KV_HOME-lock"
    tar cf - --exclude=./.whl --exclude=./.git . | tar xf - -C "$KV_HOME"
    cd "$KV_HOME" || exit 2
    # setsid: the run is not ended with the call that started it; it writes its own pid before it becomes the script
    # the copy has no .git: KVERDICT_CHECKOUT names its root, so records carry repository paths (evaluations/zoo/...)
    KVERDICT_CHECKOUT="$KV_HOME" OUT="$RUN_OUT" BUDGET_S="${DETACHED_BUDGET_S:-1650}" KVERDICT_GPU_LOCK="$KV_HOME-lock/gpu.lock" STOP_FILE="$KV_HOME.stop" \
      setsid bash -c 'echo $$ > "$0.pid"; exec bash benchmarks/run_h200.sh "$@"' "$KV_HOME" "$@" \
      > "$RUN_OUT/run.log" 2>&1 < /dev/null &
    sleep 2; running && echo "started run_h200.sh $* (pid $(cat "$KV_HOME.pid")) in $KV_HOME" || { cat "$RUN_OUT/run.log"; exit 1; } ;;
  collect) collect "${1:-0}" ;;
  stop)
    touch "$KV_HOME.stop"
    pkill -TERM -f "evaluations.cli eval" && echo "asked the evaluations to stop"
    collect "${1:-60}" ;;
  *) echo "unknown: $cmd (start, collect or stop)" >&2; exit 2 ;;
esac
