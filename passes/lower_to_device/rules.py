"""The lowering rule of each level-1 op class (an `OpTable` the walk consults)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ...diagnostics import error_at
from ...dialects import device as dev
from ...dialects import kernel as kn
from ...dialects.placement import (
    arg_device,
    result_device,
    result_placement,
)
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp
from ...dialects.virtual_device import DeviceAttr, ir_text
from ...dispatch import DialectTables, OpTable
from .generic import fill, init_is_read, lower_generic
from .lowering import Lowering
from .movement import (
    alloc_tensor,
    collapse_shape,
    concat,
    expand_shape,
    extract,
    from_elements,
    insert,
    insert_slice,
    pad,
    reshape,
    splat,
    tensor_cast,
    to_buffer,
    to_tensor,
)
from .types import (
    ELEMENTS,
    PLAN,
    is_tensor,
    kernel_element,
    memref_type,
    same_place,
    tensor_type,
    type_text,
)
from .views import extract_slice

Rule = Callable[[Lowering, Any], None]

_RULES: OpTable[Rule] = OpTable("lower-to-device")
"""The lowering rule of each level-1 op class but those of `bufferization`."""

_RULES.register(tensor.ExtractSliceOp, extract_slice)
_RULES.register(tensor.InsertSliceOp, insert_slice)
_RULES.register(tensor.ConcatOp, concat)
_RULES.register(tensor.CollapseShapeOp, collapse_shape)
_RULES.register(tensor.ExpandShapeOp, expand_shape)
_RULES.register(tensor.CastOp, tensor_cast)
_RULES.register(tensor.ExtractOp, extract)
_RULES.register(tensor.ReshapeOp, reshape)
_RULES.register(tensor.SplatOp, splat)
_RULES.register(tensor.FromElementsOp, from_elements)
_RULES.register(tensor.InsertOp, insert)
_RULES.register(tensor.PadOp, pad)


def _bufferization_rules() -> OpTable[Rule]:
    """The rules of the `bufferization` ops, whose xDSL dialect only programs holding one
    import."""
    from xdsl.dialects import bufferization

    table = OpTable[Rule]("lower-to-device")
    table.register(bufferization.AllocTensorOp, alloc_tensor)
    table.register(bufferization.ToTensorOp, to_tensor)
    table.register(bufferization.ToBufferOp, to_buffer)
    return table


@_RULES.impl(func.ReturnOp)
def _return(low: Lowering, op: func.ReturnOp) -> None:
    function = op.parent_op()
    assert isinstance(function, func.FuncOp)
    values: list[SSAValue] = []
    for i, value in enumerate(op.operands):
        if is_tensor(value):
            low.operand(
                op,
                i,
                _require(
                    result_device(function, i), op, f"result {i} of @{function.sym_name.data}"
                ),
            )
        values.append(low.lowered_operand(op, i))
    low.free_before(op)
    low.emit(func.ReturnOp(*values))


@_RULES.impl(func.CallOp)
def _call(low: Lowering, op: func.CallOp) -> None:
    callee = _callee(low.module, op)
    args: list[SSAValue] = []
    copies: list[SSAValue] = []
    for i, value in enumerate(op.arguments):
        arg = low.values[value]
        if is_tensor(value):
            where = _require(arg_device(callee, i), op, f"argument {i} of @{callee.sym_name.data}")
            low.operand(op, i, where)
            if not isinstance(memref_type(arg.type).layout, NoneAttr):
                arg = low.clone(arg)  # a strided view: the callee takes row-major buffers
                copies.append(arg)
        args.append(arg)
    result_types: list[Attribute] = []
    for j, result in enumerate(op.res):
        placed = result_placement(op, j) if is_tensor(result) else None
        wanted = result_device(callee, j) if is_tensor(result) else None
        if placed is not None and wanted is not None and not same_place(placed, wanted):
            raise error_at(
                op,
                f"'func.call' result {j} is placed on {ir_text(placed)} but @"
                f"{callee.sym_name.data} returns it on {ir_text(wanted)}; {PLAN}",
            )
        result_types.append(low.buffer_type(result.type, wanted or placed, op))
    call = low.emit(func.CallOp(op.callee, args, result_types))
    for copy in copies:
        low.free(copy)
    low.map_results(op, call.results)


def _callee(module: ModuleOp, op: func.CallOp) -> func.FuncOp:
    name = op.callee.string_value()
    for candidate in module.ops:
        if isinstance(candidate, func.FuncOp) and candidate.sym_name.data == name:
            return candidate
    raise error_at(op, f"'func.call' of @{name}, which is not a function of the module")


def _require(device: DeviceAttr | None, op: Operation, what: str) -> DeviceAttr:
    if device is None:
        raise error_at(op, f"'{op.name}': {what} has no '{DEVICE_ATTR}' placement; {PLAN}")
    return device


@_RULES.impl(DeviceCopyOp)
def _device_copy(low: Lowering, op: DeviceCopyOp) -> None:
    source = low.operand(op, 0, op.src_device)
    out_type = low.buffer_type(op.result.type, op.dst_device, op)
    out = low.alloc(out_type, low.dynamic_sizes(out_type, source))
    low.emit(dev.CopyOp(source, out))
    low.map_results(op, [out])


@_RULES.impl(EmptyOp)
def _empty(low: Lowering, op: Operation) -> None:
    sizes = [low.values[v] for v in op.operands]
    result = op.results[0]
    if result.uses and not any(init_is_read(use.operation, use.index) for use in result.uses):
        low.shape_only[result] = sizes  # only shapes are read: each user allocates its own
        return
    out_type = low.buffer_type(op.results[0].type, low.op_device(op), op)
    low.map_results(op, [low.alloc(out_type, sizes)])


@_RULES.impl(arith.ConstantOp)
def _constant(low: Lowering, op: arith.ConstantOp) -> None:
    if not is_tensor(op.result):
        low.lower_scalar(op)
        return
    device = low.op_device(op)
    value = op.value
    if not isinstance(value, DenseIntOrFPElementsAttr):
        raise error_at(op, f"'arith.constant' of {ir_text(value)} is not lowered (dense<...> is)")
    out_type = low.buffer_type(op.result.type, device, op)
    element = tensor_type(op.result.type).element_type
    if not kernel_element(element):
        raise error_at(op, f"'arith.constant' of {type_text(op.result.type)}: {ELEMENTS}")
    out = low.alloc(out_type, [])
    if 0 in tensor_type(op.result.type).get_shape():
        pass  # no element to write (and xDSL's is_splat fails on no data)
    elif value.is_splat():
        scalar = low.emit(arith.ConstantOp(next(iter(value.iter_attrs())))).results[0]
        fill(low, device, out, scalar, op)
    else:
        host_type = MemRefType(element, tensor_type(op.result.type).get_shape())
        name = _constant_global(low, value, host_type)
        data = low.emit(memref.GetGlobalOp(name, host_type)).results[0]
        low.emit(dev.CopyOp(data, out))
    low.map_results(op, [out])


def _constant_global(
    low: Lowering, value: DenseIntOrFPElementsAttr, type_: MemRefType[Attribute]
) -> str:
    """The `memref.global` holding `value` (one per distinct value and type)."""
    key = (ir_text(value), ir_text(type_))
    name = low.globals.get(key)
    if name is None:
        shape = "x".join(str(n) for n in type_.get_shape())
        name = (
            f"constant_{shape}x{ir_text(type_.element_type)}"
            if shape
            else f"constant_{ir_text(type_.element_type)}"
        )
        taken = {
            str(o.sym_name.data)
            for o in low.module.ops
            if isinstance(o, memref.GlobalOp | func.FuncOp | kn.KernelModuleOp)
        }
        stem, n = name, 0
        while name in taken:
            n += 1
            name = f"{stem}_{n}"
        low.globals[key] = name
        glob = memref.GlobalOp.get(StringAttr(name), type_, value, constant=UnitAttr())
        glob.location = low.source.location
        first_func = next((o for o in low.module.ops if isinstance(o, func.FuncOp)), None)
        if first_func is None:
            low.module.body.block.add_op(glob)
        else:
            low.module.body.block.insert_op_before(glob, first_func)
    return name


@_RULES.impl(GenericOp)
def _generic(low: Lowering, op: GenericOp) -> None:
    lower_generic(low, op)


@_RULES.impl(tensor.DimOp)
def _tensor_dim(low: Lowering, op: tensor.DimOp) -> None:
    source = low.values[op.source]
    low.map_results(op, [low.emit(memref.DimOp(source, low.values[op.index])).results[0]])


@_RULES.impl(scf.IfOp)
def _if(low: Lowering, op: scf.IfOp) -> None:
    types = [
        low.buffer_type(r.type, result_placement(op, i) if is_tensor(r) else None, op)
        for i, r in enumerate(op.results)
    ]
    cond = low.values[op.cond]
    then = Block()
    low.lower_block(op.true_region.block, then)
    regions = [Region(then)]
    if op.false_region.blocks:
        orelse = Block()
        low.lower_block(op.false_region.block, orelse)
        regions.append(Region(orelse))
    low.source = op
    new = low.emit(scf.IfOp(cond, types, regions[0], regions[1] if len(regions) > 1 else None))
    _check_yields(low, op, types)
    low.map_results(op, new.results)


@_RULES.impl(scf.ForOp)
def _for(low: Lowering, op: scf.ForOp) -> None:
    types = [
        low.buffer_type(r.type, result_placement(op, i) if is_tensor(r) else None, op)
        for i, r in enumerate(op.results)
    ]
    offset = len(op.operands) - len(op.iter_args)
    inits: list[SSAValue] = []
    for i, value in enumerate(op.iter_args):
        if is_tensor(value):
            low.operand(op, offset + i, _require(result_placement(op, i), op, f"result {i}"))
        inits.append(low.lowered_operand(op, offset + i))
    old = op.body.block
    body = Block(arg_types=[old.args[0].type, *types])
    for a, b in zip(old.args, body.args, strict=True):
        b.name_hint = a.name_hint
        low.values[a] = b
    low.lower_block(old, body)
    low.source = op
    new = low.emit(
        scf.ForOp(low.values[op.lb], low.values[op.ub], low.values[op.step], inits, Region(body))
    )
    _check_yields(low, op, types)
    low.map_results(op, new.results)


def _check_yields(low: Lowering, op: Operation, types: Sequence[Attribute]) -> None:
    for region in op.regions:
        for block in region.blocks:
            yielded = block.last_op
            if not isinstance(yielded, scf.YieldOp):
                continue
            for i, value in enumerate(yielded.operands):
                if is_tensor(value):
                    low.operand(yielded, i, _require(result_placement(op, i), op, f"result {i}"))


@_RULES.impl(scf.YieldOp)
def _yield(low: Lowering, op: scf.YieldOp) -> None:
    values = [low.lowered_operand(op, i) for i in range(len(op.operands))]
    low.free_before(op)
    low.emit(scf.YieldOp(*values))


RULES = DialectTables[Rule]("lower-to-device", {"bufferization": _bufferization_rules}, _RULES)
"""The lowering rule of each level-1 op class."""
