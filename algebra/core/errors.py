"""The one exception type of the algebra."""


class LayoutError(ValueError):
    """An operation CuTe refuses, or malformed input; the message names the failed condition and the modes."""

    def __init__(self, *args: object, pos: int | None = None) -> None:
        super().__init__(*args)
        self.pos = pos  # text that does not parse: where reading stopped (``algebra.core.notation``)


def no_modes(op: str, x: object) -> LayoutError:
    """The refusal of an empty layout or shape ``():()`` where CuTe reads a mode it has not (``get<R-1>``, a fold)."""
    return LayoutError(f"{op}: {x} has no modes; CuTe reads a mode of it (get<R-1>, or a sum over none) and does not "
                       "compile it")


class NoShape(LayoutError, AttributeError):
    """The shape of what has none (``L o O o Sw``, a bare swizzle): ``hasattr`` says so; a direct use refuses, saying
    why."""
