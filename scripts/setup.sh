#!/usr/bin/env bash
# Set up LayoutLab on a fresh machine: system packages (when root), a virtualenv with the app and
# its test tools, and htmx copied from the pinned npm package into static/vendor.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${1:-test}"

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# PostgreSQL's server binaries for the PostgreSQL tests (Debian keeps them under /usr/lib/postgresql/<v>/bin)
command -v postgres >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need_apt+=(postgresql)
if [ "${#need_apt[@]}" -gt 0 ] && [ "$EXTRAS" = "test" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null; } \
      || echo "setup: could not install ${need_apt[*]}; browser/redis/postgres tests will be skipped" >&2
  else
    echo "setup: ${need_apt[*]} missing and not root; browser/redis/postgres tests will be skipped" >&2
  fi
fi

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[$EXTRAS]"

# the vendored front-end files (pinned in package.json): htmx, and the offline OpenAPI viewers of /docs and /redoc
# (swagger-ui-dist, redoc's standalone bundle; its React peers are inside the bundle, so peers are omitted)
VENDOR=(htmx.org/dist/htmx.min.js:htmx.min.js
        swagger-ui-dist/swagger-ui-bundle.js:swagger-ui/swagger-ui-bundle.js
        swagger-ui-dist/swagger-ui.css:swagger-ui/swagger-ui.css
        redoc/bundles/redoc.standalone.js:redoc/redoc.standalone.js)
NPM_FLAGS=(--no-audit --no-fund --silent --omit=peer --ignore-scripts)
for pair in "${VENDOR[@]}"; do
  if [ ! -f "node_modules/${pair%%:*}" ]; then
    npm ci "${NPM_FLAGS[@]}" >/dev/null 2>&1 || npm install "${NPM_FLAGS[@]}" >/dev/null
    break
  fi
done
mkdir -p static/vendor/swagger-ui static/vendor/redoc
for pair in "${VENDOR[@]}"; do
  cp "node_modules/${pair%%:*}" "static/vendor/${pair#*:}"
done
echo "setup: ok (.venv ready, htmx $(node -p "require('./node_modules/htmx.org/package.json').version"), swagger-ui" \
  "$(node -p "require('./node_modules/swagger-ui-dist/package.json').version"), redoc" \
  "$(node -p "require('./node_modules/redoc/package.json').version"))"
