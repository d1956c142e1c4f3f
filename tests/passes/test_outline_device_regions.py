"""outline-device-regions: outlined programs compute what the originals computed, every
outlined function is a device program, and the pass is idempotent.

Each program runs on the executor before and after outlining (same inputs, same system)
and the outputs must be identical.
"""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import EXAMPLES
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import devplan
from devplan.runtime.executor import random_inputs


def elementwise_kernel(name: str, op: str) -> str:
    """`kernel.func @<name>(%a, %s)`: `a[i] = a[i] <op> s` for every in-bounds global index."""
    return f"""  kernel.func @{name}(%a: memref<?xf32>, %s: f32) {{
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {{
      %x = memref.load %a[%i] : memref<?xf32>
      %y = arith.{op} %x, %s : f32
      memref.store %y, %a[%i] : memref<?xf32>
    }}
    kernel.return
  }}
"""


KERNELS = (
    '\nkernel.module @k target #target.target<"cuda"> {\n'
    + elementwise_kernel("scale", "mulf")
    + elementwise_kernel("shift", "addf")
    + "}\n"
)

# RFC example (a): the CPU fills host memory, copies it to CUDA, launches two kernels.
RFC_A = (
    KERNELS
    + """
!dev = memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>

func.func @main(%h: memref<1000xf32>) -> memref<1000xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %out = memref.alloc() : memref<1000xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %h[%i] : memref<1000xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out[%i] : memref<1000xf32>
  }
  %d = device.alloc() : !dev
  device.copy %out to %d : memref<1000xf32> to !dev
  %tpb = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
  %bx = arith.minui %n, %tpb : index
  %nm1 = arith.subi %n, %c1 : index
  %q = arith.divui %nm1, %bx : index
  %gx = arith.addi %q, %c1 : index
  %three = arith.constant 3.0 : f32
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%gx, %c1, %c1) block(%bx, %c1, %c1) args(%d, %three) : !dev, f32
  device.launch @k::@shift on #vdev.device<"cuda", 0> grid(%gx, %c1, %c1) block(%bx, %c1, %c1) args(%d, %three) : !dev, f32
  device.copy %d to %out : !dev to memref<1000xf32>
  device.free %d : !dev
  func.return %out : memref<1000xf32>
}
"""
)

# A loop whose body launches on two devices and reads device results on the host
# through copies; a helper device program is called from it.
LOOP_TWO_DEVICES = (
    KERNELS
    + """
func.func @bump(%d: memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>, %n: index, %s: f32) {
  %c1 = arith.constant 1 : index
  device.launch @k::@shift on #vdev.device<"cuda", 1> grid(%n, %c1, %c1) block(%c1, %c1, %c1) args(%d, %s) : memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>, f32
  func.return
}

func.func @main(%h: memref<8xf32>, %steps: index) -> (memref<8xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = device.alloc(%c8) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  %b = device.alloc(%c8) : memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>
  device.copy %h to %a : memref<8xf32> to memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  %sum = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %zero) -> (f32) {
    device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%c8, %c1, %c1) block(%c1, %c1, %c1) args(%a, %two) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, f32
    device.copy %a to %h : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<8xf32>
    device.copy %h to %b : memref<8xf32> to memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>
    func.call @bump(%b, %c8, %two) : (memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>, index, f32) -> ()
    device.copy %b to %h : memref<?xf32, #vdev.device<"cuda", 1, ?, "global">> to memref<8xf32>
    %x = memref.load %h[%c0] : memref<8xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  device.free %a : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %b : memref<?xf32, #vdev.device<"cuda", 1, ?, "global">>
  func.return %h, %sum : memref<8xf32>, f32
}
"""
)


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def classes(module: ModuleOp) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, f in functions(module).items():
        attr = f.attributes["device.region"]
        assert isinstance(attr, StringAttr)
        found[name] = attr.data
    return found


def run_before_and_after(
    source: str | Path, inputs: list[object]
) -> tuple[list[object], list[object]]:
    before = devplan.execute(devplan.parse(source), [_copy(x) for x in inputs])
    module = devplan.parse(source)
    devplan.apply(module, "outline-device-regions")
    after = devplan.execute(module, [_copy(x) for x in inputs])
    return before.outputs, after.outputs


def _copy(x: object) -> object:
    return x.copy() if isinstance(x, np.ndarray) else x


def assert_same(before: list[object], after: list[object]) -> None:
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_rfc_a_outlined_computes_the_same_result() -> None:
    h = np.linspace(-1, 1, 1000, dtype=np.float32)
    before, after = run_before_and_after(RFC_A, [h])
    np.testing.assert_allclose(np.asarray(before[0]), 2 * h * 3 + 3, rtol=1e-6)
    assert_same(before, after)


def test_loop_over_two_devices_outlined_computes_the_same_result() -> None:
    h = np.arange(8, dtype=np.float32)
    before, after = run_before_and_after(LOOP_TWO_DEVICES, [h, 3])
    a, total = h.copy(), np.float32(0)
    for _ in range(3):
        a = a * 2
        total += a[0] + 2
    np.testing.assert_array_equal(np.asarray(before[0]), a + 2)
    assert float(np.asarray(before[1])) == float(total)
    assert_same(before, after)


PROGRAMS = sorted(p.stem for p in EXAMPLES.glob("*.mlir") if "func.func @main" in p.read_text())
"""The examples that are programs (an `@main` to run), not attribute showcases."""


def test_there_are_example_programs() -> None:
    assert len(PROGRAMS) >= 3


@pytest.mark.parametrize("name", PROGRAMS)
def test_example_outlined_computes_the_same_result(name: str) -> None:
    path = EXAMPLES / f"{name}.mlir"
    inputs = random_inputs(devplan.parse(path), "main", seed=1)
    before, after = run_before_and_after(path, inputs)
    assert_same(before, after)


