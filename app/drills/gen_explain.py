"""Drill kind ``explain``: the one-sentence "explain why" items of the whiteboard drill and the algebra chapter, asked
as a multiple choice whose options carry the reasoning. The options are shuffled per seed; an answer is the option's
letter or its text. A wrong choice is told why that option does not hold (never which one does). Each item has its
right option in two wordings and four wrong options in two wordings each; a drill draws the right option's length rank
first, then wordings that give it, so the length of an option says nothing (``choose_options``).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from app.drills.common import step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import AnswerError, check_length


@dataclass(frozen=True)
class Item:
    """A question, its right option in two wordings (one short, one long) with the reason, and four wrong options,
    each in a short and a long wording, with why it fails. A drill shows one wording of the right option and three
    of the wrong ones, chosen so that the right option's length rank among the four is uniform over seeds."""

    key: str
    question: str
    right: tuple[str, str]
    why: str
    wrong: tuple[tuple[str, str, str], ...]


ITEMS = [
    Item("majorness", "In shape:stride notation, what exactly distinguishes a row-major from a column-major layout "
         "of the same M x N shape?",
         ("Which mode has stride 1: mode 0 for column-major, mode 1 for row-major; the shape is (M,N) in both.",
          "Which mode has stride 1: column-major gives mode 0 stride 1, row-major gives mode 1 stride 1; the shape "
          "(M,N) is the same, only the stride tuple differs, (1,M) against (N,1)."),
         "The shape is identical, (M,N) either way; only the stride tuple differs, (1,M) versus (N,1).",
         (("The order of the shape: (M,N) for row-major and (N,M) for column-major.",
           "The order of the shape: row-major writes it (M,N) and column-major writes it (N,M), while the stride "
           "tuple is (1,M) in both cases, so only the shape tells them apart.",
           "Both keep the shape (M,N); writing (N,M) would describe a different, transposed matrix."),
          ("Row-major layouts touch more memory (a larger cosize) than column-major ones.",
           "Row-major layouts touch more memory than column-major ones: their cosize is larger, because the last "
           "row starts N elements further on than the last column does in the other order.",
           "Both are compact: cosize = M*N for either."),
          ("Column-major needs a nested shape such as (M,(N,1)); row-major stays flat.",
           "Column-major needs a hierarchical shape such as (M,(N,1)) to put its stride-1 mode first, while a "
           "row-major layout always stays flat and rank 2.",
           "Both are flat rank-2 layouts; nesting is unrelated to majorness."),
          ("The sign of the strides: a column-major layout counts its rows backwards.",
           "The sign of the strides: a column-major layout walks its rows with a negative stride from the end of "
           "the buffer, so the same shape and stride magnitudes give the other order.",
           "Both orders use non-negative strides; what moves is which mode has stride 1."))),
    Item("transpose", "A transposed view costs what in this formalism, and why does a GEMM still care which operand "
         "is transposed?",
         ("Nothing moves, the modes swap; but loads then walk memory with a large stride, which changes "
          "coalescing and the MMA operand's majorness.",
          "Nothing moves: the view swaps the modes; but loads then walk memory with a large stride, which changes "
          "coalescing, the vector width of each load and the majorness of the MMA operand."),
         "The view is just another layout over the same offsets; what changes is which direction is contiguous, and "
         "that decides whether warps read whole sectors and whether tensor-core operands can be loaded directly.",
         (("It copies the data into a new buffer; a GEMM avoids transposes to save that copy.",
           "It copies the data into a new buffer, so a GEMM avoids transposes to save memory and the bandwidth of "
           "the copy, and keeps every operand in the order it was stored.",
           "A view moves no data: T(j,i) = A(i,j) is computed from the same offsets."),
          ("It is free, and a GEMM does not care: every offset is computed anyway.",
           "It is free, and a GEMM does not care either: every offset is computed anyway, so the operand order "
           "never changes how fast the loads run or which MMA instruction is used.",
           "The arithmetic is free, but the memory access pattern is not: stride-1 versus large-stride loads "
           "differ in sectors per request and in vectorization."),
          ("One composition per element at run time, so GEMMs precompute transposes.",
           "It costs one composition per element at run time, which is why GEMM kernels precompute their "
           "transposed operands in a separate pass, before the main loop ever starts.",
           "The composition happens at compile time with static shapes; the run-time cost is in the access "
           "pattern, not the index arithmetic."),
          ("It doubles the shared memory a GEMM needs, since both orders are kept.",
           "It doubles the shared memory a GEMM needs, since the view keeps both the original and the transposed "
           "order resident, which is why kernels fix one operand order up front.",
           "A view is a second layout over the same storage: no element is stored twice."))),
    Item("tiling", "Why does having the layout algebra derive tiled views matter more for a tensor-core GEMM than for "
         "a plain copy?",
         ("A GEMM stacks tilings (CTA, warp, MMA fragment, swizzled smem) that must agree exactly; deriving them "
          "keeps them consistent.",
          "A tensor-core GEMM stacks tilings that must agree exactly (CTA, warp, MMA fragments, swizzled smem); "
          "deriving them keeps them consistent and checked at compile time, where hand-written indices drift."),
         "Each level's tile is a divide or product of the previous; hand-written index math for all of them is "
         "where silent bugs come from.",
         (("Tensor cores can only read layouts that CuTe produced.",
           "Tensor cores can only read layouts produced by CuTe, so a kernel without the algebra cannot issue MMA "
           "instructions at all, whatever indices it computes by hand.",
           "The hardware reads addresses; any code computing the right ones works. The point is getting them "
           "right consistently."),
          ("A copy has no tiles, so the algebra cannot describe it.",
           "A copy has no tiles at all: it moves one flat range of bytes, so the algebra has nothing to describe "
           "there and only a GEMM can use its divides and products.",
           "A copy is tiled too (local_tile, local_partition); it just needs fewer, simpler levels."),
          ("The algebra makes the MMA instructions themselves run faster.",
           "The algebra makes the tensor-core instructions themselves run faster than with hand-written indices, "
           "because CuTe emits special addressing modes for them at compile time.",
           "With static shapes both compile to the same multiply-adds; the gain is correctness, not speed of "
           "the arithmetic."),
          ("A GEMM's tiles are larger, and large tiles overflow hand-written int math.",
           "A GEMM's tiles are much larger than a copy's, and indices for large tiles overflow 32-bit integers when "
           "written by hand, while the algebra widens them to 64 bits automatically.",
           "Tile sizes are small compile-time numbers; the risk is inconsistency between levels, not overflow."))),
    Item("swizzle", "Padding and swizzling both remove shared-memory bank conflicts. Why must a Hopper tensor-core "
         "kernel that loads with TMA and feeds wgmma from shared memory use the swizzle?",
         ("TMA writes and wgmma reads only the canonical layouts (none, 32, 64 or 128-byte swizzle); a padded "
          "pitch is none of them.",
          "TMA boxes and wgmma descriptors describe only CuTe's canonical layouts (interleaved, or 32-, 64- or "
          "128-byte swizzle atoms); a padded row pitch has no such mode, though it still serves ldmatrix."),
         "Padding works for ldmatrix and cp.async (a 16-byte pad keeps every chunk aligned and conflict-free); it is "
         "TMA and wgmma that accept only the swizzle modes, and a swizzle permutes whole 16-byte chunks.",
         (("Padding breaks the 16-byte chunks that ldmatrix and 128-bit loads need.",
           "Padding breaks the alignment of the 16-byte chunks that ldmatrix and 128-bit vector loads need, so a "
           "padded tile cannot be read with ldmatrix at all, conflict-free or not.",
           "A pad of 16 bytes (8 half-precision elements) keeps every chunk aligned: ldmatrix and cp.async read it "
           "conflict-free, as the layout doctor shows. It is TMA and wgmma that accept no padding."),
          ("A swizzle needs fewer instructions per element than a padded index.",
           "A swizzle uses fewer instructions per element than a padded index, and tensor-core kernels are bound "
           "by integer issue, so the padded address arithmetic slows the main loop.",
           "Both are a few integer operations; the constraint is the layouts the hardware accepts."),
          ("Padding does not remove conflicts for column reads.",
           "Padding does not remove the conflicts of column reads: a pitch of 33 words only moves the conflict "
           "from one column to the next, so the warp still serializes its reads.",
           "A pitch of 33 words makes a float column read conflict-free; padding fails on the descriptors, not on "
           "banks."),
          ("Swizzled tiles need less shared memory than unpadded ones.",
           "Swizzled tiles need less shared memory than unpadded ones, because the XOR folds rows together, which "
           "leaves room for more pipeline stages in the same shared-memory budget.",
           "A swizzle uses exactly the unpadded size; it is padding that needs more, which is a cost but not the "
           "reason."))),
    Item("coalesce", "What does coalesce preserve, and why does (4,8):(1,4) become 32:1 while (4,8):(8,1) stays?",
         ("The function of the 1-D coordinate; modes join when shape_0 * stride_0 = stride_1: 4*1 = 4, but 4*8 is "
          "not 1.",
          "The function from 1-D coordinate to offset: (4,8):(1,4)'s mode 0 ends at 4*1 = 4, mode 1's stride, so "
          "they join; (4,8):(8,1)'s mode 0 ends at 32, not 1, so it stays."),
         "Two neighbouring modes merge exactly when shape_0 * stride_0 = stride_1.",
         (("The offset table as a 2-D picture; (4,8):(8,1) is already minimal.",
           "The offset table as a 2-D picture, rows and columns included; (4,8):(8,1) is already as small as it "
           "gets, and (4,8):(1,4) only looks different when printed.",
           "Coalesce may change the shape (and the 2-D picture); it keeps L(i) for every 1-D i."),
          ("The set of offsets; row-major layouts never coalesce.",
           "The set of offsets, in any order; (4,8):(8,1) cannot merge because row-major layouts never coalesce, "
           "while column-major ones always reduce to a single mode.",
           "It keeps more than the set, the order too; and row-major is not the reason, the stride test is."),
          ("The rank; both keep rank 2.",
           "The rank: both layouts keep rank 2, and 32:1 is only the way CuTe prints a rank-2 layout whose two modes "
           "happen to be contiguous in memory.",
           "32:1 has rank 1: coalesce reduces the rank whenever modes join."),
          ("The size and the cosize; only layouts with equal strides merge.",
           "The size and the cosize, nothing else; (4,8):(1,4) merges because both of its strides are small, while "
           "(4,8):(8,1) has a stride larger than its own shape and cannot.",
           "It keeps the whole function, and the merge test is shape_0 * stride_0 = stride_1, not the stride size."))),
    Item("composition", "What decides the shape of A o B, and how does composition give a transposed view of a "
         "row-major 4x8 matrix?",
         ("B does: R(c) = A(B(c)); (4,8):(8,1) o (8,4):(4,1) = (8,4):(1,8).",
          "B does: R(c) = A(B(c)), so R takes B's shape; (4,8):(8,1) o (8,4):(4,1) = (8,4):(1,8) with R(i,j) = "
          "A(j,i), the transposed view without moving any data."),
         "B maps each view coordinate to A's 1-D coordinate of the element shown there.",
         (("A does: the result has A's shape and B only reorders it.",
           "A does: the result always has A's shape and B only reorders its elements, so a transpose needs a "
           "second step that swaps the result's two modes.",
           "R's domain is B's domain; A is applied to what B returns."),
          ("The larger of the two shapes, so R holds every element of both.",
           "The larger of the two shapes: the result must hold every element of both A and B, so R takes whichever "
           "of them has more elements, and a transpose swaps them.",
           "No size comparison is involved: R(c) = A(B(c)) is defined on B's coordinates."),
          ("Composition cannot transpose; a transposed view needs a copy.",
           "Composition cannot transpose: the result always keeps A's row-major order, so a transposed view of "
           "the matrix needs its data copied into a new buffer first.",
           "Composing with a layout that swaps the roles of rows and columns gives the transposed view for free."),
          ("The product of both shapes, mode by mode: (4,8) o (8,4) = (32,32).",
           "The product of both shapes, mode by mode, since every coordinate of A meets every coordinate of B: "
           "(4,8) o (8,4) has shape (32,32), and its diagonal is the transpose.",
           "R has exactly B's shape; composition applies B, then A, to one coordinate."))),
    Item("divide", "How is logical_divide(A, B) built, and what do the two modes of the result mean?",
         ("A o (B, complement(B, size(A))): mode 0 is one tile, mode 1 says which tile.",
          "A o (B, complement(B, size(A))): mode 0 is the elements B selects (one tile), mode 1 says which tile, "
          "the complement laying out the copies of B across the rest of A."),
         "The complement arranges what B does not cover, so (B, B*) reorders all of A's 1-D coordinates.",
         (("B o A, with mode 0 the tiles and mode 1 inside a tile.",
           "B o A, with mode 0 the tiles and mode 1 the elements inside a tile, so that D(i, k) walks tile i at "
           "position k and the tiler is applied last.",
           "The divide applies B (and its complement) to A's coordinates: A o (...), and mode 0 is inside a tile."),
          ("complement(A, B): the offsets B leaves out of A, once per tile.",
           "complement(A, B): the offsets B leaves out of A, laid out so that mode 0 lists the uncovered elements "
           "and mode 1 repeats them once per tile of B.",
           "The complement is of B (in size(A)), and it is only the second mode's arrangement."),
          ("A sorted by stride and cut in two at size(B).",
           "A with its modes sorted by stride and then cut in two at the size of B: mode 0 keeps the smallest "
           "strides (one tile), mode 1 keeps the rest.",
           "The division follows B's pattern, which need not be contiguous or sorted."),
          ("A's shape divided by B's shape, strides kept as they are.",
           "A's shape divided mode by mode by B's shape, the strides kept as they are, so mode 0 has B's shape and "
           "mode 1 has the quotient, with A's own strides on both.",
           "Only a compact B gives A's strides back; in general B's strides pick elements, through composition."))),
    Item("partition", "For a warp reading a column-major fp32 tile, which way should the thread layout's fast mode "
         "run, and why?",
         ("Down the columns: neighbouring lanes read neighbouring words, 128 contiguous bytes, 4 sectors.",
          "Down the columns (the contiguous direction): neighbouring lanes read neighbouring words; 32 lanes cover "
          "128 contiguous bytes, 4 sectors at 100%."),
         "The thread layout's fast mode must follow the data's stride-1 direction for full sectors.",
         (("Along the rows, so each thread's own values are contiguous.",
           "Along the rows, so each thread's own values are contiguous in memory and every thread reads its whole "
           "row with one wide vector load per instruction.",
           "That makes neighbouring lanes 4*M bytes apart: many sectors, each mostly unused."),
          ("It does not matter; the L1 merges a warp's requests anyway.",
           "It does not matter; the L1 cache merges the requests of a warp into whole cache lines, so any thread "
           "order costs the same number of sectors per instruction.",
           "Sectors are counted per instruction: scattered lanes touch more 32-byte sectors."),
          ("Diagonally, to avoid bank conflicts in global memory.",
           "Diagonally, to avoid bank conflicts in global memory, where a straight walk down a column sends every "
           "lane to the same DRAM bank.",
           "Global memory has sectors, not banks; diagonal access only adds sectors."),
          ("Along the rows, because fp32 rows are 128 bytes long.",
           "Along the rows, because a row of 32 fp32 values is exactly 128 bytes long, one cache line, whichever "
           "way the tile is stored in memory.",
           "In a column-major tile a row's elements are M words apart; only a column is contiguous."))),
    Item("dynamic", "Why does coalesce((2,(1,6)):(1,(6,2))) print 12:1 with _N shapes but (2,1,6):(1,6,2) with ints?",
         ("The type is fixed at compile time: with _N CuTe proves the modes join; with ints it only flattens.",
          "A layout's type is fixed at compile time: with _N CuTe can prove the 1 is 1 and that the modes join; "
          "with run-time ints it cannot, so it only flattens."),
         "Static shapes let the simplification and the divisibility checks happen at compile time.",
         (("Ints overflow when merged, so CuTe refuses to merge them.",
           "Ints may overflow when two modes are merged into one, so CuTe refuses to merge run-time modes and keeps "
           "them apart, while _N values are checked for overflow at compile time.",
           "No overflow is involved; the values are simply unknown when the type is built."),
          ("The int version is a different layout with a different function.",
           "The int version is a different layout with a different function, so merging its modes would change "
           "its offsets.",
           "Both have the same function; only the representation differs."),
          ("It is a bug in the int overload of coalesce.",
           "It is a bug in the int overload of coalesce, which skips the size-1 modes' test; the _N overload was "
           "fixed long ago and the int one was left behind.",
           "It is by design: run-time values cannot drive compile-time decisions."),
          ("Ints are printed unsimplified; the layout is the same.",
           "Ints are only printed unsimplified: the merged 12:1 is stored either way, and printing run-time values "
           "shows the modes as the layout was first written.",
           "The printed form is the stored type: with ints the modes really stay unmerged."))),
]
ITEM = {i.key: i for i in ITEMS}
LETTERS = "abcd"


