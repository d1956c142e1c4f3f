"""What goes into a run and comes out of it: the entry function, its signature in messages,
user inputs bound to run-time values, results copied back to the host, random inputs.

NumPy arrays become host memory (copied, so a run never changes its inputs, unless
host code only reads them) or, for an argument whose memory space is a device, a buffer
on that device filled by a copy (the host side of a driver); Python scalars become
run-time values of the argument's type. Wrong count, shape, dtype or type is an error
naming the argument and the signature. Results are copied to host NumPy values
(memrefs as arrays, scalars as NumPy scalars).
"""

from __future__ import annotations

import math
import sys
import weakref
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import BFloat16Type, FunctionType, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, SSAValue

from ...analysis.dtypes import numpy_dtype
from ...diagnostics import DevplanError, check_argument, describe_value, error_at
from ...dialects import device as dev
from ...dialects.kernel import lookup_kernel
from ...dialects.kernel_arguments import stored_arguments
from ...dialects.virtual_device import DeviceAttr, memory_space_of
from ...system.description import System
from ..device_api import Buffer
from ..host.values import element_type, from_python, to_numpy_scalar
from .messages import placed_at
from .state import Execution, as_memref_type, device_of, host_capacity, system_for


class ArgumentFacts(NamedTuple):
    """What binding an input to one argument of an entry function checks and does, found
    once per function (each run then compares the input's dtype and shape only)."""

    name: str
    """The argument in messages (`argument_name`)."""
    memref: MemRefType[Attribute] | None
    """Its type when it is a memref (an array is expected), else None (a scalar)."""
    dtype: np.dtype[Any] | None
    """The dtype an array input must have (None when the executor has none: binding
    then raises the error naming the argument)."""
    shape: tuple[int, ...]
    """The memref's sizes (-1: dynamic)."""
    space: DeviceAttr | None
    """The memref's memory space (None: host memory)."""
    read_only: bool
    """Whether host code only reads it (`only_read_arguments`): a read-only view of a
    C-contiguous input serves."""


EntryFacts = tuple[ArgumentFacts, ...]
"""The `ArgumentFacts` of each argument of an entry function."""


