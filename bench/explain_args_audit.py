"""The op table's argument kinds on hostile text, through ``POST /api/algebra`` and the workbench: every answer is a
200 or a 4xx whose detail names the argument (never a 5xx), and the two faces agree on it.

    python bench/explain_args_audit.py
"""

from __future__ import annotations

import html
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp())

from fastapi.testclient import TestClient  # noqa: E402

from algebra.teach import registry  # noqa: E402
from app.main import create_app  # noqa: E402

BAD = ["", " ", "abc", "(4,8):(8", "1.5", "-3", "0", "[", "[]", "<>", "(", "_", "9" * 40, "(1,2", "\u0664",
       "null", "[[1,[2]],\"x\"]", "(4,8):(8,1) junk", "Sw<3,4>", "(2,_)", "1@0", "(0,4)", "<2:1,,>", "((((((1))))))",
       "(4,8):(8,1)", "<2:1, 4:1>", "(1,(0,1))", "1e3", "0x10", "+5", "(-1,2)"]


def main() -> None:
    client = TestClient(create_app(), base_url="http://127.0.0.1", raise_server_exceptions=False)
    n = bad = 0
    for name, op in registry.OPS.items():
        good = list(op.example.args)
        for k, arg in enumerate(op.args):
            if k >= len(good):
                good = good + [registry.OPS[name].examples[-1].args[k]] if len(op.examples[-1].args) > k else good
            if k >= len(good):
                continue
            for text in BAD:
                args = list(good)
                args[k] = text
                n += 1
                r = client.post("/api/algebra", json={"op": name, "args": args})
                page = client.get("/algebra", params={"op": name, **dict(zip("abc", args, strict=False))})
                ptext = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))
                problems = []
                if r.status_code >= 500 or page.status_code >= 500:
                    problems.append(f"API {r.status_code}, page {page.status_code}")
                elif r.status_code == 422:
                    detail = r.json()["detail"]
                    refused = any(w in detail for w in ("condition", "CuTe", "not a layout", "Non-injective"))
                    if not refused and not detail.lower().startswith(arg.name.lower()) \
                            and arg.name.lower() not in detail.lower():
                        problems.append(f"detail does not name {arg.name!r}: {detail[:200]!r}")
                    if detail[:60] not in ptext:
                        problems.append(f"workbench does not say {detail[:60]!r}")
                elif r.status_code == 200 and "No layout here" in ptext:
                    problems.append("API answers, the workbench refuses")
                elif r.status_code not in (200, 422):
                    problems.append(f"API {r.status_code}: {r.text[:200]}")
                if problems:
                    bad += 1
                    print(f"{name} {arg.name}={text!r}: {'; '.join(problems)}")
    print(f"total {n} probes, {bad} with a problem")


if __name__ == "__main__":
    main()
