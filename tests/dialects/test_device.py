"""The `device` dialect: memory effects as DCE and CSE see them, builders, accessors."""

from __future__ import annotations

import pytest
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    f32,
    i32,
)
from xdsl.ir import Attribute, Operation
from xdsl.traits import EffectInstance, MemoryEffectKind, get_effects

import devplan
from devplan.dialects.device import (
    DEVICE_ATTR_KINDS,
    AllocOp,
    AllocWorkspaceOp,
    AttrOp,
    CopyAsyncOp,
    CopyOp,
    FreeOp,
    FreeWorkspaceOp,
    LaunchOp,
    TokenType,
    WaitOp,
)
from devplan.dialects.virtual_device import DeviceAttr

CUDA0 = '#vdev.device<"cuda", 0>'
D16 = f"memref<16xf32, {CUDA0}>"

KERNELS = """
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @scale(%a: memref<?xf32>, %k: f32) {
    kernel.return
  }
}
"""


def parse(body: str, args: str = "", kernels: str = KERNELS) -> ModuleOp:
    return devplan.parse(f"{kernels}\nfunc.func @f({args}) {{\n{body}\n  func.return\n}}\n")


def ops_named(module: ModuleOp, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.name == name]


def kinds(op: Operation) -> set[tuple[MemoryEffectKind, object]]:
    effects = get_effects(op)
    assert effects is not None
    return {(e.kind, e.value) for e in effects}


def first(module: ModuleOp, name: str) -> Operation:
    return ops_named(module, name)[0]


# --- memory effects -----------------------------------------------------------------


def test_alloc_allocates_and_free_frees() -> None:
    module = parse(
        f"  %d = device.alloc() : {D16}\n  device.free %d : {D16}\n"
        f"  %w = device.alloc_workspace() : {D16}\n  device.free_workspace %w : {D16}"
    )
    assert kinds(first(module, "device.alloc")) == {(MemoryEffectKind.ALLOC, None)}
    assert kinds(first(module, "device.free")) == {(MemoryEffectKind.FREE, None)}
    assert kinds(first(module, "device.alloc_workspace")) == {(MemoryEffectKind.ALLOC, None)}
    assert kinds(first(module, "device.free_workspace")) == {(MemoryEffectKind.FREE, None)}


def test_copy_reads_its_source_and_writes_its_destination() -> None:
    module = parse(
        f"  device.copy %h to %d : memref<16xf32> to {D16}\n"
        f"  %t = device.copy_async [] %d to %h : {D16} to memref<16xf32>",
        f"%h: memref<16xf32>, %d: {D16}",
    )
    copy, copy_async = first(module, "device.copy"), first(module, "device.copy_async")
    h, d = copy.operands
    assert kinds(copy) == {(MemoryEffectKind.READ, h), (MemoryEffectKind.WRITE, d)}
    assert kinds(copy_async) == {(MemoryEffectKind.READ, d), (MemoryEffectKind.WRITE, h)}


def test_launch_reads_and_writes_each_memref_argument_but_not_scalars() -> None:
    module = parse(
        "  %c1 = arith.constant 1 : index\n"
        f"  device.launch @kernels::@scale on {CUDA0} grid(%c1, %c1, %c1) "
        f"block(%c1, %c1, %c1) args(%d, %k) : {D16}, f32",
        f"%d: {D16}, %k: f32",
    )
    launch = first(module, "device.launch")
    assert isinstance(launch, LaunchOp)
    d = launch.args[0]
    assert kinds(launch) == {(MemoryEffectKind.READ, d), (MemoryEffectKind.WRITE, d)}


def test_wait_orders_all_memory() -> None:
    module = parse("  device.wait %t", "%t: !device.token")
    assert kinds(first(module, "device.wait")) == {
        (MemoryEffectKind.READ, None),
        (MemoryEffectKind.WRITE, None),
    }


