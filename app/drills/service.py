"""The drill service: one set of functions behind both the JSON routes and the HTML pages.

Answers that cannot be read are graded incorrect with ``readable: false`` and a format hint (HTTP 200) and are not
recorded as attempts, so a typo costs nothing; an empty or over-long answer is a 422 raised by the route's schema.
The key (``expected``), the derivation and the result grids are shown only once the learner has answered the drill
right or asked for the key (a reveal, which counts as a miss); answers after that are graded but not recorded.

Serving a drill writes nothing (a GET changes nothing): the time it was served travels with it as a signed token
(:func:`served_token`, the API's ``served`` field and the answer form's hidden input), and the answer brings it back.
"""

from __future__ import annotations

import random
import time
from typing import Any

from app.drills import identity, progress, store
from app.drills.core import (
    Drill,
    DrillError,
    Grade,
    Grid,
    check,
    from_id,
    generate,
    kinds,
    may_take_sheet,
    random_seed,
)

#: How many seeds are tried to find a drill of the sub-skill spaced repetition asks for. The rarest sub-skills
#: (algebra_op's left and right inverses, about one seed in 31) are missed about one time in 4,000; with 48 seeds
#: they were missed one time in five, and a banks variant one time in 300. The search stops at the first hit.
SKILL_SEARCH = 256


def kind_list() -> list[dict[str, str]]:
    """Every kind as ``{"kind", "title", "skill"}`` in syllabus order."""
    return [{"kind": k.kind, "title": k.title, "skill": k.skill} for k in kinds()]


def drill_for_skill(skill: str) -> Drill:
    """A fresh drill of the sub-skill ``kind:variant`` (of the kind, when no seed in SKILL_SEARCH gives it)."""
    kind = skill.split(":")[0]
    rng = random.SystemRandom()
    first = None
    for _ in range(SKILL_SEARCH):
        d = generate(kind, rng.randrange(0, 2**31))
        first = first or d
        if d.skill == skill or ":" not in skill:
            return d
    assert first is not None
    return first


#: The choices of numbers a learner has: fresh ones, or the interview sheet's own.
NUMBERS = ("fresh", "sheet")
#: How many seeds are tried to find a drill with the sheet's numbers (about one seed in ten has them).
SHEET_SEARCH = 2000


def sheet_kinds() -> list[str]:
    """The kinds that can give the interview sheet's own numbers (those its parts ask, but ``explain``)."""
    from app.drills.whiteboard import SHEET

    return [k for k in dict.fromkeys(kind for _, qs in SHEET for kind, _ in qs) if k != "explain"]


def sheet_drill(kind: str | None, rng: random.Random | None = None) -> Drill:
    """A drill of ``kind`` (else of a kind the sheet asks) carrying the sheet's own numbers. Post-condition: its
    ``sheet`` is True, and its id reproduces it; DrillError for a kind the sheet never asks."""
    rng = rng or random.SystemRandom()
    names = sheet_kinds()
    kind = kind or names[rng.randrange(len(names))]
    if kind not in names:
        raise DrillError(f"kind {kind!r} has no drills with the interview sheet's numbers; these kinds do: "
                         f"{', '.join(names)}")
    for _ in range(SHEET_SEARCH):
        seed = rng.randrange(0, 2**31)
        if not may_take_sheet(kind, seed):
            continue
        d = generate(kind, seed)
        if d.sheet:
            return d
    raise DrillError(f"no drill of kind {kind!r} with the sheet's numbers in {SHEET_SEARCH} seeds")  # pragma: no cover


def next_drill(learner: str | None, kind: str | None = None, seed: int | None = None,
               numbers: str = "fresh") -> Drill:
    """The next drill: ``kind`` (else the learner's spaced-repetition sub-skill) with ``seed`` (else a fresh one);
    ``numbers="sheet"`` (without a seed) asks for one with the interview sheet's own numbers.

    Post-condition: nothing is stored (the served time is :func:`served_token`'s business).
    """
    if numbers not in NUMBERS:
        raise DrillError(f"numbers must be one of {', '.join(NUMBERS)}, not {numbers!r}")
    if numbers == "sheet" and seed is None:
        if kind:
            check(kind, 0)
        elif learner and (due := progress.next_kind(learner)) in sheet_kinds():
            kind = due
        return sheet_drill(kind)
    if not kind and seed is None:
        drill = drill_for_skill(progress.next_skill(learner) if learner else kinds()[0].kind)
    else:
        kind = kind or (progress.next_kind(learner) if learner else kinds()[0].kind)
        seed = random_seed() if seed is None else seed
        check(kind, seed)
        drill = generate(kind, seed)
    return drill


