FROM python:3.12-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/layoutlab
COPY . .
# the queue's and the database's clients; a GPU worker's image adds "gpu" (CUDA wheels: nvcc and the runtime)
ARG EXTRAS=redis,postgres
RUN python -m venv .venv && .venv/bin/pip install --no-cache-dir -e ".[${EXTRAS}]" \
 && npm ci --no-audit --no-fund --omit=peer --ignore-scripts && mkdir -p static/vendor/swagger-ui static/vendor/redoc \
 && cp node_modules/htmx.org/dist/htmx.min.js static/vendor/ \
 && cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css static/vendor/swagger-ui/ \
 && cp node_modules/redoc/bundles/redoc.standalone.js static/vendor/redoc/
ENV LAYOUTLAB_DATA=/data
EXPOSE 8000
CMD [".venv/bin/layoutlab", "serve", "--host", "0.0.0.0", "--port", "8000"]