def entry_facts(function: func.FuncOp) -> EntryFacts:
    """The `EntryFacts` of the entry `function`."""
    facts: list[ArgumentFacts] = []
    read_only = only_read_arguments(function)
    types = function.function_type.inputs.data
    for i in range(len(types)):
        memref_type = as_memref_type(types[i]) if isinstance(types[i], MemRefType) else None
        dtype, shape, space = None, (), None
        if memref_type is not None:
            with suppress(DevplanError):  # (raised again, naming the argument, at binding)
                dtype = numpy_dtype(element_type(memref_type))
            shape = tuple(d.data for d in memref_type.shape)
            space = memory_space_of(memref_type)
        name = argument_name(function, i)
        facts.append(ArgumentFacts(name, memref_type, dtype, shape, space, read_only[i]))
    return tuple(facts)


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    """The entry function `@entry` of a program; an error listing the functions if absent."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for op in functions:
        if op.sym_name.data == entry:
            if not op.body.blocks:
                raise error_at(op, f"entry function @{entry} is a declaration without a body")
            return op
    known = ", ".join(f"@{op.sym_name.data}" for op in functions) or "none"
    raise DevplanError(f"error: no function @{entry} to run (functions: {known})")


_SOURCE_TYPES: weakref.WeakKeyDictionary[func.FuncOp, FunctionType] = weakref.WeakKeyDictionary()
"""The level-1 type of each function lowered from level 1 (`record_source_type`), so
that messages about inputs speak of the tensors the user wrote."""


def record_source_type(function: func.FuncOp, written: FunctionType) -> None:
    """Remember that `function` was lowered from one of type `written` (level 1)."""
    _SOURCE_TYPES[function] = written


def source_type(function: func.FuncOp) -> FunctionType:
    """The type the user wrote: the level-1 one for a function lowered from level 1."""
    written = _SOURCE_TYPES.get(function)
    return written if written is not None else function.function_type


def signature(function: func.FuncOp) -> str:
    """`@main(memref<4xf32>, f32) -> memref<4xf32>`, for messages (the level-1 types of
    a function lowered from level 1: `@main(tensor<4xf32>) -> tensor<4xf32>`)."""
    inputs = ", ".join(str(t) for t in source_type(function).inputs)
    outputs = [str(t) for t in source_type(function).outputs]
    result = (
        ""
        if not outputs
        else f" -> {outputs[0] if len(outputs) == 1 else '(' + ', '.join(outputs) + ')'}"
    )
    return f"@{function.sym_name.data}({inputs}){result}"


def argument_name(function: func.FuncOp, i: int) -> str:
    arg = function.body.block.args[i]
    hint = f" %{arg.name_hint}" if arg.name_hint else ""
    return f"argument {i}{hint} of {signature(function)}"


def bind_inputs(
    ex: Execution, function: func.FuncOp, inputs: Sequence[object], facts: EntryFacts
) -> tuple[list[Any], list[Buffer]]:
    """The run-time values of `inputs` for the entry `function`, and the device buffers
    made for them (the driver frees them at the end of the run)."""
    if len(inputs) != len(facts):
        raise DevplanError(
            f"error: {signature(function)} takes {len(facts)} argument(s), got {len(inputs)}"
        )
    args: list[Any] = []
    owned: list[Buffer] = []
    for i, (fact, value) in enumerate(zip(facts, inputs, strict=True)):
        what = fact.name
        type_ = fact.memref
        if type_ is not None:
            if (
                type(value) is np.ndarray
                and value.dtype == fact.dtype
                and value.ndim == len(fact.shape)
                and all(d < 0 or d == n for d, n in zip(fact.shape, value.shape, strict=True))
            ):
                array: np.ndarray[Any, Any] = value  # the common case, checked cheaply
            else:
                written = source_type(function).inputs.data[i]
                array = _checked_array(type_, value, what, written)
            space = fact.space
            if space is None and fact.read_only and array.flags.c_contiguous:
                # Host code only reads it: a read-only view of the caller's array serves
                # (a write through it would raise, never reach the caller's data).
                view = array.view()
                view.flags.writeable = False
                args.append(view)
            elif space is None:
                # A copy: host code may write its arguments, the caller's arrays stay.
                args.append(np.array(array, order="C", copy=True))
            else:
                buffer = _upload(ex, function, space, array, what)
                owned.append(buffer)
                args.append(buffer)
        else:
            args.append(from_python(function.function_type.inputs.data[i], value, what))
    return args, owned


def only_read_arguments(function: func.FuncOp) -> tuple[bool, ...]:
    """Per argument of `function`, whether host code only reads it in place: every use
    is a `memref.load` or `memref.dim` of it, a device copy from it (to other memory), or
    an argument of a launch whose kernel stores to none of the parameters it is passed
    as. Anything else (a store, a call, a launch writing it, a cast, a return, ...) may
    write it or let it escape, so such an argument is bound to a copy of the caller's
    array."""

    def only_read(arg: SSAValue) -> bool:
        for use in arg.uses:
            user = use.operation
            if isinstance(user, memref.LoadOp | memref.DimOp) and use.index == 0:
                continue
            copy = isinstance(user, dev.CopyOp | dev.CopyAsyncOp)
            if copy and user.source is arg and user.destination is not arg:
                continue
            if isinstance(user, dev.LaunchOp) and _launch_only_reads(user, arg):
                continue
            return False
        return True

    return tuple(only_read(arg) for arg in function.body.block.args)


def _launch_only_reads(launch: dev.LaunchOp, arg: SSAValue) -> bool:
    """Whether `launch` passes `arg` only as kernel parameters the kernel never stores to
    (False when the kernel cannot be found: the launch fails on its own then)."""
    kernel = lookup_kernel(launch, launch.kernel)
    if kernel is None:
        return False
    positions = [i for i, a in enumerate(launch.args) if a is arg]
    stored = stored_arguments(kernel)
    return bool(positions) and not any(i in stored for i in positions)


def _checked_array(
    type_: Attribute, value: object, what: str, written: Attribute
) -> np.ndarray[Any, Any]:
    """`value` as an input of memref type `type_` (`written` in messages: the type the
    user wrote, a tensor at level 1)."""
    if not isinstance(value, np.ndarray):
        raise DevplanError(
            f"error: {what} is {written} and needs a NumPy array, got {type(value).__name__}"
        )
    array: np.ndarray[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
    memref_type = as_memref_type(type_)
    expected = input_dtype(element_type(memref_type), written, what)
    shape = [d.data for d in memref_type.shape]
    # `np.ma` imports numpy.ma, which costs start-up time; unimported, nothing is masked.
    if "numpy.ma" in sys.modules and isinstance(array, np.ma.MaskedArray):
        raise DevplanError(
            f"error: {what} is {written} and got a masked array, whose mask devplan would "
            "ignore; pass the values to use (.filled(value), or .data to use the masked ones)"
        )
    if (
        array.dtype == expected
        and array.ndim == len(shape)
        and all(d < 0 or d == n for d, n in zip(shape, array.shape, strict=False))
    ):
        return array  # (the messages below are written only when needed: a run's overhead)
    got = f"{'x'.join(map(str, array.shape)) or 'a 0-d array'} of {array.dtype}"
    if array.dtype != expected and isinstance(element_type(memref_type), BFloat16Type):
        raise DevplanError(
            f"error: {what} is {written} and needs the bit patterns of its bf16 values as "
            f"uint16 (NumPy has no bf16), got {got}; .astype(np.uint16) would give integer "
            "values, not bits: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) "
            "gives the bits of x rounded toward zero"
        )
    if array.dtype != expected:
        raise DevplanError(
            f"error: {what} is {written} and needs dtype {expected}, got {got} "
            "(convert it with .astype)"
        )
    shape_text = "x".join("?" if d < 0 else str(d) for d in shape)
    raise DevplanError(f"error: {what} is {written} and needs shape {shape_text}, got {got}")


def input_dtype(element: Attribute, type_: Attribute, what: str) -> np.dtype[Any]:
    """The NumPy dtype of `element`, the element (or scalar) type of the argument `what`
    of type `type_`; an error naming the argument when the executor has none."""
    try:
        return numpy_dtype(element)
    except DevplanError:
        raise DevplanError(
            f"error: {what} has type {type_}, which the executor cannot pass in"
        ) from None


def _is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


def _is_shaped(type_: Attribute) -> bool:
    """A memref or (in a level-1 program) a tensor: an argument given as an array."""
    return isinstance(type_, MemRefType | TensorType)


def _upload(
    ex: Execution, function: func.FuncOp, space: DeviceAttr, array: np.ndarray[Any, Any], what: str
) -> Buffer:
    try:
        device = device_of(space, function)
        api = ex.api(device, function)
        buffer = api.alloc_data_space(device, array.shape, array.dtype, space.scope, label=what)
        api.copy_data_from_to(np.ascontiguousarray(array), buffer, label=f"input: {what}")
    except DevplanError as e:
        raise placed_at(function, e) from None
    return buffer


def collect_outputs(
    ex: Execution, function: func.FuncOp, results: Sequence[Any]
) -> tuple[list[Any], list[Buffer]]:
    """Host NumPy values of the entry `function`'s `results`, and the device buffers it
    returned (the driver frees them at the end of the run)."""
    outputs: list[Any] = []
    returned: list[Buffer] = []
    ret = function.body.block.last_op
    assert ret is not None
    for i, (type_, value) in enumerate(
        zip(function.function_type.outputs.data, results, strict=True)
    ):
        if isinstance(value, Buffer):
            host = np.empty(value.shape, value.dtype)
            try:
                ex.api(ex.performer(value, host), ret).copy_data_from_to(
                    value, host, label=f"result of @{function.sym_name.data}"
                )
            except DevplanError as e:
                raise placed_at(ret, e) from None
            outputs.append(host)
            if value not in returned:
                returned.append(value)
        elif _is_array(value):
            freed = ex.freed_host.get(id(value))
            if freed is not None:
                raise error_at(
                    ret, f"'func.return' returns host memory freed by memref.dealloc at {freed[1]}"
                )
            try:
                ex.runtime.scheduler.check_host_access(value, "a returned host array")
            except DevplanError as e:
                raise placed_at(ret, e) from None
            # Every host array of a run is the run's own (inputs are copied in).
            outputs.append(value)
        else:
            try:
                outputs.append(to_numpy_scalar(type_, value))
            except DevplanError:
                raise error_at(
                    ret,
                    f"'func.return' result {i} of @{function.sym_name.data} is {type_}, which "
                    "the executor cannot return (it has no NumPy type for it)",
                ) from None
    return outputs, returned


def _next_size(sizes: list[int]) -> int:
    """The size of the next `?` dimension: the next of `sizes`, the last one repeating."""
    return sizes.pop(0) if len(sizes) > 1 else sizes[0]


def random_inputs(
    module: ModuleOp,
    entry: str = "main",
    seed: int = 0,
    given: Sequence[object] = (),
    system: System | str | Path | None = None,
    dynamic_sizes: Sequence[int] = (),
) -> list[object]:
    """Inputs for `@entry` made from its argument types (those after `given`).

    Float memrefs (and tensors, in a level-1 program) get standard-normal values
    (bf16 as the bit patterns of those values rounded to bf16),
    integer memrefs integers in [0, 100), `i1` memrefs random booleans; float scalars a
    standard-normal value, integer and index scalars an integer in [1, 16], `i1` scalars
    a random boolean. A dynamic (`?`) dimension takes its size from `dynamic_sizes`, in
    the order the `?`s appear in the arguments, the last size repeating (`[4]` makes
    every `?` 4; `[3, 5]` makes the first 3 and the rest 5); with none given, an argument
    of dynamic shape is an error (pass it with `--arg`). A memref larger than the memory
    it lives in under `system` (see `system_for`) is out of device (or host) memory, said
    before anything is allocated.
    """
    name = "random_inputs"
    check_argument(name, "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)")
    check_argument(name, "entry", entry, str, 'a function name such as "main"')
    check_argument(name, "given", given, (list, tuple), "a list of NumPy arrays and scalars")
    check_argument(name, "dynamic_sizes", dynamic_sizes, (list, tuple), "a list of sizes")
    for size in dynamic_sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise DevplanError(
                f"error: {name}: each of dynamic_sizes must be a whole number 0 or more, "
                f"got {describe_value(size)}"
            )
    dynamic = list(dynamic_sizes)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
        # None would draw different inputs on every call; True would be the seed 1.
        raise DevplanError(
            f"error: {name}: seed must be a whole number 0 or more, got {describe_value(seed)}"
        )
    function = find_entry(module, entry)
    systems: list[System] = []
    rng = np.random.default_rng(seed)
    inputs: list[object] = list(given)
    types = function.function_type.inputs.data
    if len(given) > len(types):
        raise DevplanError(
            f"error: {signature(function)} takes {len(types)} argument(s), got {len(given)}"
        )
    for i in range(len(given), len(types)):
        type_ = types[i]
        what = argument_name(function, i)
        if _is_shaped(type_):
            memref_type = as_memref_type(type_)
            shape = [d.data for d in memref_type.shape]
            if any(d < 0 for d in shape) and not dynamic:
                written = source_type(function).inputs.data[i]
                raise DevplanError(
                    f"error: {what} has a dynamic shape ({written}); give the sizes of its `?` "
                    "dimensions with --dynamic-size N (or pass it with --arg FILE.npy)"
                )
            shape = [_next_size(dynamic) if d < 0 else d for d in shape]
            dtype = input_dtype(element_type(memref_type), type_, what)
            if not systems:
                systems.append(system_for(module, system))
            nbytes = math.prod(shape) * dtype.itemsize
            # A tensor argument (level 1) is given as host memory, as every input is.
            space = memory_space_of(memref_type) if isinstance(type_, MemRefType) else None
            _check_fits(systems[0], space, nbytes, what, function)
            try:
                inputs.append(_random_array(rng, tuple(shape), dtype, element_type(memref_type)))
            except MemoryError:
                raise DevplanError(
                    f"error: {what} needs {nbytes} bytes: out of host memory"
                ) from None
        else:
            dtype = input_dtype(type_, type_, what)
            if dtype.kind == "f" or isinstance(type_, BFloat16Type):
                inputs.append(float(rng.standard_normal()))
            elif dtype.kind == "b":
                inputs.append(bool(rng.integers(0, 2)))
            else:
                inputs.append(int(rng.integers(1, 17)))
    return inputs


def _check_fits(
    system: System, space: DeviceAttr | None, nbytes: int, what: str, function: func.FuncOp
) -> None:
    """An error when `nbytes` exceed the capacity of the memory `space` names, or at
    `function` when the system has no such device."""
    if space is None:
        capacity = host_capacity(system)
        if nbytes > capacity:
            raise DevplanError(
                f"error: {what} needs {nbytes} bytes: out of host memory "
                f"(the host holds {capacity} bytes)"
            )
        return
    try:
        device = system.device_for(space)
    except DevplanError as e:
        reason = str(e).removeprefix("error: ")
        raise error_at(function, f"{what} lives in {space}: {reason}") from None
    scope = space.scope or "global"
    capacity = device.scopes.get(scope)
    if capacity is not None and nbytes > capacity:
        raise DevplanError(
            f"error: {what} needs {nbytes} bytes: out of device memory "
            f"({device.name}/{scope} holds {capacity} bytes in system {system.name})"
        )


def _random_array(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any], element: Attribute
) -> np.ndarray[Any, Any]:
    if isinstance(element, BFloat16Type):  # held as its bit pattern: round, keep the top half
        from .. import semantics  # here, not at the top: it loads Numba

        values = semantics.narrow_ufuncs("bf16")[0](rng.standard_normal(shape))
        return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)
