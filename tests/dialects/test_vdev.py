"""The vdev dialect: placement ops built from Python and the module verifier of the
placement attributes on functions and modules."""

from __future__ import annotations

import pytest
import xdsl.dialects.test as test_dialect
from xdsl.dialects.builtin import ArrayAttr, Float32Type, ModuleOp, StringAttr, TensorType

import devplan
from devplan.dialects.vdev import DeviceCopyOp, OnDeviceOp
from devplan.dialects.virtual_device import UNCONSTRAINED, DeviceAttr

make = DeviceAttr.make


# --- ops built from Python -----------------------------------------------------------------


def test_on_device_flags_default_as_in_tvm() -> None:
    value = test_dialect.TestOp(result_types=[TensorType(Float32Type(), [4])]).results[0]
    op = OnDeviceOp(value, make("cuda", 0))
    assert (op.constrain_body, op.constrain_result) == (True, False)
    op.verify()
    fixed = OnDeviceOp(value, make("cuda", 0), constrain_result=True)
    assert fixed.constrain_result
    free = OnDeviceOp(value, UNCONSTRAINED, constrain_body=False)
    assert not free.constrain_body
    free.verify()
    assert "constrain_body = false" in str(free)


def test_device_copy_keeps_the_type() -> None:
    value = test_dialect.TestOp(result_types=[TensorType(Float32Type(), [4])]).results[0]
    op = DeviceCopyOp(value, make("cpu", 0), make("cuda", 0))
    op.verify()
    assert op.result.type == value.type
    assert (op.src_device, op.dst_device) == (make("cpu", 0), make("cuda", 0))


# --- placement attributes: the module verifier ---------------------------------------------


def first_line_of_error(text: str) -> str:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse(text)
    return str(info.value).splitlines()[0]


def test_two_targets_for_one_device_type_is_a_located_error() -> None:
    line = first_line_of_error(
        'builtin.module attributes {vdev.targets = [#target.target<"cuda">, '
        '#target.target<"nvptx">]} {\n}\n'
    )
    assert line.startswith("<string>:1:1: error: 'vdev.targets' has two targets for device")
    assert "type 'cuda'" in line
    assert "(at most one target per device type)" in line


def test_host_device_of_wrong_kind_is_an_error() -> None:
    line = first_line_of_error('builtin.module attributes {vdev.host_device = "cpu"} {\n}\n')
    assert line == ("<string>:1:1: error: 'vdev.host_device' must be a #vdev.device, got \"cpu\"")


def test_module_attribute_on_a_function_is_an_error() -> None:
    line = first_line_of_error(
        'func.func @f() attributes {vdev.default_device = #vdev.device<"cpu">} {\n'
        "  func.return\n}\n"
    )
    assert line == (
        "<string>:1:1: error: 'vdev.default_device' is a module attribute; "
        "put it on the builtin.module"
    )


def test_targets_must_be_an_array_of_targets() -> None:
    module = ModuleOp([])
    module.attributes["vdev.targets"] = ArrayAttr([StringAttr("cuda")])
    with pytest.raises(devplan.DevplanError, match=r"must hold only #target\.target"):
        devplan.diagnostics.verify_located(module, devplan.MODULE_VERIFIERS)


def test_op_placement_array_must_have_one_device_per_result() -> None:
    text = """
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a {vdev.device = [#vdev.device<"cpu">, #vdev.device<"cpu">]} : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""
    with pytest.raises(devplan.DevplanError, match=r"'vdev.device' has 2 devices for 1 results"):
        devplan.parse(text)
