"""The drill model: a kind registry, reproducible (kind, seed) generation, drill ids and the grading interface.

A drill kind is a generator ``make(rng, seed) -> Drill``. The random source is seeded from ``"<kind>:<seed>"`` only,
so ``generate(kind, seed)`` returns the same question, answer key and grader on every server, every run: a drill id
``"<kind>-<seed>"`` is enough to regrade an answer statelessly.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.drills import sheet
from app.drills.parsing import AnswerError, check_length, unwrap_answer

MAX_SEED = 2**31 - 1


class DrillError(LookupError):
    """An unknown kind, a malformed drill id or a seed out of range; ``str(err)`` says which."""


@dataclass
class Grade:
    """The verdict on one answer.

    ``readable`` is False when the answer could not be parsed (then ``reason`` says why and ``correct`` is False).
    ``cells`` marks a table answer cell by cell (True = right) and ``table`` holds the table as read;
    ``items`` marks a list answer item by item. ``reason`` never contains the answer key; ``mistake`` names the
    usual mistake a wrong answer matches ("" when none does).
    """

    correct: bool
    reason: str = ""
    readable: bool = True
    cells: list[list[bool]] | None = None
    items: list[bool] | None = None
    table: list[list[Any]] | None = None
    mistake: str = ""

    @classmethod
    def right(cls, reason: str = "") -> Grade:
        return cls(True, reason)

    @classmethod
    def wrong(cls, reason: str, **kw: Any) -> Grade:
        return cls(False, reason, **kw)


@dataclass
class Grid:
    """A small table of numbers shown with a drill: ``rows[r][c]`` is a cell (int or text).

    ``marks`` (same shape, optional) holds CSS class names such as ``"hl"`` (highlighted), ``"bad"`` or ``"ok"``;
    ``colours`` (optional) a palette index per cell (e.g. the owning thread), -1 for none.
    """

    title: str
    rows: list[list[Any]]
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None
    marks: list[list[str]] | None = None
    caption: str = ""
    colours: list[list[int]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "rows": self.rows, "row_labels": self.row_labels,
                "col_labels": self.col_labels, "marks": self.marks, "caption": self.caption}


@dataclass
class Drill:
    """One generated question with everything needed to grade and explain it.

    Post-conditions (checked by the tests for every kind): ``grade(expected).correct`` is True, and ``steps`` is the
    worked derivation, each step a dict with ``"text"`` and ``"layout"`` (CuTe notation or None). ``shown`` grids
    are part of the question; ``grids`` are revealed with the key; ``table_shape`` is set when the answer is a
    rows x cols table. ``data`` is the structured question (``given`` in the API: CuTe notation and ints; op drills
    carry ``op`` and ``args``). ``sheet`` is True when the drill carries the interview sheet's own numbers
    (``app.drills.sheet``). ``mistakes`` holds (name of a usual mistake, a test that an answer makes it, an
    example answer that makes it or None).
    """

    kind: str
    seed: int
    prompt: str
    answer_format: str
    expected: str
    grader: Callable[[str], Grade]
    steps: list[dict[str, Any]]
    hints: list[str]
    variant: str = ""
    grids: list[Grid] = field(default_factory=list)
    shown: list[Grid] = field(default_factory=list)
    table_shape: tuple[int, int] | None = None
    data: dict[str, Any] = field(default_factory=dict)
    mistakes: list[tuple[str, Callable[[str], bool], str | None]] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    sheet: bool = False

    def with_example(self, *options: str, shown: Callable[[str], str] | None = None) -> Drill:
        """Fill ``{ex}`` in the answer format with an example answer that is not the key: of ``options`` (answers
        about other layouts), starting at one the seed picks, the first this drill reads and grades wrong, preferring
        one wrong in every part and not writing the key inside it, written as ``shown(example)`` when given (other
        spellings of it beside it).
        Post-condition: ``answer_format`` holds no ``{ex}``; ``examples`` lists the example;
        ValueError (a generator bug) when no option is a readable wrong answer."""
        start = self.seed % len(options)
        order = [options[(start + k) % len(options)] for k in range(len(options))]
        fallback = None
        key = re.sub(r"\s", "", self.expected)
        for ex in order:
            if key and key in re.sub(r"\s", "", shown(ex) if shown else ex):
                continue  # an example that writes the key inside it (``i*2 + j*8`` for ``i*2 + j``) gives it away
            g = self.grade(ex)
            if not g.readable or g.correct:
                continue
            parts = (g.items or []) + [c for row in (g.cells or []) for c in row]
            if not any(parts):
                fallback = ex
                break
            fallback = fallback or ex
        if fallback is None:
            raise ValueError(f"{self.kind}-{self.seed}: no example among {options} is a readable wrong answer")
        self.answer_format = self.answer_format.replace("{ex}", shown(fallback) if shown else fallback)
        self.examples.append(fallback)
        return self

    def with_data(self, **data: Any) -> Drill:
        """Attach the generator's inputs (CuTe notation / ints), so tests can recompute the key with the engine."""
        self.data.update(data)
        return self

    def mistake(self, label: str, matches: Callable[[str], bool], example: str | None = None) -> Drill:
        """Name a usual mistake: ``matches(answer)`` is True for answers that make it. ``example`` (an answer that
        makes it) is checked to be wrong for this drill; when it is right, the mistake is not added (it would not be
        a mistake here). Post-condition: returns self."""
        if example is not None:
            try:
                if self.grader(example).correct:
                    return self
            except AnswerError:
                pass
        self.mistakes.append((label, matches, example))
        return self

    @property
    def id(self) -> str:
        return drill_id(self.kind, self.seed)

    @property
    def skill(self) -> str:
        """The sub-skill spaced repetition tracks: ``kind:variant`` (the variant's first part), or the kind."""
        head = self.variant.split("/")[0] if self.variant else ""
        return f"{self.kind}:{head}" if head else self.kind

    def grade(self, answer: str) -> Grade:
        """Grade a typed answer. Post-condition: never raises for any string; unreadable -> readable=False with
        the format expected; a wrong answer that matches a usual mistake says which one."""
        try:
            answer = unwrap_answer(check_length(answer)) or answer
            verdict = self.grader(answer)
        except AnswerError as err:
            return Grade(False, f"could not read the answer: {err}. Expected: {self.answer_format}.",
                         readable=False)
        except (ArithmeticError, RecursionError, ValueError, TypeError, IndexError) as err:
            return Grade(False, f"could not read the answer ({type(err).__name__}). Expected: "
                         f"{self.answer_format}.", readable=False)
        if not verdict.correct and key_written(self.expected, verdict.reason) \
                and not key_written(self.expected, answer):
            verdict.reason = "not right"  # a reason that would write the key (it is shown once solved or revealed)
        if not verdict.correct and verdict.readable:
            for label, matches, _ in self.mistakes:
                try:
                    hit = matches(answer)
                except (AnswerError, ArithmeticError, RecursionError, ValueError, TypeError, IndexError,
                        KeyError, AttributeError):
                    hit = False
                if hit:
                    verdict.mistake = label
                    verdict.reason = f"{verdict.reason}. This is the usual mistake: {label}." if verdict.reason \
                        else f"This is the usual mistake: {label}."
                    break
        return verdict

    def hint(self, level: int) -> dict[str, Any]:
        """Escalating hints: 1 the rule, 2 the first step, 3 the derivation up to the answer (``hint_steps``).

        Post-condition: ``level`` is clamped to 1..3; the dict has ``level``, ``text`` and (level 3) ``steps``.
        """
        level = max(1, min(3, int(level)))
        if level < 3:
            return {"level": level, "text": self.hints[level - 1], "steps": []}
        return {"level": 3, "text": "The derivation, up to the answer:", "steps": self.hint_steps()}

    def hint_steps(self) -> list[dict[str, Any]]:
        """The worked steps as hint 3 shows them: a step that writes the key is left for the learner (the key is
        shown only once solved or revealed; ``reveal`` gives every step)."""
        out: list[dict[str, Any]] = []
        left = {"text": "... and from here the steps give the answer: work them out, or show the answer (it counts "
                        "as a miss).", "layout": None}
        for st in self.steps:
            if key_written(self.expected, st.get("text") or "") or key_written(self.expected, str(st.get("layout"))):
                if left not in out:
                    out.append(left)
            else:
                out.append(st)
        return out


