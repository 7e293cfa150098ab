#!/usr/bin/env bash
# The ladder's layouts on the H200, as one command (binaries built beforehand here with
#   python3 bench/gemm_layouts.py --build-only --bin-dir build/gemmL
# and carried): every rung checked, rung 8 timed against cuBLAS at 4096^3 and 8192^3, Nsight Compute's shared-memory
# counters for one launch per rung beside the bank model. Writes under $OUT (default /tmp/out): the JSON, the log,
# nvidia-smi before and after.
#   GEMM_BIN=build/gemmL bash bench/gemm_layouts_device.sh
set -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
BIN=${GEMM_BIN:-build/gemmL}
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE > "$OUT/nvidia_smi.txt" 2>&1
python3 bench/gemm_layouts.py --no-build --bin-dir "$BIN" --repeats "${GEMM_REPEATS:-3}" \
  --out "$OUT/gemm_layouts_H200.json" 2>&1 | tee "$OUT/bench.log" | grep -v '^PROGRESS'
status=$?
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE >> "$OUT/nvidia_smi.txt" 2>&1
exit $status
