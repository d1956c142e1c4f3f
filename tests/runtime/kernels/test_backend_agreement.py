"""The numpy and numba kernel backends agree bit for bit on generated kernels.

Hypothesis draws kernels (elementwise expressions over every supported element type,
guarded loads and stores, 1-D to 3-D grids, loops, shared-memory reductions, one faulting
thread in one block of many) and their launches; both backends run them on copies of the
same inputs, and either both finish with bitwise equal buffers, or both fail with the same
message. The numba backend is also run with its blocks in parallel, which must give the
same buffers and the same first fault as running them in order.

Each distinct kernel costs a Numba compile (about a second, most of it the same for a
small kernel as for a large one), each launch of it far less: a drawn kernel computes
several drawn expressions and is launched on several drawn grids.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels import numba_backend
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.kernels.numba_source import STRIP

SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
"""Few examples each: every distinct kernel is a Numba compilation (about a second)."""

FLOATS = ("f32", "f64")
INTS = ("i8", "i16", "i32", "i64")
DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}
FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf")
INT_BINARY = ("addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi", "divsi", "remsi")
NEVER_FAULTING = INT_BINARY[:-2]
"""The integer ops without undefined behaviour (no division)."""


def parse_kernel(text: str) -> KernelFuncOp:
    module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{\n{text}\n}}')
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def outcome(func: KernelFuncOp, backend: str, grid: Any, block: Any, args: list[Any]) -> Any:
    """The buffers after the launch (on copies of `args`), or the fault's message."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        compile_kernel(func, backend)(grid, block, copies)
    except KernelError as e:
        return str(e)
    return [a for a in copies if isinstance(a, np.ndarray)]


def assert_same(expected: Any, got: Any) -> None:
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
        return
    for x, y in zip(expected, got, strict=True):
        same = x.tobytes() == y.tobytes()
        if not same and x.dtype.kind == "f":  # NaNs of either sign or payload are one NaN
            same = bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))
        assert same, (x, y)


Launch = tuple[tuple[int, int, int], tuple[int, int, int], list[Any]]
"""A launch's grid, block and arguments."""


def agree(text: str, grid: Any, block: Any, args: list[Any]) -> None:
    """Both backends give the same outcome of the launch."""
    agree_on_launches(text, [(grid, block, args)])


def agree_on_launches(text: str, launches: list[Launch]) -> None:
    """Both backends give the same outcome of each launch of one kernel (compiled once)."""
    func = parse_kernel(text)
    for grid, block, args in launches:
        expected = outcome(func, "numpy", grid, block, args)
        assert_same(expected, outcome(func, "numba", grid, block, args))


class Builder:
    """SSA lines of a kernel body under construction."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def emit(self, rhs: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"    {name} = {rhs}")
        return name


@st.composite
def expressions(
    draw: st.DrawFn, b: Builder, t: str, leaves: list[str], depth: int, faulting: bool = True
) -> str:
    """An SSA value of type `t`: a random expression tree over `leaves` (dividing by
    zero only when `faulting`)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(leaves))
        if t in FLOATS:
            value = draw(st.sampled_from(["0.0", "1.5", "-2.0", "3.0e+00", "0.1"]))
        else:
            value = str(draw(st.integers(-3, 5)))
        return b.emit(f"arith.constant {value} : {t}")
    x = draw(expressions(b, t, leaves, depth - 1, faulting))
    y = draw(expressions(b, t, leaves, depth - 1, faulting))
    kind = draw(st.integers(0, 4))
    if kind == 0:  # a comparison and a select
        pred = draw(st.sampled_from(["olt", "oge", "une"] if t in FLOATS else ["slt", "ult", "ne"]))
        cmp = "cmpf" if t in FLOATS else "cmpi"
        c = b.emit(f"arith.{cmp} {pred}, {x}, {y} : {t}")
        return b.emit(f"arith.select {c}, {x}, {y} : {t}")
    if t in FLOATS:
        if kind == 1:
            return b.emit(
                f"{draw(st.sampled_from(['arith.negf', 'math.absf', 'math.sqrt']))} {x} : {t}"
            )
        return b.emit(f"arith.{draw(st.sampled_from(FLOAT_BINARY))} {x}, {y} : {t}")
    ops = INT_BINARY if faulting else NEVER_FAULTING
    return b.emit(f"arith.{draw(st.sampled_from(ops))} {x}, {y} : {t}")


