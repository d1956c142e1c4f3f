"""Phase 2 of lower-to-device: the walk that rebuilds each function op by op, with the
helpers rules use (placement checks, allocation, launches, run-time shape checks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    SymbolRefAttr,
    UnrankedMemRefType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ...analysis.op_work import op_work
from ...diagnostics import LocatedError, error_at
from ...dialects import device as dev
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.placement import (
    arg_device,
    host_device,
    module_targets,
    result_device,
    result_placement,
    value_device,
)
from ...dialects.shaped_types import is_ranked_tensor, is_unranked_tensor
from ...dialects.target import TargetAttr
from ...dialects.vdev import DEVICE_ATTR, OnDeviceOp
from ...dialects.virtual_device import DeviceAttr, ir_text
from ...dispatch import DialectTables, OpTable
from ...system.cost import NO_WORK, WORK_ATTR, Work
from .kernel_builder import (
    ELEMENTWISE_BLOCK,
    KernelLibrary,
    max_threads,
)
from .ownership import Ownership
from .types import (
    PLAN,
    is_tensor,
    memory_of,
    memref_type,
    same_place,
    tensor_type,
    type_text,
)


class Lowering:
    """Rebuilds every function of a planned module as a level-2 host program."""

    def __init__(
        self,
        module: ModuleOp,
        rules: OpTable[Callable[[Lowering, Any], None]]
        | DialectTables[Callable[[Lowering, Any], None]],
    ) -> None:
        self.module = module
        self.rules = rules
        """The lowering rule of each op class (`rules.py`)."""
        self.host = host_device(module)
        self.targets = module_targets(module)
        self.kernels = KernelLibrary(module)
        self.globals: dict[tuple[str, str], str] = {}
        self.values: dict[SSAValue, SSAValue] = {}
        self.facts = Ownership()
        self.block = Block()
        self.constants: dict[int, SSAValue] = {}
        self.constant_ops: list[Operation] = []
        self.source: Operation = module
        self.signatures: dict[str, FunctionType] = {}
        """The lowered type of every function, by name (calls need their callee's)."""
        self.origins: dict[Operation, str] = {}
        """The name of the op each generic was made from (phase 0), for messages."""
        self.works: dict[Operation, Work | None] = {}
        """The work the cost model charged the op each generic was made from (phase 0)."""
        self.errors: list[str] = []
        """Every op the walk could not lower (reported together when the walk ends)."""
        self.poisoned: set[SSAValue] = set()
        """Results of ops that failed: what uses them is not lowered (nor reported)."""
        self.strided: dict[SSAValue, tuple[SSAValue, SSAValue | int, list[SSAValue | int]]] = {}
        """Each view of a slice made (a slice's `device.view`, or a reshape's of one): the
        row-major buffer it views, its offset and strides there, so that a slice or reshape
        of it views that buffer too."""
        self.shape_only: dict[SSAValue, list[SSAValue]] = {}
        """`tensor.empty` results only `linalg.fill` writes over: no buffer, just the
        dynamic sizes (lowered) for the fills' own allocations."""

    def name_of(self, op: Operation) -> str:
        """The name of the op the user wrote (a generic made in phase 0 names its origin)."""
        return self.origins.get(op, op.name)

    # -- placement and types -----------------------------------------------------------

    def is_host(self, device: DeviceAttr) -> bool:
        host = self.host
        return (
            device.type_name == host.type_name
            and device.device_id == host.device_id
            and (device.scope or DEFAULT_SCOPE) == (host.scope or DEFAULT_SCOPE)
        )

    def memory_space(self, device: DeviceAttr) -> Attribute | None:
        if self.is_host(device):
            return None
        return DeviceAttr.make(
            device.type_name, device.device_id, None, device.scope or DEFAULT_SCOPE
        )

    def buffer_type(self, type_: Attribute, device: DeviceAttr | None, op: Operation) -> Attribute:
        if is_unranked_tensor(type_):
            return UnrankedMemRefType.from_type(type_.element_type)  # host memory
        if not is_ranked_tensor(type_):
            return type_
        if device is None:
            raise error_at(
                op, f"'{self.name_of(op)}': a {type_text(type_)} value has no placement; {PLAN}"
            )
        tensor = tensor_type(type_)
        space = self.memory_space(device)
        shape = list(tensor.get_shape())
        if space is None:
            return MemRefType(tensor.element_type, shape)
        return MemRefType(tensor.element_type, shape, memory_space=space)

    def target(self, device: DeviceAttr, op: Operation) -> TargetAttr:
        target = device.target_value
        if target is None and device.type_name is not None:
            target = self.targets.get(device.type_name)
        if target is None:
            raise error_at(
                op, f"'{self.name_of(op)}' runs on {ir_text(device)}, which has no target; {PLAN}"
            )
        return target

    def launch_device(self, device: DeviceAttr, op: Operation) -> DeviceAttr:
        if device.type_name is None or device.device_id is None:
            raise error_at(
                op,
                f"'{self.name_of(op)}' runs on {ir_text(device)}, which needs a type and an "
                f"id; {PLAN}",
            )
        return DeviceAttr.make(device.type_name, device.device_id)

    def op_device(self, op: Operation) -> DeviceAttr:
        device = result_placement(op, 0)
        if device is None:
            raise error_at(op, f"'{self.name_of(op)}' has no '{DEVICE_ATTR}' placement; {PLAN}")
        return device

    def operand(self, op: Operation, index: int, device: DeviceAttr) -> SSAValue:
        """Operand `index` of `op`, lowered; it must live on `device`."""
        self.check_place(op, index, device)
        return self.values[op.operands[index]]

    def check_place(self, op: Operation, index: int, device: DeviceAttr) -> None:
        """A located error unless tensor operand `index` of `op` lives on `device`."""
        value = op.operands[index]
        if is_tensor(value):
            have = value_device(value)
            if have is None or not same_place(have, device):
                where = ir_text(have) if have is not None else "nowhere (no placement)"
                raise error_at(
                    op,
                    f"'{self.name_of(op)}' runs on {ir_text(device)} but its operand {index} lives "
                    f"on {where}; {PLAN} (it inserts a vdev.device_copy)",
                )

    # -- emitting ---------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        op.location = self.source.location
        self.block.add_op(op)
        return op

    def index(self, n: int) -> SSAValue:
        """An index constant of the function being lowered (placed at its entry)."""
        found = self.constants.get(n)
        if found is None:
            constant = arith.ConstantOp.from_int_and_width(n, IndexType())
            constant.location = self.source.location
            self.constant_ops.append(constant)
            found = self.constants[n] = constant.result
        return found

    def dim(self, buffer: SSAValue, d: int) -> SSAValue:
        return self.emit(memref.DimOp(buffer, self.index(d))).results[0]

    def dynamic_sizes(self, type_: Attribute, like: SSAValue) -> list[SSAValue]:
        shape = memref_type(type_).get_shape()
        return [self.dim(like, d) for d, n in enumerate(shape) if n == DYNAMIC_INDEX]

    def require_same_extent(self, a: SSAValue, da: int, b: SSAValue, db: int, what: str) -> None:
        """Dimension `da` of buffer `a` equals dimension `db` of `b`: checked here when
        both are static, else at run time by a `cf.assert` saying `what` (a kernel
        sized by one operand would otherwise read past, or silently short of, another)."""
        na, nb = memref_type(a.type).get_shape()[da], memref_type(b.type).get_shape()[db]
        if na != DYNAMIC_INDEX and nb != DYNAMIC_INDEX:
            if na != nb:
                raise error_at(self.source, f"{what} ({na} and {nb})")
            return
        x = self.index(na) if na != DYNAMIC_INDEX else self.dim(a, da)
        y = self.index(nb) if nb != DYNAMIC_INDEX else self.dim(b, db)
        same = self.emit(arith.CmpiOp(x, y, "eq")).results[0]
        self.assert_at_run_time(same, what)

    def assert_at_run_time(self, holds: SSAValue, what: str) -> None:
        """A run-time `cf.assert` of `holds` saying `what` (xDSL's cf dialect is imported
        by the programs that need one)."""
        from xdsl.dialects import cf

        self.emit(cf.AssertOp(holds, what))

    def alloc(self, type_: Attribute, sizes: Sequence[SSAValue]) -> SSAValue:
        mtype = memref_type(type_)
        if memory_of(mtype) is None:
            return self.emit(memref.AllocOp(list(sizes), [], mtype)).results[0]
        return self.emit(dev.AllocOp(mtype, sizes)).results[0]

    def free(self, buffer: SSAValue) -> None:
        if memory_of(buffer.type) is None:
            self.emit(memref.DeallocOp.get(buffer))
        else:
            self.emit(dev.FreeOp(buffer))

    def clone(self, buffer: SSAValue) -> SSAValue:
        """A fresh row-major buffer holding `buffer`'s elements (a view's too)."""
        type_ = memref_type(buffer.type)
        shape, space = type_.get_shape(), type_.memory_space
        row_major = MemRefType(type_.element_type, shape, NoneAttr(), space)
        fresh = self.alloc(row_major, self.dynamic_sizes(row_major, buffer))
        self.emit(dev.CopyOp(buffer, fresh))
        return fresh

    def element_count(self, buffer: SSAValue) -> SSAValue | int:
        """The number of elements of `buffer`: an int when its shape is static."""
        shape = memref_type(buffer.type).get_shape()
        if all(n != DYNAMIC_INDEX for n in shape):
            count = 1
            for n in shape:
                count *= n
            return count
        extents = [
            self.index(n) if n != DYNAMIC_INDEX else self.dim(buffer, d)
            for d, n in enumerate(shape)
        ]
        total = extents[0]
        for extent in extents[1:]:
            total = self.emit(arith.MuliOp(total, extent)).results[0]
        return total

    def launch(
        self,
        device: DeviceAttr,
        kernel: SymbolRefAttr,
        grid: Sequence[SSAValue],
        block: Sequence[SSAValue],
        args: Sequence[SSAValue],
        op: Operation,
        charged: Operation | None = None,
    ) -> None:
        """Launch `kernel` for `op`, recording the work of `charged` (default `op`: a
        launch of several for one op, such as a contraction's copies, records its own)."""
        launch = dev.LaunchOp(kernel, self.launch_device(device, op), grid, block, args)
        # What the planner's cost model charged for `op` (cost.py).
        charged = op if charged is None else charged
        work = self.works[charged] if charged in self.works else op_work(charged)
        if work is not None and work != NO_WORK:
            launch.attributes[WORK_ATTR] = DenseArrayBase.from_list(i64, [work.flops, work.nbytes])
        self.emit(launch)

    def blocks_for(self, count: SSAValue | int, per_block: int) -> SSAValue:
        """max(1, ceil(count / per_block)) as an index value."""
        if isinstance(count, int):
            return self.index(max(1, -(-count // per_block)))
        blocks = self.emit(arith.CeilDivUIOp(count, self.index(per_block))).results[0]
        return self.emit(arith.MaxUIOp(blocks, self.index(1))).results[0]

    def launch_over(
        self,
        device: DeviceAttr,
        kernel: SymbolRefAttr,
        out: SSAValue,
        args: Sequence[SSAValue],
        op: Operation,
        charged: Operation | None = None,
    ) -> None:
        """Launch an elementwise-style kernel with one thread per element of `out`."""
        per_block = min(ELEMENTWISE_BLOCK, max_threads(self.target(device, op)))
        count = self.element_count(out)
        if isinstance(count, int):
            per_block = max(1, min(per_block, count))  # a small tensor: one block, no idle threads
        grid = self.blocks_for(count, per_block)
        one = self.index(1)
        block = [self.index(per_block), one, one]
        self.launch(device, kernel, [grid, one, one], block, args, op, charged)

    # -- the walk ---------------------------------------------------------------------------

    def run(self) -> None:
        functions = [op for op in self.module.ops if isinstance(op, func.FuncOp)]
        for function in functions:
            self.signatures[function.sym_name.data] = self.signature(function)
        for function in functions:
            if function.body.blocks:
                self.lower_body(function)
        if self.errors:
            raise LocatedError("\n".join(self.errors))
        for function in functions:
            function.function_type = self.signatures[function.sym_name.data]
            drop_device_attrs(function)

    def signature(self, function: func.FuncOp) -> FunctionType:
        inputs = [
            self.buffer_type(t, arg_device(function, i), function)
            for i, t in enumerate(function.function_type.inputs.data)
        ]
        outputs = [
            self.buffer_type(t, result_device(function, i), function)
            for i, t in enumerate(function.function_type.outputs.data)
        ]
        return FunctionType.from_lists(inputs, outputs)

    def lower_body(self, function: func.FuncOp) -> None:
        old = function.body.block
        self.facts = Ownership.of(function)
        self.constants, self.constant_ops = {}, []
        new = Block(arg_types=self.signatures[function.sym_name.data].inputs.data)
        for a, b in zip(old.args, new.args, strict=True):
            b.name_hint = a.name_hint
            self.values[a] = b
        self.lower_block(old, new)
        first = new.first_op
        for constant in self.constant_ops:
            if first is None:
                new.add_op(constant)
            else:
                new.insert_op_before(constant, first)
        function.body.detach_block(old)
        function.body.add_block(new)
        old.erase(safe_erase=False)

    def lower_block(self, old: Block, new: Block) -> None:
        outer, self.block = self.block, new
        self.source = old.parent_op() or self.module
        for value in self.facts.frees_at_start.get(old, []):
            self.free(self.values[value])  # block arguments: never shape-only
        for op in old.ops:
            self.source = op
            if self.poisoned and any(
                v in self.poisoned for inner in op.walk() for v in inner.operands
            ):
                self.poisoned.update(op.results)  # follows from an error reported
                continue
            try:
                self.lower_op(op)
            except LocatedError as e:
                self.errors.append(str(e))
                self.poisoned.update(op.results)
                continue
            for value in self.facts.frees_after.get(op, []):
                if value not in self.shape_only:
                    self.source = op
                    self.free(self.values[value])
        self.block = outer

    def lower_op(self, op: Operation) -> None:
        lower = self.rules.lookup(op)
        if lower is not None:
            lower(self, op)
        elif isinstance(op, OnDeviceOp):
            raise error_at(op, f"'vdev.on_device' is left in the module; {PLAN}")
        elif any(is_ranked_tensor(t) for t in (*op.result_types, *op.operand_types)):
            raise error_at(
                op,
                f"'{self.name_of(op)}' on tensors is not lowered by lower-to-device (level-1 ops: "
                "linalg.generic and named linalg ops with maps, elementwise arith/math the "
                "kernel backends support, tensor.empty, tensor.dim, tensor.extract, "
                "tensor.insert, extract_slice, insert_slice, concat, collapse_shape, "
                "expand_shape, reshape, cast, pad, splat, from_elements, "
                "bufferization.alloc_tensor/to_tensor/to_buffer, "
                "arith.constant, func.call, scf.if, scf.for, vdev.device_copy)",
            )
        else:
            self.lower_scalar(op)

    def free_before(self, terminator: Operation) -> None:
        """Free what phase 1 frees at `terminator`, once its operands are cloned."""
        for value in self.facts.frees_before.get(terminator, []):
            self.free(self.values[value])

    def map_results(self, old: Operation, new: Sequence[SSAValue]) -> None:
        for a, b in zip(old.results, new, strict=True):
            if a.name_hint and not b.name_hint:
                b.name_hint = a.name_hint
            self.values[a] = b

    def lowered_operand(self, op: Operation, index: int) -> SSAValue:
        """Operand `index` as the new IR sees it, cloned when phase 1 said so."""
        value = self.values[op.operands[index]]
        if (op, index) in self.facts.clones:
            return self.clone(value)
        return value

    def lower_scalar(self, op: Operation) -> None:
        if any(is_tensor(v) for inner in op.walk() for v in (*inner.operands, *inner.results)):
            raise error_at(
                op,
                f"'{self.name_of(op)}' holds tensor values; lower-to-device lowers tensors across "
                "func.call, scf.if and scf.for only",
            )
        clone = op.clone(value_mapper=self.values)
        self.emit(clone)
        for inner in clone.walk():
            inner.location = self.source.location if inner is clone else inner.location
        self.map_results(op, clone.results)


def drop_device_attrs(function: func.FuncOp) -> None:
    for key in ("arg_attrs", "res_attrs"):
        attrs = function.properties.get(key)
        if not isinstance(attrs, ArrayAttr):
            continue
        entries = [
            DictionaryAttr({k: v for k, v in d.data.items() if k != DEVICE_ATTR})
            for d in cast(ArrayAttr[DictionaryAttr], attrs).data
        ]
        if all(not e.data for e in entries):
            del function.properties[key]
        else:
            function.properties[key] = ArrayAttr(entries)
