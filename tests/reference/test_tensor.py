"""`devplan.reference.tensor`: the oracle's `linalg.pack`/`unpack` against the lowering,
and its bounds on `tensor.insert`.

The oracle packs element by element from the definition; lower-to-device decomposes a
pack into pad, expand_shape and a transpose (an unpack into a transpose, collapse_shape
and extract_slice). Each tiling below, round-tripped through pack and unpack, must give
the same values both ways, and the unpack must give the source back.
"""

# ruff: noqa: E501  (the IR in the program text is long)

from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.reference.program import evaluate

TILINGS = [
    # (source shape, inner_dims_pos, tiles, outer_dims_perm or None)
    ((7, 16), [0, 1], [8, 1], None),
    ((16, 13), [1, 0], [8, 1], [1, 0]),
    ((5, 3, 4), [2], [3], [2, 0, 1]),
    ((6, 9), [1], [4], None),
]


def _program(
    shape: tuple[int, ...], positions: list[int], tiles: list[int], perm: list[int] | None
) -> str:
    rank = len(shape)
    order = perm if perm is not None else list(range(rank))
    tile_of = dict(zip(positions, tiles, strict=True))
    outer = [-(-n // tile_of[d]) if d in tile_of else n for d, n in enumerate(shape)]
    packed = "x".join(str(n) for n in [outer[d] for d in order] + tiles)
    source = "x".join(str(n) for n in shape)
    # The first tile size is an index value, so one tile of each tiling is dynamic.
    packed_dyn = "x".join([*packed.split("x")[:rank], "?", *packed.split("x")[rank + 1 :]])
    tiles_text = ", ".join(["%t", *[str(t) for t in tiles[1:]]])
    perm_text = f" outer_dims_perm = {order}" if perm is not None else ""
    tiling = f"{perm_text} inner_dims_pos = {positions} inner_tiles = [{tiles_text}]"
    return f"""
func.func @main(%a: tensor<{source}xi32>) -> (tensor<{packed_dyn}xi32>, tensor<{source}xi32>) {{
  %pad = arith.constant -1 : i32
  %t = arith.constant {tiles[0]} : index
  %d = tensor.empty(%t) : tensor<{packed_dyn}xi32>
  %p = linalg.pack %a padding_value(%pad : i32){tiling} into %d : tensor<{source}xi32> -> tensor<{packed_dyn}xi32>
  %e = tensor.empty() : tensor<{source}xi32>
  %u = linalg.unpack %p{tiling} into %e : tensor<{packed_dyn}xi32> -> tensor<{source}xi32>
  return %p, %u : tensor<{packed_dyn}xi32>, tensor<{source}xi32>
}}
"""


@pytest.mark.parametrize("tiling", TILINGS, ids=lambda t: f"{t[0]}-{t[1]}-{t[2]}-{t[3]}")
def test_pack_and_unpack_agree_with_the_lowering_and_round_trip(
    tiling: tuple[tuple[int, ...], list[int], list[int], list[int] | None],
) -> None:
    shape = tiling[0]
    module = devplan.parse(_program(*tiling))
    source = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    want = evaluate(module, [source])
    got = devplan.execute(module, [source]).outputs
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(want[1], source)
    np.testing.assert_array_equal(got[1], source)


def test_the_oracle_pads_the_last_tile_with_the_padding_value() -> None:
    module = devplan.parse(_program((3, 5), [0, 1], [2, 3], [1, 0]))
    packed = evaluate(module, [np.arange(15, dtype=np.int32).reshape(3, 5)])[0]
    assert packed.shape == (2, 2, 2, 3)
    assert packed[1, 1].tolist() == [[13, 14, -1], [-1, -1, -1]]  # rows 2-3, columns 3-5
    assert packed[0, 1].tolist() == [[10, 11, 12], [-1, -1, -1]]


def test_expand_shape_without_output_shape_divides_the_source_size_in_both() -> None:
    module = devplan.parse("""
func.func @main(%x: tensor<2x?xf32>) -> tensor<2x2x?x1xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2, 3]] : tensor<2x?xf32> into tensor<2x2x?x1xf32>
  return %e : tensor<2x2x?x1xf32>
}
""")
    source = np.arange(12, dtype=np.float32).reshape(2, 6)
    want = evaluate(module, [source])[0]
    got = devplan.execute(module, [source]).outputs[0]
    assert want.shape == (2, 2, 3, 1)
    np.testing.assert_array_equal(want, source.reshape(2, 2, 3, 1))
    np.testing.assert_array_equal(got, want)


INSERT = """func.func @main(%v: i32, %t: tensor<2x3xi32>, %i: index, %j: index) -> tensor<2x3xi32> {
  %r = tensor.insert %v into %t[%i, %j] : tensor<2x3xi32>
  func.return %r : tensor<2x3xi32>
}
"""


@pytest.mark.parametrize(("i", "j"), [(0, 0), (1, 2)])
def test_the_oracle_inserts_at_the_corners_of_its_tensor(i: int, j: int) -> None:
    t = np.zeros((2, 3), np.int32)
    (got,) = evaluate(devplan.parse(INSERT), [np.int32(7), t, i, j])
    want = t.copy()
    want[i, j] = 7
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("i", "j"), [(-1, 0), (2, 0), (0, 3), (3, 0), (0, 5)])
def test_an_insert_outside_its_tensor_is_a_located_error_in_the_oracle(i: int, j: int) -> None:
    """At the end of a dimension and past it by more than one (NumPy itself refuses those
    with an IndexError, which is no located error)."""
    with pytest.raises(
        devplan.DevplanError,
        match=rf"<string>:2:3: error: 'tensor.insert' at \[{i}, {j}\] is outside a 2x3 tensor",
    ):
        evaluate(devplan.parse(INSERT), [np.int32(7), np.zeros((2, 3), np.int32), i, j])


COLUMN = """func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %c = tensor.extract_slice %x[0, 5] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


def test_a_column_slice_drops_its_trailing_unit_dimension_in_the_oracle() -> None:
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    (column,) = evaluate(devplan.parse(COLUMN), [x])
    np.testing.assert_array_equal(column, x[:, 5])


def test_a_slice_with_a_stride_too_many_is_a_located_error_in_the_oracle() -> None:
    text = COLUMN.replace("[1, 1] :", "[1, 1, 1] :")
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:2:3: error: 'tensor.extract_slice' needs one offset, size and stride "
        "per dimension",
    ):
        evaluate(devplan.parse(text), [np.zeros((4, 8), np.float32)])


PAD = """func.func @main(%x: tensor<4xf32>, %l: index, %h: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[%l] high[%h] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<?xf32>
  func.return %p : tensor<?xf32>
}
"""


def test_a_pad_by_one_dynamic_low_and_one_dynamic_high_pads_each_side_its_own() -> None:
    x = np.arange(4, dtype=np.float32) + 1
    (padded,) = evaluate(devplan.parse(PAD), [x, 1, 3])
    np.testing.assert_array_equal(padded, np.pad(x, (1, 3)))
