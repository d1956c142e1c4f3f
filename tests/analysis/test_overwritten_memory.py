# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""`overwritten_memory`: an allocation is left unzeroed only when the launch that first uses
it writes every element, and nothing reads it before; any doubt keeps the zeroing."""

from __future__ import annotations

import pytest
from xdsl.dialects import memref

import devplan
from devplan.analysis.overwritten_memory import overwritten_arguments, overwritten_before_read
from devplan.dialects.kernel import KernelFuncOp

PROGRAM = """
kernel.module @k target #target.target<"llvm"> {{
  kernel.func @write(%in: memref<?x?xf32>, %out: memref<?x?xf32>) {{
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %dx = kernel.block_dim x
    %px = arith.muli %bx, %dx : index
    %col = arith.addi %px, %tx : index
    %ty = kernel.thread_id y
    %by = kernel.block_id y
    %dy = kernel.block_dim y
    %py = arith.muli %dy, %by : index
    %row = arith.addi %ty, %py : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = memref.dim %out, %c0 : memref<?x?xf32>
    %cols = memref.dim %out, %c1 : memref<?x?xf32>
    %in_cols = arith.cmpi ult, %col, %cols : index
    %in_rows = arith.cmpi {row_predicate}, %row, %rows : index
    %inside = arith.andi %in_cols, %in_rows : i1
    %half = arith.cmpi ult, %col, %c1 : index
    scf.if {guard} {{
      %v = memref.load %in[%row, %col] : memref<?x?xf32>
      {body}
    }}
    kernel.return
  }}
}}
func.func @main(%a: memref<64x512xf32>) -> memref<64x512xf32> {{
  %gx = arith.constant {grid_x} : index
  %gy = arith.constant 64 : index
  %n = arith.constant 256 : index
  %u = arith.constant 1 : index
  %out = memref.alloc() : memref<64x512xf32>
  {before}
  device.launch @k::@write on #vdev.device<"cpu", 0> grid(%gx, %gy, %u) block(%n, %u, %u) args({args}) : memref<64x512xf32>, memref<64x512xf32>
  func.return %out : memref<64x512xf32>
}}
"""

COVERING = {
    "row_predicate": "ult",
    "guard": "%inside",
    "body": "memref.store %v, %out[%row, %col] : memref<?x?xf32>",
    "grid_x": "2",
    "before": "",
    "args": "%a, %out",
}


def _program(**changes: str) -> tuple[KernelFuncOp, memref.AllocOp]:
    module = devplan.parse(PROGRAM.format(**(COVERING | changes)))
    kernel = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    alloc = next(op for op in module.walk() if isinstance(op, memref.AllocOp))
    return kernel, alloc


def test_a_launch_storing_each_element_in_bounds_overwrites_its_output() -> None:
    kernel, alloc = _program()
    assert overwritten_arguments(kernel) == {1: (1, 0)}  # rows by y, columns by x
    assert overwritten_before_read(alloc)
    assert overwritten_before_read(_program(row_predicate="slt")[1])
    assert overwritten_before_read(_program(guard="%in_cols")[1])  # fewer bounds: more stores


@pytest.mark.parametrize(
    "changes",
    [
        {"grid_x": "1"},  # 256 threads along x for 512 columns
        {"row_predicate": "ule"},  # not a bound
        {"guard": "%half"},  # a guard that is not the output's bounds
        {"body": "memref.store %v, %out[%col, %row] : memref<?x?xf32>"},  # transposed bounds
        {"body": "memref.store %v, %out[%row, %c0] : memref<?x?xf32>"},  # one column only
        {"body": "%o = memref.load %out[%row, %col] : memref<?x?xf32>\n      memref.store %o, %out[%row, %col] : memref<?x?xf32>"},  # reads the old value
        {"before": "%x = memref.load %out[%u, %u] : memref<64x512xf32>"},  # host reads it first
        {"args": "%out, %out"},  # the input is the output
    ],
    ids=["grid-too-small", "ule", "other-guard", "transposed", "one-column", "reads-output", "host-reads-first", "aliased"],
)
def test_any_doubt_keeps_the_zeroing(changes: dict[str, str]) -> None:
    _, alloc = _program(**changes)
    assert not overwritten_before_read(alloc)


FILL = """
func.func @main(%v: f32) -> tensor<64x512xf32> {
  %e = tensor.empty() : tensor<64x512xf32>
  %a = linalg.fill ins(%v : f32) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %a : tensor<64x512xf32>
}
"""


def _fill_alloc(**change: str) -> memref.AllocOp:
    lowered = devplan.apply(devplan.parse(FILL), "default-pipeline")
    text = str(lowered)
    for old, new in change.items():
        assert old in text
        text = text.replace(old, new)
    module = devplan.parse(text)
    return next(op for op in module.walk() if isinstance(op, memref.AllocOp))


@pytest.mark.parametrize(
    ("change", "overwritten"),
    [
        ({}, True),  # lowered as it is: the fill kernel over the buffer's flat view
        ({"sizes(%2)": "sizes(%3)", "memref<32768xf32>": "memref<128xf32>"}, False),  # 128 only
        ({"offset(%1)": "offset(%0)"}, False),  # a view from element 1
        ({"strides(%0)": "strides(%1)"}, False),  # every element of the view is element 0
    ],
    ids=["whole", "part", "shifted", "stride-0"],
)
def test_a_fill_through_a_flat_view_of_the_whole_buffer_overwrites_it(
    change: dict[str, str], overwritten: bool
) -> None:
    assert overwritten_before_read(_fill_alloc(**change)) is overwritten
