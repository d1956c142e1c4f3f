"""The NumPy backend's lane values: an index kept affine (symbolic, `lanes.Affine`) gives
what its lane array gives. Generated cases: lane spaces of random grids and blocks,
indices stepping along random lane axes (one, several, none, backwards, in the memory's
order of dimensions or not), loads of them against NumPy's gather of the lane arrays,
and `min`/`max` of an affine index and a bound against the integer definitions."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from devplan.runtime.kernels import lanes
from devplan.runtime.kernels.lanes import Affine, Faults, Lanes


def _lane_space(rng: np.random.Generator) -> Lanes:
    grid = cast(tuple[int, int, int], tuple(int(n) for n in rng.integers(1, 4, 3)))
    block = cast(tuple[int, int, int], tuple(int(n) for n in rng.integers(1, 6, 3)))
    return Lanes(grid, block)


def _index(rng: np.random.Generator, space: Lanes, size: int) -> int | Affine | None:
    """A uniform index or an affine one within `size` (None when the draw leaves it)."""
    if rng.random() < 0.25:
        return int(rng.integers(0, size))
    coeffs = [0] * space.ndim
    for axis in rng.choice(space.ndim, int(rng.integers(1, 3)), replace=False):
        coeffs[int(axis)] = int(rng.choice([-2, -1, 1, 1, 1, 2, 3]))
    value = lanes.addi(lanes.muli(Affine(space, tuple(coeffs), 0), 1, 64), 0, 64)
    if not isinstance(value, Affine):
        return None
    lo, hi = value.bounds()
    if hi - lo >= size:
        return None
    offset = int(rng.integers(-lo, size - hi))
    return Affine(space, value.coeffs, value.offset + offset)


def test_a_load_of_affine_indices_reads_what_a_gather_of_their_lanes_reads() -> None:
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 400:
        space = _lane_space(rng)
        shape = tuple(int(n) for n in rng.integers(1, 13, int(rng.integers(1, 4))))
        mem = rng.standard_normal(shape).astype(np.float32)
        idx = [_index(rng, space, n) for n in shape]
        if any(i is None for i in idx):
            continue
        faults = Faults(cast(Any, None), space, None)  # (the kernel is only for errors)
        got = lanes.load(faults, 0, cast(Any, None), mem, idx, True)
        full = tuple(np.broadcast_to(lanes.arr(i), space.shape) for i in idx)
        expected = mem[full]
        assert np.array_equal(np.broadcast_to(got, space.shape), expected), (idx, shape)
        checked += 1


def test_min_and_max_of_an_affine_index_and_a_bound_follow_the_definitions() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        space = _lane_space(rng)
        x = _index(rng, space, 40)
        if not isinstance(x, Affine):
            continue
        bound = int(rng.integers(-5, 45))
        for op in ("minsi", "maxsi", "minui", "maxui"):
            for a, b in ((x, bound), (bound, x)):
                got = lanes.minmax(op, a, b, 64)
                expected = lanes.integer(f"arith.{op}", lanes.arr(a), lanes.arr(b), 64)
                assert np.array_equal(
                    np.broadcast_to(lanes.arr(got), space.shape),
                    np.broadcast_to(expected, space.shape),
                ), (op, a, b)
