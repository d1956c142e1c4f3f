"""The oracle: a level-1 program evaluated directly on the host with NumPy.

```python
from devplan.reference.program import evaluate
outputs = evaluate(module, [a, b], entry="main")
```

`evaluate` ignores placement (`vdev.on_device` and `vdev.device_copy` are the identity,
`vdev.device` attributes are not read) and runs each op of the level-1 set
the way MLIR defines it, one NumPy operation per op: elementwise `arith`/`math` on
tensors and scalars, `linalg.fill`, `tensor.empty` (zeros, as every DeviceAPI
allocates), `tensor.cast`, the data-movement ops of `reference/tensor.py`
(`extract_slice`, `insert_slice`, `concat`, `collapse_shape`, `expand_shape`, `dim`,
`extract`), `arith.constant`, `func.call` (and calls of MLIR's runner
printers, `printMemrefF32` of a tensor cast to `tensor<*xf32>` & co., which print what
MLIR's runner prints: `runner_utils`), `scf.if`, `scf.for`; and, from
`reference/linalg.py`, `linalg.generic` and `linalg.reduce` over their iteration
spaces (their bodies' scalar ops by the rules here, on whole grids of values) and the
named linalg ops (`matmul` with its operands cast to the result's type, convolutions,
poolings, elementwise ops, `transpose`, `broadcast`) from MLIR's definitions. It
shares no code with the kernel backends, so it checks them: `devplan.execute` after
`default-pipeline` must give the same results (bitwise for integers, close for floats,
whose order of summation differs in a matmul).

bf16 values are held in f64 and each result rounded once to bf16 (ties to even, by
the oracle's own rounding); bf16 arrays come in and go out as their bit patterns
(uint16), as `devplan.execute` takes and gives them.

Integers are two's complement of their width (`index` is 64 bits) and wrap; a division
by zero, a shift by the width or more, and a float-to-integer conversion of NaN or an
out-of-range value are errors (`ReferenceError`, placed at the op), as in the kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, bufferization, func, math, scf, tensor
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.linalg.ops import FillOp, GenericOp, ReduceOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ..analysis.dtypes import check_scalar_input, numpy_dtype
from ..diagnostics import DevplanError, check_argument, error_at
from ..dialects.vdev import DeviceCopyOp, OnDeviceOp
from ..dispatch import OpTable
from ..upstream.arith import IndexCastUIOp, RemFOp
from . import linalg, runner_utils
from . import tensor as tensor_rules
from .tensor import TENSOR_RULES

Value = Any
"""A NumPy array (tensors) or a NumPy scalar (scalars) of the value's type."""


class ReferenceError(DevplanError):
    """A program the oracle cannot evaluate, or a fault while evaluating it."""


