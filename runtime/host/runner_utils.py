"""MLIR's runner utilities in host code: `printMemrefF32` & co. and the scalar printers,
and the formatting `vector.print` shares with them (`vector.py` compiles that op).

MLIR's integration tests print with the functions of its runner libraries
(`libmlir_runner_utils`, `libmlir_c_runner_utils`) and check the text with FileCheck.
devplan's host code calls the same names and prints the same text:

* `printMemrefF32/F64/F16/I32/I64(memref<*xT>)` (and ranked memrefs): the header
  `Unranked Memref base@ = 0x... rank = R offset = O sizes = [...] strides = [...] data = `
  then the values in nested brackets, one innermost row a line, rows after the first
  indented by their depth; floats as C++ streams print them (`%g`), integers in decimal.
* the scalar printers of `libmlir_c_runner_utils` (`vector.print`'s lowering), each
  printing exactly what its C definition does, with no newline: `printF32(f32)` and
  `printF64(f64)` as `%g` (glibc's: `-nan` for a NaN with its sign bit set), `printI64(i64)`
  signed and `printU64(i64)` unsigned in decimal, `printOpen()` `( `, `printClose()` ` )`,
  `printComma()` `, `, `printNewline()` a newline.
* `vector.print %x : T` of a scalar or a 1-D vector: `%g` floats and decimal integers,
  vectors as `( a, b, c )`, each followed by a newline.

Calling any other function declared without a body is an error at the call naming the
function (devplan has no foreign-function interface).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
    UnrankedMemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Operation

from ...analysis.dtypes import int_width
from ...diagnostics import DevplanError, error_at
from ..device_api import Buffer
from .frame import Compiler, Frame, Step

# ---- formatting ------------------------------------------------------------------------


def _int_bits(type_: Attribute) -> int | None:
    return int_width(type_) if isinstance(type_, IntegerType) else None  # pyright: ignore[reportUnknownArgumentType]


def c_g(value: Any) -> str:
    """A float as C's `printf("%g")` prints it with glibc (Python's `g` writes any NaN as
    `nan`; glibc writes `-nan` when the sign bit is set)."""
    x = float(value)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:g}"


def format_scalar(value: Any, type_: Attribute) -> str:
    """One value as MLIR's runner prints it (`%g` for floats, decimal for integers)."""
    if isinstance(type_, Float16Type | Float32Type | Float64Type):
        return c_g(value)
    if _int_bits(type_) == 1:
        return "1" if value else "0"
    return str(int(value))


def _data(array: np.ndarray[Any, Any], type_: Attribute) -> str:
    rank = array.ndim
    parts: list[str] = []

    def emit(index: tuple[int, ...], dim: int) -> None:
        # MLIR's MemRefDataPrinter: rows after the first of each level are indented by
        # rank - dim + 1 spaces; a level's rows end with ", " and a newline (dim > 1).
        if dim == 0:
            parts.append(format_scalar(array[index], type_))
            return
        size = array.shape[rank - dim]
        parts.append("[")
        for i in range(size):
            if i:
                parts.append(" " * (rank - dim + 1))
            emit((*index, i), dim - 1)
            if i + 1 < size:
                parts.append(", ")
                if dim > 1:
                    parts.append("\n")
        parts.append("]")

    if rank == 0:
        return "[" + format_scalar(array[()], type_) + "]"
    emit((), rank)
    return "".join(parts)


