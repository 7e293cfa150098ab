#!/usr/bin/env bash
# Set up (if needed) and run the web app on http://127.0.0.1:8000
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh "${LAYOUTLAB_EXTRAS:-test}"
exec .venv/bin/layoutlab serve --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}"
