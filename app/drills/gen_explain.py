"""Drill kind ``explain``: the one-sentence "explain why" items of the whiteboard drill and the algebra chapter, asked
as a multiple choice whose options carry the reasoning. The options are shuffled per seed; an answer is the option's
letter or its text. A wrong choice is told why that option does not hold (never which one does).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.drills.common import step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import AnswerError, check_length


@dataclass(frozen=True)
class Item:
    """A question, its right option with the reason, and wrong options each with why it fails."""

    key: str
    question: str
    right: str
    why: str
    wrong: tuple[tuple[str, str], ...]


ITEMS = [
    Item("majorness", "In shape:stride notation, what exactly distinguishes a row-major from a column-major layout "
         "of the same M x N shape?",
         "Which mode has stride 1: column-major gives mode 0 stride 1, row-major gives mode 1 stride 1; the shape "
         "(M,N) is the same.",
         "The shape is identical, (M,N) either way; only the stride tuple differs, (1,M) versus (N,1).",
         (("The order of the shape: row-major writes it (M,N) and column-major writes it (N,M), while the stride "
           "tuple is (1,M) in both cases.",
           "Both keep the shape (M,N); writing (N,M) would describe a different, transposed matrix."),
          ("Row-major layouts touch more memory (a larger cosize) than column-major ones.",
           "Both are compact: cosize = M*N for either."),
          ("Column-major needs a hierarchical shape such as (M,(N,1)) to put its stride-1 mode first, while a "
           "row-major layout always stays flat and rank 2.",
           "Both are flat rank-2 layouts; nesting is unrelated to majorness."))),
    Item("transpose", "A transposed view costs what in this formalism, and why does a GEMM still care which operand "
         "is transposed?",
         "Nothing moves: the view swaps the modes; but loads then walk memory with a large stride, which changes "
         "coalescing, vector width and the MMA operand's majorness.",
         "The view is just another layout over the same offsets; what changes is which direction is contiguous, and "
         "that decides whether warps read whole sectors and whether tensor-core operands can be loaded directly.",
         (("It copies the data into a new buffer, so a GEMM avoids transposes to save memory and the bandwidth of "
           "the copy.",
           "A view moves no data: T(j,i) = A(i,j) is computed from the same offsets."),
          ("It is free, and a GEMM does not care either: every offset is computed anyway, so the operand order "
           "never changes how fast the loads run or which MMA instruction is used.",
           "The arithmetic is free, but the memory access pattern is not: stride-1 versus large-stride loads "
           "differ in sectors per request and in vectorization."),
          ("It costs one composition per element at run time, which is why GEMM kernels precompute their "
           "transposed operands in a separate pass, before the main loop ever starts.",
           "The composition happens at compile time with static shapes; the run-time cost is in the access "
           "pattern, not the index arithmetic."))),
    Item("tiling", "Why does having the layout algebra derive tiled views matter more for a tensor-core GEMM than for "
         "a plain copy?",
         "A tensor-core GEMM stacks tilings that must agree exactly (CTA, warp, MMA fragments, swizzled smem); "
         "deriving them keeps them consistent and checked at compile time.",
         "Each level's tile is a divide or product of the previous; hand-written index math for all of them is "
         "where silent bugs come from.",
         (("Tensor cores can only read layouts produced by CuTe, so a kernel without the algebra cannot issue MMA "
           "instructions at all, whatever its indices.",
           "The hardware reads addresses; any code computing the right ones works. The point is getting them "
           "right consistently."),
          ("A copy has no tiles, so the algebra cannot describe it.",
           "A copy is tiled too (local_tile, local_partition); it just needs fewer, simpler levels."),
          ("The algebra makes the tensor-core instructions themselves run faster than with hand-written indices, "
           "because CuTe emits special addressing modes for them at compile time.",
           "With static shapes both compile to the same multiply-adds; the gain is correctness, not speed of "
           "the arithmetic."))),
    Item("swizzle", "Padding and swizzling both remove shared-memory bank conflicts. Why must a tensor-core kernel "
         "use the swizzle?",
         "ldmatrix, 128-bit loads, TMA and wgmma need aligned 16-byte chunks at power-of-two pitches; padding "
         "breaks that, a swizzle only permutes whole chunks.",
         "The swizzle's M keeps the bits inside a 16-byte chunk fixed and XORs row bits into the chunk index: "
         "conflict-free and still aligned.",
         (("A swizzle uses fewer instructions per element than a padded index, and tensor-core kernels are bound "
           "by integer issue.",
           "Both are a few integer operations; the constraint is alignment and the layouts the hardware accepts."),
          ("Padding does not remove conflicts for column reads.",
           "A pitch of 33 words makes a float column read conflict-free; it fails on alignment, not on banks."),
          ("Swizzled tiles need less shared memory than unpadded ones.",
           "A swizzle uses exactly the unpadded size; it is padding that needs more, which is a cost but not the "
           "reason."))),
    Item("coalesce", "What does coalesce preserve, and why does (4,8):(1,4) become 32:1 while (4,8):(8,1) stays?",
         "The function from 1-D coordinate to offset: (4,8):(1,4)'s mode 0 ends at 4*1 = 4, mode 1's stride, so "
         "they join; (4,8):(8,1)'s mode 0 ends at 32, not 1.",
         "Two neighbouring modes merge exactly when shape_0 * stride_0 = stride_1.",
         (("The offset table as a 2-D picture; (4,8):(8,1) is already as small as it gets.",
           "Coalesce may change the shape (and the 2-D picture); it keeps L(i) for every 1-D i."),
          ("The set of offsets, in any order; (4,8):(8,1) cannot merge because row-major layouts never coalesce, "
           "while column-major ones always reduce to a single mode.",
           "It keeps more than the set, the order too; and row-major is not the reason, the stride test is."),
          ("The rank; both keep rank 2.",
           "32:1 has rank 1: coalesce reduces the rank whenever modes join."))),
    Item("composition", "What decides the shape of A o B, and how does composition give a transposed view of a "
         "row-major 4x8 matrix?",
         "B does: R(c) = A(B(c)), so R takes B's shape; (4,8):(8,1) o (8,4):(4,1) = (8,4):(1,8) with R(i,j) = "
         "A(j,i).",
         "B maps each view coordinate to A's 1-D coordinate of the element shown there.",
         (("A does: the result always has A's shape and B only reorders its elements, so a transpose needs a "
           "second step that swaps the result's two modes.",
           "R's domain is B's domain; A is applied to what B returns."),
          ("The larger of the two shapes: the result must hold every element of both A and B, so R takes whichever "
           "of them has more elements.",
           "No size comparison is involved: R(c) = A(B(c)) is defined on B's coordinates."),
          ("Composition cannot transpose: the result always keeps A's row-major order, so a transposed view of "
           "the matrix needs its data copied into a new buffer first.",
           "Composing with a layout that swaps the roles of rows and columns gives the transposed view for free."))),
    Item("divide", "How is logical_divide(A, B) built, and what do the two modes of the result mean?",
         "A o (B, complement(B, size(A))): mode 0 is the elements B selects (one tile), mode 1 says which tile.",
         "The complement arranges what B does not cover, so (B, B*) reorders all of A's 1-D coordinates.",
         (("B o A, with mode 0 the tiles and mode 1 the elements inside a tile, so that D(i, k) walks tile i at "
           "position k.",
           "The divide applies B (and its complement) to A's coordinates: A o (...), and mode 0 is inside a tile."),
          ("complement(A, B): the offsets B leaves out of A, laid out so that mode 0 lists the uncovered elements "
           "and mode 1 repeats them once per tile of B.",
           "The complement is of B (in size(A)), and it is only the second mode's arrangement."),
          ("A with its modes sorted by stride and then cut in two at the size of B: mode 0 keeps the smallest "
           "strides (one tile), mode 1 keeps the rest.",
           "The division follows B's pattern, which need not be contiguous or sorted."))),
    Item("partition", "For a warp reading a column-major fp32 tile, which way should the thread layout's fast mode "
         "run, and why?",
         "Down the columns (the contiguous direction): neighbouring lanes read neighbouring words; 32 lanes cover "
         "128 contiguous bytes, 4 sectors at 100%.",
         "The thread layout's fast mode must follow the data's stride-1 direction for full sectors.",
         (("Along the rows, so each thread's own values are contiguous in memory and every thread reads its whole "
           "row with one wide vector load per instruction.",
           "That makes neighbouring lanes 4*M bytes apart: many sectors, each mostly unused."),
          ("It does not matter; the L1 cache merges the requests of a warp into whole cache lines, so any thread "
           "order costs the same number of sectors per instruction.",
           "Sectors are counted per instruction: scattered lanes touch more 32-byte sectors."),
          ("Diagonally, to avoid bank conflicts in global memory, where a straight walk down a column sends every "
           "lane to the same DRAM bank.",
           "Global memory has sectors, not banks; diagonal access only adds sectors."))),
    Item("dynamic", "Why does coalesce((2,(1,6)):(1,(6,2))) print 12:1 with _N shapes but (2,1,6):(1,6,2) with ints?",
         "A layout's type is fixed at compile time: with _N CuTe can prove the 1 is 1 and that the modes join; "
         "with run-time ints it cannot, so it only flattens.",
         "Static shapes let the simplification and the divisibility checks happen at compile time.",
         (("Ints overflow when merged, so CuTe refuses to merge them.",
           "No overflow is involved; the values are simply unknown when the type is built."),
          ("The int version is a different layout with a different function, so merging its modes would change "
           "its offsets.",
           "Both have the same function; only the representation differs."),
          ("It is a bug in the int overload of coalesce.",
           "It is by design: run-time values cannot drive compile-time decisions."))),
]
ITEM = {i.key: i for i in ITEMS}
LETTERS = "abcd"


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def read_choice(answer: str, options: list[str]) -> int:
    """The option index an answer names: a letter (``b``, ``(b)``, ``B.``, ``option b``) or the option's text."""
    s = check_length(answer).strip().lower()
    for prefix in ("option", "answer", "choice"):
        s = s.removeprefix(prefix).strip(" :")
    core = s.strip(" ().:")
    if len(core) == 1 and core in LETTERS[:len(options)]:
        return LETTERS.index(core)
    n = _norm(answer)
    for k, opt in enumerate(options):
        if n and (n == _norm(opt) or (len(n) > 30 and _norm(opt).startswith(n))):
            return k
    raise AnswerError(f"answer with a letter a-{LETTERS[len(options) - 1]} (or the option's text)")


