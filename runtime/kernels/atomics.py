"""Hardware compare-and-swap for the Numba backend's compiled kernels.

Two launches that run at once (see `streams.Scheduler`) may update one element through
`memref.atomic_rmw`, and the blocks of one large launch may run on several threads
(`prange`): a plain load, combine and store would lose updates. `atomic_cas` is LLVM's
`cmpxchg` (sequentially consistent) on the element's bits, so the generated code retries
a read-combine-swap until no other thread wrote the element in between. Float elements
are compared as their bit patterns (a NaN read is a NaN swapped, not a failed compare).
It also serves as an atomic read (`atomic_cas(a, i, 0, 0)` is True exactly when the
element is 0), which a loop polls for the watchdog's stop flag: a plain load there could
be hoisted out of the loop by LLVM and never see the flag change.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # pyright: ignore[reportMissingTypeStubs]
from numba.core import cgutils, types  # pyright: ignore[reportMissingTypeStubs]
from numba.extending import intrinsic  # pyright: ignore[reportMissingTypeStubs, reportUnknownVariableType]


def _bits_type(data: Any) -> ir.IntType:
    if isinstance(data, ir.IntType):
        return data
    return ir.IntType(64 if isinstance(data, ir.DoubleType) else 32)


@intrinsic  # pyright: ignore[reportUntypedFunctionDecorator]
def atomic_cas(typingctx: Any, ary: Any, index: Any, expected: Any, new: Any) -> Any:
    """`atomic_cas(array, (i, j, ...), expected, new)`: store `new` at the element if it
    holds `expected` (bit for bit); True when it did."""
    if not isinstance(ary, types.Array) or not isinstance(index, types.BaseTuple):
        return None
    sig = types.boolean(ary, index, expected, new)  # pyright: ignore[reportUnknownArgumentType]

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty, indty, expty, newty = signature.args
        arr, idx, exp, value = args
        array = context.make_array(aryty)(context, builder, arr)
        items: list[Any] = cgutils.unpack_tuple(builder, idx, len(indty))  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        indices = [
            context.cast(builder, v, t, types.intp) for v, t in zip(items, indty, strict=True)
        ]
        ptr: Any = cgutils.get_item_pointer(context, builder, aryty, array, indices)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        dtype = aryty.dtype
        old = context.get_value_as_data(builder, dtype, context.cast(builder, exp, expty, dtype))
        new_ = context.get_value_as_data(builder, dtype, context.cast(builder, value, newty, dtype))
        bits = _bits_type(old.type)
        if bits is not old.type:
            old = builder.bitcast(old, bits)
            new_ = builder.bitcast(new_, bits)
        ptr = builder.bitcast(ptr, bits.as_pointer())
        pair = builder.cmpxchg(ptr, old, new_, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)

    return sig, codegen


__all__ = ["atomic_cas"]
