"""The ``layoutlab`` command: ``serve`` (the web app) and ``worker`` (a GPU worker process)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="layoutlab", description="CuTe layout algebra visualizer, drills and GPU lab")
    sub = parser.add_subparsers(dest="cmd", required=True)
    serve = sub.add_parser("serve", help="run the web app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--no-worker", action="store_true", help="never start the in-process GPU worker")
    sub.add_parser("worker", help="run a GPU worker (SQLite queue, or Redis when LAYOUTLAB_REDIS_URL is set)")
    args = parser.parse_args(argv)

    if args.cmd == "serve":
        import uvicorn

        from app.main import create_app

        app = create_app(embedded_worker=not args.no_worker)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
        return 0
    if args.cmd == "worker":
        from gpu_worker.service import run_worker

        return run_worker()
    return 2


if __name__ == "__main__":
    sys.exit(main())
