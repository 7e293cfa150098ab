"""Progress views over the store: per-kind accuracy and streaks, the next kind to practise, whiteboard sessions.

The whiteboard mode follows the seven-part drill: offsets, row/column major, a hierarchical formula, one element in
three coordinates, a transposed view, a tiled view and banks, answered once each against the clock. Parts 6 and 7
(the tiled view and banks) must each take at most ten minutes; a slower or wrong one is flagged "redo".
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from app.drills import store
from app.drills.core import Drill, DrillError, drill_id, generate, kinds, parse_id

#: The whiteboard parts, in order: (kind, label).
WHITEBOARD = [
    ("offsets", "Offsets of a layout"),
    ("majorness", "Row-major, column-major or neither"),
    ("index_formula", "The index formula of a hierarchical layout"),
    ("natural_coord", "One element, three coordinates"),
    ("transpose_view", "A transposed view"),
    ("tiled_view", "A tiled view"),
    ("banks", "Banks, padding and swizzling"),
]
#: 0-based indices of the parts with the ten-minute rule, and the limit in seconds.
TIMED_PARTS = (5, 6)
PART_LIMIT_S = 600


@dataclass
class KindStats:
    kind: str
    title: str
    attempts: int = 0
    correct: int = 0
    streak: int = 0
    best_streak: int = 0
    median_s: float | None = None
    box: int | None = None
    due_in_s: float | None = None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.attempts if self.attempts else None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "attempts": self.attempts, "correct": self.correct,
                "accuracy": self.accuracy, "streak": self.streak, "best_streak": self.best_streak,
                "median_s": self.median_s, "box": self.box, "due_in_s": self.due_in_s}


@dataclass
class Summary:
    learner: str
    name: str | None
    kinds: list[KindStats] = field(default_factory=list)
    attempts: int = 0
    correct: int = 0
    streak: int = 0
    best_streak: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "attempts": self.attempts, "correct": self.correct,
                "accuracy": self.correct / self.attempts if self.attempts else None, "streak": self.streak,
                "best_streak": self.best_streak, "kinds": [k.to_dict() for k in self.kinds]}


def _streaks(results: list[bool]) -> tuple[int, int]:
    """(current run of right answers at the end, longest run anywhere)."""
    best = run = 0
    for ok in results:
        run = run + 1 if ok else 0
        best = max(best, run)
    return run, best


def summary(learner: str, now: float | None = None) -> Summary:
    """Per-kind and overall progress of one learner. Post-condition: only this learner's attempts are counted."""
    now = time.time() if now is None else now
    all_attempts = [a for a in store.attempts(learner)]
    boxes = store.srs_boxes(learner)
    out = Summary(learner, store.learner_name(learner))
    for k in kinds():
        mine = [a for a in all_attempts if a.kind == k.kind]
        st = KindStats(k.kind, k.title, len(mine), sum(a.correct for a in mine))
        st.streak, st.best_streak = _streaks([a.correct for a in mine])
        times = sorted(a.elapsed_s for a in mine if a.correct and a.elapsed_s is not None)
        st.median_s = times[len(times) // 2] if times else None
        if k.kind in boxes:
            st.box, due = boxes[k.kind]
            st.due_in_s = max(0.0, due - now)
        out.kinds.append(st)
    out.attempts = len(all_attempts)
    out.correct = sum(a.correct for a in all_attempts)
    out.streak, out.best_streak = _streaks([a.correct for a in all_attempts])
    return out


def next_kind(learner: str, now: float | None = None) -> str:
    """The kind to practise next: missed kinds first, then kinds never tried (in syllabus order), then the most
    overdue; never the kind just attempted when another is available."""
    now = time.time() if now is None else now
    boxes = store.srs_boxes(learner)
    last = store.attempts(learner)
    last_kind = last[-1].kind if last else None
    order = [k.kind for k in kinds()]
    missed = sorted((boxes[k][1], k) for k in order if k in boxes and boxes[k][0] == 0)
    unseen = [k for k in order if k not in boxes]
    due = sorted((boxes[k][1], k) for k in order if k in boxes and boxes[k][0] > 0 and boxes[k][1] <= now)
    later = sorted((boxes[k][1], k) for k in order if k in boxes and boxes[k][0] > 0 and boxes[k][1] > now)
    ranked = [k for _, k in missed] + unseen + [k for _, k in due] + [k for _, k in later]
    for k in ranked:
        if k != last_kind:
            return k
    return ranked[0] if ranked else order[0]


# ---------------------------------------------------------------- whiteboard sessions


def start_whiteboard(learner: str, rng: random.Random | None = None, now: float | None = None) -> str:
    """Create a whiteboard session of the seven parts with fresh seeds. Post-condition: returns the session id."""
    rng = rng or random.Random()
    parts = [drill_id(kind, rng.randrange(0, 2**31 - 1)) for kind, _ in WHITEBOARD]
    return store.create_session(learner, parts, now=now)


@dataclass
class PartResult:
    index: int
    label: str
    drill_id: str
    answered: bool
    correct: bool
    elapsed_s: float | None
    redo: bool
    why: str


def session_results(learner: str, sid: str) -> dict[str, Any]:
    """Score a whiteboard session: one result per part (time since the previous answer or the start), the score,
    and the redo verdict for parts 6 and 7. Raises DrillError if the session is not this learner's."""
    sess = store.get_session(learner, sid)
    if sess is None:
        raise DrillError(f"no whiteboard session {sid!r} for this learner")
    by_drill = {a.drill_id: a for a in reversed(store.attempts(learner, session=sid))}
    clock = sess["started"]
    parts: list[PartResult] = []
    for i, did in enumerate(sess["parts"]):
        label = WHITEBOARD[i][1] if i < len(WHITEBOARD) else did
        a = by_drill.get(did)
        if a is None:
            parts.append(PartResult(i, label, did, False, False, None, False, ""))
            continue
        elapsed = max(0.0, a.created - clock)
        clock = a.created
        redo, why = False, ""
        if i in TIMED_PARTS and elapsed > PART_LIMIT_S:
            redo, why = True, f"took {elapsed / 60:.1f} min (limit 10 min)"
        elif i in TIMED_PARTS and not a.correct:
            redo, why = True, "answered wrong"
        parts.append(PartResult(i, label, did, True, a.correct, elapsed, redo, why))
    done = all(p.answered for p in parts)
    if done:
        store.finish_session(sid)
    current = next((p.index for p in parts if not p.answered), None)
    return {"id": sid, "started": sess["started"], "finished": done, "current": current, "parts": parts,
            "score": sum(p.correct for p in parts), "total": len(parts),
            "elapsed_s": (clock - sess["started"]) if done else None,
            "redo": [p for p in parts if p.redo]}


def session_drill(learner: str, sid: str, index: int) -> Drill:
    """The drill of part ``index`` of a session (DrillError if out of range or not this learner's)."""
    sess = store.get_session(learner, sid)
    if sess is None or not 0 <= index < len(sess["parts"]):
        raise DrillError(f"no part {index} in whiteboard session {sid!r}")
    kind, seed = parse_id(sess["parts"][index])
    return generate(kind, seed)