def combinations(item: Item) -> list[list[tuple[str, str]]]:
    """Every set of four options a drill of ``item`` can show: one wording of the right option (its why is "")
    first, then three wrong options, each in one of its wordings; only sets of four different lengths."""
    out = []
    for right in item.right:
        for three in itertools.combinations(item.wrong, 3):
            for forms in itertools.product((0, 1), repeat=3):
                opts = [(right, "")] + [(w[f], w[2]) for w, f in zip(three, forms, strict=True)]
                if len({len(t) for t, _ in opts}) == 4:
                    out.append(opts)
    return out


def length_rank(options: list[tuple[str, str]]) -> int:
    """The right option's (the first's) place when the four are sorted longest first: 0 = the longest."""
    return sorted((len(t) for t, _ in options), reverse=True).index(len(options[0][0]))


def choose_options(item: Item, rank: int, rng: random.Random) -> list[tuple[str, str]]:
    """Four options of ``item`` where the right one (first) has length rank ``rank`` (0 = the longest): a draw of
    the rank, then of the wordings, so that an option's length says nothing about whether it is right.
    Post-condition: ``length_rank(result) == rank`` (the tests check every item has every rank)."""
    pool = [c for c in combinations(item) if length_rank(c) == rank]
    return pool[rng.randrange(len(pool))]


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def read_choice(answer: str, options: list[str]) -> int:
    """The option index an answer names: a letter (``b``, ``(b)``, ``B.``, ``option b``) or the option's text."""
    s = check_length(answer).strip().lower()
    for prefix in ("option", "answer", "choice"):
        s = s.removeprefix(prefix).strip(" :")
    core = "".join(s.split()).strip("().:")
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
    chosen = choose_options(item, rng.randrange(4), rng)
    options = [(t, why) for t, why in chosen]
    rng.shuffle(options)
    texts = [o for o, _ in options]
    right = next(k for k, (_, why) in enumerate(options) if not why)
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
