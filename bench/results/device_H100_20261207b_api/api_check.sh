set -x
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt; nproc >> $OUT/device.txt
[ -x /tmp/v/bin/python ] || python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index -f .whl/web fastapi "gunicorn>=27,<28" uvicorn httptools uvloop jinja2 jinja2-fragments pydantic python-multipart orjson httpx nvidia-ml-py ; [ -x /tmp/v/bin/python ] || exit 3
export LAYOUTLAB_DATA=/tmp/lldata
for rep in 1; do
  for t in .whl/base .; do
    taskset -c 0,1 /tmp/v/bin/python bench/web_api.py --tree $t --tag dev_$( [ $t = . ] && echo after_64bc781 || echo before_afa4a47 )_$rep 2>&1 | grep -v INFO
  done
done > $OUT/api.txt 2>&1
mkdir -p $OUT/json && cp bench/results/web_api_dev_* $OUT/json/ 2>/dev/null
tail -c 3000 $OUT/api.txt
