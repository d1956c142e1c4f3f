"""The oracle's `linalg`: structured ops evaluated with NumPy, from their definitions.

`linalg.generic` runs over its iteration space. The loop ranges are read off the
operands' run-time shapes (a loop's range is the size of an operand dimension its maps
index by that loop alone; two that disagree are an error), so static and dynamic shapes
are one case. The parallel loops are vectorised: each is a NumPy axis of a grid, and each
operand's indexing map, evaluated on that grid (permutations, projections, broadcasts,
constants, `d0 * 2 + d4`, `floordiv`/`mod`/`ceildiv` by constants), gives the index
arrays that gather its elements. The reduction loops run one point at a time, in loop
order (lexicographic over the reduction dimensions, the first outermost), so each output
element accumulates in the order a sequential loop nest would: a float sum matches a
sequential one, not NumPy's pairwise one. At each point the body's scalar `arith`/`math`
ops are evaluated by the oracle's own vectorised rules (`reference/program.py`) on whole
grids, `linalg.index` gives the loop's index grid, and `linalg.yield` values are scattered
into the outputs. Any number of inputs and outputs. Not handled (a located error, not a
guess): an output whose map is not a permutation of the parallel loops (a reduction loop
in it, a parallel loop missing from it, or `d0 + d1`: several iteration points would
write one element); maps with symbols.

The named ops are evaluated from MLIR's OpDSL definitions directly, not through their
generic form, so that comparing the two checks both: contractions with `np.einsum` on the
inputs cast to the output's element type (MLIR's `cast_signed`); convolutions and poolings
as a loop over the window positions, each a strided slice of the input (`strides`,
`dilations`) contracted with one kernel element or reduced into the output.
`linalg.reduce` is evaluated as the generic op it is (input map the identity, output map
the kept dimensions), `linalg.transpose` and `linalg.broadcast` as NumPy's.

This module shares no code with the lowering or the runtime, and reads maps from the ops
themselves, not from `analysis/`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import (
    AddOp,
    BroadcastOp,
    CopyOp,
    ExpOp,
    GenericOp,
    IndexOp,
    LogOp,
    MatmulOp,
    MaxOp,
    MinOp,
    MulOp,
    QuantizedMatmulOp,
    ReduceOp,
    SelectOp,
    SqrtOp,
    SubOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from ..diagnostics import error_at
from ..upstream import linalg as named

Value = Any
BodyOp = Callable[[Operation, dict[SSAValue, Value]], list[Value]]
"""Evaluates one scalar body op on grids of values, its operands looked up in the env."""


# --- linalg.generic ------------------------------------------------------------------


def _eval_expr(expr: AffineExpr, dims: Sequence[Value], op: Operation) -> Value:
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = _eval_expr(expr.lhs, dims, op), _eval_expr(expr.rhs, dims, op)
        if expr.kind == AffineBinaryOpKind.Add:
            return lhs + rhs
        if expr.kind == AffineBinaryOpKind.Mul:
            return lhs * rhs
        if np.any(np.asarray(rhs) <= 0):
            raise error_at(op, f"indexing map divides by a non-positive value in {expr}")
        if expr.kind == AffineBinaryOpKind.FloorDiv:
            return lhs // rhs
        if expr.kind == AffineBinaryOpKind.CeilDiv:
            return -(-lhs // rhs)
        return lhs % rhs
    raise error_at(op, f"the oracle evaluates no indexing map with symbols ({expr})")


def _loop_ranges(op: Operation, maps: Sequence[AffineMap], values: Sequence[Value]) -> list[int]:
    """Each loop's range: the size of an operand dimension indexed by that loop alone."""
    num_loops = maps[0].num_dims if maps else 0
    ranges: list[int | None] = [None] * num_loops
    where: list[str] = [""] * num_loops
    for index, (map_, value) in enumerate(zip(maps, values, strict=True)):
        shape = np.shape(value)
        for dim, expr in enumerate(map_.results):
            if not isinstance(expr, AffineDimExpr):
                continue
            size = shape[dim]
            known = ranges[expr.position]
            if known is not None and known != size:
                raise error_at(
                    op,
                    f"loop d{expr.position} runs to {known} ({where[expr.position]}) but "
                    f"dimension {dim} of operand #{index} is {size}",
                )
            ranges[expr.position] = size
            where[expr.position] = f"dimension {dim} of operand #{index}"
    missing = [f"d{i}" for i, r in enumerate(ranges) if r is None]
    if missing:
        raise error_at(
            op,
            f"no operand dimension is indexed by loop(s) {', '.join(missing)} alone, so "
            "their ranges are unknown",
        )
    return [cast(int, r) for r in ranges]


