# ruff: noqa: E501  (IR lines in test programs are long)
"""Data movement at level 1 (`movement.py`, `reference/tensor.py`): each op run through
`devplan.execute` (numpy kernels) against the oracle, and the oracle against NumPy's own
indexing, with dynamic offsets, sizes and strides and rank-reducing slices."""

from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.reference.program import evaluate

PROGRAM = """
func.func @main(%x: tensor<6x8xf32> {vdev.device = #vdev.device<"cpu", 0>}, %d: tensor<?x8xf32>, %i: index, %n: index) -> (tensor<?x3xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<?x8xf32>, tensor<4x12xf32>, tensor<2x?x8xf32>, tensor<6x8xf32>, f32, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %s = tensor.extract_slice %x[%i, 1] [%n, 3] [1, 2] : tensor<6x8xf32> to tensor<?x3xf32>
  %row = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<6x8xf32> to tensor<8xf32>
  %sum = arith.addf %row, %row : tensor<8xf32>
  %twice = vdev.on_device %sum to #vdev.device<"cuda", 0> {constrain_result} : tensor<8xf32>
  %put = tensor.insert_slice %twice into %x[5, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<6x8xf32>
  %cat = tensor.concat dim(0) %d, %x : (tensor<?x8xf32>, tensor<6x8xf32>) -> tensor<?x8xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %wide = tensor.expand_shape %flat [[0, 1]] output_shape [4, 12] : tensor<48xf32> into tensor<4x12xf32>
  %three = tensor.expand_shape %d [[0, 1], [2]] output_shape [2, %c3, 8] : tensor<?x8xf32> into tensor<2x?x8xf32>
  %dyn = tensor.cast %put : tensor<6x8xf32> to tensor<?x8xf32>
  %back = tensor.cast %dyn : tensor<?x8xf32> to tensor<6x8xf32>
  %v = tensor.extract %twice[%c2] : tensor<8xf32>
  %rows = tensor.dim %cat, %c0 : tensor<?x8xf32>
  return %s, %twice, %put, %cat, %wide, %three, %back, %v, %rows : tensor<?x3xf32>, tensor<8xf32>, tensor<6x8xf32>, tensor<?x8xf32>, tensor<4x12xf32>, tensor<2x?x8xf32>, tensor<6x8xf32>, f32, index
}
"""


def _inputs() -> list[object]:
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    return [x, -x, 2, 3]


def test_oracle_slices_concatenates_and_reshapes_as_numpy_indexes() -> None:
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    d, i, n = -x, 2, 3
    s, twice, put, cat, wide, three, back, v, rows = evaluate(devplan.parse(PROGRAM), _inputs())
    np.testing.assert_array_equal(s, x[i : i + n, 1:7:2])
    np.testing.assert_array_equal(twice, 2 * x[i])
    expected = x.copy()
    expected[5] = 2 * x[i]
    np.testing.assert_array_equal(put, expected)
    np.testing.assert_array_equal(back, expected)
    np.testing.assert_array_equal(cat, np.concatenate([d, x]))
    np.testing.assert_array_equal(wide, x.reshape(4, 12))
    np.testing.assert_array_equal(three, d.reshape(2, 3, 8))
    assert (v, rows) == (2 * x[i, 2], 12)


def test_lowered_data_movement_matches_the_oracle_bit_for_bit() -> None:
    module = devplan.parse(PROGRAM)
    expected = evaluate(module, _inputs())
    result = devplan.execute(devplan.parse(PROGRAM), _inputs(), kernel_backend="numpy")
    for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"output {i}")
    # The element the host reads from cuda:0 comes back alone (4 B), not with its tensor.
    lowered = devplan.apply(devplan.parse(PROGRAM), "default-pipeline")
    to_host = [
        line for line in str(lowered).splitlines() if "device.copy" in line and "to memref<" in line
        and line.rstrip().endswith("to memref<1xf32>")
    ]  # fmt: skip
    assert len(to_host) == 1


G0 = '#vdev.device<"cuda", 0, #target.target<"cuda">, "global">'
DEVICE_EXTRACTS = f"""
func.func @main(%x: tensor<8xf32> {{vdev.device = {G0}}}, %i: index) -> (f32, f32) {{
  %c5 = arith.constant 5 : index
  %a = tensor.extract %x[%i] : tensor<8xf32>
  %b = tensor.extract %x[%c5] : tensor<8xf32>
  func.return %a, %b : f32, f32
}}
"""


