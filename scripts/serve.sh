#!/usr/bin/env bash
# Set up (if needed) and run the web app on http://$HOST:$PORT (default 127.0.0.1:8000).
#   PORT=8001 ./scripts/serve.sh          another port
#   HOST=0.0.0.0 ./scripts/serve.sh       listen on every interface
set -euo pipefail
cd "$(dirname "$0")/.."
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"

port_busy() {  # something already accepts connections on HOST:PORT (0.0.0.0 is checked on loopback)
  local host="$1"
  [ "$host" = "0.0.0.0" ] && host=127.0.0.1
  (exec 3<>"/dev/tcp/$host/$PORT") 2>/dev/null
}

busy_hint() {
  echo "serve.sh: port $PORT on $HOST is already in use (another LayoutLab or another program)." >&2
  echo "  Stop it, or pick another port:  PORT=$((PORT + 1)) ./scripts/serve.sh   (HOST sets the address)" >&2
}

if port_busy "$HOST"; then  # before installing anything
  busy_hint
  exit 1
fi
./scripts/setup.sh "${LAYOUTLAB_EXTRAS:-test}"
status=0
.venv/bin/layoutlab serve --host "$HOST" --port "$PORT" || status=$?
if [ "$status" -ne 0 ] && port_busy "$HOST"; then  # taken while setting up (gunicorn: "Connection in use")
  busy_hint
fi
exit "$status"