@pytest.mark.parametrize("source", [RFC_A, LOOP_TWO_DEVICES], ids=["rfc_a", "loop"])
def test_every_outlined_function_is_a_device_program_and_glue_keeps_its_class(source: str) -> None:
    original = devplan.parse(source)
    devplan.apply(original, "classify-regions")
    module = devplan.parse(source)
    devplan.apply(module, "outline-device-regions,classify-regions")
    old, new = classes(original), classes(module)
    added = set(new) - set(old)
    assert added
    assert {new[name] for name in added} == {"device"}
    assert {name: new[name] for name in old} == old


def test_outlining_twice_changes_nothing() -> None:
    module = devplan.parse(LOOP_TWO_DEVICES)
    devplan.apply(module, "outline-device-regions")
    once = str(module)
    devplan.apply(module, "outline-device-regions")
    assert str(module) == once


def test_outlined_names_follow_the_function_and_device() -> None:
    module = devplan.parse(LOOP_TWO_DEVICES)
    devplan.apply(module, "outline-device-regions")
    names = set(functions(module))
    assert {"main_cuda0", "main_cuda1", "bump"} <= names
    assert all(n in ("main", "bump") or n.startswith(("main_cuda0", "main_cuda1")) for n in names)


# --- grouping by dependences ----------------------------------------------------------


def outlined_names(source: str | Path, function: str = "main") -> list[str]:
    module = devplan.parse(source)
    devplan.apply(module, "outline-device-regions")
    return [name for name in functions(module) if name.startswith(f"{function}_")]


def op_names(module: ModuleOp, function: str) -> list[str]:
    return [op.name for op in functions(module)[function].body.block.ops]


def test_two_gpus_outlines_into_four_device_programs_per_gpu() -> None:
    # Each GPU's work has four phases that host or cross-device copies separate, and
    # no reordering can join: its allocations (before the copy in), `scale` (after the
    # copy in, before the exchange reads its result), `accumulate` with the free of the
    # received buffer (after the exchange), and the free of its own buffer (after the
    # copy out). Contiguous runs alone gave 12.
    names = outlined_names(EXAMPLES / "two_gpus.mlir")
    assert sorted(names) == sorted(
        [f"main_cuda{d}{suffix}" for d in (0, 1) for suffix in ("", "_1", "_2", "_3")]
    )
    module = devplan.parse(EXAMPLES / "two_gpus.mlir")
    devplan.apply(module, "outline-device-regions")
    assert op_names(module, "main_cuda0") == ["device.alloc", "device.alloc", "func.return"]
    assert op_names(module, "main_cuda0_2")[-3:] == ["device.launch", "device.free", "func.return"]


def test_vector_add_allocs_launch_and_frees_stay_three_programs_because_copies_order_them() -> None:
    # The copies into %da and %db need the allocations and the launch needs the copies,
    # and the copy of %dc to the host needs the launch and precedes the free of %dc:
    # host work between them is a real dependence, so three device programs is the
    # fewest. The block is then left in its order (reordering would not save a program).
    module = devplan.parse(EXAMPLES / "vector_add.mlir")
    devplan.apply(module, "outline-device-regions")
    assert [n for n in functions(module) if n != "main"] == [
        "main_cuda0",
        "main_cuda0_1",
        "main_cuda0_2",
    ]
    assert op_names(module, "main_cuda0") == ["device.alloc"] * 3 + ["func.return"]
    assert op_names(module, "main_cuda0_1") == ["device.launch", "func.return"]
    assert op_names(module, "main_cuda0_2") == ["device.free"] * 3 + ["func.return"]


# `scale %e` moves up next to `scale %d` (it touches only %e); `shift %d` must stay after
# the copy of %d to %early, which reads what it would overwrite.
REORDERED = (
    KERNELS
    + """
!dev = memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
!host = memref<8xf32>

func.func @main(%h: !host) -> (!host, !host, !host) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %d = device.alloc() : !dev
  %e = device.alloc() : !dev
  device.copy %h to %d : !host to !dev
  device.copy %h to %e : !host to !dev
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%c8, %c1, %c1) block(%c1, %c1, %c1) args(%d, %two) : !dev, f32
  %early = memref.alloc() : !host
  device.copy %d to %early : !dev to !host
  device.launch @k::@shift on #vdev.device<"cuda", 0> grid(%c8, %c1, %c1) block(%c1, %c1, %c1) args(%d, %one) : !dev, f32
  %late = memref.alloc() : !host
  device.copy %d to %late : !dev to !host
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%c8, %c1, %c1) block(%c1, %c1, %c1) args(%e, %two) : !dev, f32
  %last = memref.alloc() : !host
  device.copy %e to %last : !dev to !host
  device.free %d : !dev
  device.free %e : !dev
  func.return %early, %late, %last : !host, !host, !host
}
"""
)


def test_reordered_program_computes_the_same_and_keeps_the_read_before_the_overwrite() -> None:
    h = np.arange(8, dtype=np.float32)
    before, after = run_before_and_after(REORDERED, [h])
    np.testing.assert_array_equal(np.asarray(before[0]), 2 * h)
    np.testing.assert_array_equal(np.asarray(before[1]), 2 * h + 1)
    np.testing.assert_array_equal(np.asarray(before[2]), 2 * h)
    assert_same(before, after)
    module = devplan.parse(REORDERED)
    devplan.apply(module, "outline-device-regions")
    assert op_names(module, "main_cuda0_1") == ["device.launch", "device.launch", "func.return"]
    assert len(outlined_names(REORDERED)) == 4  # contiguous runs alone: 5
