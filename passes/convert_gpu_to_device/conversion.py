"""`convert-gpu-to-device`: MLIR's `gpu` dialect becomes devplan's `device` and `kernel`.

Other xDSL/MLIR flows produce host code in the `gpu` dialect; this pass maps it onto
one devplan device chosen by the `device` option (`convert-gpu-to-device{device="cuda:0"}`),
so devplan can classify, plan and run it.

  gpu.module @m, gpu.func @k kernel  ->  kernel.module @m target <device's target>, kernel.func @k
                                     (its discardable attributes kept; the size hints
                                     `[gpu.]known_block_size`/`known_grid_size` become
                                     kernel.func's launch constraint `known_*_size`)
  gpu.thread_id/block_id/block_dim/grid_dim  ->  kernel.thread_id/block_id/block_dim/grid_dim
  gpu.global_id                      ->  block_id * block_dim + thread_id
  gpu.barrier, gpu.return            ->  kernel.barrier, kernel.return
  gpu.printf, cf.assert (in kernels) ->  kernel.printf, kernel.assert
  gpu.all_reduce/subgroup_reduce/shuffle/rotate -> shared memory, barriers and loops
                                     (`kernel_lowering.py`)
  gpu.alloc / gpu.dealloc            ->  device.alloc / device.free (host_shared: "host" scope)
  gpu.memcpy %dst, %src              ->  device.copy %src to %dst (async: device.copy_async)
  gpu.launch_func                    ->  device.launch (async kept; i32/i64 sizes cast to index)
  gpu.wait                           ->  device.wait; an async gpu.wait only joins tokens

Phases:

0. Async regions (`passes/async_to_host.py`): each `async.execute` body runs where it
   stands, in program order, and `async.await` goes away. Each `gpu.memset` becomes a
   launch of a fill kernel (`memset.py`).
1. Outlining (`outlining.py`): each `gpu.launch` with a body becomes a `gpu.func` in a
   new `gpu.module` and a `gpu.launch_func` of it.
2. Checks (`checks.py`): every refusal below, before anything changes.
3. Registration (`registration.py`): each `memref.alloc` that a `gpu.host_register`
   names (through `memref.cast`s) becomes a `device.alloc` in the device's "host" scope,
   viewed by host code through a `memref.memory_space_cast` to its old type (its
   `memref.dealloc` becomes `device.free`, one is added before the return when there is
   none). A launch argument whose memory is registered (also through function
   parameters every caller passes registered memory for) is cast to the "host" scope at
   the launch, and that kernel parameter keeps no memory space.
4. Kernels: each body is lowered (`kernel_lowering.py`: structured control flow,
   collectives, printf and assert) and its gpu ops become kernel ops.
5. Host ops, in program order, as in the table.

Memory: the result of `gpu.alloc` and every other memref parameter of a kernel live in
`#vdev.device<type, id, ?, "global">` of the chosen device. The new types are
propagated: through `func.return` to the function's result types and its callers,
through `func.call` to the callee's parameters (and to what a callee returns, for a call
result), and a host function's parameter passed to a kernel becomes device memory (so is
every caller's argument for it), whatever the order of the functions.

Tokens: each `!gpu.async.token` maps to the list of `!device.token`s it stands for
(empty when the work is already done, several for a joining `gpu.wait async`).
Ops devplan has only in a synchronous form (alloc, free) wait for their
dependencies first and produce an empty list.

Not converted (a located error at the op): `gpu.lane_id`, subgroup id/size queries,
`gpu.set_default_device`, kernel-only ops outside a `gpu.func`, gpu ops
inside ops devplan does not know, cluster sizes, dynamic shared memory, non-kernel
`gpu.func`s, private attributions and argument attributes of a `gpu.func`, workgroup
attributions of dynamic shape or not in workgroup memory, `gpu.module` targets, barriers
of subgroup scope, memory spaces other than global (none, 0, 1 or
`#gpu.address_space<global>`), `gpu.host_register` of
memory that is not a `memref.alloc`, and tokens that flow into ops other than the gpu
ops above. Workgroup attributions become `kernel.alloc_shared` buffers (phase 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.hints import isa

from ...diagnostics import DevplanError, error_at
from ...dialects import device as dev
from ...dialects import kernel
from ...dialects.target import TargetAttr
from ...dialects.target_kinds import TargetError
from ...dialects.virtual_device import DeviceAttr
from ...upstream import gpu as ga
from ..async_to_host import run_async_on_host
from .checks import check_convertible
from .kernel_lowering import lower_kernel_body
from .memset import memsets_to_launches
from .outlining import outline_launches
from .registration import HostRegistration, calls_of

_INDEX_QUERIES: dict[
    str, type[kernel.ThreadIdOp | kernel.BlockIdOp | kernel.BlockDimOp | kernel.GridDimOp]
] = {
    "gpu.thread_id": kernel.ThreadIdOp,
    "gpu.block_id": kernel.BlockIdOp,
    "gpu.block_dim": kernel.BlockDimOp,
    "gpu.grid_dim": kernel.GridDimOp,
}


_GPU_KNOWN_SIZES = {
    "gpu.known_block_size": kernel.KNOWN_SIZES["block"],
    "gpu.known_grid_size": kernel.KNOWN_SIZES["grid"],
}
"""xDSL's names of the gpu.func size hints -> the kernel.func attributes (MLIR now names
them without the prefix, as the kernel dialect does)."""

_CONSUMED_FUNC_ATTRIBUTES = frozenset({"sym_name", "gpu.kernel"})
"""gpu.func attributes the conversion turns into kernel.func's own structure."""


