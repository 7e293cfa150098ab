"""The ``layoutlab`` command: ``serve`` (the web app) and ``worker`` (one GPU worker process per GPU); ``show`` and
``op`` go to layoutlab/cli.py (the library face, which imports no web app)."""

from __future__ import annotations

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line and status 2, as `layoutlab show` and `op` answer bad input
        self.exit(2, f"layoutlab: {' '.join(message.split())}\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("show", "op"):  # the library face's commands: layoutlab/cli.py, no web app imported
        from layoutlab.cli import main as face

        return face(argv)
    from layoutlab.cli import whole  # ASCII digits only: int() would read "\uff18\uff10" as 80

    parser = _Parser(prog="layoutlab", description="CuTe layout algebra visualizer, drills and GPU lab",
                     epilog="also: `layoutlab show <layout>` (print_layout's table, --svg/--html/--latex FILE) and "
                            "`layoutlab op <op> <args...>` (`layoutlab show -h`)")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("show", help="print a layout's table and write its pictures (`layoutlab show -h`)")
    sub.add_parser("op", help="run an op of the algebra (`layoutlab op -h`)")
    serve = sub.add_parser("serve", help="run the web app")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=whole("--port"), default=8000)
    serve.add_argument("--no-worker", action="store_true", help="never start the in-process GPU worker")
    serve.add_argument("--workers", type=whole("--workers"), default=1,
                       help="app processes on this host (more than 1: no in-process GPU worker; run `layoutlab "
                            "worker` beside them)")
    serve.add_argument("--gpus", default=None, metavar="all|0,2",
                       help="GPUs of the embedded workers, one worker process each (default: all GPUs)")
    worker = sub.add_parser("worker", help="run one GPU worker per GPU (SQLite queue, PostgreSQL with "
                                           "LAYOUTLAB_DATABASE_URL, Redis with LAYOUTLAB_REDIS_URL)")
    worker.add_argument("--gpus", default=None, metavar="all|0,2",
                        help="NVML indices or UUIDs: one worker process per GPU, pinned with CUDA_VISIBLE_DEVICES "
                             "(default: all GPUs; a host without one runs one worker for jobs that need none). "
                             "LAYOUTLAB_FAKE_GPUS=N gives N fake GPUs for tests (compile_only jobs only)")
    args = parser.parse_args(argv)

    if args.cmd == "serve":
        from app.proxies import ProxySettingError, trusted_proxies

        try:  # X-Forwarded-* only from LAYOUTLAB_TRUSTED_PROXIES (none by default)
            trusted = trusted_proxies()
        except ProxySettingError as exc:
            parser.error(str(exc))
        if args.gpus is not None and not args.no_worker and args.workers <= 1:
            from gpu_worker.gpus import GpuSpecError, select, visible

            try:  # a bad --gpus fails here, before the server starts
                select(args.gpus, visible())
            except (GpuSpecError, RuntimeError, ValueError) as exc:
                parser.error(f"--gpus: {exc}")
        from app.serve import serve  # gunicorn's master and ASGI workers, with the limits of app.serve.SETTINGS

        # more than 1 app process: no embedded GPU worker (run `layoutlab worker` beside them)
        try:
            return serve(args.host, args.port, workers=args.workers, embedded_worker=not args.no_worker,
                         gpus=args.gpus, trusted=trusted)
        except ValueError as exc:  # a timeout setting that is not a number (app.serve.ENV)
            parser.error(str(exc))
    if args.cmd == "worker":
        from gpu_worker import multi
        from gpu_worker.gpus import GpuSpecError

        try:
            return multi.run(args.gpus)
        except GpuSpecError as exc:
            parser.error(str(exc))
    return 2


if __name__ == "__main__":
    sys.exit(main())