def _indices(
    op: Operation, index: int, map_: AffineMap, value: Value, dims: Sequence[Value]
) -> tuple[Value, ...]:
    """The index arrays `map_` gives on the grid `dims`, checked against the shape."""
    shape = np.shape(value)
    indices: list[Value] = []
    for dim, expr in enumerate(map_.results):
        at = np.asarray(_eval_expr(expr, dims, op))
        if at.size and (at.min() < 0 or at.max() >= shape[dim]):
            reach = int(at.min()) if at.min() < 0 else int(at.max())
            raise error_at(
                op,
                f"indexing map #{index} ({map_}) reaches index {reach} of dimension {dim} "
                f"of operand #{index}, whose size is {shape[dim]}",
            )
        indices.append(at)
    return tuple(indices)


def evaluate_generic(
    op: Operation,
    maps: Sequence[AffineMap],
    iterators: Sequence[IteratorType],
    block: Block,
    num_inputs: int,
    args: Sequence[Value],
    env: dict[SSAValue, Value],
    body_op: BodyOp,
) -> list[Value]:
    """The outputs of a structured op given by its maps, iterators and body (`args`: the
    inputs' then the outputs' values; `env`: the values the body may capture)."""
    ranges = _loop_ranges(op, maps, args)
    parallel = [d for d, it in enumerate(iterators) if it != IteratorType.REDUCTION]
    reduction = [d for d, it in enumerate(iterators) if it == IteratorType.REDUCTION]
    _check_outputs(op, maps[num_inputs:], parallel, reduction)
    grid_shape = tuple(ranges[d] for d in parallel)
    dims: list[Value] = [np.int64(0)] * len(ranges)
    for axis, d in enumerate(parallel):
        dims[d] = np.arange(ranges[d], dtype=np.int64).reshape(
            [ranges[d] if a == axis else 1 for a in range(len(parallel))]
        )
    outputs = [np.array(v, copy=True) for v in args[num_inputs:]]
    out_indices = [
        _indices(op, num_inputs + i, m, v, dims)
        for i, (m, v) in enumerate(zip(maps[num_inputs:], outputs, strict=True))
    ]
    # An input whose map reads no reduction loop is gathered once. Each output element
    # belongs to one grid point (`_check_outputs`), so the outputs are held as grids of
    # accumulators between points and written back once.
    fixed = {
        i: np.broadcast_to(_gather(op, i, maps[i], args[i], dims), grid_shape)
        for i in range(num_inputs)
        if not _reads(maps[i], reduction)
    }
    accumulators = [
        np.broadcast_to(o[i], grid_shape).copy() for o, i in zip(outputs, out_indices, strict=True)
    ]
    local = dict(env)
    for point in itertools.product(*(range(ranges[d]) for d in reduction)):
        for d, i in zip(reduction, point, strict=True):
            dims[d] = np.int64(i)
        for index, arg in enumerate(block.args):
            if index in fixed:
                local[arg] = fixed[index]
            elif index < num_inputs:
                gathered = _gather(op, index, maps[index], args[index], dims)
                local[arg] = np.broadcast_to(gathered, grid_shape)
            else:
                local[arg] = accumulators[index - num_inputs]
        for k, new in enumerate(_run_body(block, local, dims, grid_shape, body_op)):
            accumulators[k] = np.array(np.broadcast_to(new, grid_shape), outputs[k].dtype)
    for output, indices, accumulator in zip(outputs, out_indices, accumulators, strict=True):
        output[indices] = accumulator
    return outputs