def kernel_attributes(op: gpu.FuncOp) -> dict[str, Attribute]:
    """The discardable attributes of a kernel `gpu.func` that its `kernel.func` keeps:
    every one but those the conversion consumed, the size hints renamed to
    `known_block_size` / `known_grid_size` (which every launch must then match)."""
    kept: dict[str, Attribute] = {}
    for name, value in op.attributes.items():
        if name in _CONSUMED_FUNC_ATTRIBUTES:
            continue
        name = _GPU_KNOWN_SIZES.get(name, name)
        if name in kept and kept[name] != value:
            raise error_at(
                op,
                f"gpu.func @{op.sym_name.data} gives {name} twice, as {kept[name]} and "
                f"{value} (also as gpu.{name}); give it once",
            )
        kept[name] = value
    return kept


def parse_device_option(text: str) -> DeviceAttr:
    """The device of `device="cuda:0"`; a `DevplanError` naming the problem otherwise."""
    hint = 'write it as type:id, e.g. convert-gpu-to-device{device="cuda:0"}'
    try:
        device = DeviceAttr.from_string(text)
    except (ValueError, DevplanError) as e:
        raise DevplanError(
            f"error: convert-gpu-to-device: invalid device '{text}': {e}; {hint}"
        ) from None
    if device.type_name is None or device.device_id is None:
        raise DevplanError(
            f"error: convert-gpu-to-device: device '{text}' must name a device type and id; {hint}"
        )
    return device


def device_target(module: ModuleOp, device: DeviceAttr) -> TargetAttr:
    """The device's target: its own, the module's `vdev.targets` entry, or the kind
    named like the device type."""
    if device.target_value is not None:
        return device.target_value
    targets = module.attributes.get("vdev.targets")
    if isa(targets, ArrayAttr[Attribute]):
        for target in targets.data:
            if isinstance(target, TargetAttr) and target.device_type == device.type_name:
                return target
    try:
        return TargetAttr.from_config({"kind": device.type_name})
    except TargetError as e:
        raise DevplanError(
            f"error: convert-gpu-to-device: no target for device type '{device.type_name}' ({e}); "
            "list one in the module's vdev.targets"
        ) from None


