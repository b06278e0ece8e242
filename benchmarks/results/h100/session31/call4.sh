# session 31, call 4 (warm H100): the zoo resumed in its folder, then the graph GPU tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET_S=${B1:-170} CONCURRENT=12 ZOO_OUT=.data/zoo-check LOGS_TGZ=call4-zoo-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh zoo > $OUT/call4-zoo-step.log 2>&1
tail -12 $OUT/call4-zoo-step.log
rm -rf $OUT/logs $OUT/records.tgz
L=$(( ${B2:-320} - ($(date +%s) - T0) ))
BUDGET_S=$L GPU_TESTS="tests/evaluations/test_gpu_zoo_graphs.py tests/evaluations/test_gpu_graph.py" LOGS_TGZ=call4-gputests-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh gputests > $OUT/call4-gputests-step.log 2>&1
tail -15 $OUT/call4-gputests-step.log
rm -rf $OUT/logs $OUT/records.tgz
ls $OUT