def _check_outputs(
    op: Operation, maps: Sequence[AffineMap], parallel: list[int], reduction: list[int]
) -> None:
    """Each output's map is a permutation of the parallel loops: every iteration point
    then writes one element of its own and the reduction points of one element run in
    loop order. (Other output maps, which MLIR's projected-permutation rule allows in
    part, are refused, not guessed at.)"""
    for offset, map_ in enumerate(maps):
        positions = [e.position for e in map_.results if isinstance(e, AffineDimExpr)]
        if len(positions) != len(map_.results) or sorted(positions) != sorted(parallel):
            raise error_at(
                op,
                f"the oracle evaluates outputs whose map is a permutation of the parallel "
                f"loops; output #{offset} has map {map_}",
            )


def _reads(map_: AffineMap, loops: list[int]) -> bool:
    return bool({p for e in map_.results for p in _dims_of(e)} & set(loops))


def _gather(
    op: Operation, index: int, map_: AffineMap, value: Value, dims: Sequence[Value]
) -> Value:
    if not isinstance(value, np.ndarray):
        return value  # a scalar operand
    return cast(np.ndarray[Any, Any], value)[_indices(op, index, map_, value, dims)]


def _dims_of(expr: AffineExpr) -> set[int]:
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return _dims_of(expr.lhs) | _dims_of(expr.rhs)
    return set()


def _run_body(
    block: Block,
    env: dict[SSAValue, Value],
    dims: Sequence[Value],
    grid_shape: tuple[int, ...],
    body_op: BodyOp,
) -> list[Value]:
    for body in block.ops:
        if isinstance(body, YieldOp):
            return [env[v] for v in body.operands]
        if isinstance(body, IndexOp):
            dim = body.dim.value.data
            env[body.result] = np.broadcast_to(dims[dim], grid_shape)
            continue
        for result, value in zip(body.results, body_op(body, env), strict=True):
            env[result] = value
    return []


def evaluate_generic_op(
    op: GenericOp, args: Sequence[Value], env: dict[SSAValue, Value], body_op: BodyOp
) -> list[Value]:
    """`linalg.generic`'s results."""
    maps = [m.data for m in op.indexing_maps.data]
    iterators = [it.data for it in op.iterator_types.data]
    return evaluate_generic(op, maps, iterators, op.body.block, len(op.inputs), args, env, body_op)


def evaluate_reduce_op(
    op: ReduceOp, args: Sequence[Value], env: dict[SSAValue, Value], body_op: BodyOp
) -> list[Value]:
    """`linalg.reduce`: the generic op over the input's dimensions, the reduced ones
    reductions, the output indexed by the others."""
    rank = np.ndim(args[0])
    reduced = {int(d) for d in op.dimensions.get_values()}
    if any(not 0 <= d < rank for d in reduced):
        raise error_at(op, f"'linalg.reduce' dimensions {sorted(reduced)} outside rank {rank}")
    identity = AffineMap.identity(rank)
    kept = AffineMap(rank, 0, tuple(AffineDimExpr(d) for d in range(rank) if d not in reduced))
    iterators = [
        IteratorType.REDUCTION if d in reduced else IteratorType.PARALLEL for d in range(rank)
    ]
    return evaluate_generic(op, [identity, kept], iterators, op.region.block, 1, args, env, body_op)


# --- named ops, from MLIR's OpDSL definitions ----------------------------------------

NamedRule = Callable[[Operation, list[Value]], Value]
NAMED_RULES: dict[type[Operation], NamedRule] = {}
"""Named op class -> its result computed from MLIR's definition (in the output's dtype;
`program.py` rounds bf16 and casts)."""


def _rule(*classes: type[Operation]) -> Callable[[NamedRule], NamedRule]:
    def register(fn: NamedRule) -> NamedRule:
        for c in classes:
            NAMED_RULES[c] = fn
        return fn

    return register