class GpuToDevice:
    """One conversion of one module onto one device."""

    def __init__(self, module: ModuleOp, device: DeviceAttr):
        self.module = module
        assert device.type_name is not None
        self.device = DeviceAttr.make(device.type_name, device.device_id)
        self.memory = DeviceAttr.make(device.type_name, device.device_id, None, "global")
        self.host_memory = DeviceAttr.make(device.type_name, device.device_id, None, "host")
        """Host memory the device reaches (`gpu.host_register`, `host_shared`)."""
        self.registration = HostRegistration(module, self.host_memory)
        self.target = device_target(module, device)
        self.tokens: dict[SSAValue, list[SSAValue]] = {}
        self.replaced: list[Operation] = []
        """Converted host ops; erased at the end, so tokens stay valid keys meanwhile."""

    # ---- memory types ----------------------------------------------------------------

    def device_memref(self, type_: Attribute, where: Operation) -> Attribute:
        """`type_` in the device's global memory (non-memrefs unchanged)."""
        if not isa(type_, MemRefType[Attribute]):
            return type_
        space = type_.memory_space
        if isinstance(space, DeviceAttr) and space in (self.memory, self.host_memory):
            return type_
        if not (
            isinstance(space, NoneAttr)
            or (isinstance(space, IntegerAttr) and space.value.data in (0, 1))
            or (isinstance(space, ga.AddressSpaceAttr) and space.space.data == "global")
        ):
            raise error_at(
                where,
                f"memory space {space} of {type_} has no devplan equivalent; "
                "only global memory (no space, 0, 1 or #gpu.address_space<global>) is "
                "converted",
            )
        return MemRefType(type_.element_type, type_.shape, type_.layout, self.memory)

    def retype(self, value: SSAValue, new_type: Attribute, where: Operation) -> SSAValue:
        """Give `value` the device memory type and propagate it to its users."""
        if value.type == new_type:
            return value
        if isinstance(value, BlockArgument):
            function = value.block.parent_op()
            if (
                not isinstance(function, func.FuncOp)
                or value.block is not function.body.blocks.first
            ):
                raise error_at(
                    where,
                    f"cannot move this block argument of '{function.name if function else '?'}' "
                    "into device memory; only function parameters can change memory space",
                )
            new = Rewriter.replace_value_with_new_type(value, new_type)
            function.update_function_type()
            for call in calls_of(self.module, function):
                self.retype(call.arguments[value.index], new_type, call)
        elif isinstance(value, OpResult) and isinstance(value.op, func.CallOp):
            new = self._retype_call_result(value.op, value.index, new_type, where)
        elif isinstance(value, OpResult) and isinstance(value.op, gpu.AllocOp):
            # Not converted yet (its function comes later): it becomes device memory.
            new = Rewriter.replace_value_with_new_type(value, new_type)
        else:
            owner = value.owner.name if isinstance(value.owner, Operation) else "a block"
            if isinstance(value.owner, UnregisteredOp):
                owner = value.owner.op_name.data
            raise error_at(
                where,
                f"{value.type} comes from '{owner}' in host memory, but is used as device "
                "memory; allocate it with gpu.alloc, or register it with gpu.host_register",
            )
        self.propagate(new)
        return new

    def _retype_call_result(
        self, call: func.CallOp, index: int, new_type: Attribute, where: Operation
    ) -> SSAValue:
        """A call result becomes device memory: so does what the callee returns there."""
        name = call.callee.root_reference.data
        callee = self._function(name)
        if callee is None or callee.is_declaration:
            raise error_at(
                where,
                f"result {index} of @{name}, whose body is unknown, is used as device memory; "
                "it cannot change its memory space",
            )
        for op in callee.walk():
            if isinstance(op, func.ReturnOp) and op.operands[index].type != new_type:
                self.retype(op.operands[index], new_type, where)
        result = call.res[index]
        if result.type != new_type:
            result = Rewriter.replace_value_with_new_type(result, new_type)
        return result

    def propagate(self, value: SSAValue) -> None:
        """After `value` became device memory: fix the types that must agree with it."""
        for use in list(value.uses):
            user = use.operation
            if isinstance(user, func.ReturnOp):
                function = user.parent_op()
                assert isinstance(function, func.FuncOp)
                function.update_function_type()
                for call in calls_of(self.module, function):
                    self.retype(call.res[use.index], value.type, call)
            elif isinstance(user, func.CallOp):
                callee = self._function(user.callee.root_reference.data)
                if callee is None or callee.is_declaration:
                    raise error_at(
                        user,
                        f"device memory passed to @{user.callee.root_reference.data}, whose "
                        "body is unknown, cannot change its parameter type",
                    )
                self.retype(callee.args[use.index], value.type, user)

    def _function(self, name: str) -> func.FuncOp | None:
        for op in self.module.body.block.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                return op
        return None

    # ---- kernels ---------------------------------------------------------------------

    def convert_module(self, op: gpu.ModuleOp) -> None:
        kernels = [
            self.convert_func(f, op.sym_name.data)
            for f in list(op.body.block.ops)
            if isinstance(f, gpu.FuncOp)
        ]
        for other in op.body.block.ops:
            if not isinstance(other, gpu.FuncOp) and other.name != "gpu.module_end":
                raise error_at(other, f"'{other.name}' in a gpu.module cannot be converted")
        new = kernel.KernelModuleOp(op.sym_name.data, self.target, kernels)
        new.location = op.location
        Rewriter.replace_op(op, new)

    def convert_func(self, op: gpu.FuncOp, module_name: str) -> kernel.KernelFuncOp:
        name = op.sym_name.data
        max_threads = self.target.get_attr("max_num_threads", 1024)
        warp_size = self.target.get_attr("thread_warp_size", 32)
        assert isinstance(max_threads, int)
        assert isinstance(warp_size, int)
        self.attributions_to_shared_memory(op)
        lower_kernel_body(op, op.body, name, max_threads, warp_size)
        body = op.detach_region(op.body)
        block = body.blocks.first
        assert block is not None
        for arg in list(block.args):
            if (module_name, name, arg.index) in self.registration.host_params and isa(
                arg.type, MemRefType[Attribute]
            ):
                # Launched with host memory the device reaches: any reachable space.
                continue
            Rewriter.replace_value_with_new_type(arg, self.device_memref(arg.type, op))
        for inner in list(body.walk()):
            self.convert_kernel_op(inner)
        new = kernel.KernelFuncOp(op.sym_name.data, [a.type for a in block.args], body)
        new.location = op.location
        new.attributes.update(kernel_attributes(op))
        Rewriter.erase_op(op)
        return new

    def attributions_to_shared_memory(self, op: gpu.FuncOp) -> None:
        """Workgroup attributions become `kernel.alloc_shared` buffers; private ones
        (memory of each thread) have no kernel-dialect equivalent."""
        block = op.body.blocks.first
        assert block is not None
        inputs = len(op.function_type.inputs.data)
        workgroup = ga.workgroup_attribution_count(op)
        assert len(block.args) == inputs + workgroup  # checked: no private attributions
        first = block.first_op
        for arg in list(block.args[inputs:]):
            type_ = arg.type
            assert isa(type_, MemRefType[Attribute])
            shared = MemRefType(
                type_.element_type,
                type_.shape,
                memory_space=DeviceAttr.make(None, None, None, "shared"),
            )
            alloc = kernel.AllocSharedOp(shared)
            alloc.location = op.location
            alloc.result.name_hint = arg.name_hint
            if first is None:
                block.add_op(alloc)
            else:
                block.insert_op_before(alloc, first)
            arg.replace_all_uses_with(alloc.result)
            block.erase_arg(arg)
        op.attributes.pop(ga.WORKGROUP_ATTRIBUTIONS, None)

    def convert_kernel_op(self, op: Operation) -> None:
        query = _INDEX_QUERIES.get(op.name)
        if query is not None:
            assert isinstance(op, gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp)
            self._replace(op, [query(op.dimension.data.value)])  # pyright: ignore[reportArgumentType]
        elif isinstance(op, gpu.GlobalIdOp):
            dim = op.dimension.data.value
            bid, bdim, tid = kernel.BlockIdOp(dim), kernel.BlockDimOp(dim), kernel.ThreadIdOp(dim)  # pyright: ignore[reportArgumentType]
            base = arith.MuliOp(bid, bdim)
            self._replace(op, [bid, bdim, tid, base, arith.AddiOp(base, tid)])
            for part in (bid, bdim, tid, base):
                part.result.name_hint = None
        elif isinstance(op, gpu.BarrierOp):
            # A memfence list only narrows what is fenced: a full barrier is stronger.
            self._replace(op, [kernel.BarrierOp()])
        elif isinstance(op, gpu.ReturnOp):
            if op.args:
                raise error_at(op, "a kernel returns nothing; gpu.return has operands")
            self._replace(op, [kernel.ReturnOp()])

    @staticmethod
    def _replace(op: Operation, new_ops: Sequence[Operation]) -> None:
        for new in new_ops:
            new.location = op.location
        Rewriter.replace_op(op, list(new_ops))

    # ---- host ------------------------------------------------------------------------

    def deps(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        found: list[SSAValue] = []
        for value in values:
            for token in self.tokens.get(value, []):
                if token not in found:
                    found.append(token)
        return found

    def wait_first(self, op: Operation, dependencies: Sequence[SSAValue]) -> list[Operation]:
        tokens = self.deps(dependencies)
        return [dev.WaitOp(tokens)] if tokens else []

    def convert_host_op(self, op: Operation) -> None:
        if isinstance(op, ga.HostRegisterOp | ga.HostUnregisterOp):
            self.replaced.append(op)  # registration is resolved per launch argument
        elif isinstance(op, gpu.AllocOp):
            type_ = self.device_memref(op.result.type, op)
            assert isa(type_, MemRefType[Attribute])
            if op.hostShared is not None:
                type_ = MemRefType(type_.element_type, type_.shape, type_.layout, self.host_memory)
            alloc = dev.AllocOp(type_, op.dynamicSizes)
            self._host_replace(
                op, [*self.wait_first(op, op.asyncDependencies), alloc], alloc.result, []
            )
            self.propagate(alloc.result)
        elif isinstance(op, gpu.DeallocOp):
            free = dev.FreeOp(op.buffer)
            self._host_replace(op, [*self.wait_first(op, op.asyncDependencies), free], None, [])
        elif isinstance(op, gpu.MemcpyOp):
            if op.asyncToken is not None:
                copy = dev.CopyAsyncOp(op.src, op.dst, self.deps(op.asyncDependencies))
                self._host_replace(op, [copy], None, [copy.token])
            else:
                ops = [*self.wait_first(op, op.asyncDependencies), dev.CopyOp(op.src, op.dst)]
                self._host_replace(op, ops, None, [])
        elif isinstance(op, gpu.LaunchFuncOp):
            self.convert_launch(op)
        elif isinstance(op, gpu.WaitOp):
            tokens = self.deps(op.asyncDependencies)
            if op.asyncToken is not None:
                self.tokens[op.asyncToken] = tokens
                self.replaced.append(op)
            else:
                has_deps = bool(op.asyncDependencies)
                self._host_replace(
                    op, [] if has_deps and not tokens else [dev.WaitOp(tokens)], None, []
                )

    def convert_launch(self, op: gpu.LaunchFuncOp) -> None:
        new_ops: list[Operation] = []
        sizes: list[SSAValue] = []
        for size in (
            op.gridSizeX,
            op.gridSizeY,
            op.gridSizeZ,
            op.blockSizeX,
            op.blockSizeY,
            op.blockSizeZ,
        ):
            if isinstance(size.type, IndexType):
                sizes.append(size)
            else:
                cast = arith.IndexCastOp(size, IndexType())
                new_ops.append(cast)
                sizes.append(cast.result)
        args: list[SSAValue] = []
        for arg in op.kernelOperands:
            if self.registration.host_visible(arg):
                args.append(self.registration.as_host_memory(arg, op, new_ops))
                continue
            new_type = self.device_memref(arg.type, op)
            args.append(self.retype(arg, new_type, op) if new_type != arg.type else arg)
        is_async = op.asyncToken is not None
        if not is_async:
            new_ops.extend(self.wait_first(op, op.asyncDependencies))
        launch = dev.LaunchOp(
            op.kernel,
            self.device,
            sizes[:3],
            sizes[3:],
            args,
            is_async=is_async,
            dependencies=self.deps(op.asyncDependencies) if is_async else (),
        )
        new_ops.append(launch)
        self._host_replace(op, new_ops, None, [launch.token] if launch.token is not None else [])

    # ---- host memory the device reaches ---------------------------------------------

    def _host_replace(
        self,
        op: Operation,
        new_ops: Sequence[Operation],
        result: SSAValue | None,
        tokens: list[SSAValue],
    ) -> None:
        """Replace `op`: its memref result by `result`, its token by `tokens`."""
        for new in new_ops:
            new.location = op.location
        token = next((r for r in op.results if isinstance(r.type, gpu.AsyncTokenType)), None)
        if token is not None:
            self.tokens[token] = tokens
            if len(tokens) == 1:
                tokens[0].name_hint = token.name_hint
        block = op.parent_block()
        assert block is not None
        for new in new_ops:
            block.insert_op_before(new, op)
        memref = next((r for r in op.results if not isinstance(r.type, gpu.AsyncTokenType)), None)
        if memref is not None and result is not None:
            memref.replace_all_uses_with(result)
        self.replaced.append(op)

    def run(self) -> None:
        run_async_on_host(self.module)
        memsets_to_launches(self.module)
        outline_launches(self.module)
        check_convertible(self.module)
        self.registration.collect()
        self.registration.mark_host_params()
        for op in list(self.module.walk()):
            if isinstance(op, gpu.ModuleOp):
                self.convert_module(op)
        for op in list(self.module.walk()):
            if op.name.startswith("gpu.") and op.parent_op() is not None:
                self.convert_host_op(op)
        for op in reversed(self.replaced):
            Rewriter.erase_op(op)
        self.module.attributes.pop("gpu.container_module", None)


@dataclass(frozen=True)
class ConvertGpuToDevicePass(ModulePass):
    """Converts xDSL's `gpu` dialect (generic form) to `device` and `kernel` ops on one
    device: `"gpu.launch_func"(...) <{kernel = @m::@k}>` becomes
    `device.launch @m::@k on #vdev.device<"cuda", 0> grid(...) block(...) args(...)`.
    See the module docstring for the mapping and what is refused.
    """

    name = "convert-gpu-to-device"

    device: str = "cuda:0"
    """The device the gpu code runs on, `type:id` (e.g. "cuda:0", "rocm:1")."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        GpuToDevice(op, parse_device_option(self.device)).run()