EXPRESSIONS = 2
"""Drawn expressions a generated elementwise kernel computes, each into its own output."""

LAUNCHES = 3
"""Launches of each generated kernel: one Numba compile, then each launch is cheap."""


@st.composite
def elementwise(draw: st.DrawFn) -> tuple[str, list[Launch]]:
    """`out_j[lin] = expr_j(a_j[lin], b_j[lin], s_j)` for `EXPRESSIONS` expressions of
    independently drawn types, over a 1-D to 3-D grid, guarded by `lin < n` (or not, or
    off by one), optionally summed over one `scf.for` loop carrying them all; launched
    `LAUNCHES` times on grids of their own. Only the first expression may divide by zero:
    the backends report different faults when two ops fault in different threads (the
    NumPy backend the first faulting op's first thread, the Numba backend the first
    faulting thread's op)."""
    types = [draw(st.sampled_from(FLOATS + INTS)) for _ in range(EXPRESSIONS)]
    guard = draw(st.sampled_from(["ult", "slt", "ule", "none"]))
    b = Builder()
    ids = []
    for axis in "xyz":
        tid = b.emit(f"kernel.thread_id {axis}")
        bid = b.emit(f"kernel.block_id {axis}")
        bdim = b.emit(f"kernel.block_dim {axis}")
        gdim = b.emit(f"kernel.grid_dim {axis}")
        base = b.emit(f"arith.muli {bid}, {bdim} : index")
        ids.append(
            (
                b.emit(f"arith.addi {base}, {tid} : index"),
                b.emit(f"arith.muli {gdim}, {bdim} : index"),
            )
        )
    (ix, nx), (iy, ny), (iz, _) = ids
    row = b.emit(f"arith.muli {iz}, {ny} : index")
    row = b.emit(f"arith.addi {row}, {iy} : index")
    lin = b.emit(f"arith.muli {row}, {nx} : index")
    lin = b.emit(f"arith.addi {lin}, {ix} : index")
    head = list(b.lines)
    b.lines = []
    loads = [
        (b.emit(f"memref.load %a{j}[{lin}] : memref<?x{t}>"),
         b.emit(f"memref.load %b{j}[{lin}] : memref<?x{t}>"))
        for j, t in enumerate(types)
    ]  # fmt: skip
    if draw(st.booleans()):
        carried = ", ".join(f"%p{j} = {x}" for j, (x, _) in enumerate(loads))
        b.lines.append(
            f"    %acc:{EXPRESSIONS} = scf.for %k = %c0 to %m step %c1 iter_args({carried}) "
            f"-> ({', '.join(types)}) {{"
        )
        inner = Builder()
        inner.count = 1000
        yielded = []
        for j, (t, (_, y)) in enumerate(zip(types, loads, strict=True)):
            if t in FLOATS:
                k = inner.emit("arith.index_cast %k : index to i64")
                k = inner.emit(f"arith.sitofp {k} : i64 to {t}")
            else:
                k = inner.emit(f"arith.index_cast %k : index to {t}")
            leaves = [f"%p{j}", y, k, f"%s{j}"]
            yielded.append(draw(expressions(inner, t, leaves, 2, faulting=j == 0)))
        b.lines += [f"  {line}" for line in inner.lines]
        b.lines.append(f"      scf.yield {', '.join(yielded)} : {', '.join(types)}")
        b.lines.append("    }")
        outputs = [f"%acc#{j}" for j in range(EXPRESSIONS)]
    else:
        outputs = [
            draw(expressions(b, t, [x, y, f"%s{j}"], 3, faulting=j == 0))
            for j, (t, (x, y)) in enumerate(zip(types, loads, strict=True))
        ]
    for j, (t, result) in enumerate(zip(types, outputs, strict=True)):
        b.lines.append(f"    memref.store {result}, %out{j}[{lin}] : memref<?x{t}>")
    body = list(b.lines)
    params = "".join(
        f"%a{j}: memref<?x{t}>, %b{j}: memref<?x{t}>, %out{j}: memref<?x{t}>, %s{j}: {t}, "
        for j, t in enumerate(types)
    )
    lines = [
        f"kernel.func @ew({params}%m: index) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        *head,
    ]
    if guard == "none":
        lines += body
    else:
        lines.append(f"    %n = memref.dim %out0, %c0 : memref<?x{types[0]}>")
        lines.append(f"    %in = arith.cmpi {guard}, {lin}, %n : index")
        lines.append("    scf.if %in {")
        lines += [f"  {line}" for line in body]
        lines.append("    }")
    lines += ["    kernel.return", "}"]
    launches = [draw(elementwise_launch(types, guard)) for _ in range(LAUNCHES)]
    return "\n".join(lines), launches


