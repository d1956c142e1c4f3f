"""Checks of the arguments a caller passes to devplan's Python API.

A wrong argument is a user error, named by its function and parameter, with what was
passed (`devplan.parse: source must be MLIR text (str) or a Path, got int 5`).
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import DevplanError


def describe_value(value: object) -> str:
    """`NoneType None`, `int 5`, `str 'abc'` (shortened): what a caller passed."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def check_argument(
    function: str,
    parameter: str,
    value: object,
    expected: type | tuple[type, ...],
    description: str,
    error: Callable[[str], Exception] | None = None,
) -> None:
    """Raise `error` (default: `DevplanError` with an `error: ` prefix) naming
    `function`'s `parameter` when `value` is not an instance of `expected`."""
    if isinstance(value, expected):
        return
    message = f"{function}: {parameter} must be {description}, got {describe_value(value)}"
    raise error(message) if error is not None else DevplanError(f"error: {message}")
