"""Phase 3 of convert-gpu-to-device: host memory the device reaches.

Each `memref.alloc` that a `gpu.host_register` names (through `memref.cast`s) becomes a
`device.alloc` in the device's "host" scope, viewed by host code through a
`memref.memory_space_cast` to its old type; a launch argument whose memory is
registered (also through function parameters every caller passes registered memory
for) is cast to the "host" scope at the launch, and that kernel parameter keeps no
memory space.
"""

from __future__ import annotations

from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.hints import isa

from ...diagnostics import error_at
from ...dialects import device as dev
from ...dialects.virtual_device import DeviceAttr
from ...upstream import gpu as ga

_CASTS = (memref.CastOp, memref.MemorySpaceCastOp)
"""Ops whose result is their operand's memory seen through another type."""


def _root(value: SSAValue) -> SSAValue:
    """The memory `value` views, through `memref.cast`s."""
    while isinstance(value.owner, _CASTS):
        value = value.owner.operands[0]
    return value


def _views(value: SSAValue) -> list[Operation]:
    """Every user of `value` and of the casts of it."""
    users: list[Operation] = []
    for use in value.uses:
        users.append(use.operation)
        if isinstance(use.operation, _CASTS):
            users.extend(_views(use.operation.results[0]))
    return users


def _is_host_shared(value: SSAValue) -> bool:
    owner = _root(value).owner
    return isinstance(owner, gpu.AllocOp) and owner.hostShared is not None


def calls_of(module: ModuleOp, function: func.FuncOp) -> list[func.CallOp]:
    """Every call of `function` in `module`."""
    name = function.sym_name.data
    return [
        op
        for op in module.walk()
        if isinstance(op, func.CallOp) and op.callee.root_reference.data == name
    ]


class HostRegistration:
    """The host memory of one module that one device reaches, and the kernel parameters
    launched with it."""

    def __init__(self, module: ModuleOp, host_memory: DeviceAttr):
        self.module = module
        self.host_memory = host_memory
        """The device's "host" scope (`gpu.host_register`, `host_shared`)."""
        self.host_params: set[tuple[str, str, int]] = set()
        """(module, kernel, parameter index) launched with host memory the device reaches."""
        self.registered: set[SSAValue] = set()
        """Host allocations registered with `gpu.host_register` (the casts' roots)."""

    def collect(self) -> None:
        """Each allocation a `gpu.host_register` names (through casts) becomes memory of
        the device's host scope, seen by host code through a `memref.memory_space_cast`
        to its old type; its `memref.dealloc` becomes `device.free` (one is added before
        the function's return when there is none)."""
        roots: list[SSAValue] = []
        for op in self.module.walk():
            if isinstance(op, ga.HostRegisterOp):
                root = _root(op.operands[0])
                if isinstance(root, BlockArgument):
                    continue  # a parameter: the caller's allocation is registered
                if not isinstance(root.owner, memref.AllocOp):
                    raise error_at(
                        op,
                        "gpu.host_register of memory that is not a memref.alloc (through "
                        "memref.cast) cannot be converted",
                    )
                if root not in roots:
                    roots.append(root)
        for root in roots:
            self._register(root)

    def _register(self, root: SSAValue) -> None:
        alloc = root.owner
        assert isinstance(alloc, memref.AllocOp)
        type_ = alloc.memref.type
        assert isa(type_, MemRefType[Attribute])
        device_type = MemRefType(type_.element_type, type_.shape, type_.layout, self.host_memory)
        new = dev.AllocOp(device_type, alloc.dynamic_sizes)
        view = memref.MemorySpaceCastOp(new.result, type_)
        for op in (new, view):
            op.location = alloc.location
        new.result.name_hint = root.name_hint
        Rewriter.replace_op(alloc, [new, view], [view.dest])
        self.registered.add(new.result)
        freed = False
        for use in list(_views(view.dest)):
            if isinstance(use, memref.DeallocOp):
                free = dev.FreeOp(new.result)
                free.location = use.location
                Rewriter.replace_op(use, free)
                freed = True
        block = new.parent_block()
        last = block.last_op if block is not None else None
        escapes = any(isinstance(u, func.ReturnOp) for u in _views(view.dest))
        if not freed and not escapes and isinstance(last, func.ReturnOp) and block is not None:
            free = dev.FreeOp(new.result)
            free.location = last.location
            block.insert_op_before(free, last)

    def host_visible(self, value: SSAValue, seen: frozenset[SSAValue] = frozenset()) -> bool:
        """Whether `value` is host memory registered with the device (or `host_shared`):
        its root allocation is registered, or it is a parameter every caller passes such
        memory for."""
        if not isa(value.type, MemRefType[Attribute]) or not isinstance(
            value.type.memory_space, NoneAttr
        ):
            return False
        root = _root(value)
        if root in self.registered:
            return True
        if root in seen or not isinstance(root, BlockArgument):
            return False
        function = root.block.parent_op()
        if not isinstance(function, func.FuncOp) or root.block is not function.body.blocks.first:
            return False
        calls = calls_of(self.module, function)
        return bool(calls) and all(
            self.host_visible(call.arguments[root.index], seen | {root}) for call in calls
        )

    def as_host_memory(self, value: SSAValue, where: Operation, ops: list[Operation]) -> SSAValue:
        """`value` seen as the device's host memory: a `memref.memory_space_cast` placed
        before the launch (added to `ops`)."""
        type_ = value.type
        assert isa(type_, MemRefType[Attribute])
        cast = memref.MemorySpaceCastOp(
            value, MemRefType(type_.element_type, type_.shape, type_.layout, self.host_memory)
        )
        cast.location = where.location
        ops.append(cast)
        return cast.dest

    def mark_host_params(self) -> None:
        """The kernel parameters some launch passes registered host memory for."""
        for op in self.module.walk():
            if isinstance(op, gpu.LaunchFuncOp):
                nested = [r.data for r in op.kernel.nested_references.data]
                path = (op.kernel.root_reference.data, *nested)
                for i, arg in enumerate(op.kernelOperands):
                    if self.host_visible(arg) or _is_host_shared(arg):
                        self.host_params.add((path[0], path[-1], i))
