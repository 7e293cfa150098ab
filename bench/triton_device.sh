#!/usr/bin/env bash
# Triton's stores into shared memory on the lent GPU (H100 or H200), as one command: every case of
# bench/triton_device.py compiled, launched and checked, its SASS stores, the model and Gluon's bank_conflicts, then
# one ncu run over one launch of each case. Writes under $OUT (default /tmp/out): the JSON, the log, nvidia-smi
# before and after.
#   bash bench/triton_device.sh
set -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE > "$OUT/nvidia_smi.txt" 2>&1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o "H[0-9][0-9]*" | head -1)
GPU=${GPU:-GPU}
python3 bench/triton_device.py --out "$OUT/triton_conflicts_${GPU}.json" 2>&1 | tee "$OUT/bench.log"
status=$?
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE >> "$OUT/nvidia_smi.txt" 2>&1
exit $status
