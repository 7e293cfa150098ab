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
    serve.add_argument("--workers", type=int, default=1,
                       help="app processes on this host (more than 1: no in-process GPU worker; run `layoutlab "
                            "worker` beside them)")
    sub.add_parser("worker", help="run a GPU worker (SQLite queue, or Redis when LAYOUTLAB_REDIS_URL is set)")
    args = parser.parse_args(argv)

    if args.cmd == "serve":
        import uvicorn

        from app.main import create_app
        from app.proxies import ProxySettingError, uvicorn_options

        try:  # X-Forwarded-* only from LAYOUTLAB_TRUSTED_PROXIES (none by default; uvicorn's own default: loopback)
            proxies = uvicorn_options()
        except ProxySettingError as exc:
            parser.error(str(exc))
        if args.workers > 1:  # each process builds its own app (create_app's default: no embedded GPU worker)
            uvicorn.run("app.main:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
                        log_level="info", **proxies)
            return 0
        app = create_app(embedded_worker=not args.no_worker)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info", **proxies)
        return 0
    if args.cmd == "worker":
        from gpu_worker.service import run_worker

        return run_worker()
    return 2


if __name__ == "__main__":
    sys.exit(main())
