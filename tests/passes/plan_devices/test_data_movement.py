"""plan-devices moves data as TVM plans it: a slice sent to another device moves only its
bytes, and a scalar read from a device tensor is a planned copy of that one element.
The bytes are the run report's (`devplan.execute`), not the plan's text."""

from __future__ import annotations

import numpy as np

import devplan
from devplan.dialects.vdev import DeviceCopyOp

CUDA = '#vdev.device<"cuda", {}>'
HEADER = 'builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {\n'

SLICE_TO_OTHER_GPU = (
    HEADER
    + f"""  func.func @main(%x: tensor<8x4xf32> {{vdev.device = {CUDA.format(0)}}})
      -> (tensor<2x4xf32> {{vdev.device = {CUDA.format(1)}}}) {{
    %s = tensor.extract_slice %x[2, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %h = vdev.on_device %s to {CUDA.format(1)} {{constrain_result}} : tensor<2x4xf32>
    %y = arith.addf %h, %h : tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }}
}}
"""
)


def test_a_slice_sent_to_another_gpu_moves_only_its_bytes() -> None:
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    result = devplan.execute(devplan.parse(SLICE_TO_OTHER_GPU), [x], strict=True)
    np.testing.assert_array_equal(result.outputs[0], x[2:4] * 2)
    nvlink = result.report.links["cuda:0<->cuda:1"]
    # The 2x4 slice (32 bytes) crosses, not its 8x4 source (128 bytes).
    assert (nvlink.copies, nvlink.bytes) == (1, 2 * 4 * 4)


EXTRACT_FROM_GPU = (
    HEADER
    + f"""  func.func @main(%x: tensor<8x4xf32> {{vdev.device = {CUDA.format(0)}}}, %i: index,
      %j: index, %z: tensor<f32> {{vdev.device = {CUDA.format(0)}}}) -> f32 {{
    %e = tensor.extract %x[%i, %j] : tensor<8x4xf32>
    %f = tensor.extract %z[] : tensor<f32>
    %g = arith.addf %e, %f : f32
    func.return %g : f32
  }}
}}
"""
)


def test_a_scalar_read_from_a_gpu_is_a_planned_copy_of_one_element() -> None:
    module = devplan.parse(EXTRACT_FROM_GPU)
    devplan.apply(module, "plan-devices")
    copies = [op for op in module.walk() if isinstance(op, DeviceCopyOp)]
    assert sorted(str(c.input.type) for c in copies) == ["tensor<1x1xf32>", "tensor<f32>"]
    assert all(c.dst_device.type_name == "cpu" for c in copies)
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    z = np.array(0.5, dtype=np.float32)
    result = devplan.execute(devplan.parse(EXTRACT_FROM_GPU), [x, 5, 3, z], strict=True)
    assert result.outputs[0] == np.float32(x[5, 3] + 0.5)
    pcie = result.report.links["cpu:0<->cuda:0"]
    # In: %x (128 bytes) and %z (4); out: the element of %x and %z, 4 bytes each.
    assert (pcie.copies, pcie.bytes) == (4, 128 + 4 + 4 + 4)


def test_a_slice_planned_by_cost_stays_with_its_source() -> None:
    # The cost strategy plans the flow once aside and restores it: moving a slice then
    # left nodes the union-find had forgotten (an IndexError, found by the fuzzer).
    module = devplan.parse(SLICE_TO_OTHER_GPU)
    devplan.apply(module, "plan-devices{strategy=cost}")
    (copy,) = [op for op in module.walk() if isinstance(op, DeviceCopyOp)]
    assert str(copy.input.type) == "tensor<2x4xf32>"