def test_lowered_extracts_of_a_tensor_on_a_device_read_its_elements() -> None:
    """The host reads elements of a tensor on cuda:0 (lower-to-device alone: the default
    pipeline's planner turns such a read into a slice first, so only this reaches the
    extract rule's device path)."""
    x = np.arange(8, dtype=np.float32) * 3 + 1
    module = devplan.apply(devplan.parse(DEVICE_EXTRACTS), "lower-to-device")
    result = devplan.execute(module, [x, 2], kernel_backend="numpy", strict=True)
    assert [float(v) for v in result.outputs] == [7.0, 16.0]
    assert evaluate(devplan.parse(DEVICE_EXTRACTS), [x, 2]) == [7.0, 16.0]


UNIT_DIMS = """func.func @main(%t: tensor<2x3x4xf32>) -> (tensor<1x4xf32>, tensor<3xf32>) {
  %a = tensor.extract_slice %t[1, 2, 0] [1, 1, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<1x4xf32>
  %b = tensor.extract_slice %t[1, 0, 3] [1, 3, 1] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3xf32>
  func.return %a, %b : tensor<1x4xf32>, tensor<3xf32>
}
"""


def test_a_rank_reducing_slice_drops_unit_dimensions_from_the_left_as_mlir_does() -> None:
    """[1, 1, 4] to 1x4 drops the first unit dimension and keeps the second; [1, 3, 1] to
    3 drops both, one of them last."""
    t = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    result = devplan.execute(devplan.parse(UNIT_DIMS), [t], kernel_backend="numpy")
    np.testing.assert_array_equal(result.outputs[0], t[1, 2:3, :])
    np.testing.assert_array_equal(result.outputs[1], t[1, :, 3])


def test_a_dynamic_slice_outside_its_tensor_is_a_located_run_time_error() -> None:
    module = devplan.parse(PROGRAM)
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    d = -x
    with pytest.raises(devplan.DevplanError, match=r"<string>:6:3: .*reaches outside dimension 0"):
        devplan.execute(module, [x, d, 4, 3], kernel_backend="numpy")
    with pytest.raises(devplan.DevplanError, match=r"<string>:6:3: .*reaches outside dimension 0"):
        evaluate(devplan.parse(PROGRAM), [x, d, 4, 3])


BUILDS = """
func.func @main(%x: tensor<2x3xf32> {vdev.device = #vdev.device<"cpu", 0>}, %v: f32, %l: index, %n: index) -> (tensor<3x2xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<2x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<3x2xf32>, tensor<?x3xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %shape = arith.constant dense<[3, 2]> : tensor<2xindex>
  %r = tensor.reshape %x(%shape) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x2xf32>
  %rg = vdev.on_device %r to #vdev.device<"cuda", 0> {constrain_result} : tensor<3x2xf32>
  %p = tensor.pad %rg low[%l, 1] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<3x2xf32> to tensor<?x3xf32>
  %pg = vdev.on_device %p to #vdev.device<"cuda", 0> {constrain_result} : tensor<?x3xf32>
  %sp = tensor.splat %v[%n] : tensor<?xf32>
  %spg = vdev.on_device %sp to #vdev.device<"cuda", 1> {constrain_result} : tensor<?xf32>
  %w = arith.addf %v, %v : f32
  %fe = tensor.from_elements %v, %w, %w, %v : tensor<2x2xf32>
  %feg = vdev.on_device %fe to #vdev.device<"cuda", 0> {constrain_result} : tensor<2x2xf32>
  %in = tensor.insert %w into %rg[%c1, %c1] : tensor<3x2xf32>
  %ing = vdev.on_device %in to #vdev.device<"cuda", 0> {constrain_result} : tensor<3x2xf32>
  %s0 = tensor.from_elements %v : tensor<f32>
  %s0g = vdev.on_device %s0 to #vdev.device<"cuda", 0> {constrain_result} : tensor<f32>
  %i0 = tensor.insert %w into %s0g[] : tensor<f32>
  %i0g = vdev.on_device %i0 to #vdev.device<"cuda", 0> {constrain_result} : tensor<f32>
  %cp = bufferization.alloc_tensor() copy(%ing) : tensor<3x2xf32>
  %cpg = vdev.on_device %cp to #vdev.device<"cuda", 1> {constrain_result} : tensor<3x2xf32>
  %m = bufferization.to_buffer %pg : tensor<?x3xf32> to memref<?x3xf32>
  %t = bufferization.to_tensor %m : memref<?x3xf32> to tensor<?x3xf32>
  %tg = vdev.on_device %t to #vdev.device<"cuda", 1> {constrain_result} : tensor<?x3xf32>
  %e = bufferization.alloc_tensor(%n) : tensor<?x4xf32>
  %eg = vdev.on_device %e to #vdev.device<"cuda", 0> {constrain_result} : tensor<?x4xf32>
  %ed = tensor.dim %eg, %c0 : tensor<?x4xf32>
  return %rg, %pg, %spg, %feg, %ing, %i0g, %cpg, %tg, %ed : tensor<3x2xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<2x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<3x2xf32>, tensor<?x3xf32>, index
}
"""
"""Reshape, pad, splat, from_elements, insert and the bufferization ops, on GPUs."""


