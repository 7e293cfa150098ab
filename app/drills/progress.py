"""Progress views over the store: per-kind accuracy and streaks, the next kind to practise, whiteboard sessions.

Whiteboard sessions (the seed's seven-part sheet, 3-8 questions per part) live in ``app.drills.whiteboard``; the
names here are kept for the routes.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from app.drills import store, whiteboard
from app.drills.core import Drill, DrillError, kinds


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
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.attempts if self.attempts else None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "attempts": self.attempts, "correct": self.correct,
                "accuracy": self.accuracy, "streak": self.streak, "best_streak": self.best_streak,
                "median_s": self.median_s, "box": self.box, "due_in_s": self.due_in_s, "skills": self.skills}


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
        mine_boxes = [v for sk, v in boxes.items() if sk.split(":")[0] == k.kind]
        if mine_boxes:
            st.box = min(b for b, _ in mine_boxes)
            st.due_in_s = max(0.0, min(d for _, d in mine_boxes) - now)
            st.skills = {sk.split(":", 1)[1] if ":" in sk else "": {"box": b, "due_in_s": max(0.0, d - now)}
                         for sk, (b, d) in sorted(boxes.items()) if sk.split(":")[0] == k.kind}
        out.kinds.append(st)
    out.attempts = len(all_attempts)
    out.correct = sum(a.correct for a in all_attempts)
    out.streak, out.best_streak = _streaks([a.correct for a in all_attempts])
    return out


def next_skill(learner: str, now: float | None = None) -> str:
    """The sub-skill to practise next (``kind:variant`` or a kind never tried): missed sub-skills first, then kinds
    never tried (in syllabus order), then the most overdue sub-skill; never the sub-skill just attempted when another
    is available."""
    now = time.time() if now is None else now
    boxes = store.srs_boxes(learner)
    last = store.attempts(learner)
    order = [k.kind for k in kinds()]
    known = {sk for sk in boxes if sk.split(":")[0] in order}
    tried = {sk.split(":")[0] for sk in known}
    missed = sorted((boxes[k][1], k) for k in known if boxes[k][0] == 0)
    unseen = [k for k in order if k not in tried]
    due = sorted((boxes[k][1], k) for k in known if boxes[k][0] > 0 and boxes[k][1] <= now)
    later = sorted((boxes[k][1], k) for k in known if boxes[k][0] > 0 and boxes[k][1] > now)
    ranked = [k for _, k in missed] + unseen + [k for _, k in due] + [k for _, k in later]
    last_skill = None
    if last:
        from app.drills.core import generate

        try:
            last_skill = generate(last[-1].kind, last[-1].seed).skill
        except DrillError:
            last_skill = last[-1].kind
    for k in ranked:
        if k != last_skill and k.split(":")[0] != (last_skill or "").split(":")[0]:
            return k
    for k in ranked:
        if k != last_skill:
            return k
    return ranked[0] if ranked else order[0]


def next_kind(learner: str, now: float | None = None) -> str:
    """The kind of :func:`next_skill`."""
    return next_skill(learner, now).split(":")[0]


# ---------------------------------------------------------------- whiteboard sessions (app.drills.whiteboard)


def start_whiteboard(learner: str, rng: random.Random | None = None, now: float | None = None,
                     numbers: str = "fresh") -> str:
    """Create a whiteboard session of the seed's full sheet (``numbers="sheet"``: with the sheet's own numbers).
    Post-condition: returns the session id."""
    return whiteboard.start(learner, rng, now, numbers)


def session_results(learner: str, sid: str) -> dict[str, Any]:
    """See :func:`app.drills.whiteboard.results`."""
    return whiteboard.results(learner, sid)


def session_drill(learner: str, sid: str, index: int) -> Drill:
    """The drill of question ``index`` of a session."""
    return whiteboard.drill_at(learner, sid, index)


WHITEBOARD = whiteboard.WHITEBOARD
SHEET = whiteboard.SHEET
TIMED_PARTS = whiteboard.TIMED_PARTS
PART_LIMIT_S = whiteboard.PART_LIMIT_S
