"""The drill service: one set of functions behind both the JSON routes and the HTML pages.

Answers that cannot be read are graded incorrect with ``readable: false`` and a reason (HTTP 200) and are not
recorded as attempts, so a typo costs nothing; an empty or over-long answer is a 422 raised by the route's schema.
"""

from __future__ import annotations

from typing import Any

from app.drills import progress, store
from app.drills.core import Drill, Grade, Grid, check, from_id, generate, kinds, random_seed


def kind_list() -> list[dict[str, str]]:
    """Every kind as ``{"kind", "title", "skill"}`` in syllabus order."""
    return [{"kind": k.kind, "title": k.title, "skill": k.skill} for k in kinds()]


def next_drill(learner: str | None, kind: str | None = None, seed: int | None = None) -> Drill:
    """The next drill: ``kind`` (else the learner's spaced-repetition choice) with ``seed`` (else a fresh one).

    Post-condition: when a learner is given, the drill is marked served to them (for time taken).
    """
    if not kind:
        kind = progress.next_kind(learner) if learner else kinds()[0].kind
    if seed is None:
        seed = random_seed()
    check(kind, seed)
    drill = generate(kind, seed)
    if learner:
        store.mark_served(learner, drill.id)
    return drill


def drill_json(drill: Drill) -> dict[str, Any]:
    """The public view of a drill (no answer key): id, kind, title, seed, prompt, answer_format, given grids."""
    title = next((k.title for k in kinds() if k.kind == drill.kind), drill.kind)
    return {"id": drill.id, "kind": drill.kind, "title": title, "seed": drill.seed, "prompt": drill.prompt,
            "answer_format": drill.answer_format, "given": [g.to_dict() for g in drill.given],
            "table": list(drill.table_shape) if drill.table_shape else None, "hints": 3}


def grade_answer(learner: str | None, drill_id: str, answer: str, session: str | None = None,
                 elapsed_s: float | None = None) -> tuple[Drill, Grade]:
    """Regrade from the id and record the attempt. Post-condition: an unreadable answer is not recorded."""
    drill = from_id(drill_id)
    verdict = drill.grade(answer)
    if learner and verdict.readable:
        store.record_attempt(learner, drill.id, drill.kind, drill.seed, answer, verdict.correct,
                             elapsed_s=elapsed_s, session=session)
    return drill, verdict


def answer_grid(drill: Drill, verdict: Grade) -> Grid | None:
    """The learner's table with each cell marked ok/bad, when the answer was a table."""
    if verdict.table is None or verdict.cells is None:
        return None
    marks = [["ok" if good else "bad" for good in row] for row in verdict.cells]
    rows = [["?" if v is None else v for v in row] for row in verdict.table]
    wrong = sum(not good for row in verdict.cells for good in row)
    return Grid("Your table", rows, marks=marks,
                caption=f"{wrong} wrong cell{'s' if wrong != 1 else ''}" if wrong else "every cell right")


def result_json(drill: Drill, verdict: Grade) -> dict[str, Any]:
    """The answer route's body: correct, expected (canonical), steps, reason, readable, per-item / per-cell marks."""
    grid = answer_grid(drill, verdict)
    return {"id": drill.id, "correct": verdict.correct, "expected": drill.expected, "steps": drill.steps,
            "reason": verdict.reason, "readable": verdict.readable, "items": verdict.items,
            "cells": verdict.cells, "answer_grid": grid.to_dict() if grid else None,
            "grids": [g.to_dict() for g in drill.grids]}


def hint(learner: str | None, drill_id: str, level: int) -> dict[str, Any]:
    """Hint ``level`` (1 rule, 2 first step, 3 derivation) of a drill; the level is remembered for the attempt."""
    drill = from_id(drill_id)
    out = drill.hint(level)
    if learner:
        store.note_hint(learner, drill.id, out["level"])
    return out
