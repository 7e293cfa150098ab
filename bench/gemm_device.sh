#!/usr/bin/env bash
# The GEMM ladder's device run, as one command on the H200 (binaries built beforehand with
#   python3 bench/gemm.py --build-only --bin-dir build/gemmF <the VARIANTS below>
# and carried): the ceilings, every rung and the rung-8 variants against cuBLAS at every size (rungs 7 and 8 on
# uniform, normal and zero inputs), then rung 8 and stream-K over every tile sustained at 4096^3 and 8192^3 (joules per
# GEMM, in their own run so that their heat does not slow the ladder's timing), Nsight Compute and the GPU tests.
# Writes under $OUT (default /tmp/out): 7 files.
#   bash bench/gemm_device.sh            # everything
#   GEMM_ONLY=1 bash bench/gemm_device.sh   # the benchmark, no tests
set -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
VARIANTS=(--variant r8_dp:8:R8_SK=0 --variant r8_sk:8:R8_SK=2 --variant r8_all:8:R8_SK=3 --variant rung8_fp16:8:GEMM_FP16
          --variant r8_c4:8:R8_CLUSTER=4 --variant r8_g32:8:R8_GROUP_M=32 --variant r8_sleep:8:R8_WAIT_LOOP=2
          --variant r8_epi:8:R8_EPI_OVERLAP=1)
BIN=${GEMM_BIN:-build/gemmF}
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE > "$OUT/nvidia_smi.txt" 2>&1
python3 bench/gemm.py --no-build --bin-dir "$BIN" --iters "${GEMM_ITERS:-30}" --timeout 150 \
  --dists uniform,normal,zeros --dist-jobs rung7,rung8,rung8_fp16 "${VARIANTS[@]}" ${GEMM_ARGS:-} \
  --out "$OUT/gemm_h200.json" 2>&1 | tee "$OUT/bench.log" | grep -v '^PROGRESS'
status=$?
python3 bench/gemm.py --no-build --no-peak --no-ncu --bin-dir "$BIN" --rungs 8 --iters "${GEMM_ITERS:-30}" --timeout 150 \
  --sizes 4096x4096x4096,8192x8192x8192 --dists uniform,normal,zeros --dist-jobs rung8,r8_all --variant r8_all:8:R8_SK=3 \
  --energy "${GEMM_ENERGY_S:-1.5}" --energy-jobs rung8,r8_all --out "$OUT/gemm_h200_energy.json" 2>&1 \
  | tee -a "$OUT/bench.log" | grep -v '^PROGRESS'
status=$((status | $?))
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE >> "$OUT/nvidia_smi.txt" 2>&1
if [ -z "${GEMM_ONLY:-}" ]; then
  # What limits rung 8 at 4096^3 and 8192^3: Nsight Compute on one launch of it, and of cuBLAS's bf16 GEMM (the
  # second cuBLAS launch of a --check-only run; the first is the fp32-output reference). Clocks left alone.
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
            --section WarpStateStats)
  for size in 4096x4096x4096 8192x8192x8192; do
    [ -z "$NCU" ] && break
    timeout 120 "$NCU" --clock-control none -k regex:gemm_rung8 --launch-count 1 "${SECTIONS[@]}" \
      "$BIN/rung8" --profile --sizes $size > "$OUT/ncu_$size.txt" 2>&1
    timeout 120 "$NCU" --clock-control none -k regex:'nvjet|xmma|sm90_|cutlass' --launch-skip 1 --launch-count 1 \
      "${SECTIONS[@]}" "$BIN/rung8" --check-only --sizes $size >> "$OUT/ncu_$size.txt" 2>&1
  done
  if [ -d .whl ]; then  # pydantic and its needs, for gpu_worker (the image lacks them)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      && export PYTHONPATH=/tmp/site
  fi
  export LAYOUTLAB_BUILD_DIR=/tmp/gemm-build LAYOUTLAB_DATA=/tmp/gemm-data
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm_gpu.py 2>&1 | tee "$OUT/pytest.log" | tail -15
  status=$((status | $?))
fi
exit $status