def test_device_attr_is_a_pure_query_except_available_memory() -> None:
    module = parse(
        f'  %n = device.attr "warp_size" of {CUDA0} : index\n'
        f'  %m = device.attr "available_global_memory" of {CUDA0} : i64'
    )
    warp, free_memory = ops_named(module, "device.attr")
    assert get_effects(warp) == set()
    assert get_effects(free_memory) is None  # changes with every allocation


# --- DCE and CSE --------------------------------------------------------------------

PROGRAM = f"""
  %c1 = arith.constant 1 : index
  %unused = device.attr "max_threads_per_block" of {CUDA0} : index
  %free = device.attr "available_global_memory" of {CUDA0} : i64
  device.copy %h to %d : memref<16xf32> to {D16}
  device.copy %h to %d : memref<16xf32> to {D16}
  device.launch @kernels::@scale on {CUDA0} grid(%c1, %c1, %c1)
      block(%c1, %c1, %c1) args(%d, %k) : {D16}, f32
  %t = device.copy_async [] %d to %h : {D16} to memref<16xf32>
  device.wait %t"""
ARGS = f"%h: memref<16xf32>, %d: {D16}, %k: f32"


def test_dce_keeps_copies_launches_and_waits() -> None:
    module = devplan.apply(parse(PROGRAM, ARGS), "dce")
    assert len(ops_named(module, "device.copy")) == 2
    assert len(ops_named(module, "device.launch")) == 1
    assert len(ops_named(module, "device.copy_async")) == 1
    assert len(ops_named(module, "device.wait")) == 1


def test_dce_removes_an_unused_device_attr_but_not_the_free_memory_query() -> None:
    module = devplan.apply(parse(PROGRAM, ARGS), "dce")
    names = [op.attr_name for op in module.walk() if isinstance(op, AttrOp)]
    assert names == ["available_global_memory"]


def test_dce_keeps_an_alloc_whose_buffer_is_freed() -> None:
    module = devplan.apply(parse(f"  %d = device.alloc() : {D16}\n  device.free %d : {D16}"), "dce")
    assert len(ops_named(module, "device.alloc")) == 1
    assert len(ops_named(module, "device.free")) == 1


def test_cse_keeps_repeated_copies_and_launches() -> None:
    launch = (
        f"  device.launch @kernels::@scale on {CUDA0} grid(%c1, %c1, %c1) "
        f"block(%c1, %c1, %c1) args(%d, %k) : {D16}, f32\n"
    )
    module = parse(
        "  %c1 = arith.constant 1 : index\n"
        f"  device.copy %h to %d : memref<16xf32> to {D16}\n"
        + launch * 2
        + f"  device.copy %h to %d : memref<16xf32> to {D16}",
        ARGS,
    )
    module = devplan.apply(module, "cse")
    assert len(ops_named(module, "device.copy")) == 2
    assert len(ops_named(module, "device.launch")) == 2


def cse_of_two_attr_queries(kind: str) -> ModuleOp:
    """`cse` applied to two `device.attr` queries of `kind`, each result stored."""
    body = "\n".join(
        f'  %n{i} = device.attr "{kind}" of {CUDA0} : index\n'
        f"  memref.store %n{i}, %out[%n{i}] : memref<64xindex>"
        for i in range(2)
    )
    return devplan.apply(parse(body, "%out: memref<64xindex>"), "cse")


def test_cse_merges_duplicate_device_attrs() -> None:
    module = cse_of_two_attr_queries("warp_size")
    assert len(ops_named(module, "device.attr")) == 1
    assert len(ops_named(module, "memref.store")) == 2


def test_cse_does_not_merge_free_memory_queries() -> None:
    module = cse_of_two_attr_queries("available_global_memory")
    assert len(ops_named(module, "device.attr")) == 2


# --- builders and accessors ---------------------------------------------------------


