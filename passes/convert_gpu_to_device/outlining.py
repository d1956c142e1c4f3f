"""Kernel outlining for `convert-gpu-to-device`: every `gpu.launch` with a body becomes a
`gpu.func ... kernel` in a new `gpu.module` and a `gpu.launch_func` of it, as MLIR's
`gpu-kernel-outlining` does.

Phases, for each `gpu.launch` in program order:

1. Captures: the values the body uses but does not define. An `arith.constant` is
   cloned into the kernel (MLIR sinks constants too); every other captured value
   becomes a kernel parameter, in order of first use, passed by the launch.
2. The body region moves into the new `gpu.func @<function>_kernel` in the new
   `gpu.module @<function>_kernel` (suffixed `_0`, `_1`, ... when taken), or into the
   names the launch asks for with `module(@m) function(@f)`. Its twelve `index`
   arguments (block ids, thread ids, grid sizes, block sizes) are replaced by
   `gpu.block_id`/`thread_id`/`grid_dim`/`block_dim` ops at the top of the entry
   block; each `gpu.terminator` becomes `gpu.return`.
   When the launch's block (grid) sizes are all constants, the kernel records them as
   `known_block_size` (`known_grid_size`), as MLIR's outliner does; each outlined kernel
   has one launch, so the hint holds.
3. The launch becomes `gpu.launch_func @<module>::@<function>` with the same sizes, async
   dependencies and token, and the captured values as arguments; the module gets
   `gpu.container_module`.

Refused (a located error): launches with clusters or dynamic shared memory, and
captured values of a type a kernel parameter cannot have (a `!gpu.async.token`).
"""

from __future__ import annotations

from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from ...diagnostics import error_at
from ...dialects.kernel import KNOWN_SIZES
from ...upstream import gpu as ga

_ID_OPS = (ga.BlockIdOp, ga.ThreadIdOp, ga.GridDimOp, ga.BlockDimOp)
"""What the launch region's twelve arguments are, three (x, y, z) each, in order."""


def _inside(op: Operation, region: Region) -> bool:
    parent = op.parent_region()
    while parent is not None:
        if parent is region:
            return True
        owner = parent.parent_op()
        parent = owner.parent_region() if owner is not None else None
    return False


def _defined_inside(value: SSAValue, region: Region) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        block_region = owner.parent
        return block_region is region or (
            block_region is not None
            and block_region.parent_op() is not None
            and _inside(block_region.parent_op(), region)  # pyright: ignore[reportArgumentType]
        )
    return _inside(owner, region)


def _captures(region: Region) -> list[SSAValue]:
    found: list[SSAValue] = []
    for op in region.walk():
        for operand in op.operands:
            if not _defined_inside(operand, region) and operand not in found:
                found.append(operand)
    return found


def _fresh_name(module: ModuleOp, stem: str) -> str:
    taken = {
        op.sym_name.data
        for op in module.body.block.ops
        if isinstance(op, gpu.ModuleOp | ga.ModuleOp)
    } | {
        name.data
        for op in module.body.block.ops
        if isinstance(name := op.attributes.get("sym_name"), StringAttr)
    }
    if stem not in taken:
        return stem
    n = 0
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"


def outline_launch(module: ModuleOp, launch: gpu.LaunchOp) -> None:
    """Replace `launch` by a `gpu.launch_func` of a new kernel (see the module docstring)."""
    if launch.clusterSizeX is not None:
        raise error_at(launch, "gpu.launch with cluster sizes cannot be converted")
    if launch.dynamicSharedMemorySize is not None:
        raise error_at(launch, "gpu.launch with dynamic shared memory cannot be converted")
    module_name, function_name = _kernel_names(module, launch)

    region = launch.detach_region(launch.body)
    entry = region.blocks.first
    if entry is None or len(entry.args) != 12:
        raise error_at(launch, "gpu.launch needs a body whose entry block has 12 index arguments")
    params = _parameters(launch, region, entry)
    _replace_region_arguments(launch, region, entry, params)
    _add_kernel(module, launch, region, module_name, function_name, params)
    _replace_launch(module, launch, module_name, function_name, params)


def _kernel_names(module: ModuleOp, launch: gpu.LaunchOp) -> tuple[str, str]:
    """The new gpu.module's and gpu.func's names: those the launch asks for
    (`module(@m) function(@f)`; the module's suffixed when taken), else both
    `<function>_kernel` (suffixed when taken)."""
    asked_module = launch.attributes.get(ga.LAUNCH_MODULE)
    asked_function = launch.attributes.get(ga.LAUNCH_FUNCTION)
    stem = _kernel_stem(module, launch)
    module_name = _fresh_name(
        module,
        asked_module.root_reference.data if isinstance(asked_module, SymbolRefAttr) else stem,
    )
    if isinstance(asked_function, SymbolRefAttr):
        return module_name, asked_function.root_reference.data
    return module_name, module_name