def _to(value: Value, like: Value) -> Value:
    """MLIR's `cast_signed` of `value` to the element type `like` holds (NumPy's astype
    sign-extends and wraps integers and rounds floats to nearest even, as the arith
    casts do)."""
    dtype = np.asarray(like).dtype
    return np.asarray(value).astype(dtype)


def _check_shapes(op: Operation, subscripts: str, values: Sequence[Value]) -> None:
    """The sizes `subscripts` (einsum's `ab,bc->ac`) give each letter agree."""
    sizes: dict[str, int] = {}
    specs = subscripts.replace("->", ",").split(",")
    for index, (spec, value) in enumerate(zip(specs, values, strict=True)):
        shape = np.shape(value)
        if len(shape) != len(spec):
            raise error_at(op, f"operand #{index} of '{op.name}' has rank {len(shape)}")
        for letter, size in zip(spec, shape, strict=True):
            if sizes.setdefault(letter, size) != size:
                raise error_at(
                    op,
                    f"'{op.name}' operand #{index} has size {size} where another operand "
                    f"has {sizes[letter]} (shapes {', '.join(str(np.shape(v)) for v in values)})",
                )


def _contraction(subscripts: str) -> NamedRule:
    def rule(op: Operation, args: list[Value]) -> Value:
        a, b, out = args
        used = _matmul_subscripts(op) if isinstance(op, MatmulOp) else subscripts
        _check_shapes(op, used, args)
        return out + np.einsum(used, _to(a, out), _to(b, out))

    return rule


def _matmul_subscripts(op: MatmulOp) -> str:
    """`linalg.matmul`'s einsum subscripts from its `indexing_maps` (MLIR lets them
    transpose or broadcast an operand; the default is `mk,kn->mn`), a letter a loop."""
    specs: list[str] = []
    for map_ in (m.data for m in op.indexing_maps.data):
        if not all(isinstance(e, AffineDimExpr) for e in map_.results):
            raise error_at(op, f"'linalg.matmul' with indexing map {map_}: not evaluated")
        specs.append("".join("mnk"[cast(AffineDimExpr, e).position] for e in map_.results))
    return f"{specs[0]},{specs[1]}->{specs[2]}"


_CONTRACTIONS = {
    MatmulOp: "mk,kn->mn",
    named.BatchMatmulOp: "bmk,bkn->bmn",
    named.MatvecOp: "mn,n->m",
    named.VecmatOp: "m,mn->n",
    named.DotOp: "m,m->",
    named.Mmt4dOp: "mkac,nkbc->mnab",
}
for _class, _subscripts in _CONTRACTIONS.items():
    NAMED_RULES[_class] = _contraction(_subscripts)


@_rule(QuantizedMatmulOp)
def _quantized_matmul(op: Operation, args: list[Value]) -> Value:
    a, b, a_zero, b_zero, out = args
    _check_shapes(op, "mk,kn->mn", [a, b, out])
    left = _to(a, out) - _to(a_zero, out)
    right = _to(b, out) - _to(b_zero, out)
    return out + np.einsum("mk,kn->mn", left, right)


# A window op's layouts: one letter an axis. Output spatial axes are x, y, z (strides and
# dilations in that order), window axes X, Y, Z; the input holds x at `x * s + X * d`.
_CONVOLUTIONS: dict[type[Operation], tuple[str, str, str]] = {
    named.Conv1DOp: ("x", "X", "x"),
    named.Conv2DOp: ("xy", "XY", "xy"),
    named.Conv3DOp: ("xyz", "XYZ", "xyz"),
    named.Conv1DNwcWcfOp: ("nxc", "Xcf", "nxf"),
    named.Conv3DNdhwcDhwcfOp: ("nxyzc", "XYZcf", "nxyzf"),
    named.DepthwiseConv2DNhwcHwcOp: ("nxyc", "XYc", "nxyc"),
    named.Conv2DNchwFchwOp: ("ncxy", "fcXY", "nfxy"),
    named.Conv2DNgchwFgchwOp: ("ngcxy", "fgcXY", "ngfxy"),
    named.Conv2DNgchwGfchwOp: ("ngcxy", "gfcXY", "ngfxy"),
    named.Conv2DNhwcFhwcOp: ("nxyc", "fXYc", "nxyf"),
    named.Conv2DNhwcHwcfOp: ("nxyc", "XYcf", "nxyf"),
    named.Conv2DNhwgcGfhwcOp: ("nxygc", "gfXYc", "nxygf"),
}
_POOLINGS: dict[type[Operation], tuple[str, str]] = {
    named.PoolingNchwMaxOp: ("ncxy", "max"),
    named.PoolingNhwcMaxOp: ("nxyc", "max"),
    named.PoolingNchwSumOp: ("ncxy", "sum"),
    named.PoolingNhwcSumOp: ("nxyc", "sum"),
}


