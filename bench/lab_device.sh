#!/usr/bin/env bash
# On a GPU host without the app's Python dependencies (the lent H200's image): install the wheels carried in
# .whl/web (pip download --python-version 3.12 --only-binary=:all: -d .whl/web <the [project] dependencies>), then
# run the GPU lab end to end over HTTP (bench/lab_http.py) and the GPU test suites. Results go to $OUT (default
# bench/results).
#   bash bench/lab_device.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench/results}"
if [ -d .whl/web ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/web/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1 LAYOUTLAB_BUILD_DIR=/tmp/lab-build
status=0
python3 bench/lab_http.py --out "$OUT/lab_http.json" 2>&1 | grep -v '" 200 OK$' | tee "$OUT/lab_http.log" | tail -20
status=$((status | PIPESTATUS[0]))
LAYOUTLAB_DATA=$(mktemp -d) python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_device.py \
  tests/test_gemm_gpu.py tests/test_solver_gpu.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -15
status=$((status | PIPESTATUS[0]))
exit $status
