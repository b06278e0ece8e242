# session 31, call 2 (warm H100): the zoo's and reproduction's GPU tests, then the 50-problem self-speedup sample
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET_S=${B1:-330} GPU_TESTS="tests/evaluations/test_zoo.py tests/evaluations/test_reproduce.py" LOGS_TGZ=call2-gputests-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh gputests > $OUT/call2-gputests-step.log 2>&1
tail -15 $OUT/call2-gputests-step.log
rm -rf $OUT/logs $OUT/records.tgz
L=$(( ${B2:-545} - ($(date +%s) - T0) ))
echo "selfsample with $L s"
BUDGET_S=$L SAMPLE_S=$((L - 20)) LOGS_TGZ=call2-sample-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh selfsample > $OUT/call2-sample-step.log 2>&1
tail -12 $OUT/call2-sample-step.log
rm -rf $OUT/logs $OUT/records.tgz
ls $OUT