def _window_attr(op: Operation, name: str, spatial: int) -> list[int]:
    attr = op.properties.get(name)
    if attr is None:
        return [1] * spatial
    values = [int(cast(int, v)) for v in cast(DenseIntOrFPElementsAttr, attr).get_values()]
    return values * spatial if len(values) == 1 else values


def _windows(
    op: Operation, image: Value, window: tuple[int, ...], out_spec: str, in_spec: str, out: Value
) -> Any:
    """For each window position: (position, the input slice it meets, laid out as `in_spec`
    with the output's spatial sizes)."""
    spatial = len(window)
    strides = _window_attr(op, "strides", spatial)
    dilations = _window_attr(op, "dilations", spatial)
    out_sizes = {c: np.shape(out)[out_spec.index(c)] for c in "xyz"[:spatial]}
    for position in itertools.product(*(range(k) for k in window)):
        slices: list[slice] = []
        for axis, letter in enumerate(in_spec):
            if letter not in out_sizes:
                slices.append(slice(None))
                continue
            s = "xyz".index(letter)
            start = position[s] * dilations[s]
            stop = start + strides[s] * (out_sizes[letter] - 1) + 1
            if out_sizes[letter] and stop > np.shape(image)[axis]:
                raise error_at(
                    op,
                    f"'{op.name}' window reaches index {stop - 1} of input dimension {axis}, "
                    f"whose size is {np.shape(image)[axis]}",
                )
            slices.append(slice(start, stop, strides[s]))
        yield position, cast(np.ndarray[Any, Any], image)[tuple(slices)]


def _convolution(op: Operation, args: list[Value]) -> Value:
    image, kernel, out = args
    return _convolve(op, _CONVOLUTIONS[type(op)], _to(image, out), _to(kernel, out), out)


@_rule(named.Conv2DNchwFchwQOp)
def _quantized_convolution(op: Operation, args: list[Value]) -> Value:
    image, kernel, image_zero, kernel_zero, out = args
    image = _to(image, out) - _to(image_zero, out)
    kernel = _to(kernel, out) - _to(kernel_zero, out)
    return _convolve(op, ("ncxy", "fcXY", "nfxy"), image, kernel, out)


def _convolve(
    op: Operation, specs: tuple[str, str, str], image: Value, kernel: Value, out: Value
) -> Value:
    """`out` plus the convolution of `image` and `kernel` (both already in `out`'s type)."""
    in_spec, kernel_spec, out_spec = specs
    window_axes = [kernel_spec.index(c) for c in "XYZ" if c in kernel_spec]
    window = tuple(np.shape(kernel)[a] for a in window_axes)
    rest = "".join(c for c in kernel_spec if c not in "XYZ")
    result = np.array(out, copy=True)
    for position, patch in _windows(op, image, window, out_spec, in_spec, out):
        index = [slice(None)] * len(kernel_spec)
        for a, p in zip(window_axes, position, strict=True):
            index[a] = p
        taps = kernel[tuple(index)]
        _check_shapes(op, f"{in_spec},{rest}->{out_spec}", [patch, taps, out])
        result = result + np.einsum(f"{in_spec},{rest}->{out_spec}", patch, taps)
    return result


