"""Whiteboard sessions: the seed's full seven-part sheet, 3-8 questions per part (every question of the sheet,
part 7's choice of a swizzle for a 32- and a 128-word pitch too), answered once each against the clock.

Each part lists its questions as (kind, test): a fresh seed is searched until the generated drill passes the test
(the variant the sheet asks for: a column-major layout in part 1, the three coordinates in part 4, the padded formula
and the swizzle in part 7, ...), so every session has every slot's variant. Parts 6 and 7 (the tiled view and banks)
must each take at most ten minutes in all; a slower part, or one with a wrong answer, is flagged "redo".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import algebra as A
from app.drills import store
from app.drills.core import Drill, DrillError, drill_id, generate, may_take_sheet, parse_id

Test = Callable[[Drill], bool]


def _major(d: Drill) -> str:
    from app.drills.gen_majorness import classify

    return classify(A.parse(d.data["layout"]))


def _is(variant: str, major: str | None = None, nested: bool | None = None) -> Test:
    def test(d: Drill) -> bool:
        if d.variant != variant:
            return False
        if major and _major(d) != major:
            return False
        if nested is not None and (A.depth(A.parse(d.data["layout"])) > 1) != nested:
            return False
        return True

    return test


def _any(d: Drill) -> bool:
    return True


def _explain(key: str) -> Test:
    return lambda d: d.variant == key


def _choose_swizzle(pitch: int) -> Test:
    """Part 7.3 / 7.4: choose the swizzle that makes a column read of a float tile with this row pitch (words)
    conflict-free."""
    return lambda d: d.variant == "fix" and d.data["ebytes"] == 4 and d.data["layout"] == f"(32,{pitch}):({pitch},1)"


def _padded_rows(d: Drill) -> bool:
    """Part 7.2: the banks of some rows of a column of a padded tile (the sheet's pitch 33, rows 0..3)."""
    if d.variant != "banks":
        return False
    lay = A.parse(d.data["layout"])
    return lay.stride[0] != A.size(lay[1])


#: The sheet: (label, [(kind, test), ...]) per part, in the seed's order.
SHEET: list[tuple[str, list[tuple[str, Test]]]] = [
    ("Column-major offsets", [("index_formula", lambda d: _major(d) == "column"),
                              ("offsets", _is("coords", "column")), ("offsets", _is("table", "column"))]),
    ("Row-major offsets", [("offsets", _is("coords", "row")), ("offsets", _is("table", "row")),
                           ("explain", _explain("majorness"))]),
    ("A hierarchical layout", [("index_formula", lambda d: A.depth(A.parse(d.data["layout"])) > 1),
                               ("offsets", _is("coords", nested=True)), ("natural_coord", _is("mapping")),
                               ("offsets", _is("table", nested=True)), ("majorness", lambda d: d.variant == "hier")]),
    ("One element, three coordinates", [("natural_coord", _is("three")), ("natural_coord", _is("idx")),
                                        ("natural_coord", _is("offset"))]),
    ("A transposed view", [("transpose_view", lambda d: d.variant == "row"),
                           ("transpose_view", lambda d: d.variant == "prove"),
                           ("design_view", lambda d: d.variant == "transpose"), ("explain", _explain("transpose"))]),
    ("A tiled view", [("tiled_view", lambda d: d.variant == "formula"), ("tiled_view", lambda d: d.variant == "layout"),
                      ("tiled_view", lambda d: d.variant == "spot"), ("explain", _explain("tiling"))]),
    ("Banks, padding and swizzling", [("banks", lambda d: d.variant == "distinct"),
                                      ("banks", lambda d: d.variant == "ways"),
                                      ("banks", _padded_rows),
                                      ("banks", lambda d: d.variant == "formula"),
                                      ("banks", _choose_swizzle(32)),
                                      ("banks", lambda d: d.variant == "swizzled"),
                                      ("banks", _choose_swizzle(128)),
                                      ("explain", _explain("swizzle"))]),
]
#: (kind, label) per part, for the pages' overview.
WHITEBOARD = [(qs[0][0], label) for label, qs in SHEET]
#: 0-based indices of the parts with the ten-minute rule, and the limit in seconds (per part, all its questions).
TIMED_PARTS = (5, 6)
PART_LIMIT_S = 600
SEARCH = 3000


def pick_drill(rng: random.Random, kind: str, test: Test) -> str:
    """A drill id of ``kind`` whose drill passes ``test`` (the first of SEARCH fresh seeds; the kind at worst)."""
    first = None
    for _ in range(SEARCH):
        seed = rng.randrange(0, 2**31 - 1)
        d = generate(kind, seed)
        first = first or d.id
        try:
            if test(d):
                return d.id
        except (KeyError, ValueError, A.LayoutError):
            continue
    assert first is not None
    return first


def warm() -> None:
    """Do once, ahead of the first session, what a first start does cold: import every drill generator and fill the
    tile-only caches of the sheet's kinds (one sheet picked and thrown away). The app runs it in a background thread
    at start-up (app.main)."""
    rng = random.Random()
    pick_sheet(rng, [(p, kind, test) for p, (_, qs) in enumerate(SHEET) for kind, test in qs])


def _with_sheet_numbers(kind: str, test: Test) -> Test:
    """``test``, and the drill carries the sheet's own numbers (``explain`` has no numbers)."""
    if kind == "explain":
        return test

    def sheet_test(d: Drill) -> bool:
        return d.sheet and test(d)

    sheet_test.sheet_only = True  # type: ignore[attr-defined]  # pick_sheet probes seeds before generating them
    return sheet_test


def start(learner: str, rng: random.Random | None = None, now: float | None = None, numbers: str = "fresh") -> str:
    """Create a session of the whole sheet with fresh seeds; ``numbers="sheet"`` asks each question with the
    sheet's own numbers (a slot no drill with them fills in the search takes fresh ones). Post-condition: returns
    the session id; its questions are stored in order as ``{"part", "id"}``."""
    rng = rng or random.Random()
    slots = [(p, kind, _with_sheet_numbers(kind, test) if numbers == "sheet" else test)
             for p, (_, qs) in enumerate(SHEET) for kind, test in qs]
    questions = [{"part": p, "id": did} for (p, _, _), did in zip(slots, pick_sheet(rng, slots), strict=True)]
    return store.create_session(learner, questions, now=now)  # type: ignore[arg-type]


def pick_sheet(rng: random.Random, slots: list[tuple[int, str, Test]]) -> list[str]:
    """One distinct drill id per slot ``(part, kind, test)``. Each kind's fresh seeds are generated once for all its
    slots: a drill fills the first open slot of its kind whose test it passes, so a drill that is not one slot's
    variant serves another (at most SEARCH drills per slot; a slot still open takes a fresh drill of its kind)."""
    ids: list[str | None] = [None] * len(slots)
    for kind in dict.fromkeys(k for _, k, _ in slots):
        mine = [i for i, (_, k, _) in enumerate(slots) if k == kind]
        probing = all(getattr(slots[i][2], "sheet_only", False) for i in mine)
        for _ in range(SEARCH * len(mine)):
            open_slots = [i for i in mine if ids[i] is None]
            if not open_slots:
                break
            seed = rng.randrange(0, 2**31 - 1)
            if probing and not may_take_sheet(kind, seed):
                continue  # its first draw says no: not generated at all
            d = generate(kind, seed)
            if d.id in ids:
                continue
            for i in open_slots:
                try:
                    if slots[i][2](d):
                        ids[i] = d.id
                        break
                except (KeyError, ValueError, A.LayoutError):
                    continue
        for i in mine:
            while ids[i] is None:  # the kind at worst, never a drill twice (a part takes one answer per drill)
                d = generate(kind, rng.randrange(0, 2**31 - 1))
                ids[i] = None if d.id in ids else d.id
    return ids  # type: ignore[return-value]


def _questions(sess: dict[str, Any]) -> list[tuple[int, str]]:
    """(part, drill id) per question; a session stored as a plain list has one question per part."""
    out = []
    for i, q in enumerate(sess["parts"]):
        out.append((q["part"], q["id"]) if isinstance(q, dict) else (i, q))
    return out


@dataclass
class PartResult:
    """One question of a session: its part, whether it was answered and right, and the time it took."""

    index: int
    part: int
    label: str
    drill_id: str
    answered: bool
    correct: bool
    elapsed_s: float | None
    redo: bool
    why: str
    answer: str = ""
    expected: str = ""
    steps: list[dict[str, Any]] | None = None


@dataclass
class PartSummary:
    part: int
    label: str
    questions: int
    answered: int
    correct: int
    elapsed_s: float
    redo: bool
    why: str


def results(learner: str, sid: str) -> dict[str, Any]:
    """Score a session: one result per question (time since the previous answer or the start), the score, and per
    part the total time and the redo verdict for parts 6 and 7; once every question is answered, each question's
    answer as typed beside its key and worked steps (never before: the key of a question still open stays hidden).
    Raises DrillError if it is not this learner's. Post-condition: nothing is written."""
    sess = store.get_session(learner, sid)
    if sess is None:
        raise DrillError(f"no whiteboard session {sid!r} for this learner")
    by_drill = {a.drill_id: a for a in reversed(store.attempts(learner, session=sid))}
    clock = sess["started"]
    qs: list[PartResult] = []
    for i, (part, did) in enumerate(_questions(sess)):
        label = SHEET[part][0] if part < len(SHEET) else did
        a = by_drill.get(did)
        if a is None:
            qs.append(PartResult(i, part, label, did, False, False, None, False, ""))
            continue
        elapsed = max(0.0, a.created - clock)
        clock = a.created
        qs.append(PartResult(i, part, label, did, True, a.correct, elapsed, False, "", answer=a.answer))
    sheet = []
    for part in sorted({q.part for q in qs}):
        mine = [q for q in qs if q.part == part]
        total = sum(q.elapsed_s or 0.0 for q in mine)
        done = all(q.answered for q in mine)
        redo, why = False, ""
        if part in TIMED_PARTS and done:
            if total > PART_LIMIT_S:
                redo, why = True, f"took {total / 60:.1f} min (limit 10 min)"
            elif not all(q.correct for q in mine):
                redo, why = True, "answered wrong"
        for q in mine:
            q.redo, q.why = redo, why
        sheet.append(PartSummary(part, mine[0].label, len(mine), sum(q.answered for q in mine),
                                 sum(q.correct for q in mine), total, redo, why))
    finished = all(q.answered for q in qs)  # stored by the last answer's own transaction: reading writes nothing
    if finished:  # the review: each answer beside the key and its worked steps, once the session is over
        for q in qs:
            kind, seed = parse_id(q.drill_id)
            d = generate(kind, seed)
            q.expected, q.steps = d.expected, d.steps
    current = next((q.index for q in qs if not q.answered), None)
    return {"id": sid, "started": sess["started"], "finished": finished, "current": current, "parts": qs,
            "sheet": sheet, "score": sum(q.correct for q in qs), "total": len(qs),
            "elapsed_s": (clock - sess["started"]) if finished else None,
            "redo": [s for s in sheet if s.redo]}


def drill_at(learner: str, sid: str, index: int) -> Drill:
    """The drill of question ``index`` of a session (DrillError if out of range or not this learner's)."""
    sess = store.get_session(learner, sid)
    qs = _questions(sess) if sess else []
    if not 0 <= index < len(qs):
        raise DrillError(f"no question {index} in whiteboard session {sid!r}")
    kind, seed = parse_id(qs[index][1])
    return generate(kind, seed)


__all__ = ["SHEET", "WHITEBOARD", "TIMED_PARTS", "PART_LIMIT_S", "start", "results", "drill_at", "PartResult",
           "drill_id"]