@register("explain", "Explain why", "The one-sentence explanations: row- vs column-major, the cost of a transpose, "
          "why tile for tensor cores, why swizzle, what coalesce keeps, what composition and divide mean; a multiple "
          "choice with the reasoning.", 14)
def make_explain(rng: random.Random, seed: int) -> Drill:
    item = ITEMS[rng.randrange(len(ITEMS))]
    options = [(item.right, "")] + list(item.wrong)
    rng.shuffle(options)
    texts = [o for o, _ in options]
    right = texts.index(item.right)
    prompt = item.question + "\n" + "\n".join(f"({LETTERS[k]}) {t}" for k, t in enumerate(texts))

    def grade(ans: str) -> Grade:
        k = read_choice(ans, texts)
        if k == right:
            return Grade.right(item.why)
        return Grade.wrong(f"({LETTERS[k]}) does not hold: {options[k][1]}")

    steps = [step(f"({LETTERS[right]}) {item.right}"), step(item.why)] + [
        step(f"({LETTERS[k]}) is wrong: {why}") for k, (_, why) in enumerate(options) if k != right]
    return Drill("explain", seed, prompt, "a letter a-d (or the option's text)", LETTERS[right], grade, steps,
                 ["Eliminate the options that contradict the definition.", item.why], item.key).with_data(
        question=item.key, options=texts)
