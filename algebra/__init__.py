"""CuTe's layout algebra in pure Python (standard library only)."""


class LayoutError(ValueError):
    """An operation CuTe refuses; the message names the failed condition and the modes involved."""
