"""The `kernel` dialect: lookup_kernel, builders, and how DCE/CSE treat kernel ops."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    f32,
    i32,
)
from xdsl.ir import Block, Operation, Region
from xdsl.traits import get_effects

import devplan
from devplan.dialects.device import LaunchOp
from devplan.dialects.kernel import (
    AllocSharedOp,
    BarrierOp,
    BlockDimOp,
    BlockIdOp,
    GridDimOp,
    KernelFuncOp,
    KernelModuleOp,
    ReturnOp,
    ThreadIdOp,
    is_kernel_param_type,
    lookup_kernel,
)
from devplan.dialects.target import TargetAttr
from devplan.dialects.virtual_device import DeviceAttr

PROGRAM = """
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @add(%a: memref<?xf32>) {
    kernel.return
  }
}
kernel.module @more target #target.target<"cuda"> {
  kernel.func @mul(%a: memref<?xf32>) {
    kernel.return
  }
}
func.func @helper() {
  func.return
}
func.func @host(%a: memref<?xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  device.launch @more::@mul on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1)
      block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0>>
  func.return
}
"""


def kernel_module(body: str, params: str = "") -> ModuleOp:
    return devplan.parse(
        'kernel.module @k target #target.target<"cuda"> {\n'
        f"  kernel.func @f({params}) {{\n{body}\n    kernel.return\n  }}\n}}\n"
    )


def count(module: ModuleOp, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)


def the_launch(module: ModuleOp) -> LaunchOp:
    return next(op for op in module.walk() if isinstance(op, LaunchOp))


# --- lookup_kernel ------------------------------------------------------------------


def test_lookup_kernel_resolves_a_nested_reference() -> None:
    module = devplan.parse(PROGRAM)
    launch = the_launch(module)
    found = lookup_kernel(launch, launch.kernel)
    assert isinstance(found, KernelFuncOp)
    assert found.sym_name.data == "mul"
    parent = found.parent_op()
    assert isinstance(parent, KernelModuleOp)
    assert parent.sym_name.data == "more"


def test_lookup_kernel_from_the_module_itself() -> None:
    module = devplan.parse(PROGRAM)
    found = lookup_kernel(module, SymbolRefAttr("kernels", ["add"]))
    assert found is not None
    assert found.sym_name.data == "add"


def test_lookup_kernel_of_a_missing_kernel_or_module_is_none() -> None:
    module = devplan.parse(PROGRAM)
    launch = the_launch(module)
    assert lookup_kernel(launch, SymbolRefAttr("kernels", ["sub"])) is None
    assert lookup_kernel(launch, SymbolRefAttr("nowhere", ["add"])) is None


def test_lookup_kernel_of_a_symbol_that_is_not_a_kernel_is_none() -> None:
    module = devplan.parse(PROGRAM)
    launch = the_launch(module)
    assert lookup_kernel(launch, SymbolRefAttr("helper")) is None
    assert lookup_kernel(launch, SymbolRefAttr("kernels")) is None


def test_lookup_kernel_without_a_symbol_table_is_none() -> None:
    detached = BarrierOp()
    assert lookup_kernel(detached, SymbolRefAttr("kernels", ["add"])) is None


# --- builders and accessors ---------------------------------------------------------


def test_builders_make_a_kernel_module_that_verifies() -> None:
    buffer = MemRefType(f32, [256])
    shared = MemRefType(f32, [256], memory_space=DeviceAttr.make(scope="shared"))
    body = Block(arg_types=[buffer, IndexType(), f32])
    ids: list[Operation] = [
        ThreadIdOp("x"),
        BlockIdOp("y"),
        BlockDimOp("z"),
        GridDimOp("x"),
        AllocSharedOp(shared),
        BarrierOp(),
        ReturnOp(),
    ]
    body.add_ops(ids)
    func = KernelFuncOp("k", [buffer, IndexType(), f32], Region(body))
    kernels = KernelModuleOp("kernels", TargetAttr.from_config({"kind": "cuda"}), [func])
    module = ModuleOp([kernels])
    module.verify()
    assert kernels.kernels == [func]
    assert func.param_types == (buffer, IndexType(), f32)
    queries = [op for op in ids if isinstance(op, ThreadIdOp | BlockIdOp | BlockDimOp | GridDimOp)]
    assert [q.dim for q in queries] == ["x", "y", "z", "x"]
    assert lookup_kernel(module, SymbolRefAttr("kernels", ["k"])) is func


def test_kernel_func_builder_defaults_to_an_empty_body_with_the_parameters() -> None:
    func = KernelFuncOp("k", [IndexType(), i32])
    assert func.body.block.arg_types == (IndexType(), i32)


def test_kernel_params_are_memrefs_index_integers_and_floats() -> None:
    assert is_kernel_param_type(MemRefType(f32, [4]))
    assert is_kernel_param_type(IndexType())
    assert is_kernel_param_type(i32)
    assert is_kernel_param_type(f32)
    assert not is_kernel_param_type(TensorType(f32, [4]))


# --- memory effects, DCE and CSE ----------------------------------------------------


def test_position_queries_are_pure_and_the_barrier_is_not() -> None:
    assert get_effects(ThreadIdOp("x")) == set()
    assert get_effects(GridDimOp("z")) == set()
    effects = get_effects(BarrierOp())
    assert effects
    assert all(e.value is None for e in effects)


def test_dce_removes_unused_ids_but_keeps_barriers() -> None:
    module = kernel_module(
        "    %t = kernel.thread_id x\n    %b = kernel.block_id y\n    kernel.barrier"
    )
    module = devplan.apply(module, "dce")
    assert count(module, "kernel.thread_id") == 0
    assert count(module, "kernel.block_id") == 0
    assert count(module, "kernel.barrier") == 1


def test_cse_merges_duplicate_ids_of_the_same_axis_only() -> None:
    body = "\n".join(
        f"    %t{i} = kernel.thread_id {axis}\n    memref.store %v, %a[%t{i}] : memref<64xf32>"
        for i, axis in enumerate("xxy")
    )
    module = devplan.apply(kernel_module(body, "%a: memref<64xf32>, %v: f32"), "cse")
    assert count(module, "kernel.thread_id") == 2  # x twice became once; y stays
    assert count(module, "memref.store") == 3


def test_cse_does_not_merge_barriers_or_loads_across_a_barrier() -> None:
    body = (
        "    %c0 = arith.constant 0 : index\n"
        "    %x = memref.load %a[%c0] : memref<64xf32>\n"
        "    kernel.barrier\n"
        "    kernel.barrier\n"
        "    %y = memref.load %a[%c0] : memref<64xf32>\n"
        "    %s = arith.addf %x, %y : f32\n"
        "    memref.store %s, %a[%c0] : memref<64xf32>"
    )
    module = devplan.apply(kernel_module(body, "%a: memref<64xf32>"), "cse")
    assert count(module, "kernel.barrier") == 2
    assert count(module, "memref.load") == 2


def test_dce_keeps_a_used_shared_allocation() -> None:
    body = (
        '    %s = kernel.alloc_shared : memref<64xf32, #vdev.device<?, ?, ?, "shared">>\n'
        "    %c0 = arith.constant 0 : index\n"
        '    memref.store %v, %s[%c0] : memref<64xf32, #vdev.device<?, ?, ?, "shared">>'
    )
    module = devplan.apply(kernel_module(body, "%v: f32"), "dce")
    assert count(module, "kernel.alloc_shared") == 1