def _pooling(op: Operation, args: list[Value]) -> Value:
    spec, kind = _POOLINGS[type(op)]
    image, window_shape, out = args
    result = np.array(out, copy=True)
    image = _to(image, out)
    for _, patch in _windows(op, image, tuple(np.shape(window_shape)), spec, spec, out):
        if np.shape(patch) != np.shape(out):
            raise error_at(
                op,
                f"'{op.name}' input windows of shape {np.shape(patch)} for output {np.shape(out)}",
            )
        result = np.maximum(result, patch) if kind == "max" else result + patch
    return result


for _class in _CONVOLUTIONS:
    NAMED_RULES[_class] = _convolution
for _class in _POOLINGS:
    NAMED_RULES[_class] = _pooling


def _elementwise(fn: Callable[..., Value]) -> NamedRule:
    def rule(op: Operation, args: list[Value]) -> Value:
        *inputs, out = args
        for index, value in enumerate(inputs):
            if np.shape(value) != np.shape(out):
                raise error_at(
                    op,
                    f"'{op.name}' operand #{index} has shape {np.shape(value)}, the output "
                    f"{np.shape(out)}",
                )
        return fn(*(_to(v, out) for v in inputs))

    return rule


def _divide(x: Value, y: Value) -> Value:
    """`divf`, or `divsi` (truncating toward zero; the caller checks the divisor)."""
    if x.dtype.kind == "f":
        return x / y
    wide_x, wide_y = x.astype(object), y.astype(object)
    sign = np.where((wide_x < 0) == (wide_y < 0), 1, -1)
    return (abs(wide_x) // abs(wide_y) * sign).astype(np.int64).astype(x.dtype)


_ELEMENTWISE: dict[type[Operation], Callable[..., Value]] = {
    AddOp: np.add, SubOp: np.subtract, MulOp: np.multiply,
    MaxOp: np.maximum, MinOp: np.minimum, ExpOp: np.exp, LogOp: np.log, SqrtOp: np.sqrt,
    CopyOp: np.positive,
}  # fmt: skip
for _class, _fn in _ELEMENTWISE.items():
    NAMED_RULES[_class] = _elementwise(_fn)


@_rule(named.DivOp)
def _div(op: Operation, args: list[Value]) -> Value:
    x, y, out = args
    if np.asarray(out).dtype.kind != "f":
        x, y = _to(x, out), _to(y, out)
        if np.any(y == 0):
            raise error_at(op, "'linalg.div' divides by zero")
        low = np.iinfo(np.asarray(out).dtype).min
        if np.any((x == low) & (y == -1)):
            raise error_at(op, "'linalg.div' divides the minimum integer by -1: it overflows")
    return _elementwise(_divide)(op, [x, y, out])


@_rule(SelectOp)
def _select(op: Operation, args: list[Value]) -> Value:
    condition, x, y, out = args
    if not np.shape(condition) == np.shape(x) == np.shape(y) == np.shape(out):
        raise error_at(op, f"'{op.name}' operands of different shapes")
    return cast(Value, np.where(condition, _to(x, out), _to(y, out)))


@_rule(TransposeOp)
def _transpose(op: Operation, args: list[Value]) -> Value:
    value, out = args
    permutation = [int(p) for p in cast(TransposeOp, op).permutation.get_values()]
    result = np.transpose(value, permutation)
    if result.shape != np.shape(out):
        raise error_at(
            op, f"'linalg.transpose' of {np.shape(value)} by {permutation} into {np.shape(out)}"
        )
    return result


@_rule(BroadcastOp)
def _broadcast(op: Operation, args: list[Value]) -> Value:
    value, out = args
    added = [int(d) for d in cast(BroadcastOp, op).dimensions.get_values()]
    expanded = np.expand_dims(value, added) if added else np.asarray(value)
    try:
        return np.broadcast_to(expanded, np.shape(out)).copy()
    except ValueError:
        raise error_at(
            op, f"'linalg.broadcast' of {np.shape(value)} adding {added} into {np.shape(out)}"
        ) from None


__all__ = [
    "NAMED_RULES",
    "BodyOp",
    "evaluate_generic",
    "evaluate_generic_op",
    "evaluate_reduce_op",
]
