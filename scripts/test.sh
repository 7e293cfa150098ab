#!/usr/bin/env bash
# Set up (if needed) and run the whole default test suite (oracle, gpu and kernels markers are opt-in:
#   scripts/test.sh -m oracle    scripts/test.sh -m gpu    scripts/test.sh -m kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh test
export LAYOUTLAB_DATA="${LAYOUTLAB_DATA:-$(mktemp -d)}"
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q "$@"
