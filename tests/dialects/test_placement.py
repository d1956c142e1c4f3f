"""Reading placement from IR: module host/default devices and targets, function argument
and result devices, op and value devices."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

import devplan
from devplan.dialects.placement import (
    arg_device,
    default_device,
    default_host_device,
    host_device,
    module_targets,
    op_device,
    result_device,
    value_device,
)
from devplan.dialects.target import Target
from devplan.dialects.virtual_device import DeviceAttr

CUDA = Target.parse("cuda")
LLVM = Target.parse("llvm")
make = DeviceAttr.make


# --- placement attributes on modules and functions -----------------------------------------


def test_module_without_attributes_uses_the_default_host() -> None:
    module = ModuleOp([])
    assert host_device(module) == default_host_device()
    assert str(default_host_device()) == (
        '#vdev.device<"cpu", 0, #target.target<"llvm">, "global">'
    )
    assert default_device(module) == default_host_device()
    assert module_targets(module) == {}


def test_module_attributes_are_read() -> None:
    module = devplan.parse(
        'builtin.module attributes {vdev.host_device = #vdev.device<"cpu", 1>, '
        'vdev.default_device = #vdev.device<"cuda", 0>, '
        'vdev.targets = [#target.target<"cuda">, #target.target<"llvm">]} {\n}\n'
    )
    assert host_device(module) == make("cpu", 1)
    assert default_device(module) == make("cuda", 0)
    assert module_targets(module) == {"cuda": CUDA, "cpu": LLVM}


def test_default_device_defaults_to_the_modules_host() -> None:
    module = devplan.parse(
        'builtin.module attributes {vdev.host_device = #vdev.device<"cpu", 1>} {\n}\n'
    )
    assert default_device(module) == make("cpu", 1)


def test_function_argument_and_result_devices() -> None:
    module = devplan.parse(
        'func.func @f(%a: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}, %b: i32)'
        ' -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda">}) {\n'
        '  %c = "test.op"(%a) {vdev.device = #vdev.device<"cpu", 0>} '
        ": (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %c : tensor<4xf32>\n}\n"
    )
    func = next(iter(module.ops))
    assert isinstance(func, FuncOp)
    assert arg_device(func, 0) == make("cpu")
    assert arg_device(func, 1) is None
    assert result_device(func, 0) == make("cuda")
    assert op_device(next(iter(func.body.ops))) == make("cpu", 0)


def test_function_without_attributes_has_no_devices() -> None:
    func = FuncOp("f", ((), ()))
    assert arg_device(func, 0) is None
    assert result_device(func, 0) is None


def test_value_device_reads_op_arrays_copies_function_and_loop_arguments() -> None:
    module = devplan.parse(
        """
func.func @f(%a: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %n: index)
    -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = vdev.device_copy %a from #vdev.device<"cuda", 0> to #vdev.device<"cpu", 0> : tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b)
      -> (tensor<4xf32>, tensor<4xf32>) {
    scf.yield %x, %y : tensor<4xf32>, tensor<4xf32>
  } {vdev.device = [#vdev.device<"cuda", 0>, #vdev.device<"cpu", 0>]}
  func.return %r#0 : tensor<4xf32>
}
"""
    )
    func = next(iter(module.ops))
    assert isinstance(func, FuncOp)
    a, n = func.body.block.args
    ops = list(func.body.block.ops)
    copy, loop = ops[2], ops[3]
    assert value_device(a) == make("cuda", 0)
    assert value_device(n) is None
    assert value_device(copy.results[0]) == make("cpu", 0)
    assert [value_device(r) for r in loop.results] == [make("cuda", 0), make("cpu", 0)]
    body_args = loop.regions[0].block.args
    assert [value_device(v) for v in body_args] == [None, make("cuda", 0), make("cpu", 0)]