def _kernel_stem(module: ModuleOp, launch: gpu.LaunchOp) -> str:
    """`<function>_kernel` for the top-level function holding `launch`."""
    function = launch.parent_op()
    while function is not None and function.parent_op() is not module:
        function = function.parent_op()
    if function is None:
        return "kernel"
    name = function.attributes.get("sym_name") or function.properties.get("sym_name")
    return f"{name.data}_kernel" if isinstance(name, StringAttr) else "kernel"


def _parameters(launch: gpu.LaunchOp, region: Region, entry: Block) -> list[SSAValue]:
    """Phase 1: constants are cloned, everything else captured becomes a parameter."""
    params: list[SSAValue] = []
    for value in _captures(region):
        if isinstance(value.owner, arith.ConstantOp):
            clone = value.owner.clone()
            entry.insert_op_before(clone, entry.first_op) if entry.first_op else entry.add_op(clone)
            value.replace_uses_with_if(clone.result, lambda use: _inside(use.operation, region))
        elif isinstance(value.type, gpu.AsyncTokenType):
            raise error_at(launch, "a gpu.launch body cannot use a !gpu.async.token")
        else:
            params.append(value)
    return params


def _replace_region_arguments(
    launch: gpu.LaunchOp, region: Region, entry: Block, params: list[SSAValue]
) -> None:
    """Phase 2: ids and sizes become queries, captured values parameters, terminators
    returns."""
    ids: list[Operation] = []
    for k, op_class in enumerate(_ID_OPS):
        for d, dim in enumerate("xyz"):
            query = op_class.build(
                result_types=[IndexType()],
                properties={"dimension": gpu.DimensionAttr(gpu.DimensionEnum(dim))},
            )
            query.location = launch.location
            query.results[0].name_hint = entry.args[3 * k + d].name_hint
            entry.args[3 * k + d].replace_all_uses_with(query.results[0])
            ids.append(query)
    for arg in reversed(entry.args):
        entry.erase_arg(arg)
    for op in reversed(ids):
        entry.insert_op_before(op, entry.first_op) if entry.first_op else entry.add_op(op)
    for param in params:
        arg = entry.insert_arg(param.type, len(entry.args))
        arg.name_hint = param.name_hint
        param.replace_uses_with_if(arg, lambda use: _inside(use.operation, region))
    for op in list(region.walk()):
        if isinstance(op, gpu.TerminatorOp):
            ret = ga.ReturnOp.build(operands=[[]])
            ret.location = op.location
            Rewriter.replace_op(op, ret)


def _add_kernel(
    module: ModuleOp,
    launch: gpu.LaunchOp,
    region: Region,
    module_name: str,
    name: str,
    params: list[SSAValue],
) -> None:
    kernel = ga.FuncOp.build(
        properties={
            "function_type": FunctionType.from_lists([p.type for p in params], []),
            "kernel": UnitAttr(),
        },
        attributes={"sym_name": StringAttr(name)},
        regions=[region],
    )
    kernel.location = launch.location
    for keyword, sizes in (
        ("block", (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)),
        ("grid", (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)),
    ):
        known = _constant_sizes(sizes)
        if known is not None:
            kernel.attributes[KNOWN_SIZES[keyword]] = DenseArrayBase.from_list(i32, known)
    kernel_module = ga.ModuleOp.build(
        properties={"sym_name": StringAttr(module_name)}, regions=[Region(Block([kernel]))]
    )
    kernel_module.location = launch.location
    module.body.block.add_op(kernel_module)


def _constant_sizes(sizes: tuple[SSAValue, SSAValue, SSAValue]) -> list[int] | None:
    """The three sizes when each is an `arith.constant` that an i32 size hint can hold
    (MLIR's outliner records such sizes as `known_block_size`/`known_grid_size`; sizes
    below 1 are left to the launch's own check), else None."""
    known: list[int] = []
    for size in sizes:
        owner = size.owner
        if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, IntegerAttr):
            return None
        value = owner.value.value.data
        if not 1 <= value <= 2**31 - 1:
            return None
        known.append(value)
    return known


def _replace_launch(
    module: ModuleOp,
    launch: gpu.LaunchOp,
    module_name: str,
    name: str,
    params: list[SSAValue],
) -> None:
    """Phase 3: the launch."""
    call = ga.LaunchFuncOp.build(
        operands=[
            list(launch.asyncDependencies),
            launch.gridSizeX,
            launch.gridSizeY,
            launch.gridSizeZ,
            launch.blockSizeX,
            launch.blockSizeY,
            launch.blockSizeZ,
            [],
            [],
            [],
            [],
            params,
            [],
        ],
        result_types=[[gpu.AsyncTokenType()] if launch.asyncToken is not None else []],
        properties={"kernel": SymbolRefAttr(module_name, [name])},
    )
    call.location = launch.location
    Rewriter.replace_op(launch, call)
    module.attributes["gpu.container_module"] = UnitAttr()


def outline_launches(module: ModuleOp) -> None:
    """Outline every `gpu.launch` of `module` (see the module docstring)."""
    for op in list(module.walk()):
        if isinstance(op, gpu.LaunchOp):
            outline_launch(module, op)