def served_token(drill_id: str, now: float | None = None) -> str:
    """A signed ``served:<drill id>:<ms>`` token: when this drill was shown, for the answer's time taken."""
    ms = int((time.time() if now is None else now) * 1000)
    return identity.sign(f"served:{drill_id}:{ms}")


def served_time(token: str | None, drill_id: str, now: float | None = None) -> float | None:
    """The time inside a token of :func:`served_token` for this drill, or None when it is missing, forged, of
    another drill, or in the future."""
    inner = identity.unsign(token)
    prefix = f"served:{drill_id}:"
    if not inner or not inner.startswith(prefix) or not inner[len(prefix):].isdigit():
        return None
    at = int(inner[len(prefix):]) / 1000
    return at if at <= (time.time() if now is None else now) + 1 else None


def drill_json(drill: Drill) -> dict[str, Any]:
    """The public view of a drill (no answer key): id, kind, sub-skill, title, seed, prompt, answer_format, the
    structured ``given`` (op drills: ``{"op", "args"}``) and the grids shown with the question."""
    title = next((k.title for k in kinds() if k.kind == drill.kind), drill.kind)
    return {"id": drill.id, "kind": drill.kind, "skill": drill.skill, "variant": drill.variant, "title": title,
            "seed": drill.seed, "prompt": drill.prompt, "answer_format": drill.answer_format,
            "given": drill.data, "shown": [g.to_dict() for g in drill.shown],
            "table": list(drill.table_shape) if drill.table_shape else None, "hints": 3, "sheet": drill.sheet}


def grade_answer(learner: str | None, drill_id: str, answer: str, session: str | None = None,
                 elapsed_s: float | None = None, served: str | None = None) -> tuple[Drill, Grade, bool]:
    """Regrade from the id and record the attempt in one transaction (store.record_attempt). Post-conditions: an
    unreadable answer is not recorded, nor is one to a drill already solved or revealed; ``elapsed_s`` defaults to
    the time since the ``served`` token's moment; the third value says whether the key may be shown (answered right
    now or before, or revealed). Raises store.SessionRefused for a whiteboard answer its session does not take."""
    drill = from_id(drill_id)
    verdict = drill.grade(answer)
    if learner and verdict.readable:
        if elapsed_s is None and (at := served_time(served, drill.id)) is not None:
            elapsed_s = max(0.0, time.time() - at)
        done = store.record_attempt(learner, drill.id, drill.kind, drill.seed, answer, verdict.correct,
                                    elapsed_s=elapsed_s, session=session, skill=drill.skill).solved
        return drill, verdict, done
    return drill, verdict, verdict.correct or bool(learner and store.solved(learner, drill.id))


def reveal(learner: str, drill_id: str) -> dict[str, Any]:
    """Show the key and the derivation; it counts as a miss and the drill can no longer promote its sub-skill."""
    drill = from_id(drill_id)
    store.record_reveal(learner, drill.id, drill.kind, drill.seed, skill=drill.skill)
    return {"id": drill.id, "expected": drill.expected, "steps": drill.steps,
            "grids": [g.to_dict() for g in drill.grids]}


def answer_grid(drill: Drill, verdict: Grade) -> Grid | None:
    """The learner's table with each cell marked ok/bad, when the answer was a table."""
    if verdict.table is None or verdict.cells is None:
        return None
    marks = [["ok" if good else "bad" for good in row] for row in verdict.cells]
    rows = [["?" if v is None else v for v in row] for row in verdict.table]
    wrong = sum(not good for row in verdict.cells for good in row)
    return Grid("Your table", rows, marks=marks,
                caption=f"{wrong} wrong cell{'s' if wrong != 1 else ''}" if wrong else "every cell right")


def result_json(drill: Drill, verdict: Grade, solved: bool) -> dict[str, Any]:
    """The answer route's body: ``correct``, ``readable``, ``feedback`` (what is wrong, the usual mistake it is;
    never the key), per-item / per-cell marks; ``expected``, ``steps`` and the result grids only when ``solved``."""
    grid = answer_grid(drill, verdict)
    out: dict[str, Any] = {"id": drill.id, "correct": verdict.correct, "readable": verdict.readable,
                           "feedback": verdict.reason, "reason": verdict.reason, "mistake": verdict.mistake or None,
                           "items": verdict.items, "cells": verdict.cells,
                           "answer_grid": grid.to_dict() if grid else None}
    if solved:
        out.update(expected=drill.expected, steps=drill.steps, grids=[g.to_dict() for g in drill.grids])
    return out


def hint(learner: str | None, drill_id: str, level: int) -> dict[str, Any]:
    """Hint ``level`` (1 rule, 2 first step, 3 derivation) of a drill; the level is remembered for the attempt (a
    write: only POST routes call this)."""
    drill = from_id(drill_id)
    out = drill.hint(level)
    if learner:
        store.note_hint(learner, drill.id, out["level"])
    return out