def _build_inputs(low: int) -> list[object]:
    return [np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(1.5), low, 4]


def test_oracle_builds_tensors_as_numpy_does() -> None:
    x, v, low, n = _build_inputs(2)
    r, p, sp, fe, put, put0, copied, back, rows = evaluate(devplan.parse(BUILDS), [x, v, low, n])
    np.testing.assert_array_equal(r, x.reshape(3, 2))
    np.testing.assert_array_equal(p, np.pad(x.reshape(3, 2), [(2, 1), (1, 0)], constant_values=v))
    np.testing.assert_array_equal(sp, np.full(4, v))
    np.testing.assert_array_equal(fe, [[v, 2 * v], [2 * v, v]])
    expected = x.reshape(3, 2).copy()
    expected[1, 1] = 2 * v
    np.testing.assert_array_equal(put, expected)
    np.testing.assert_array_equal(copied, expected)
    assert put0.shape == ()
    assert put0 == 2 * v
    np.testing.assert_array_equal(back, p)
    assert rows == n


def test_lowered_tensor_builders_match_the_oracle_and_reshape_shapes_stay_on_the_host() -> None:
    inputs = _build_inputs(2)
    expected = evaluate(devplan.parse(BUILDS), inputs)
    result = devplan.execute(devplan.parse(BUILDS), inputs, kernel_backend="numpy")
    for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"output {i}")
    planned = str(devplan.apply(devplan.parse(BUILDS), "plan-devices"))
    shape = next(line for line in planned.splitlines() if "%shape = " in line)
    assert '#vdev.device<"cpu", 0' in shape  # read on the host, though the reshape runs on cuda:0


def test_a_negative_dynamic_pad_is_a_located_run_time_error() -> None:
    with pytest.raises(
        devplan.DevplanError, match=r"<string>:8:3: .*'tensor.pad' pad 0 is negative"
    ):
        devplan.execute(devplan.parse(BUILDS), _build_inputs(-1), kernel_backend="numpy")
    with pytest.raises(devplan.DevplanError, match=r"<string>:8:3: .*'tensor.pad'"):
        evaluate(devplan.parse(BUILDS), _build_inputs(-1))


EXTRACT = """func.func @main(%t: tensor<2x3xi32>, %i: index, %j: index) -> i32 {
  %v = tensor.extract %t[%i, %j] : tensor<2x3xi32>
  func.return %v : i32
}
"""


@pytest.mark.parametrize(("i", "j"), [(0, 0), (1, 2), (0, 2), (1, 0)])
def test_oracle_extracts_every_corner_of_its_tensor(i: int, j: int) -> None:
    t = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert evaluate(devplan.parse(EXTRACT), [t, i, j]) == [t[i, j]]


@pytest.mark.parametrize(("i", "j"), [(-1, 0), (0, -1), (2, 0), (0, 3), (3, 0), (0, 5)])
def test_an_extract_outside_its_tensor_is_a_located_error_in_the_oracle(i: int, j: int) -> None:
    t = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(
        devplan.DevplanError,
        match=rf"<string>:2:3: error: 'tensor.extract' at \[{i}, {j}\] is outside a 2x3 tensor",
    ):
        evaluate(devplan.parse(EXTRACT), [t, i, j])


ELEMENT_READ = """func.func @main(%t: tensor<2x3xf32>PLACE, %i: index) -> f32 {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %v = tensor.extract %t[%c1, INDEX] : tensor<2x3xf32>
  func.return %v : f32
}
"""


@pytest.mark.parametrize("place", ["", ' {vdev.device = #vdev.device<"cuda", 0>}'])
def test_an_extract_outside_its_tensor_is_reported_as_the_extract_on_the_host_or_a_device(
    place: str,
) -> None:
    """On a device plan-devices reads the element through a slice, copied to the host: the
    error still names the extract, its index and the dimension's size, at the extract."""
    t = np.arange(6, dtype=np.float32).reshape(2, 3)
    program = ELEMENT_READ.replace("PLACE", place)
    static = devplan.parse(program.replace("INDEX", "%c5"))
    with pytest.raises(
        devplan.DevplanError,
        match=r"^<string>:4:3: error: 'tensor.extract' index 1 is outside its tensor: "
        r"5 in dimension 1 of size 3\n",
    ):
        devplan.execute(static, [t, 0], kernel_backend="numpy")
    dynamic = program.replace("INDEX", "%i")
    with pytest.raises(
        devplan.DevplanError,
        match=r"^<string>:4:3: error: assertion failed: 'tensor.extract' index 1 is outside "
        r"its tensor: dimension 1 has size 3\n",
    ):
        devplan.execute(devplan.parse(dynamic), [t, 3], kernel_backend="numpy")
    result = devplan.execute(devplan.parse(dynamic), [t, 2], kernel_backend="numpy")
    assert result.outputs == [t[1, 2]]


