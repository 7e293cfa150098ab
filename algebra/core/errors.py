"""The one exception type of the algebra."""


class LayoutError(ValueError):
    """An operation CuTe refuses, or malformed input; the message names the failed condition and the modes."""