@st.composite
def elementwise_launch(draw: st.DrawFn, types: list[str], guard: str) -> Launch:
    """A grid of 1 to 3 dimensions for `elementwise`'s kernel and its arguments: `n`
    elements an array (all of the grid's threads without a guard, else half to all)."""
    dims = draw(st.integers(1, 3))
    grid = [draw(st.integers(1, 3)) if d < dims else 1 for d in range(3)]
    block = [draw(st.integers(1, 6)) if d < dims else 1 for d in range(3)]
    threads = int(np.prod(grid)) * int(np.prod(block))
    n = draw(st.integers(max(1, threads // 2), threads)) if guard != "none" else threads
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    args: list[Any] = []
    for t in types:
        dtype = DTYPES[t]
        if t in FLOATS:
            a, b = (rng.standard_normal(n).astype(dtype) for _ in range(2))
            scalar: Any = float(draw(st.sampled_from([0.5, -1.0, 2.0])))
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -100), min(info.max, 100)
            a, b = (rng.integers(lo, hi, n).astype(dtype) for _ in range(2))
            scalar = draw(st.integers(-4, 4))
        args += [a, b, np.zeros(n, dtype), scalar]
    return tuple(grid), tuple(block), [*args, draw(st.integers(0, 3))]


@settings(SETTINGS, max_examples=4)
@given(elementwise())
def test_backends_agree_on_generated_elementwise_kernels(case: tuple[str, list[Launch]]) -> None:
    agree_on_launches(*case)


SUM = """
kernel.func @sum(%a: memref<?x{t}>, %out: memref<?x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0 : {t}
  %sh = kernel.alloc_shared : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %n = memref.dim %a, %c0 : memref<?x{t}>
  %in = arith.cmpi slt, %i, %n : index
  %v = scf.if %in -> ({t}) {{
    %x = memref.load %a[%i] : memref<?x{t}>
    scf.yield %x : {t}
  }} else {{
    scf.yield %zero : {t}
  }}
  memref.store %v, %sh[%tx] : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
  kernel.barrier
  %half = arith.divsi %bd, %c2 : index
  %steps = arith.constant {steps} : index
  scf.for %k = %c0 to %steps step %c1 {{
    %sh1 = arith.shrsi %half, %k : index
    %active = arith.cmpi slt, %tx, %sh1 : index
    scf.if %active {{
      %j = arith.addi %tx, %sh1 : index
      %p = memref.load %sh[%tx] : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
      %q = memref.load %sh[%j] : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
      %r = arith.{add} %p, %q : {t}
      memref.store %r, %sh[%tx] : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
    }}
    kernel.barrier
  }}
  %first = arith.cmpi eq, %tx, %c0 : index
  scf.if %first {{
    %total = memref.load %sh[%c0] : memref<{bs}x{t}, #vdev.device<?, ?, ?, "shared">>
    memref.store %total, %out[%bx] : memref<?x{t}>
  }}
  kernel.return
}}
"""


@settings(SETTINGS, max_examples=4)
@given(
    st.sampled_from(["f32", "f64", "i32", "i64"]),
    st.integers(0, 5),
    st.booleans(),
    st.lists(st.tuples(st.integers(1, 6), st.integers(0, 10_000)), min_size=3, max_size=3),
)
def test_backends_agree_on_shared_memory_reductions(
    t: str, log_block: int, fault: bool, launches: list[tuple[int, int]]
) -> None:
    """A tree reduction per block; with `fault`, the last block stores one past the end.
    Each kernel is launched on several grids, of `blocks` blocks over `n` elements."""
    bs = 1 << log_block
    text = SUM.format(t=t, bs=bs, steps=log_block, add="addf" if t in FLOATS else "addi")
    if fault:
        text = text.replace(
            "memref.store %total, %out[%bx]",
            "%bad = arith.addi %bx, %c1 : index\n    memref.store %total, %out[%bad]",
        )
    runs: list[Launch] = []
    for blocks, seed in launches:
        rng = np.random.default_rng(seed)
        n = blocks * bs - int(rng.integers(0, bs))
        a = rng.integers(-50, 50, max(n, 1)).astype(DTYPES[t])
        runs.append(((blocks, 1, 1), (bs, 1, 1), [a, np.zeros(blocks, DTYPES[t])]))
    agree_on_launches(text, runs)


FAULT_IN_ONE_BLOCK = """
kernel.func @f(%a: memref<?x?xf32>, %c: memref<?x?xf32>, %target: index) {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %r0 = arith.muli %by, %dy : index
  %row = arith.addi %r0, %ty : index
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %gx = kernel.grid_dim x
  %w = arith.muli %gx, %dx : index
  %l0 = arith.muli %row, %w : index
  %lin = arith.addi %l0, %col : index
  %hit = arith.cmpi eq, %lin, %target : index
  %x = memref.load %a[%row, %col] : memref<?x?xf32>
  %y = arith.mulf %x, %x : f32
  %col2 = arith.select %hit, %w, %col : index
  memref.store %y, %c[%row, %col2] : memref<?x?xf32>
  kernel.return
}
"""


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 8), st.integers(1, 8), st.data())
def test_one_faulting_thread_among_many_blocks_is_reported_alike(
    gx: int, gy: int, bx: int, by: int, data: st.DataObject
) -> None:
    h, w = gy * by, gx * bx
    target = data.draw(st.integers(0, h * w))  # h * w: no thread faults
    a = np.arange(h * w, dtype=np.float32).reshape(h, w)
    c = np.zeros((h, w), np.float32)
    agree(FAULT_IN_ONE_BLOCK, (gx, gy, 1), (bx, by, 1), [a, c, target])


