"""Job parameter models (pydantic). Every field is bounded; a model is the only gate between a request and nvcc.

Errors name the field and the cap it broke, e.g. ``rows: Input should be less than or equal to 1024`` or
``tile of 2048x64 elements is over the cap of 65536 elements``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from gpu_worker import patterns

#: Transpose swizzles that spread one tile column over 32 banks, by (dtype, tile).
TRANSPOSE_SWIZZLE = {("fp32", 32): "Sw<5,0,5>", ("fp32", 64): "Sw<5,0,6>",
                     ("fp16", 32): "Sw<4,1,5>", ("fp16", 64): "Sw<5,1,5>", ("fp16", 128): "Sw<5,1,6>"}
TRANSPOSE_VARIANTS = ("naive", "tiled", "padded", "swizzled")
#: The transpose fields each variant reads; given to a job without that variant, they are refused.
TRANSPOSE_FIELD_USED_BY = {"pad": "padded", "swizzle": "swizzled"}


def exact_int(value: Any) -> Any:
    """A JSON integer: ``Literal[1, 2, 4]`` alone takes ``true`` and ``4.0`` even in strict mode (True == 1)."""
    if type(value) is not int:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


#: Put before an int Literal: ``Annotated[Literal[1, 2, 4], ExactInt]``.
ExactInt = BeforeValidator(exact_int)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Bounds shared by a kind's parameters and the compile-time constants compile_only may pass to its template.
ElementBytes = Annotated[Literal[1, 2, 4, 8, 16], ExactInt]
Nacc = Annotated[int, Field(ge=1, le=32, description="distinct accesses per loop iteration")]
LdmNum = Annotated[Literal[1, 2, 4], ExactInt]
TransposeTile = Annotated[Literal[32, 64, 128], ExactInt]
BlockRows = Annotated[Literal[4, 8, 16], ExactInt]
TransposePad = Annotated[int, Field(ge=1, le=8, description="elements per tile row")]
SwizzleBits = Annotated[int, Field(ge=0, le=7)]


class AccessSpec(_Strict):
    """One warp-wide access pattern (see gpu_worker.patterns for what each kind reads). A field its kind does not read
    (ACCESS_FIELD_USED_BY) is refused when given, not ignored (SmemParams)."""

    kind: Literal["column", "row", "ldmatrix", "offsets", "thread_layout"] = "column"
    index: int = Field(0, ge=0, le=65535, description="first column / row / 8x8 block")
    num: LdmNum = Field(4, description="ldmatrix .x1/.x2/.x4")
    trans: bool = Field(False, description="ldmatrix .trans")
    offsets: list[int | Annotated[list[int], Field(min_length=2, max_length=2)]] | None = Field(
        None, min_length=32, max_length=32, description="32 entries (one per lane): element offset or [r, c]")
    layout: str | None = Field(None, max_length=patterns.MAX_LAYOUT_CHARS,
                               description="thread layout (CuTe notation), size 32")


#: The access fields each access kind reads (``kind`` aside); a field given to any other kind is refused.
ACCESS_FIELD_USED_BY = {"index": ("column", "row", "ldmatrix"), "num": ("ldmatrix",), "trans": ("ldmatrix",),
                        "offsets": ("offsets",), "layout": ("thread_layout",)}
#: The tile fields each layout variant reads; a field given to any other variant is refused (a zero pad too), and the
#: lab form (app.routes.pages_lab.form_params) sends a field only to the variants listed here.
VARIANT_FIELD_USED_BY = {"pad": ("padded",), "swizzle": ("swizzle",), "layout": ("custom",)}


class SmemParams(_Strict):
    """A shared-memory access benchmark: tile, layout variant, access pattern, timing knobs."""

    element_bytes: ElementBytes = 4
    rows: int = Field(32, ge=1, le=1024)
    cols: int = Field(32, ge=1, le=1024)
    variant: Literal["naive", "padded", "swizzle", "custom"] = "naive"
    pad: int = Field(0, ge=0, le=64, description="padding in elements per row (variant padded)")
    swizzle: str | None = Field(None, max_length=32, description="Sw<B,M,S> (variant swizzle)")
    layout: str | None = Field(None, max_length=patterns.MAX_LAYOUT_CHARS,
                                 description="tile layout in CuTe notation (variant custom)")
    access: AccessSpec = Field(default_factory=AccessSpec)
    nacc: Nacc = 16
    iterations: int = Field(1024, ge=1, le=65536)
    runs: int = Field(30, ge=20, le=200)
    profile: bool = Field(False, description="count wavefronts with Nsight Compute when present")

    @field_validator("swizzle")
    @classmethod
    def _swizzle(cls, v: str | None) -> str | None:
        if v is not None:  # checked whatever the variant: a swizzle that is given is read
            patterns.parse_swizzle(v)
        return v

    @model_validator(mode="after")
    def _check(self) -> SmemParams:
        if self.variant != "custom" and self.rows * self.cols > patterns.MAX_ELEMENTS:
            raise ValueError(f"tile of {self.rows}x{self.cols} elements is over the cap of "
                             f"{patterns.MAX_ELEMENTS} elements")
        if self.variant == "padded" and self.pad == 0:
            raise ValueError("variant padded needs pad >= 1")
        if self.variant == "swizzle" and not self.swizzle:
            raise ValueError("variant swizzle needs swizzle, e.g. Sw<3,3,3>")
        if self.variant == "custom" and not self.layout:
            raise ValueError("variant custom needs layout in CuTe notation")
        for name in sorted(set(VARIANT_FIELD_USED_BY) & self.model_fields_set):
            reader = VARIANT_FIELD_USED_BY[name][0]
            if self.variant != reader:
                raise ValueError(f"{name}: variant {self.variant} does not read it (only variant {reader} does): "
                                 f"drop {name}, or set variant {reader}")
        for name in sorted(self.access.model_fields_set):
            kinds = ACCESS_FIELD_USED_BY.get(name, (self.access.kind,))
            if self.access.kind not in kinds:
                raise ValueError(f"access.{name}: a {self.access.kind} access does not read it (only "
                                 f"{' / '.join(kinds)} {'does' if len(kinds) == 1 else 'do'}); drop it")
        if self.access.kind == "offsets" and not self.access.offsets:
            raise ValueError("access kind offsets needs access.offsets (32 entries)")
        if self.access.kind == "thread_layout" and not self.access.layout:
            raise ValueError("access kind thread_layout needs access.layout (a CuTe layout of size 32)")
        try:
            self._plan = patterns.plan_smem(self.spec())
        except (ValueError, ArithmeticError) as exc:
            raise ValueError(str(exc)) from None
        if self.variant == "custom":  # the layout's shape is the tile's: rows and cols given must say the same
            shape = (self._plan["rows"], self._plan["cols"])
            given = {"rows", "cols"} & self.model_fields_set
            if given and (self.rows, self.cols) != shape:
                raise ValueError(f"{', '.join(sorted(given))}: the custom layout {self._plan['layout']} is "
                                 f"{shape[0]}x{shape[1]}, not the {self.rows}x{self.cols} given; drop rows and cols "
                                 "or give its shape")
            self.rows, self.cols = shape
        return self

    def spec(self) -> dict:
        """The plain dict that gpu_worker.patterns / benches take."""
        return self.model_dump()

    def stored(self) -> dict:
        """What the queue keeps (gpu_worker.registry.stored): every field with its value, less those the variant and
        the access kind do not read, so that the worker's validation of it accepts the same job."""
        tile = {n for n, used in VARIANT_FIELD_USED_BY.items() if self.variant not in used}
        access = {n for n, used in ACCESS_FIELD_USED_BY.items() if self.access.kind not in used}
        return self.model_dump(exclude={**dict.fromkeys(tile, True), "access": access})

    def plan(self) -> dict:
        """The address table and prediction computed during validation (same as patterns.plan_smem(spec()))."""
        return getattr(self, "_plan", None) or patterns.plan_smem(self.spec())

    def estimate(self) -> tuple[float, str]:
        """(GPU seconds, how) of the kernel's launches (kernels/smem.cu: 3 warm-up, ``runs`` timed, one check): the
        shared-memory pipe serves one wavefront per clock per SM, and every SM holds up to 64 warps (8-warp blocks,
        fewer when the footprint leaves room for fewer), each issuing ``iterations`` x the ``nacc`` accesses at the
        wavefronts the bank model predicts for them, at 1.75 GHz (an H100 PCIe's top SM clock; an H200 runs 1.98). The
        model times bench/results/smem_H200_2026-11-30.json's f32_col_naive (64 warps x 1024 x 16 accesses of 32
        wavefronts) at 16.95 ms a launch at 1.98 GHz; it measured 16.97 ms."""
        wavefronts = sum(a["wavefronts"] for a in self.plan()["prediction"]["per_access"])
        warps = 8 * max(1, min(8, (228 << 10) // max(1, self.plan()["footprint_bytes"])))
        seconds = (self.runs + 4) * warps * self.iterations * wavefronts / 1.75e9
        return seconds, (f"{self.runs + 4} launches x {warps} warps per SM x {self.iterations} iterations x "
                         f"{wavefronts} wavefronts per iteration at one per clock; lower iterations, runs or nacc")


class TransposeParams(_Strict):
    """Transpose through shared memory; n x n elements of dtype; pad and swizzle default to the conflict-free fixes."""

    dtype: Literal["fp32", "fp16"] = "fp32"
    n: int = Field(8192, ge=256, le=16384)
    tile: TransposeTile = Field(64, description="128 for fp16 only (fp32 blocks are tile x block_rows)")
    block_rows: BlockRows = 8
    pad: TransposePad | None = Field(None, description="elements per tile row; default one 4-byte word")
    swizzle: str | None = Field(None, max_length=32)
    variants: list[Literal["naive", "tiled", "padded", "swizzled"]] = Field(
        default_factory=lambda: list(TRANSPOSE_VARIANTS), min_length=1)
    runs: int = Field(20, ge=20, le=100)

    @field_validator("swizzle")
    @classmethod
    def _swizzle(cls, v: str | None) -> str | None:
        if v is not None:
            patterns.parse_swizzle(v)
        return v

    @model_validator(mode="after")
    def _check(self) -> TransposeParams:
        twice = sorted({v for v in self.variants if self.variants.count(v) > 1})
        if twice:
            raise ValueError(f"variants: {', '.join(twice)} given twice; name each variant once")
        for name in sorted(set(TRANSPOSE_FIELD_USED_BY) & self.model_fields_set):
            reader = TRANSPOSE_FIELD_USED_BY[name]
            if reader not in self.variants:
                raise ValueError(f"{name}: no variant of this job reads it (only variant {reader} does, and variants "
                                 f"are {', '.join(self.variants)}): drop {name}, or add {reader} to variants")
        if self.n % self.tile:
            raise ValueError(f"n ({self.n}) must be a multiple of the tile ({self.tile})")
        if self.dtype == "fp32" and self.tile > 64:
            raise ValueError(f"tile {self.tile} is for fp16 only: an fp32 tile of {self.tile}x{self.tile} is over "
                             "48 KB of static shared memory")
        if self.pad is None:
            self.pad = 1 if self.dtype == "fp32" else 2
        if self.swizzle is None:
            self.swizzle = TRANSPOSE_SWIZZLE[(self.dtype, self.tile)]
        if self.dtype == "fp16":  # the fp16 kernels keep (2c, 2c + 1) together in one 4-byte word
            if self.pad % 2:
                raise ValueError(f"fp16 tiles are stored as 4-byte words: pad must be even, got {self.pad}")
            b, m, _ = patterns.parse_swizzle(self.swizzle)
            if m < 1:
                raise ValueError(f"fp16 tiles are stored as 4-byte words: the swizzle must keep bit 0 "
                                 f"(Sw<B,M,S> with M >= 1), got {self.swizzle}")
            # the kernel adds row steps of 64 * block_rows and 32 * tile elements as immediate offsets
            limit = min(64 * self.block_rows, 32 * self.tile)
            if ((1 << b) - 1) << m >= limit:
                raise ValueError(f"fp16 swizzle {self.swizzle} moves element offset bits at or above {limit} "
                                 f"(tile {self.tile}, block_rows {self.block_rows}): keep B + M <= "
                                 f"{limit.bit_length() - 1}")
        return self

    def spec(self) -> dict:
        """The plain dict that gpu_worker.benches.run_transpose takes."""
        return self.model_dump()

    def stored(self) -> dict:
        """What the queue keeps (gpu_worker.registry.stored): every field, less a pad or swizzle that no variant of
        the job reads (validation fills them again with the same defaults, which the kernel's build still takes)."""
        return self.model_dump(exclude={n for n, v in TRANSPOSE_FIELD_USED_BY.items() if v not in self.variants})


class NoopDefines(_Strict):
    """Compile-time constants of ``kernels/noop.cu``."""

    VALUE: int = Field(1, ge=-1024, le=1024)


class SmemDefines(_Strict):
    """Compile-time constants of ``kernels/smem.cu``: the bounds of SmemParams (gpu_worker.benches.smem_defines)."""

    ELEM_BYTES: ElementBytes = 4
    MODE: Annotated[Literal[0, 1], ExactInt] = Field(0, description="1: ldmatrix")
    LDM_NUM: LdmNum = 4
    LDM_TRANS: Annotated[Literal[0, 1], ExactInt] = 0
    NACC: Nacc = 16
    WARPS: Annotated[Literal[1, 2, 4, 8, 16, 32], ExactInt] = 8


class TransposeDefines(_Strict):
    """Compile-time constants of ``kernels/transpose.cu``: the bounds of TransposeParams
    (gpu_worker.benches.transpose_defines)."""

    ELEM_BYTES: Annotated[Literal[2, 4], ExactInt] = 4
    TILE: TransposeTile = 32
    BLOCK_ROWS: BlockRows = 8
    PAD: TransposePad = 1
    SW_B: SwizzleBits = 5
    SW_M: SwizzleBits = 0
    SW_S: SwizzleBits = 5


#: The constants each template accepts, bounded as the kind that builds it bounds them.
TEMPLATE_DEFINES: dict[str, type[_Strict]] = {"noop": NoopDefines, "smem": SmemDefines, "transpose": TransposeDefines}


class CompileOnlyParams(_Strict):
    """Render and (when nvcc is present, or required) compile one template; the queue's smallest job. ``defines``
    are checked against the template's own model (TEMPLATE_DEFINES): the caps of the kind that builds it."""

    template: Literal["noop", "smem", "transpose"] = "noop"
    defines: dict[str, int] = Field(default_factory=dict, max_length=16)
    hold_ms: int = Field(0, ge=0, le=30000, description="sleep before building (queue tests)")
    nvcc: Literal["auto", "require", "skip"] = "auto"
    tag: str | None = Field(None, max_length=64)

    @model_validator(mode="after")
    def _defines(self) -> CompileOnlyParams:
        model = TEMPLATE_DEFINES[self.template]
        try:
            model.model_validate(self.defines)
        except ValidationError as exc:
            bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"bad compile-time constant for template {self.template} ({bad}); it takes "
                             f"{', '.join(model.model_fields)}") from None
        return self

    def spec(self) -> dict:
        """Plain dict for gpu_worker.benches.run_compile_only."""
        return self.model_dump()


class JobRequest(_Strict):
    """The body of ``POST /api/bench/jobs``; params are validated by the kind's model afterwards."""

    kind: str = Field(..., max_length=32)
    params: dict = Field(default_factory=dict)
