"""The one exception type of the algebra."""


class LayoutError(ValueError):
    """An operation CuTe refuses, or malformed input; the message names the failed condition and the modes."""

    def __init__(self, *args: object, pos: int | None = None) -> None:
        super().__init__(*args)
        self.pos = pos  # text that does not parse: where reading stopped (``algebra.core.notation``)


class NoShape(LayoutError, AttributeError):
    """The shape of what has none (``L o O o Sw``, a bare swizzle): ``hasattr`` says so; a direct use refuses, saying
    why."""
