"""``algebra.registry``: the op table of ``algebra.teach.registry`` (every op the product offers, its arguments,
examples and emitters), under the name the API, the pages and the tests have always used."""

from algebra.teach.registry import (
    GROUPS,
    KINDS,
    OPS,
    Arg,
    Example,
    Op,
    get,
    names,
    parse_args,
    parse_tuple,
    parse_value,
)
