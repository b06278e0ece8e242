# session 31, call 3 (warm H100): the zoo resumed in its folder, then the attacks on the harness
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
BUDGET_S=${B1:-250} CONCURRENT=12 ZOO_OUT=.data/zoo-check LOGS_TGZ=call3-zoo-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh zoo > $OUT/call3-zoo-step.log 2>&1
tail -12 $OUT/call3-zoo-step.log
rm -rf $OUT/logs $OUT/records.tgz
L=$(( ${B2:-540} - ($(date +%s) - T0) ))
echo "attacks with $L s"
BUDGET_S=$L CONCURRENT=12 LOGS_TGZ=call3-attacks-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh attacks > $OUT/call3-attacks-step.log 2>&1
tail -14 $OUT/call3-attacks-step.log
rm -rf $OUT/logs $OUT/records.tgz
ls $OUT