ACCUMULATE_ROWS = """
kernel.func @acc(%a: memref<?x?xf32>, %c: memref<?x?xf32>) {{
  %c0 = arith.constant 0 : index
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %n = memref.dim %c, %c0 : memref<?x?xf32>
  %in = arith.cmpi {pred}, %by, %n : index
  scf.if %in {{
    %x = memref.load %a[%by, %col] : memref<?x?xf32>
    %y = memref.load %c[%by, %col] : memref<?x?xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %c[%by, %col] : memref<?x?xf32>
  }}
  kernel.return
}}
"""


@pytest.mark.parametrize("pred", ["ult", "ule"])
def test_runs_of_whole_grid_rows_give_the_buffers_and_first_fault_of_blocks_in_order(
    pred: str,
) -> None:
    # Two blocks a grid row: the numba backend tests runs of up to 32 rows at once. Rows
    # 37 to 39 have no row of %c: guarded off (ult), so the second run is not uniform
    # and is tested row by row; or the first of them faults (ule).
    text = ACCUMULATE_ROWS.format(pred=pred)
    a = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
    c = np.ones((37, 8), np.float32)
    agree(text, (2, 40, 1), (4, 1, 1), [a, c])
    got = outcome(parse_kernel(text), "numba", (2, 40, 1), (4, 1, 1), [a, c])
    if pred == "ult":
        np.testing.assert_array_equal(got[1], a[:37] + 1)  # each block ran once
    else:
        assert "index [37, 0] is outside shape (37, 8) (block (0, 37, 0), thread (0" in got