def dtype_of(type_: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of a scalar type or of a tensor's elements."""
    if isinstance(type_, TensorType):
        type_ = cast(TensorType[Attribute], type_).element_type
    if isinstance(type_, IndexType):
        return np.dtype(np.int64)
    if isinstance(type_, IntegerType):
        width: int = type_.bitwidth
        table = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
        if width in table:
            return np.dtype(table[width])
    if isinstance(type_, Float16Type):
        return np.dtype(np.float16)
    if isinstance(type_, Float32Type):
        return np.dtype(np.float32)
    if isinstance(type_, Float64Type | BFloat16Type):  # bf16: its values, in f64
        return np.dtype(np.float64)
    raise ReferenceError(f"error: the oracle has no NumPy type for {type_}")


def _is_bf16(type_: Attribute) -> bool:
    element = (
        cast(TensorType[Attribute], type_).element_type if isinstance(type_, TensorType) else type_
    )
    return isinstance(element, BFloat16Type)


_BF16_MAX = (2 - 2.0**-7) * 2.0**127


def _round_bf16(x: Value) -> Value:
    """`x` (f64) rounded once to the nearest bf16, ties to even (8 significant bits,
    f32's exponent range; subnormals below 2^-126 in steps of 2^-133)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        e = np.maximum(e, -125)
        rounded = np.ldexp(np.rint(np.ldexp(x, 8 - e)), e - 8)
        overflow = np.abs(rounded) > _BF16_MAX
        return cast(Value, np.where(overflow, np.copysign(np.inf, x), rounded))


def _bf16_values(bits: np.ndarray[Any, Any]) -> Value:
    """The values (f64) of bf16 bit patterns, as memory and `devplan.execute` hold bf16."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _bf16_bits(values: Value) -> np.ndarray[Any, Any]:
    """The bit patterns of bf16 values (exact in f32, whose top half they are)."""
    return (np.asarray(values, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def _unsigned(x: Value) -> Value:
    dtype = np.asarray(x).dtype
    if dtype == np.bool_:
        return x
    return np.asarray(x).view(np.dtype(f"u{dtype.itemsize}"))


def _signed(x: Value, dtype: np.dtype[Any]) -> Value:
    return np.asarray(x).astype(dtype) if dtype == np.bool_ else np.asarray(x).view(dtype)


def _bits(dtype: np.dtype[Any]) -> int:
    """The width of an integer type held as `dtype` (`i1` is held as NumPy's bool)."""
    return 1 if dtype == np.bool_ else dtype.itemsize * 8


def _signed_value(x: Value) -> Value:
    """`x` as the signed integers it holds: an `i1` true is -1 in two's complement, not
    NumPy's 1 (so `maxsi(true, false)` is false, `extsi` of true is -1)."""
    array = np.asarray(x)
    return np.where(array, -1, 0).astype(np.int8) if array.dtype == np.bool_ else array


def _integer(fn: Callable[..., Value]) -> Callable[..., Value]:
    """`fn` on integers of any width; on `i1`, on their signed values, wrapped to one bit."""

    def apply(*args: Value) -> Value:
        if np.asarray(args[0]).dtype != np.bool_:
            return fn(*args)
        return np.asarray(fn(*(_signed_value(a) for a in args))) & 1

    return apply


class _Evaluator:
    def __init__(self, module: ModuleOp) -> None:
        self.functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}

    def call(self, name: str, args: Sequence[Value], at: Operation | None) -> list[Value]:
        function = self.functions.get(name)
        printer = name in runner_utils.MEMREF_PRINTERS or name in runner_utils.SCALAR_PRINTERS
        if printer and isinstance(at, func.CallOp) and function and not function.body.blocks:
            _print(at, name, args)
            return []
        if function is None or not function.body.blocks:
            known = ", ".join(f"@{n}" for n in self.functions) or "none"
            message = f"no function @{name} with a body to evaluate (functions: {known})"
            raise error_at(at, message) if at is not None else ReferenceError(f"error: {message}")
        block = function.body.block
        env: dict[SSAValue, Value] = dict(zip(block.args, args, strict=True))
        return self.block(block, env)

    def block(self, block: Block, env: dict[SSAValue, Value]) -> list[Value]:
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp | tensor.YieldOp):
                return [env[v] for v in op.operands]
            results = self.op(op, env)
            for result, value in zip(op.results, results, strict=True):
                env[result] = value
        return []

    def op(self, op: Operation, env: dict[SSAValue, Value]) -> list[Value]:
        args = [env[v] for v in op.operands]
        if isinstance(op, OnDeviceOp | DeviceCopyOp):
            return [args[0]]
        if isinstance(op, func.CallOp):
            return self.call(op.callee.string_value(), args, op)
        if isinstance(op, scf.IfOp):
            region = op.true_region if bool(args[0]) else op.false_region
            return self.block(region.block, env) if region.blocks else []
        if isinstance(op, scf.ForOp):
            return self.loop(op, env)
        if isinstance(op, tensor.PadOp):
            return [self.pad(op, args, env)]
        if isinstance(op, GenericOp | ReduceOp):
            structured = (
                linalg.evaluate_generic_op
                if isinstance(op, GenericOp)
                else linalg.evaluate_reduce_op
            )
            with np.errstate(all="ignore"):
                outputs = structured(op, args, env, self.op)  # pyright: ignore[reportArgumentType]
            return [_cast_to(r.type, v) for r, v in zip(op.results, outputs, strict=True)]
        rule = _RULES.lookup(op)
        if rule is None:
            raise error_at(op, f"'{op.name}' is not in the level-1 op set the oracle evaluates")
        if op.name.startswith(("arith.", "math.")):
            _check_same_shapes(op, args)
        with np.errstate(all="ignore"):
            return [rule(op, args)]

    def pad(self, op: tensor.PadOp, args: list[Value], env: dict[SSAValue, Value]) -> Value:
        """`tensor.pad`: its body gives each padded element from its index (evaluated once
        when it does not read the index)."""
        block = op.region.block
        if not block.ops or not isinstance(block.last_op, tensor.YieldOp):
            raise error_at(op, "'tensor.pad' needs a body ending in 'tensor.yield'")
        indexed = any(arg.uses for arg in block.args)
        once: list[Value] = []

        def padding(index: tuple[int, ...]) -> Value:
            if once and not indexed:
                return once[0]
            inner = dict(env)
            inner.update({a: np.int64(i) for a, i in zip(block.args, index, strict=True)})
            once[:] = self.block(block, inner)
            return once[0]

        return tensor_rules.pad(op, args, padding)

    def loop(self, op: scf.ForOp, env: dict[SSAValue, Value]) -> list[Value]:
        lb, ub, step = (int(env[v]) for v in (op.lb, op.ub, op.step))
        if step <= 0:
            raise error_at(op, f"'scf.for' step must be positive, got {step}")
        carried = [env[v] for v in op.iter_args]
        block = op.body.block
        iv_type = dtype_of(block.args[0].type)
        for i in range(lb, ub, step):
            env[block.args[0]] = iv_type.type(i)
            for arg, value in zip(block.args[1:], carried, strict=True):
                env[arg] = value
            carried = self.block(block, env)
        return carried


_RUNNER_ELEMENTS = {
    "printMemrefF16": "f16", "printMemrefF32": "f32", "printMemrefF64": "f64",
    "printMemrefI32": "i32", "printMemrefI64": "i64", "printF32": "f32", "printF64": "f64",
    "printI64": "i64", "printU64": "i64",
}  # fmt: skip
"""The element (or scalar) type each of MLIR's runner printers takes."""


def _print(op: func.CallOp, name: str, args: Sequence[Value]) -> None:
    """A call of one of MLIR's runner printers: check what it is given, print its text."""
    types = [a.type for a in op.arguments]
    wanted = _RUNNER_ELEMENTS.get(name)
    if name in runner_utils.MEMREF_PRINTERS:
        given = types[0] if len(types) == 1 else None
        if not isinstance(given, TensorType | UnrankedTensorType) or op.res:
            raise error_at(op, f"@{name} takes one tensor (cast to tensor<*x{wanted}>)")
        element = str(cast(TensorType[Attribute], given).element_type)
        if element != wanted:
            raise error_at(op, f"@{name} prints {wanted} elements, not {element}")
        runner_utils.write(runner_utils.memref_text(np.asarray(args[0])) + "\n")
        return
    if [str(t) for t in types] != ([wanted] if wanted else []) or op.res:
        raise error_at(op, f"@{name} takes ({wanted or ''}) and returns nothing")
    runner_utils.write(runner_utils.scalar_text(name, args))


Rule = Callable[[Operation, list[Value]], Value]
_RULES = OpTable[Rule]("the oracle")
"""Op class -> the rule computing the op's one result from its operands' values."""


def _check_same_shapes(op: Operation, args: list[Value]) -> None:
    """Elementwise operands of dynamic shape agree at run time (NumPy would broadcast a
    size-1 dimension, or fail with an unlocated error)."""
    shaped: list[tuple[int, tuple[int, ...]]] = [
        (i, cast(np.ndarray[Any, Any], a).shape)
        for i, a in enumerate(args)
        if isinstance(a, np.ndarray)
    ]
    for i, shape in shaped[1:]:
        first, expected = shaped[0]
        if shape != expected:
            raise error_at(
                op,
                f"'{op.name}' on tensors of different shapes: operand {i} is "
                f"{'x'.join(map(str, shape))}, operand {first} {'x'.join(map(str, expected))}",
            )


def _result_dtype(op: Operation) -> np.dtype[Any]:
    return dtype_of(op.results[0].type)


def _cast(op: Operation, value: Value) -> Value:
    """`value` as the op's result type: an array for a tensor, a scalar otherwise (a bf16
    result rounded once, from f64, to bf16)."""
    return _cast_to(op.results[0].type, value)


def _cast_to(type_: Attribute, value: Value) -> Value:
    dtype = dtype_of(type_)
    if _is_bf16(type_):
        value = _round_bf16(value)
    if isinstance(type_, TensorType):
        return np.asarray(value).astype(dtype, copy=False)
    return dtype.type(np.asarray(value).astype(dtype))


@_RULES.impl(arith.ConstantOp)
def _constant(op: Operation, args: list[Value]) -> Value:
    value = cast(arith.ConstantOp, op).value
    dtype = _result_dtype(op)
    if isinstance(value, DenseIntOrFPElementsAttr):
        shape = tuple(cast(TensorType[Attribute], op.results[0].type).get_shape())
        values = list(value.get_values())
        if len(values) == 1:
            return _cast(op, np.full(shape, values[0], dtype))
        return _cast(op, np.array(values, dtype).reshape(shape))
    if isinstance(value, IntegerAttr | FloatAttr):
        raw = cast(Any, value).value.data
        if dtype.kind in "iu":
            return np.array(int(raw)).astype(np.int64).astype(dtype)[()]
        return _cast(op, dtype.type(raw))
    raise error_at(op, f"'arith.constant' of {value} is not evaluated by the oracle")


@_RULES.impl(tensor.CastOp)
def _tensor_cast(op: Operation, args: list[Value]) -> Value:
    """The same values under another type: each static size of the result must be the
    operand's size (MLIR leaves a mismatch undefined; the oracle reports it)."""
    target = op.results[0].type
    shape = np.shape(args[0])
    if isinstance(target, TensorType):
        static = tuple(cast(TensorType[Attribute], target).get_shape())
        if len(static) != len(shape) or any(
            s >= 0 and s != n for s, n in zip(static, shape, strict=True)
        ):
            sizes = "x".join(map(str, shape))
            raise error_at(op, f"'tensor.cast' of a {sizes} tensor to {target}")
    return args[0]


@_RULES.impl(tensor.EmptyOp)
def _empty(op: Operation, args: list[Value]) -> Value:
    type_ = cast(TensorType[Attribute], op.results[0].type)
    sizes = iter(int(a) for a in args)
    shape = [next(sizes) if d < 0 else d for d in type_.get_shape()]
    return np.zeros(shape, dtype_of(type_))


@_RULES.impl(bufferization.AllocTensorOp)
def _alloc_tensor(op: Operation, args: list[Value]) -> Value:
    """`tensor.empty`'s contents (zeros here), or a copy of its `copy` operand."""
    alloc = cast(bufferization.AllocTensorOp, op)
    if alloc.copy is not None:
        return np.array(args[len(alloc.dynamic_sizes)])
    type_ = cast(TensorType[Attribute], op.results[0].type)
    sizes = iter(int(a) for a in args)
    shape = [next(sizes) if d < 0 else d for d in type_.get_shape()]
    return np.zeros(shape, dtype_of(type_))


@_RULES.impl(FillOp)
def _fill(op: Operation, args: list[Value]) -> Value:
    # MLIR casts the value to the output's element type (a bf16 output rounds it).
    return _cast(op, np.full(np.shape(args[1]), args[0]))


def _named(rule: Callable[[Operation, list[Value]], Value]) -> Rule:
    return lambda op, args: _cast(op, rule(op, args))


for _op_class, _rule in linalg.NAMED_RULES.items():
    _RULES.register(_op_class, _named(_rule))
for _op_class, _rule in TENSOR_RULES.items():
    _RULES.register(_op_class, _rule)


def _elementwise(fn: Callable[..., Value]) -> Rule:
    return lambda op, args: _cast(op, fn(*args))


def _rsqrt(x: Value) -> Value:
    return np.reciprocal(np.sqrt(x))


def _fma(x: Value, y: Value, z: Value) -> Value:
    return x * y + z


_ELEMENTWISE: dict[type[Operation], Callable[..., Value]] = {
    arith.AddfOp: np.add, arith.SubfOp: np.subtract, arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide, RemFOp: np.fmod,
    arith.MaximumfOp: np.maximum, arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax, arith.MinnumfOp: np.fmin, math.PowFOp: np.power,
    math.Atan2Op: np.arctan2, math.CopySignOp: np.copysign, arith.NegfOp: np.negative,
    math.ExpOp: np.exp, math.Exp2Op: np.exp2, math.ExpM1Op: np.expm1, math.LogOp: np.log,
    math.Log2Op: np.log2, math.Log10Op: np.log10, math.Log1pOp: np.log1p,
    math.SqrtOp: np.sqrt, math.RsqrtOp: _rsqrt,
    math.TanhOp: np.tanh, math.SinOp: np.sin, math.CosOp: np.cos, math.TanOp: np.tan,
    math.AtanOp: np.arctan, math.AbsFOp: np.abs, math.FloorOp: np.floor,
    math.CeilOp: np.ceil, math.TruncOp: np.trunc,
    math.FmaOp: _fma,
    arith.AddiOp: _integer(np.add), arith.SubiOp: _integer(np.subtract),
    arith.MuliOp: _integer(np.multiply), arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or, arith.XOrIOp: np.bitwise_xor,
    arith.MaxSIOp: _integer(np.maximum), arith.MinSIOp: _integer(np.minimum),
    math.AbsIOp: _integer(np.abs),
}  # fmt: skip
for _op_class, _fn in _ELEMENTWISE.items():
    _RULES.register(_op_class, _elementwise(_fn))


@_RULES.impl(arith.MaxUIOp, arith.MinUIOp)
def _unsigned_minmax(op: Operation, args: list[Value]) -> Value:
    x, y = (_unsigned(a) for a in args)
    pick = np.maximum if op.name == "arith.maxui" else np.minimum
    return _cast(op, _signed(pick(x, y), _result_dtype(op)))


@_RULES.impl(
    arith.DivSIOp, arith.RemSIOp, arith.DivUIOp, arith.RemUIOp, arith.CeilDivSIOp,
    arith.FloorDivSIOp, arith.CeilDivUIOp,
)  # fmt: skip
def _divide(op: Operation, args: list[Value]) -> Value:
    x, y = (np.asarray(a) for a in args)
    if np.any(y == 0):
        raise error_at(op, f"'{op.name}' divides by zero")
    dtype = _result_dtype(op)
    if op.name in ("arith.divui", "arith.remui", "arith.ceildivui"):
        ux, uy = _unsigned(x).astype(object), _unsigned(y).astype(object)
        if op.name == "arith.ceildivui":
            result = -(-ux // uy)
        else:
            result = ux // uy if op.name == "arith.divui" else ux % uy
        return _cast(op, _wrap(result, dtype))
    bits = _bits(dtype)
    signed_x, signed_y = _signed_value(x), _signed_value(y)
    if op.name != "arith.remsi" and np.any((signed_x == -(1 << (bits - 1))) & (signed_y == -1)):
        raise error_at(
            op, f"'{op.name}' divides the minimum i{bits} value by -1: the quotient overflows"
        )
    wide_x: np.ndarray[Any, Any] = np.asarray(signed_x).astype(object)
    wide_y: np.ndarray[Any, Any] = np.asarray(signed_y).astype(object)
    floor = np.floor_divide(wide_x, wide_y)
    exact = floor * wide_y == wide_x
    if op.name == "arith.floordivsi":
        q = floor
    elif op.name == "arith.ceildivsi":
        q = np.where(exact, floor, floor + 1)
    else:  # truncation toward zero
        q = np.where(exact | ((wide_x < 0) == (wide_y < 0)), floor, floor + 1)
    result = wide_x - q * wide_y if op.name == "arith.remsi" else q
    return _cast(op, _wrap(result, dtype))


def _wrap(values: Value, dtype: np.dtype[Any]) -> Value:
    """Python ints (an object array) reduced to `dtype`'s width, two's complement."""
    bits = _bits(dtype)
    half = 1 << (bits - 1)
    # A 0-d object array's arithmetic gives a Python int: asarray keeps scalars arrays.
    wrapped = np.asarray((np.asarray(values, dtype=object) + half) % (half << 1) - half)
    return np.asarray(wrapped.astype(np.int64)).astype(dtype)


@_RULES.impl(arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp)
def _shift(op: Operation, args: list[Value]) -> Value:
    x, y = (np.asarray(a) for a in args)
    dtype = _result_dtype(op)
    bits = _bits(dtype)
    if np.any(_unsigned(y) >= bits):
        raise error_at(
            op, f"'{op.name}' shifts an i{bits} by a negative amount or by {bits} bits or more"
        )
    if op.name == "arith.shli":
        return _cast(op, _signed(np.left_shift(_unsigned(x), _unsigned(y)), dtype))
    if op.name == "arith.shrui":
        return _cast(op, _signed(np.right_shift(_unsigned(x), _unsigned(y)), dtype))
    return _cast(op, np.right_shift(_signed_value(x), _unsigned(y)))


_CMPI: dict[str, Callable[[Value, Value], Value]] = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal,
}  # fmt: skip
_CMPI_NAMES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF_NAMES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


@_RULES.impl(arith.CmpiOp)
def _cmpi(op: Operation, args: list[Value]) -> Value:
    predicate = _CMPI_NAMES[cast(arith.CmpiOp, op).predicate.value.data]
    x, y = args
    if predicate.startswith("u"):
        x, y = _unsigned(x), _unsigned(y)
        predicate = {"ult": "slt", "ule": "sle", "ugt": "sgt", "uge": "sge"}[predicate]
    else:
        x, y = _signed_value(x), _signed_value(y)
    return _cast(op, _CMPI[predicate](x, y))


@_RULES.impl(arith.CmpfOp)
def _cmpf(op: Operation, args: list[Value]) -> Value:
    predicate = _CMPF_NAMES[cast(arith.CmpfOp, op).predicate.value.data]
    x, y = (np.asarray(a) for a in args)
    unordered = np.isnan(x) | np.isnan(y)
    compare = {
        "eq": np.equal(x, y), "gt": np.greater(x, y), "ge": np.greater_equal(x, y),
        "lt": np.less(x, y), "le": np.less_equal(x, y), "ne": np.not_equal(x, y),
    }  # fmt: skip
    if predicate in ("false", "true"):
        result = np.full(np.broadcast(x, y).shape, predicate == "true")
    elif predicate == "ord":
        result = ~unordered
    elif predicate == "uno":
        result = unordered
    elif predicate == "one":
        result = ~unordered & np.not_equal(x, y)
    elif predicate[0] == "o":
        result = ~unordered & compare[predicate[1:]]
    else:
        result = unordered | compare[predicate[1:]]
    return _cast(op, result)


@_RULES.impl(arith.SelectOp)
def _select(op: Operation, args: list[Value]) -> Value:
    return _cast(op, np.where(args[0], args[1], args[2]))


@_RULES.impl(arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp)
def _int_cast(op: Operation, args: list[Value]) -> Value:
    x = _signed_value(args[0])
    if _result_dtype(op) == np.bool_:
        return _cast(op, (x & 1).astype(np.bool_))
    return _cast(op, x.astype(np.int64).astype(_result_dtype(op)))


@_RULES.impl(arith.ExtUIOp, IndexCastUIOp)
def _extui(op: Operation, args: list[Value]) -> Value:
    return _cast(op, _unsigned(args[0]).astype(np.uint64).astype(_result_dtype(op)))


@_RULES.impl(arith.SIToFPOp, arith.ExtFOp, arith.TruncFOp)
def _to_float(op: Operation, args: list[Value]) -> Value:
    return _cast(op, _signed_value(args[0]).astype(_result_dtype(op)))


@_RULES.impl(arith.UIToFPOp)
def _uitofp(op: Operation, args: list[Value]) -> Value:
    return _cast(op, _unsigned(args[0]).astype(_result_dtype(op)))


@_RULES.impl(arith.FPToSIOp)
def _fptosi(op: Operation, args: list[Value]) -> Value:
    x = np.asarray(args[0]).astype(np.float64)
    dtype = _result_dtype(op)
    bits = _bits(dtype)
    truncated = np.trunc(x)
    bad = np.isnan(x) | (truncated < -(2.0 ** (bits - 1))) | (truncated >= 2.0 ** (bits - 1))
    if np.any(bad):
        raise error_at(op, f"'arith.fptosi' converts NaN or a value outside the range of i{bits}")
    return _cast(op, truncated.astype(np.int64).astype(dtype))


def _boundary_dtype(type_: Attribute) -> np.dtype[Any]:
    """The dtype `devplan.execute` takes and gives for `type_` (a tensor's elements): the
    oracle's, except bf16 (its uint16 bit patterns) and unsigned integers (`ui8` is uint8;
    the oracle computes on the same bits as int8)."""
    if isinstance(type_, TensorType):
        type_ = cast(TensorType[Attribute], type_).element_type
    return numpy_dtype(type_)


def _input(type_: Attribute, value: object, index: int, name: str) -> Value:
    dtype = dtype_of(type_)
    bf16 = _is_bf16(type_)
    held = _boundary_dtype(type_)
    what = f"argument {index} of @{name}"
    if isinstance(type_, TensorType):
        if not isinstance(value, np.ndarray) or isinstance(value, np.ma.MaskedArray):
            raise ReferenceError(f"error: {what} is {type_} and needs a NumPy array (unmasked)")
        array = cast(np.ndarray[Any, Any], value)
        shape = cast(TensorType[Attribute], type_).get_shape()
        if (
            array.dtype != held
            or array.ndim != len(shape)
            or any(d >= 0 and d != n for d, n in zip(shape, array.shape, strict=True))
        ):
            raise ReferenceError(
                f"error: {what} is {type_}, got an array of {array.dtype} with shape {array.shape}"
            )
        return _bf16_values(array) if bf16 else array.view(dtype).copy()
    # A scalar is checked as `devplan.execute` checks it (the same inputs go to both):
    # dtype.type() would truncate 1.5 to 1, read "5" as 5 and None as NaN, and overflow.
    try:
        check_scalar_input(type_, value, what)
    except DevplanError as e:
        raise ReferenceError(str(e)) from None
    number = cast(Any, value)
    if bf16:
        rounded: float = float(_round_bf16(float(number)))
        return dtype.type(rounded)
    if dtype.kind in "iu":  # a signless value's bits: i8 200 is -56, as in execute
        return np.array(int(number)).astype(dtype)[()]
    return dtype.type(number)


def evaluate(module: ModuleOp, inputs: Sequence[object], entry: str = "main") -> list[Value]:
    """The results of `@entry` of level-1 `module` on `inputs`, computed with NumPy.

    Inputs are NumPy arrays for tensors and Python scalars for scalars, as for
    `devplan.execute`; outputs are arrays for tensors and NumPy scalars for scalars.
    """
    name = "devplan.reference.program.evaluate"
    check_argument(name, "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)")
    check_argument(name, "inputs", inputs, (list, tuple), "a list of NumPy arrays and scalars")
    check_argument(name, "entry", entry, str, 'a function name such as "main"')
    evaluator = _Evaluator(module)
    function = evaluator.functions.get(entry)
    if function is None:
        known = ", ".join(f"@{n}" for n in evaluator.functions) or "none"
        raise ReferenceError(f"error: no function @{entry} to evaluate (functions: {known})")
    types = function.function_type.inputs.data
    if len(inputs) != len(types):
        raise ReferenceError(f"error: @{entry} takes {len(types)} argument(s), got {len(inputs)}")
    args = [_input(t, v, i, entry) for i, (t, v) in enumerate(zip(types, inputs, strict=True))]
    results = evaluator.call(entry, args, None)
    return [_output(t, v) for t, v in zip(function.function_type.outputs, results, strict=True)]


def _output(type_: Attribute, value: Value) -> Value:
    """A result as `devplan.execute` gives it: a bf16 array as its bit patterns, a bf16
    scalar as the f32 of its value, unsigned integers in their unsigned dtype."""
    if _is_bf16(type_):
        return _bf16_bits(value) if isinstance(type_, TensorType) else np.float32(value)
    given = _boundary_dtype(type_)
    if given.kind != "u":
        return value
    unsigned = np.asarray(value).view(given)
    return unsigned if isinstance(type_, TensorType) else unsigned[()]


__all__ = ["ReferenceError", "dtype_of", "evaluate"]
