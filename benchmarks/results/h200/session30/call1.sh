# session 30, call 1: the device-draw GPU tests, then the Triton dump's level 2 (both protocols)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1
cat .data/commit.txt
T0=$(date +%s)
BUDGET_S=${B1:-150} GPU_TESTS="tests/evaluations/test_gpu_timing.py tests/evaluations/test_verified_12.py" OUT=$OUT bash benchmarks/run_h200.sh gputests > $OUT/call1-gputests-step.log 2>&1
tail -25 $OUT/call1-gputests-step.log
cp $OUT/logs/gpu_tests.log $OUT/call1-gpu_tests.log
rm -rf $OUT/logs $OUT/logs.tgz $OUT/records.tgz
L=$(( ${B2:-560} - ($(date +%s) - T0) ))
echo "triton with $L s"
BUDGET_S=$L EVAL_CONCURRENT=${EC:-8} TRITON_ONLY="kernelbench/2/*" OUT=$OUT bash benchmarks/run_h200.sh triton > $OUT/call1-triton-step.log 2>&1
tail -30 $OUT/call1-triton-step.log
rm -rf $OUT/logs
ls $OUT