FAULT_IN_TWO_BLOCKS = """
kernel.func @g(%a: memref<?x?xf32>, %c: memref<?x?xf32>, %target: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %last = arith.constant 4000 : index
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %r0 = arith.muli %by, %dy : index
  %row = arith.addi %r0, %ty : index
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %gx = kernel.grid_dim x
  %w = arith.muli %gx, %dx : index
  %l0 = arith.muli %row, %w : index
  %lin = arith.addi %l0, %col : index
  %hit1 = arith.cmpi eq, %lin, %target : index
  %hit2 = arith.cmpi eq, %lin, %last : index
  %hit = arith.ori %hit1, %hit2 : i1
  %d = arith.select %hit, %c0, %c1 : index
  %q = arith.divsi %lin, %d : index
  %qi = arith.index_cast %q : index to i64
  %qf = arith.sitofp %qi : i64 to f32
  %x = memref.load %c[%row, %col] : memref<?x?xf32>
  %y = arith.addf %x, %qf : f32
  memref.store %y, %c[%row, %col] : memref<?x?xf32>
  kernel.return
}
"""


def test_blocks_writing_their_own_elements_are_found_free_of_races() -> None:
    from devplan.runtime.kernels.common import Kernel
    from devplan.runtime.kernels.ranges import separating_axes

    assert separating_axes(Kernel(parse_kernel(FAULT_IN_TWO_BLOCKS))) == {"x", "y"}
    # The store's column is a select, not a global id: blocks along x may collide.
    assert separating_axes(Kernel(parse_kernel(FAULT_IN_ONE_BLOCK))) == {"y"}


TILES = """
kernel.func @t(%c: memref<?x?xf32>) {
  %c8 = arith.constant 8 : index
  %k = arith.constant {k} : index
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %r0 = arith.muli %bx, %c8 : index
  %row = arith.addi %r0, %k : index
  %q0 = arith.muli %by, %dx : index
  %col = arith.addi %q0, %tx : index
  %x = memref.load %c[%row, %col] : memref<?x?xf32>
  memref.store %x, %c[%row, %col] : memref<?x?xf32>
  kernel.return
}
"""
"""Each block along x a tile of 8 rows (row `k` of it), along y a strip of columns."""


@pytest.mark.parametrize(("k", "axes"), [(0, {"x", "y"}), (7, {"x", "y"}), (8, {"y"}), (-1, {"y"})])
def test_blocks_writing_tiles_of_rows_are_free_of_races_when_the_offset_stays_in_the_tile(
    k: int, axes: set[str]
) -> None:
    """`block_id x * 8 + k` is in block x's own rows for 0 <= k < 8 only; a column of
    `block_id y * block_dim x + thread_id x` is in block y's own columns."""
    from devplan.runtime.kernels.common import Kernel
    from devplan.runtime.kernels.ranges import separating_axes

    assert separating_axes(Kernel(parse_kernel(TILES.replace("{k}", str(k))))) == axes


OVERLAPPING_TILES = """
kernel.func @t(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  %bx = kernel.block_id x
  %own = arith.muli %bx, %c1 : index
  %p = arith.muli %bx, %c2 : index
  %next = arith.addi %p, %c1 : index
  %x = memref.load %a[%next] : memref<?xf32>
  %y = arith.addf %x, %one : f32
  memref.store %y, %a[%own] : memref<?xf32>
  kernel.return
}
"""
"""Block b reads element 2b + 1 (a tile of 2) and writes element b (a tile of 1): block
b + 1 ... 2b + 1 write what block b reads, so the blocks must run in order."""

OVERLAPPING_COLUMNS = """
kernel.func @t(%a: memref<?xf32>) {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %px = arith.muli %bx, %dx : index
  %ix = arith.addi %px, %tx : index
  %py = arith.muli %bx, %dy : index
  %iy = arith.addi %py, %ty : index
  %x = memref.load %a[%iy] : memref<?xf32>
  memref.store %x, %a[%ix] : memref<?xf32>
  kernel.return
}
"""
"""Blocks along x index by threads along x and along y: of widths `block_dim x` and
`block_dim y`, which overlap between blocks unless the two are equal."""


