# session 31, call 1: the runner's zoo (verified first) into a fresh folder, on code that the GPU has not run yet
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1
cat .data/commit.txt
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $OUT/card.txt
BUDGET_S=${B:-540} ZOO_S=${Z:-480} CONCURRENT=${C:-12} ZOO_OUT=.data/zoo-check LOGS_TGZ=call1-logs.tgz OUT=$OUT bash benchmarks/run_h200.sh zoo > $OUT/call1-zoo-step.log 2>&1
tail -25 $OUT/call1-zoo-step.log
rm -rf $OUT/logs $OUT/records.tgz
ls $OUT
