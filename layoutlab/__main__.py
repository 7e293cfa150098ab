"""``python -m layoutlab``: the ``layoutlab`` command (show, op, serve, worker; app/cli.py)."""

import sys

from app.cli import main

sys.exit(main())