@pytest.mark.parametrize("text", [OVERLAPPING_TILES, OVERLAPPING_COLUMNS])
def test_blocks_indexing_ranges_of_different_widths_are_not_found_free_of_races(
    text: str,
) -> None:
    from devplan.runtime.kernels.common import Kernel
    from devplan.runtime.kernels.ranges import separating_axes

    assert separating_axes(Kernel(parse_kernel(text))) is None


def run_blocks_in_parallel(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the numba backend run the blocks of every launch free of races in parallel:
    of any size, and (loop-free ones too) whatever the machine's load. The list returned
    gets an entry at each launch run in parallel."""
    monkeypatch.setattr(numba_backend, "PARALLEL_THREADS", 0)
    monkeypatch.setattr(numba_backend, "spare_core", lambda: True)
    parallel: list[int] = []
    chunk_size = numba_backend._set_chunksize  # pyright: ignore[reportPrivateUsage]

    def recording(size: int) -> int:
        if size == 1:  # set for the launch; the previous size is set back after it
            parallel.append(size)
        return chunk_size(size)

    monkeypatch.setattr(numba_backend, "_set_chunksize", recording)
    return parallel


def test_blocks_reading_what_later_blocks_write_give_the_buffers_of_blocks_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run in parallel, chunks of later blocks wrote the elements earlier blocks then read
    (16384 of 65536 elements differed on 2 threads, in each of 10 runs)."""
    func = parse_kernel(OVERLAPPING_TILES)
    grid, block = (1 << 16, 1, 1), (1, 1, 1)
    args = [np.arange(2 << 16, dtype=np.float32)]
    expected = outcome(func, "numpy", grid, block, args)
    parallel = run_blocks_in_parallel(monkeypatch)
    assert_same(expected, outcome(func, "numba", grid, block, args))
    assert not parallel


ATOMIC_SUM = """
kernel.func @t(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 1.0e-3 : f32
  %bx = kernel.block_id x
  %i = arith.index_cast %bx : index to i32
  %f = arith.sitofp %i : i32 to f32
  %x = arith.mulf %f, %scale : f32
  %old = memref.atomic_rmw addf %x, %a[%c0] : (f32, memref<?xf32>) -> f32
  kernel.return
}
"""
"""Every block adds to one element with `memref.atomic_rmw` (and stores nothing)."""


def test_blocks_writing_one_element_with_atomics_run_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A parameter written only by atomics was not counted as written: the blocks were found
    free of races, and their float sum in parallel differed bitwise from the sum in block
    order (in 20 runs of 20 on 2 threads)."""
    from devplan.runtime.kernels.common import Kernel
    from devplan.runtime.kernels.ranges import separating_axes

    func = parse_kernel(ATOMIC_SUM)
    assert separating_axes(Kernel(func)) is None
    grid, block, args = (1 << 16, 1, 1), (1, 1, 1), [np.zeros(1, np.float32)]
    expected = outcome(func, "numpy", grid, block, args)
    parallel = run_blocks_in_parallel(monkeypatch)
    assert_same(expected, outcome(func, "numba", grid, block, args))
    assert not parallel


@pytest.mark.parametrize("target", [-1, 5, 700, 4095])
def test_parallel_blocks_give_the_results_and_first_fault_of_blocks_in_order(
    target: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tests/conftest.py gives Numba two threads at least, also on a one-core machine.
    assert numba_backend.numba.get_num_threads() >= 2, "blocks never run in parallel here"
    func = parse_kernel(FAULT_IN_TWO_BLOCKS)
    grid, block = (8, 8, 1), (8, 8, 1)
    c = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    # Threads `target` and 4000 divide by zero: the first in block order is reported.
    args = [c.copy(), c, target]
    in_order = outcome(func, "numba", grid, block, args)
    assert isinstance(in_order, str)
    assert "divides by zero" in in_order
    parallel = run_blocks_in_parallel(monkeypatch)
    assert_same(in_order, outcome(func, "numba", grid, block, args))
    assert parallel
    assert_same(outcome(func, "numpy", grid, block, args), in_order)


def test_parallel_blocks_without_a_fault_give_the_buffers_of_blocks_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    func = parse_kernel(FAULT_IN_TWO_BLOCKS)
    c = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    args = [c.copy(), c, -1]
    grid, block = (8, 4, 1), (8, 8, 1)  # 2048 threads: thread 4000 does not exist
    in_order = outcome(func, "numba", grid, block, args)
    parallel = run_blocks_in_parallel(monkeypatch)
    assert_same(in_order, outcome(func, "numba", grid, block, args))
    assert parallel
    assert_same(outcome(func, "numpy", grid, block, args), in_order)


@st.composite
def loops_over_shared_memory(draw: st.DrawFn) -> tuple[str, list[Launch]]:
    """A loop alone between two barriers, reading the block's row of `a` staged in shared
    memory: `out[i] = p + q` after `(p, q) = loop k < m: (f(p, q, s[k]), g(p, q, s[k]))`.
    The numba backend's fast path runs such a loop with the thread loop inside it when
    its body cannot fault; `m` past the block size makes the loads fault instead. Each
    kernel is launched `LAUNCHES` times, with its own `m`, blocks and inputs."""
    t = draw(st.sampled_from(FLOATS + INTS))
    shared = f'memref<8x{t}, #vdev.device<?, ?, ?, "shared">>'
    inner = Builder()
    inner.count = 1000
    f = draw(expressions(inner, t, ["%p", "%q", "%u"], 2))
    g = draw(expressions(inner, t, ["%p", "%q", "%u"], 2))
    add = "addf" if t in FLOATS else "addi"
    lines = [
        f"kernel.func @loop(%a: memref<?x{t}>, %out: memref<?x{t}>, %m: index) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        "    %tx = kernel.thread_id x",
        "    %bx = kernel.block_id x",
        "    %bd = kernel.block_dim x",
        "    %i0 = arith.muli %bx, %bd : index",
        "    %i = arith.addi %i0, %tx : index",
        f"    %s = kernel.alloc_shared : {shared}",
        f"    %x = memref.load %a[%i] : memref<?x{t}>",
        f"    memref.store %x, %s[%tx] : {shared}",
        "    kernel.barrier",
        f"    %r:2 = scf.for %k = %c0 to %m step %c1 iter_args(%p = %x, %q = %x) -> ({t}, {t}) {{",
        f"      %u = memref.load %s[%k] : {shared}",
        *[f"  {line}" for line in inner.lines],
        f"      scf.yield {f}, {g} : {t}, {t}",
        "    }",
        "    kernel.barrier",
        f"    %y = arith.{add} %r#0, %r#1 : {t}",
        f"    memref.store %y, %out[%i] : memref<?x{t}>",
        "    kernel.return",
        "}",
    ]
    launches: list[Launch] = []
    for _ in range(LAUNCHES):
        blocks = draw(st.integers(1, 4))
        rng = np.random.default_rng(draw(st.integers(0, 1000)))
        dtype = DTYPES[t]
        n = blocks * 8
        if t in FLOATS:
            a = rng.standard_normal(n).astype(dtype)
        else:
            a = rng.integers(-100, 100, n).astype(dtype)
        m = draw(st.sampled_from([8, 5, 9, 1, 0]))
        launches.append(((blocks, 1, 1), (8, 1, 1), [a, np.zeros(n, dtype), m]))
    return "\n".join(lines), launches


@settings(SETTINGS, max_examples=3)
@given(loops_over_shared_memory())
def test_backends_agree_on_loops_over_shared_memory(case: tuple[str, list[Launch]]) -> None:
    agree_on_launches(*case)


INTERCHANGED_HEAD = """
kernel.func @t(%A: memref<?x?xf32>, %V: memref<?xf32>,
               %O: memref<?xf32>, %P: memref<?xf64>, %X: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zf = arith.constant 0.5 : f32
  %zd = arith.constant 1.5 : f64
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %row0 = arith.muli %by, %c2 : index
  %v = memref.load %V[%col] : memref<?xf32>
  kernel.barrier
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %r:3 = scf.for %k = %c0 to %K step %c1
      iter_args(%s = %zf, %p = %zd, %x = %c0) -> (f32, f64, index) {
"""

INTERCHANGED_TAIL = """
  }
  kernel.barrier
  memref.store %r#0, %O[%col] : memref<?xf32>
  memref.store %r#1, %P[%col] : memref<?xf64>
  %xi = arith.index_cast %r#2 : index to i64
  memref.store %xi, %X[%col] : memref<?xi64>
  kernel.return
}
"""


@st.composite
def interchanged_loops(draw: st.DrawFn) -> tuple[str, list[Launch]]:
    """A store-free loop over k after a barrier (the numba backend runs it interchanged):
    its body mixes loads the same in every thread (`A[row0, k]`, `V[k]`, hoisted before
    the strip of threads) with per-thread ones, float and index ops on them, and yields
    any value in reach, including the iv, values of earlier phases and hoisted ones.
    Each kernel is launched `LAUNCHES` times, with its own block size and inputs."""
    pool: dict[str, list[str]] = {
        "f32": ["%s", "%v", "%zf"],
        "f64": ["%p", "%zd"],
        "index": ["%x", "%k", "%col", "%row0", "%c1", "%bx"],
    }
    lines: list[str] = []

    def pick(t: str) -> str:
        return draw(st.sampled_from(pool[t]))

    for number in range(draw(st.integers(1, 8))):
        t, rhs = draw(
            st.sampled_from([
                ("f32", "memref.load %A[{i}, %k] : memref<?x?xf32>"),
                ("f32", "memref.load %V[{j}] : memref<?xf32>"),
                ("f32", "arith.{fop} {f}, {g} : f32"),
                ("f64", "arith.extf {f} : f32 to f64"),
                ("f64", "arith.{fop} {d}, {e} : f64"),
                ("index", "arith.{iop} {m}, {n} : index"),
                ("index", "memref.dim %A, %c{dim} : memref<?x?xf32>"),
            ])
        )  # fmt: skip
        rhs = rhs.format(
            i=draw(st.sampled_from(["%col", "%row0", "%c0"])),
            j=draw(st.sampled_from(["%col", "%c0", "%k"])),
            fop=draw(st.sampled_from(["addf", "mulf", "subf", "maximumf"])),
            iop=draw(st.sampled_from(["addi", "xori", "muli", "maxsi"])),
            f=pick("f32"), g=pick("f32"), d=pick("f64"), e=pick("f64"),
            m=pick("index"), n=pick("index"), dim=draw(st.integers(0, 1)),
        )  # fmt: skip
        lines.append(f"    %w{number} = {rhs}")
        pool[t].append(f"%w{number}")
    lines.append(f"    scf.yield {pick('f32')}, {pick('f64')}, {pick('index')} : f32, f64, index")
    launches: list[Launch] = []
    for i in range(LAUNCHES):
        # The first launch runs two strips of threads (the last one partial).
        threads = STRIP + 4 if i == 0 else draw(st.sampled_from([3, 5, 260]))
        rng = np.random.default_rng(draw(st.integers(0, 1000)))
        n, k = 2 * threads, draw(st.integers(1, 4))
        args = [
            rng.standard_normal((n, k)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32),
            np.zeros(n),
            np.zeros(n, np.int64),
        ]
        launches.append(((2, 1, 1), (threads, 1, 1), args))
    return INTERCHANGED_HEAD + "\n".join(lines) + INTERCHANGED_TAIL, launches


@settings(SETTINGS, max_examples=4)
@given(interchanged_loops())
def test_backends_agree_on_interchanged_loops(case: tuple[str, list[Launch]]) -> None:
    from devplan.runtime.kernels.common import Kernel
    from devplan.runtime.kernels.numba_source import NumbaSource

    source = NumbaSource(Kernel(parse_kernel(case[0]))).generate()
    assert f"for j in range(min({STRIP}, bx_ - tx0)):" in source
    agree_on_launches(*case)