def device_memref(shape: list[int]) -> MemRefType[Attribute]:
    return MemRefType(f32, shape, memory_space=DeviceAttr.from_string("cuda:0"))


def test_builders_make_ops_that_verify_inside_a_module() -> None:
    kernels = next(iter(devplan.parse(KERNELS).ops)).clone()
    index = IndexType()
    one = ConstantOp.from_int_and_width(1, index)
    k = ConstantOp(FloatAttr(2.0, f32))
    alloc = AllocOp(device_memref([DYNAMIC_INDEX]), [one])
    ws = AllocWorkspaceOp(device_memref([4]))
    copy = CopyOp(alloc, alloc)
    copy_async = CopyAsyncOp(alloc, alloc)
    launch = LaunchOp(
        SymbolRefAttr("kernels", ["scale"]),
        DeviceAttr.from_string("cuda:0"),
        [one] * 3,
        [one] * 3,
        [alloc, k],
        is_async=True,
        dependencies=[copy_async],
    )
    wait = WaitOp([launch.token] if launch.token is not None else [])
    attr = AttrOp("warp_size", DeviceAttr.from_string("cuda:0"), i32)
    ops: list[Operation] = [one, k, alloc, ws, copy, copy_async, launch, wait, attr]
    ops += [FreeWorkspaceOp(ws), FreeOp(alloc)]
    module = ModuleOp([kernels, *ops])
    module.verify()
    assert launch.is_async
    assert launch.token is not None
    assert launch.grid == (one.result, one.result, one.result)
    assert launch.block == (launch.block_x, launch.block_y, launch.block_z)
    assert list(launch.dependencies) == [copy_async.token]
    assert attr.attr_name == "warp_size"
    assert alloc.dynamic_sizes[0] is one.result
    assert isinstance(copy_async.token.type, TokenType)


def test_sync_launch_has_no_token() -> None:
    one = ConstantOp.from_int_and_width(1, IndexType())
    launch = LaunchOp(
        SymbolRefAttr("kernels", ["k"]), DeviceAttr.from_string("cuda:0"), [one] * 3, [one] * 3
    )
    assert not launch.is_async
    assert launch.token is None
    assert len(launch.results) == 0


def test_launch_builder_rejects_grids_that_are_not_three_values() -> None:
    one = ConstantOp.from_int_and_width(1, IndexType())
    with pytest.raises(ValueError, match="three index values"):
        LaunchOp(
            SymbolRefAttr("kernels", ["k"]), DeviceAttr.from_string("cuda:0"), [one] * 2, [one] * 3
        )


def test_device_attr_kinds_are_tvm_device_attr_kind_in_order() -> None:
    assert list(DEVICE_ATTR_KINDS)[:3] == ["exist", "max_threads_per_block", "warp_size"]
    assert len(DEVICE_ATTR_KINDS) == 17
    assert DEVICE_ATTR_KINDS["device_name"] == "string"


def test_launch_prints_in_the_pinned_syntax() -> None:
    text = f"""
  %c1 = arith.constant 1 : index
  %t1 = device.launch async [%t] @kernels::@scale on {CUDA0}
      grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d, %k) : {D16}, f32"""
    module = parse(text, f"%d: {D16}, %k: f32, %t: !device.token")
    printed = str(first(module, "device.launch"))
    assert printed == (
        f"%t1 = device.launch async [%t] @kernels::@scale on {CUDA0} grid(%c1, %c1, %c1) "
        f"block(%c1, %c1, %c1) args(%d, %k) : {D16}, f32"
    )


def test_effect_instances_name_the_values() -> None:
    module = parse(f"  device.copy %h to %d : memref<16xf32> to {D16}", ARGS)
    copy = first(module, "device.copy")
    assert isinstance(copy, CopyOp)
    effects = get_effects(copy)
    assert effects == {
        EffectInstance(MemoryEffectKind.READ, copy.source),
        EffectInstance(MemoryEffectKind.WRITE, copy.destination),
    }