def format_memref(array: np.ndarray[Any, Any], type_: Attribute) -> str:
    """What MLIR's `printMemref*` prints for `array` of element type `type_`."""
    itemsize = array.dtype.itemsize
    strides = [s // itemsize for s in array.strides]
    address = array.__array_interface__["data"][0]
    sizes = ", ".join(map(str, array.shape))
    header = (
        f"Unranked Memref base@ = {address:#x} rank = {array.ndim} offset = 0 "
        f"sizes = [{sizes}] strides = [{', '.join(map(str, strides))}] data = "
    )
    return header + "\n" + _data(array, type_)


# ---- host memory -----------------------------------------------------------------------


def host_array(op: Operation, value: Any) -> np.ndarray[Any, Any]:
    """The NumPy array behind a run-time memref host code may read (`op` reads it)."""
    if isinstance(value, Buffer):
        api = value.api
        assert api is not None
        try:
            return api.host_view(value, write=False)
        except DevplanError as e:
            raise error_at(op, f"'{op.name}' reads memory host code cannot see: {e}") from None
    return np.asarray(value)


def element_type(type_: Attribute) -> Attribute:
    """The element type of a memref or vector type; a scalar type itself."""
    if isinstance(type_, MemRefType | UnrankedMemRefType | VectorType):
        return type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return type_


# ---- printMemref* ----------------------------------------------------------------------

_PRINT_MEMREF: dict[str, Callable[[Attribute], bool]] = {
    "printMemrefF32": lambda t: isinstance(t, Float32Type),
    "printMemrefF64": lambda t: isinstance(t, Float64Type),
    "printMemrefF16": lambda t: isinstance(t, Float16Type),
    "printMemrefI32": lambda t: _int_bits(t) == 32,
    "printMemrefI64": lambda t: _int_bits(t) == 64,
}
"""The runner functions devplan provides, with the element types each accepts."""

_MASK64 = (1 << 64) - 1

_PRINT_SCALAR: dict[str, tuple[Attribute | None, Callable[[Any], str]]] = {
    "printF32": (Float32Type(), c_g),
    "printF64": (Float64Type(), c_g),
    "printI64": (IntegerType(64), lambda x: str(int(x))),
    "printU64": (IntegerType(64), lambda x: str(int(x) & _MASK64)),
    "printOpen": (None, lambda _: "( "),
    "printClose": (None, lambda _: " )"),
    "printComma": (None, lambda _: ", "),
    "printNewline": (None, lambda _: "\n"),
}
"""The scalar printers: the argument type each takes (None: no argument) and the text
it prints for a value."""

RUNNER_FUNCTIONS: tuple[str, ...] = (*_PRINT_MEMREF, *_PRINT_SCALAR)


def _compile_scalar_print(c: Compiler, op: func.CallOp, name: str) -> Step:
    takes, text = _PRINT_SCALAR[name]
    given = [a.type for a in op.arguments]
    if given != ([takes] if takes is not None else []) or op.res:
        shape = f"({takes})" if takes is not None else "()"
        raise error_at(op, f"@{name} takes {shape} and returns nothing, as MLIR defines it")
    if takes is None:
        printed = text(None)

        def run_fixed(f: Frame) -> None:
            sys.stdout.write(printed)

        return run_fixed
    slot = c.slot(op.arguments[0])

    def run(f: Frame) -> None:
        sys.stdout.write(text(f[slot]))

    return run


def compile_runner_call(c: Compiler, op: func.CallOp) -> Step:
    """A call of a function declared without a body: one of MLIR's runner utilities,
    else a located error naming the function."""
    name = op.callee.string_value()
    if name in _PRINT_SCALAR:
        return _compile_scalar_print(c, op, name)
    accepts = _PRINT_MEMREF.get(name)
    if accepts is None:
        raise error_at(
            op,
            f"'func.call' calls @{name}, an external function (declared without a body) "
            f"that devplan does not provide; it provides MLIR's runner utilities "
            f"{', '.join('@' + n for n in RUNNER_FUNCTIONS)}",
        )
    if len(op.arguments) != 1 or op.res:
        raise error_at(op, f"@{name} takes one memref and returns nothing")
    value = op.arguments[0]
    value_type: Attribute = value.type
    element = element_type(value_type)
    if not isinstance(value_type, MemRefType | UnrankedMemRefType) or not accepts(element):
        raise error_at(op, f"@{name} cannot print {value_type}")
    slot = c.slot(value)

    def run(f: Frame) -> None:
        print(format_memref(host_array(op, f[slot]), element), file=sys.stdout)

    return run


__all__ = [
    "RUNNER_FUNCTIONS",
    "c_g",
    "compile_runner_call",
    "element_type",
    "format_memref",
    "format_scalar",
    "host_array",
]
