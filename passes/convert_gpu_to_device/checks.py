"""Phase 2 of convert-gpu-to-device: every refusal, checked before anything changes
(the module docstring of `conversion.py` lists what is not converted)."""

from __future__ import annotations

from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StringAttr, UnregisteredOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.hints import isa

from ...diagnostics import error_at
from ...upstream import gpu as ga

UNSUPPORTED: dict[str, str] = {
    "gpu.lane_id": "gpu.lane_id has no kernel-dialect equivalent",
    "gpu.subgroup_id": "subgroup ops have no kernel-dialect equivalent",
    "gpu.subgroup_size": "subgroup ops have no kernel-dialect equivalent",
    "gpu.num_subgroups": "subgroup ops have no kernel-dialect equivalent",
    "gpu.set_default_device": "gpu.set_default_device cannot be converted; choose the "
    'device with the pass option, e.g. convert-gpu-to-device{device="cuda:1"}',
}
"""gpu ops this pass refuses, with the reason."""

KERNEL_ONLY = frozenset(
    {
        "gpu.thread_id",
        "gpu.block_id",
        "gpu.block_dim",
        "gpu.grid_dim",
        "gpu.global_id",
        "gpu.barrier",
        "gpu.return",
        "gpu.all_reduce",
        "gpu.subgroup_reduce",
        "gpu.shuffle",
        "gpu.rotate",
        "gpu.printf",
    }
)
"""gpu ops that mean something only inside a kernel (`gpu.func ... kernel`)."""

_HOST_TOKEN_USERS = (gpu.AllocOp, gpu.DeallocOp, gpu.MemcpyOp, gpu.LaunchFuncOp, gpu.WaitOp)


def is_kernel(op: gpu.FuncOp) -> bool:
    """A `gpu.func ... kernel`, or one marked with MLIR's `gpu.kernel` unit attribute."""
    return op.kernel is not None or "gpu.kernel" in op.attributes


def _is_workgroup_space(space: Attribute) -> bool:
    """Workgroup (block-shared) memory: MLIR's address space 3, or
    `#gpu.address_space<workgroup>`."""
    if isinstance(space, IntegerAttr):
        return space.value.data == 3
    return isinstance(space, ga.AddressSpaceAttr) and space.space.data == "workgroup"


def _in_gpu_func(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.FuncOp):
        parent = parent.parent_op()
    return parent is not None


def check_convertible(module: ModuleOp) -> None:
    """Every refusal, before anything changes."""
    for op in module.walk():
        _check_op(op)
        for result in op.results:
            _check_token_uses(result)
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            for arg in op.args:
                if isinstance(arg.type, gpu.AsyncTokenType):
                    raise error_at(op, "a !gpu.async.token function parameter cannot be converted")


def _check_op(op: Operation) -> None:
    if op.name in UNSUPPORTED:
        raise error_at(op, UNSUPPORTED[op.name])
    if op.name in KERNEL_ONLY and not _in_gpu_func(op):
        raise error_at(
            op,
            f"'{op.name}' is outside a gpu.func; it can only be converted inside a kernel",
        )
    if isinstance(op, gpu.AllocOp) and op.symbolOperands:
        raise error_at(op, "gpu.alloc with symbol operands cannot be converted")
    if isinstance(op, gpu.LaunchFuncOp):
        _check_launch(op)
    if op.name.startswith("gpu.") and not _in_gpu_func(op):
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, UnregisteredOp):
            parent = parent.parent_op()
        if parent is not None:
            raise error_at(
                op,
                f"'{op.name}' is inside '{parent.op_name.data}', an op devplan does not "
                "know; only gpu ops in functions and scf regions can be converted",
            )
    for key, what in ((ga.MODULE_TARGETS, "compilation targets"),
                      (ga.MODULE_HANDLER, "an offloading handler")):  # fmt: skip
        if isinstance(op, gpu.ModuleOp) and key in op.attributes:
            raise error_at(
                op,
                f"gpu.module @{op.sym_name.data} names {what} {op.attributes[key]}; "
                "devplan compiles its kernels for the device the pass converts to "
                '(convert-gpu-to-device{device="cuda:0"}): remove them',
            )
    scope = op.attributes.get(ga.BARRIER_SCOPE)
    if isinstance(op, gpu.BarrierOp) and isinstance(scope, StringAttr):
        raise error_at(
            op,
            f"a gpu.barrier of {scope.data} scope cannot be converted; "
            "kernel.barrier waits for every thread of the block",
        )
    if isinstance(op, gpu.FuncOp):
        _check_func(op)


def _check_func(op: gpu.FuncOp) -> None:
    if ga.ARG_ATTRS in op.attributes:
        raise error_at(
            op,
            f"gpu.func @{op.sym_name.data} has argument attributes "
            f"{op.attributes[ga.ARG_ATTRS]}; devplan does not convert them",
        )
    if not is_kernel(op):
        raise error_at(
            op,
            f"gpu.func @{op.sym_name.data} is not a kernel; only kernels (gpu.func "
            "... kernel) can be converted",
        )
    _check_attributions(op)


def _check_attributions(op: gpu.FuncOp) -> None:
    """Workgroup attributions need a static shape and workgroup memory; private
    ones (memory of each thread) have no kernel-dialect equivalent."""
    block = op.body.blocks.first
    assert block is not None
    inputs = len(op.function_type.inputs.data)
    workgroup = ga.workgroup_attribution_count(op)
    name = op.sym_name.data
    if len(block.args) > inputs + workgroup:
        raise error_at(
            op,
            f"gpu.func @{name} has private attributions (memory of each thread); "
            "devplan's kernels have no per-thread memory; keep such values in SSA values",
        )
    for arg in block.args[inputs:]:
        type_ = arg.type
        assert isa(type_, MemRefType[Attribute])
        if not type_.has_static_shape() or not _is_workgroup_space(type_.memory_space):
            raise error_at(
                op,
                f"workgroup attribution {type_} of gpu.func @{name} cannot be converted; "
                "it needs a static shape and the workgroup memory space (3 or "
                "#gpu.address_space<workgroup>)",
            )


def _check_launch(op: gpu.LaunchFuncOp) -> None:
    if op.clusterSizeX is not None:
        raise error_at(op, "gpu.launch_func with cluster sizes cannot be converted")
    if op.dynamicSharedMemorySize is not None:
        raise error_at(
            op,
            "gpu.launch_func with dynamic shared memory cannot be converted; "
            "use kernel.alloc_shared with a static size in the kernel",
        )
    if op.asyncObject is not None:
        raise error_at(op, "gpu.launch_func with an async object cannot be converted")


def _check_token_uses(value: SSAValue) -> None:
    if not isinstance(value.type, gpu.AsyncTokenType):
        return
    for use in value.uses:
        if not isinstance(use.operation, _HOST_TOKEN_USERS):
            raise error_at(
                use.operation,
                f"'{use.operation.name}' uses a !gpu.async.token; tokens can only flow "
                "into gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.launch_func and gpu.wait",
            )