@dataclass(frozen=True)
class Kind:
    """A registered drill kind: its id, a title, the skill it trains and the generator."""

    kind: str
    title: str
    skill: str
    make: Callable[[random.Random, int], Drill]
    order: int = 0


KINDS: dict[str, Kind] = {}


def register(kind: str, title: str, skill: str, order: int) -> Callable[[Callable], Callable]:
    """Decorator adding a generator to KINDS. Post-condition: ``kind`` is a lowercase identifier without '-'."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
        raise ValueError(f"bad kind name {kind!r}")

    def wrap(fn: Callable[[random.Random, int], Drill]) -> Callable[[random.Random, int], Drill]:
        KINDS[kind] = Kind(kind, title, skill, fn, order)
        return fn

    return wrap


def kinds() -> list[Kind]:
    """Every registered kind in syllabus order."""
    _load()
    return sorted(KINDS.values(), key=lambda k: (k.order, k.kind))


def drill_id(kind: str, seed: int) -> str:
    return f"{kind}-{seed}"


def parse_id(text: str) -> tuple[str, int]:
    """Split a drill id ``"<kind>-<seed>"``. Post-condition: the kind is registered and 0 <= seed <= MAX_SEED,
    else DrillError."""
    _load()
    m = re.fullmatch(r"([a-z][a-z0-9_]*)-([0-9]{1,10})", text or "")  # ASCII digits: "offsets-١" is no id
    if not m:
        raise DrillError(f"malformed drill id {text!r}: expected <kind>-<seed>, e.g. offsets-42")
    kind, seed = m.group(1), int(m.group(2))
    check(kind, seed)
    return kind, seed


def check(kind: str, seed: int) -> None:
    """Raise DrillError unless ``kind`` is registered and ``seed`` lies in 0..MAX_SEED."""
    _load()
    if kind not in KINDS:
        raise DrillError(f"unknown drill kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    if not 0 <= seed <= MAX_SEED:
        raise DrillError(f"seed must lie in 0..{MAX_SEED}, not {seed}")


#: Draws per (kind, seed) before a drill whose key stands in its own prompt, format or first hints is kept anyway.
KEY_SHOWN_DRAWS = 12


def _bare(text: str) -> str:
    """``text`` without the spaces around signs (``(4, 8) : (8, 1)`` -> ``(4,8):(8,1)``); words stay apart."""
    return re.sub(r"\s*([(),:;<>\[\]%*+=/-])\s*", r"\1", (text or "").strip())


def key_written(key: str, text: str) -> bool:
    """True when ``text`` writes the answer key ``key`` (spaces ignored) and the key is more than a word or one
    number: a layout, a tuple, a list (a choice such as ``row`` is named in its own format by design)."""
    k = _bare(key)
    if not re.search(r"[(),:<*+]", k):
        return False
    head = r"(?<![\w*/^])(?<!\d\.)" if re.match(r"\w", k) else ""  # a number or name must not continue another one
    tail = r"(?![\w*/^]|\.\d)" if re.search(r"\w$", k) else ""
    return re.search(head + re.escape(k) + tail, _bare(text)) is not None


def shows_key(drill: Drill) -> bool:
    """True when what is shown before the key (the prompt, the answer format, hints 1-2, the grids shown with the
    question and the structured ``given`` data, lists read as tuples) writes the key (see ``key_written``)."""
    given = json.dumps(drill.data, default=str).replace("[", "(").replace("]", ")")
    shown = json.dumps([g.to_dict() for g in drill.shown], default=str).replace("[", "(").replace("]", ")")
    return any(key_written(drill.expected, t) for t in (drill.prompt, drill.answer_format, *drill.hints[:2], given,
                                                        shown))


def may_take_sheet(kind: str, seed: int) -> bool:
    """A quick test before ``generate``: False when the drill of (kind, seed) surely does not carry the interview
    sheet's numbers (its first draw says no); True when it may (``generate(kind, seed).sheet`` tells)."""
    check(kind, seed)
    return sheet.probe(KINDS[kind].make, random.Random(f"{kind}:{seed}"), seed)


def generate(kind: str, seed: int) -> Drill:
    """The drill of (kind, seed). Post-condition: deterministic; equal arguments give equal prompts and keys; the
    key is not written in the prompt, the format or hints 1-2 (a draw that would show it is drawn again, from the
    same random source)."""
    check(kind, seed)
    rng = random.Random(f"{kind}:{seed}")
    for _ in range(KEY_SHOWN_DRAWS):
        sheet.begin()
        drill = KINDS[kind].make(rng, seed)
        if not shows_key(drill):
            break
    drill.kind, drill.seed, drill.sheet = kind, seed, sheet.took()
    return drill


def from_id(text: str) -> Drill:
    """Regenerate the drill an id names (stateless regrading)."""
    kind, seed = parse_id(text)
    return generate(kind, seed)


def random_seed() -> int:
    return random.SystemRandom().randrange(0, MAX_SEED + 1)


_loaded = False


def _load() -> None:
    """Import the generator modules once (they register themselves)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    import app.drills as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("gen_")):
        importlib.import_module(f"app.drills.{mod}")
    _loaded = True  # only once every module is in: an import cut short (an error, an interruption) is tried again