STRIDED = """func.func @main(%x: tensor<2x8xf32>, %o: index, %src: tensor<?x8xf32>, %n: index) -> (tensor<2x3xf32>, tensor<2x8xf32>) {
  %s = tensor.extract_slice %x[0, %o] [2, 3] [1, 2] : tensor<2x8xf32> to tensor<2x3xf32>
  %put = tensor.insert_slice %src into %x[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<2x8xf32>
  func.return %s, %put : tensor<2x3xf32>, tensor<2x8xf32>
}
"""


def test_oracle_checks_a_strided_slice_by_its_last_element_and_an_insert_by_its_shape() -> None:
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    row = -x[:1]
    s, put = evaluate(devplan.parse(STRIDED), [x, 3, row, 1])
    np.testing.assert_array_equal(s, x[:, 3:8:2])
    np.testing.assert_array_equal(put, np.concatenate([row, x[1:]]))
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:2:3: error: 'tensor.extract_slice' reaches outside dimension 1 "
        r"\(size 8\): offset 4, size 3, stride 2",
    ):
        evaluate(devplan.parse(STRIDED), [x, 4, row, 1])
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:3:3: error: 'tensor.insert_slice' of a 2x8 tensor into a 1x8 slice",
    ):
        evaluate(devplan.parse(STRIDED), [x, 3, x, 1])


H = '#vdev.device<"cpu", 0, #target.target<"llvm">, "global">'
STATIC_SLICE = f"""
func.func @main(%x: tensor<2x8xf32> {{vdev.device = {H}}}) -> (tensor<2x3xf32> {{vdev.device = {H}}}) {{
  %s = tensor.extract_slice %x[0, OFFSET] [2, 3] [1, 2] {{vdev.device = {H}}} : tensor<2x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}}
"""


def test_a_static_slice_one_stride_past_its_tensor_is_refused_when_lowered() -> None:
    # offset 3: the last element read is 3 + 2 * 2 = 7, the tensor's last; offset 4 reads 8
    devplan.apply(devplan.parse(STATIC_SLICE.replace("OFFSET", "3")), "lower-to-device")
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:3:3: error: 'tensor.extract_slice' reaches outside dimension 1 of its "
        r"tensor \(size 8: offset 4, size 3, stride 2\)",
    ):
        devplan.apply(devplan.parse(STATIC_SLICE.replace("OFFSET", "4")), "lower-to-device")


RESHAPE = """
func.func @main(%x: tensor<2x3xf32>, %shape: tensor<2xindex>) -> tensor<3x?xf32> {
  %r = tensor.reshape %x(%shape) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x?xf32>
  func.return %r : tensor<3x?xf32>
}
"""


def test_a_reshape_shape_that_contradicts_its_static_result_type_is_a_run_time_error() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (r,) = devplan.execute(
        devplan.parse(RESHAPE), [x, np.array([3, 2])], kernel_backend="numpy"
    ).outputs
    np.testing.assert_array_equal(r, x.reshape(3, 2))
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:3:3: error: assertion failed: 'tensor.reshape' shape element 0 differs "
        r"from its result type's 3",
    ):
        devplan.execute(devplan.parse(RESHAPE), [x, np.array([2, 3])], kernel_backend="numpy")


CONCAT_DYNAMIC = """func.func @main(%a: tensor<2x?xf32>, %b: tensor<3x?xf32>) -> tensor<5x?xf32> {
  %cat = tensor.concat dim(0) %a, %b : (tensor<2x?xf32>, tensor<3x?xf32>) -> tensor<5x?xf32>
  return %cat : tensor<5x?xf32>
}"""


@pytest.mark.parametrize("widths", [(4, 5), (5, 4)])
def test_a_concat_whose_operands_differ_off_its_axis_is_a_located_run_time_error(
    widths: tuple[int, int],
) -> None:
    """Either operand may be the odd one out: each is checked against operand 0's extent."""
    a = np.ones((2, widths[0]), np.float32)
    b = np.ones((3, widths[1]), np.float32)
    with pytest.raises(
        devplan.DevplanError, match=r"<string>:2:3: .*dimension 1 of operand 1 differs"
    ):
        devplan.execute(devplan.parse(CONCAT_DYNAMIC), [a, b], kernel_backend="numpy")
