"""The loop structure the numba backend generates for per-block kernels.

On the fast path, a thread-level `scf.for` that is a whole phase, writes no memory and
cannot fault runs with the thread x loop inside it (so that LLVM vectorises the body
across a block row), and index values are computed again in each phase instead of being
kept per thread. Both must leave results bitwise those of the numpy backend, and the
checked path (blocks that may fault) must report the fault the numpy backend reports.
One kernel text per test: each is one Numba compilation.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime import semantics
from devplan.runtime.kernels import numba_backend, ranges
from devplan.runtime.kernels.common import Kernel, KernelError
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.kernels.numba_source import STRIP, NumbaSource
from devplan.runtime.kernels.ranges import BlockRanges

SHARED = '#vdev.device<?, ?, ?, "shared">'

TILED_MATMUL = f"""
kernel.func @matmul(%A: memref<?x?x{{t}}>, %B: memref<?x?x{{t}}>, %C: memref<?x?x{{t}}>) {{{{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ct = arith.constant 4 : index
  %zero = arith.constant 0{{dot}} : {{t}}
  %sa = kernel.alloc_shared : memref<4x4x{{t}}, {SHARED}>
  %sb = kernel.alloc_shared : memref<4x4x{{t}}, {SHARED}>
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
  %K = memref.dim %A, %c1 : memref<?x?x{{t}}>
  %tiles = arith.divsi %K, %ct : index
  %acc = scf.for %t = %c0 to %tiles step %c1 iter_args(%sum = %zero) -> ({{t}}) {{{{
    %t0 = arith.muli %t, %ct : index
    %ak = arith.addi %t0, %tx : index
    %bk = arith.addi %t0, %ty : index
    %x = memref.load %A[%row, %ak] : memref<?x?x{{t}}>
    memref.store %x, %sa[%ty, %tx] : memref<4x4x{{t}}, {SHARED}>
    %y = memref.load %B[%bk, %col] : memref<?x?x{{t}}>
    memref.store %y, %sb[%ty, %tx] : memref<4x4x{{t}}, {SHARED}>
    kernel.barrier
    %part = scf.for %k = %c0 to %ct step %c1 iter_args(%s = %sum) -> ({{t}}) {{{{
      %u = memref.load %sa[%ty, %k] : memref<4x4x{{t}}, {SHARED}>
      %v = memref.load %sb[%k, %tx] : memref<4x4x{{t}}, {SHARED}>
      %p = arith.{{mul}} %u, %v : {{t}}
      %s2 = arith.{{add}} %s, %p : {{t}}
      scf.yield %s2 : {{t}}
    }}}}
    kernel.barrier
    scf.yield %part : {{t}}
  }}}}
  memref.store %acc, %C[%row, %col] : memref<?x?x{{t}}>
  kernel.return
}}}}
"""
"""`C = A @ B` in 4x4 tiles of shared memory, one thread per element of C (no guard: a
block past the end of C faults)."""


def matmul_text(t: str) -> str:
    if t.startswith("f"):
        return TILED_MATMUL.format(t=t, dot=".0", mul="mulf", add="addf")
    return TILED_MATMUL.format(t=t, dot="", mul="muli", add="addi")


def parse_kernel(text: str) -> KernelFuncOp:
    module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{\n{text}\n}}')
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def outcome(func: KernelFuncOp, backend: str, grid: Any, block: Any, args: list[Any]) -> Any:
    """The buffers after the launch (on copies of `args`), or the fault's message."""
    copies = [a.copy() for a in args]
    try:
        compile_kernel(func, backend)(grid, block, copies)
    except KernelError as e:
        return str(e)
    return copies


def assert_bitwise_equal(expected: Any, got: Any) -> None:
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
        return
    for x, y in zip(expected, got, strict=True):
        assert x.tobytes() == y.tobytes(), (x, y)


def fast_path_of(text: str) -> str:
    """The generated source of the kernel's fast path (between `if fast:` and the
    `continue` that ends it)."""
    source = NumbaSource(Kernel(parse_kernel(text))).generate()
    start = source.index("if fast:")
    return source[start : source.index("continue", start)]


def assigned_names(nodes: list[ast.stmt]) -> set[str]:
    return {
        target.id
        for node in nodes
        for sub in ast.walk(node)
        if isinstance(sub, ast.Assign | ast.For)
        for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
        if isinstance(target, ast.Name)
    }


def test_the_fast_and_checked_paths_assign_no_value_name_in_common_and_branch_only_on_ifs() -> None:
    """A name both paths assign is one variable assigned twice, and a short-circuit
    `or` is a branch: Numba's SSA pass grows with both (compile time, not results)."""
    source = NumbaSource(Kernel(parse_kernel(matmul_text("f32")))).generate()
    tree = ast.parse(source)
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.While))
    at = next(
        i for i, n in enumerate(loop.body)
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "fast"
    )  # fmt: skip
    fast_path = cast(ast.If, loop.body[at]).body
    checked_path = loop.body[at + 1 :]
    values = {n for n in assigned_names(fast_path) & assigned_names(checked_path) if n[0] in "fv"}
    assert not values, values
    assert not any(isinstance(n, ast.BoolOp) for n in ast.walk(tree))


def test_rows_of_per_thread_values_are_copied_by_loops_not_slice_assignments() -> None:
    """`a[:] = b` between arrays makes Numba compile its shape-mismatch message, string
    formatting that costs about 3 CPU-s in each process; a slice is only filled."""
    source = NumbaSource(Kernel(parse_kernel(matmul_text("f32")))).generate()
    copies = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Assign)
        and isinstance(n.targets[0], ast.Subscript)
        and isinstance(n.targets[0].slice, ast.Slice)
    ]
    assert copies, "the tiled matmul's loop-carried sum is no longer spilled"
    assert not [ast.unparse(n) for n in copies if isinstance(n.value, ast.Subscript)]


def loops_inside_k_loop(fast: str) -> list[str]:
    """The loop headers in the body of the fast path's first loop over `%k`."""
    lines = fast.splitlines()
    k_loop = next(
        i
        for i, line in enumerate(lines)
        if line.lstrip().startswith("for ") and "_k" in line.split(" in ")[0]
    )
    depth = len(lines[k_loop]) - len(lines[k_loop].lstrip())
    body: list[str] = []
    for line in lines[k_loop + 1 :]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        body.append(line.strip())
    return [line for line in body if line.startswith("for ")]


def is_interchanged(fast: str) -> bool:
    """Whether the fast path's first loop over `%k` runs a strip of threads inside it."""
    return loops_inside_k_loop(fast) == [f"for j in range(min({STRIP}, bx_ - tx0)):"]


def test_a_store_free_inner_loop_runs_with_the_thread_x_loop_inside() -> None:
    assert is_interchanged(fast_path_of(matmul_text("f32")))


def test_index_values_are_computed_again_in_each_phase_not_kept_per_thread() -> None:
    gen = NumbaSource(Kernel(parse_kernel(matmul_text("f32"))))
    gen.generate()
    kept = [gen.kernel.name_of(value) for value in gen.spilled]
    assert kept
    assert not any(name.endswith(("_row", "_col", "_tx", "_ty")) for name in kept), kept


def test_index_values_computed_again_are_assigned_once_per_thread_loop() -> None:
    """Each thread loop names the index values it computes again apart (a name assigned
    in several places is one variable Numba's SSA pass rewrites in every branch)."""
    source = NumbaSource(Kernel(parse_kernel(ROWS_PER_THREAD))).generate()
    blocks = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == "blocks_fast"
    )
    assigned: dict[str, int] = {}
    for node in ast.walk(blocks):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.lstrip("f").startswith("v"):
                    assigned[target.id] = assigned.get(target.id, 0) + 1
    row = next(name for name in assigned if name.startswith("fv") and "_row0_" in name)
    assert assigned[row] == 1
    again = {
        name: n for name, n in assigned.items() if n > 1 and ("_row" in name or "_col" in name)
    }
    assert not again, again


def test_loads_the_same_in_every_thread_run_once_per_step_before_the_threads() -> None:
    """In the interchanged loop over k, `A[row0, k]` and `A[row1, k]` (rows of the block,
    not of the thread) are loaded before the strip of threads, `B[k, col]` inside it."""
    fast = fast_path_of(ROWS_PER_THREAD)
    lines = [line.strip() for line in fast.splitlines()]
    k_loop = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("for ") and "_k" in line.split(" in ")[0]
    )
    strip = next(i for i in range(k_loop, len(lines)) if lines[i].startswith("for j in range("))
    before = lines[k_loop:strip]
    assert sum("_A[" in line for line in before) == 2, before
    assert not any("_B[" in line for line in before), before
    assert any("_B[" in line for line in lines[strip:])


def test_a_loop_whose_body_stores_keeps_the_thread_loop_outside() -> None:
    text = matmul_text("f32").replace(
        "      scf.yield %s2 : f32\n",
        "      memref.store %s2, %sa[%ty, %tx] : memref<4x4xf32, "
        + SHARED
        + ">\n      scf.yield %s2 : f32\n",
    )
    assert not is_interchanged(fast_path_of(text))


def test_a_loop_whose_body_may_divide_by_zero_keeps_the_thread_loop_outside() -> None:
    text = matmul_text("i32").replace(
        "%s2 = arith.addi %s, %p : i32", "%s2 = arith.divsi %s, %p : i32"
    )
    assert not is_interchanged(fast_path_of(text))


def test_a_loop_whose_body_asks_a_computed_dimension_keeps_the_thread_loop_outside() -> None:
    text = matmul_text("f32").replace(
        "      scf.yield %s2 : f32\n",
        "      %d = memref.dim %A, %k : memref<?x?xf32>\n      scf.yield %s2 : f32\n",
    )
    assert not is_interchanged(fast_path_of(text))


def launches(t: str) -> list[tuple[tuple[int, int, int], tuple[int, int, int], list[Any]]]:
    """Launches of the 4x4-tiled matmul: fault-free ones of several shapes, and ones whose
    last blocks reach past the end of A, B or C (checked blocks that fault)."""
    rng = np.random.default_rng(7)
    dtype = np.dtype(t.replace("f", "float").replace("i", "int"))

    def matrix(rows: int, cols: int) -> np.ndarray[Any, Any]:
        if dtype.kind == "f":
            return rng.standard_normal((rows, cols)).astype(dtype)
        return rng.integers(-1000, 1000, (rows, cols)).astype(dtype)

    cases: list[tuple[tuple[int, int, int], tuple[int, int, int], list[Any]]] = []
    for m, k, n in ((4, 4, 4), (8, 12, 16), (12, 8, 4)):
        cases.append(((n // 4, m // 4, 1), (4, 4, 1), [matrix(m, k), matrix(k, n), matrix(m, n)]))
    # C one row short: the last block row stores past its end.
    cases.append(((2, 2, 1), (4, 4, 1), [matrix(8, 8), matrix(8, 8), matrix(7, 8)]))
    # B one column short: the last block column loads past its end.
    cases.append(((2, 2, 1), (4, 4, 1), [matrix(8, 8), matrix(8, 7), matrix(8, 8)]))
    # A one row short: blocks of the last row load past its end in the tile loop.
    cases.append(((2, 2, 1), (4, 4, 1), [matrix(7, 8), matrix(8, 8), matrix(8, 8)]))
    return cases


def block_is_fast(text: str, block_id: tuple[int, int], grid: Any, block: Any, args: Any) -> bool:
    """Whether block `block_id` (x, y) of a launch runs the fast path."""
    kernel = Kernel(parse_kernel(text))
    ranges = BlockRanges(kernel).analyse()
    env: dict[str, Any] = {"np": np}
    env |= {"I_arith_divsi": semantics.int_scalar("arith.divsi")}
    env |= {"I_arith_floordivsi": semantics.int_scalar("arith.floordivsi")}
    x, y = block_id
    env |= {"bix_lo": x, "bix_hi": x, "biy_lo": y, "biy_hi": y, "biz": 0}
    env |= dict(zip(("gx", "gy", "gz", "bx_", "by_", "bz_"), (*grid, *block), strict=True))
    env |= {kernel.name_of(p): a for p, a in zip(kernel.params, args, strict=True)}
    exec("\n".join(ranges.lines), env)
    return bool(env["fast"])


def test_tiled_matmul_fast_and_checked_blocks_agree_with_the_numpy_backend() -> None:
    for t in ("f32",):  # (integer loops: test_kernel_backend_agreement's generated ones)
        text = matmul_text(t)
        func = parse_kernel(text)
        faults = 0
        for grid, block, args in launches(t):
            # The first block is in bounds in every launch: it runs the fast path.
            assert block_is_fast(text, (0, 0), grid, block, args)
            expected = outcome(func, "numpy", grid, block, args)
            faults += isinstance(expected, str)
            assert_bitwise_equal(expected, outcome(func, "numba", grid, block, args))
        assert faults == 3


def test_tiled_matmul_blocks_in_parallel_give_the_buffers_and_first_fault_of_blocks_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # tests/conftest.py gives Numba two threads at least, also on a one-core machine.
    assert numba_backend.numba.get_num_threads() >= 2, "blocks never run in parallel here"
    func = parse_kernel(matmul_text("f32"))
    for grid, block, args in launches("f32"):
        in_order = outcome(func, "numba", grid, block, args)
        with monkeypatch.context() as patch:
            patch.setattr(numba_backend, "PARALLEL_THREADS", 0)
            assert_bitwise_equal(in_order, outcome(func, "numba", grid, block, args))


ROWS_PER_THREAD = """
kernel.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %row0 = arith.muli %by, %c2 : index
  %row1 = arith.addi %row0, %c1 : index
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %acc:2 = scf.for %k = %c0 to %K step %c1 iter_args(%s0 = %zero, %s1 = %zero) -> (f32, f32) {
    %b = memref.load %B[%k, %col] : memref<?x?xf32>
    %a0 = memref.load %A[%row0, %k] : memref<?x?xf32>
    %a1 = memref.load %A[%row1, %k] : memref<?x?xf32>
    %p0 = arith.mulf %a0, %b : f32
    %p1 = arith.mulf %a1, %b : f32
    %n0 = arith.addf %s0, %p0 : f32
    %n1 = arith.addf %s1, %p1 : f32
    scf.yield %n0, %n1 : f32, f32
  }
  kernel.barrier
  memref.store %acc#0, %C[%row0, %col] : memref<?x?xf32>
  memref.store %acc#1, %C[%row1, %col] : memref<?x?xf32>
  kernel.return
}
"""
"""`C = A @ B`, each thread two rows of one column of C: its rows and column computed
before the loop over k, its stores after a barrier (no guard: blocks past the end fault)."""


def test_index_values_before_a_store_free_loop_leave_it_interchanged() -> None:
    assert is_interchanged(fast_path_of(ROWS_PER_THREAD))


def test_rows_per_thread_matmul_agrees_with_the_numpy_backend_fast_and_checked() -> None:
    rng = np.random.default_rng(11)

    def matrix(rows: int, cols: int) -> np.ndarray[Any, Any]:
        return rng.standard_normal((rows, cols)).astype(np.float32)

    func = parse_kernel(ROWS_PER_THREAD)
    faults = 0
    for (m, k, n), shapes in (
        ((8, 5, 12), None),
        ((6, 3, 4), None),
        ((8, 4, 8), ((8, 4), (4, 8), (7, 8))),  # C one row short: a store faults
        ((8, 4, 8), ((8, 4), (4, 7), (8, 8))),  # B one column short: a load faults
        ((8, 4, 8), ((7, 4), (4, 8), (8, 8))),  # A one row short: a load faults
    ):
        a, b, c = (matrix(*s) for s in (shapes or ((m, k), (k, n), (m, n))))
        grid, block = (n // 4, m // 2, 1), (4, 1, 1)
        assert block_is_fast(ROWS_PER_THREAD, (0, 0), grid, block, [a, b, c])
        expected = outcome(func, "numpy", grid, block, [a, b, c])
        faults += isinstance(expected, str)
        assert_bitwise_equal(expected, outcome(func, "numba", grid, block, [a, b, c]))
    assert faults == 3


def test_the_fast_path_test_of_thousands_of_accesses_compiles() -> None:
    """Python's compiler recurses once per term of an `&` chain: the test is built of
    chains of at most `ranges.CHAIN` terms."""
    source = NumbaSource(Kernel(parse_kernel(long_chain_kernel(1500)))).generate()
    compile(source, "<kernel>", "exec")
    tests = [line for line in source.splitlines() if line.lstrip().startswith("fast")]
    chains = [line.count(" & ") + 1 for line in tests]
    assert max(chains) <= ranges.CHAIN


def long_chain_kernel(loads: int) -> str:
    """A loop-carried sum, then `loads` more loads added to it one by one: on the checked
    path each load is a branch, and the sum is used below all of them."""
    lines = [
        "kernel.func @chain(%a: memref<?xf32>, %out: memref<?xf32>) {",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c4 = arith.constant 4 : index",
        "  %zero = arith.constant 0.0 : f32",
        "  %tx = kernel.thread_id x",
        "  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {",
        "    %x = memref.load %a[%i] : memref<?xf32>",
        "    %y = arith.addf %acc, %x : f32",
        "    scf.yield %y : f32",
        "  }",
    ]
    total = "%sum"
    for k in range(loads):
        lines.append(f"  %i{k} = arith.constant {k} : index")
        lines.append(f"  %l{k} = memref.load %a[%i{k}] : memref<?xf32>")
        lines.append(f"  %s{k} = arith.addf {total}, %l{k} : f32")
        total = f"%s{k}"
    lines += [f"  memref.store {total}, %out[%tx] : memref<?xf32>", "  kernel.return", "}"]
    return "\n".join(lines)


def test_a_kernel_too_large_for_numbas_compiler_is_a_located_error_not_a_recursion_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Numba's compiler recurses (along chains of branches, in its passes, and into the
    functions a kernel calls): a kernel whose compilation exceeds Python's recursion limit
    is a located error. Here the limit is lowered to 20 frames above the test's, below
    what compiling any kernel needs (some 30 to 60 frames once Numba's own helpers are
    compiled, more before), so the launch's first compilation exceeds it whichever
    kernels this process compiled before."""
    monkeypatch.setenv("DEVPLAN_CACHE_DIR", str(tmp_path))
    func = parse_kernel(long_chain_kernel(40))
    launch = compile_kernel(func, "numba")
    args = [np.ones(44, np.float32), np.zeros(2, np.float32)]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 20)
    try:
        with pytest.raises(KernelError) as caught:
            launch(grid=(1, 1, 1), block=(2, 1, 1), args=args)
    finally:
        sys.setrecursionlimit(limit)
    message = str(caught.value)
    cannot = "error: in kernel @chain: numba cannot compile this kernel (use the numpy backend): "
    assert cannot in message
    assert "too large for Numba's compiler" in message
    compile_kernel(func, "numpy")((1, 1, 1), (2, 1, 1), args)
    assert args[1].tolist() == [44.0, 44.0]


def test_a_launch_needing_checks_of_more_fault_sites_than_numba_compiles_is_a_located_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Numba's compile time grows with the square of a kernel's checked sites: beyond
    `MAX_CHECKED_SITES` a launch that needs the checked path is a located error (not
    minutes and gigabytes of compiling), while launches the fast path runs still run.
    Here the limit is set at and one below the kernel's own count of sites."""
    func = parse_kernel(long_chain_kernel(4))
    sites = len(compile_kernel(func, "numba").kernel.sites)
    assert sites == 7  # the loop (its step), its load, four loads and the store
    in_bounds = [np.ones(8, np.float32), np.zeros(2, np.float32)]
    past_the_end = [np.ones(8, np.float32), np.zeros(1, np.float32)]  # thread 1 faults
    cannot = "error: in kernel @chain: numba cannot compile this kernel (use the numpy backend): "
    for limit, outcome in ((sites, "out-of-bounds store"), (sites - 1, f"it has {sites} fault")):
        monkeypatch.setattr(numba_backend, "MAX_CHECKED_SITES", limit)
        launch = compile_kernel(parse_kernel(long_chain_kernel(4)), "numba")  # (a new op)
        launch((1, 1, 1), (2, 1, 1), in_bounds)
        assert in_bounds[1].tolist() == [8.0, 8.0]
        with pytest.raises(KernelError) as caught:
            launch((1, 1, 1), (2, 1, 1), past_the_end)
        assert outcome in str(caught.value), limit
        assert (cannot in str(caught.value)) == (limit < sites)
    # A kernel that prints has no fast path: all its code checks, so every launch needs it.
    printing = long_chain_kernel(4).replace(
        "  kernel.return", '  kernel.printf "%d\\n" (%tx) : index\n  kernel.return'
    )
    with pytest.raises(KernelError) as caught:
        compile_kernel(parse_kernel(printing), "numba")((1, 1, 1), (2, 1, 1), in_bounds)
    assert (
        "fault sites (ops that may fault: accesses, divisions, loop steps) and its code "
        "checks them all" in str(caught.value)
    )


def index_chain_kernel(length: int) -> str:
    """Shared memory, a barrier, then a store at the end of a chain of `length` index ops
    from the thread id, clamped by `minsi` (each analysis of the numba backend follows
    the chain: whether the clamp depends on the thread, whether phases may compute it)."""
    lines = [
        "kernel.func @index_chain(%a: memref<?xi32>) {",
        f"  %s = kernel.alloc_shared : memref<4xi32, {SHARED}>",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %tx = kernel.thread_id x",
        "  %x0 = arith.addi %tx, %c0 : index",
        *(f"  %x{k + 1} = arith.addi %x{k}, %c0 : index" for k in range(length)),
        "  kernel.barrier",
        f"  %m = arith.minsi %x{length}, %c1 : index",
        "  %v = arith.index_cast %m : index to i32",
        f"  memref.store %v, %a[%x{length}] : memref<?xi32>",
        "  kernel.return",
        "}",
    ]
    return "\n".join(lines)


def test_a_chain_of_thousands_of_index_ops_is_generated_without_recursion() -> None:
    """The numba backend's analyses walk chains of operands with stacks of their own: a
    chain of 3000 ops exceeded Python's recursion limit (a RecursionError reported as a
    kernel too large for Numba's compiler, before Numba saw it). Numba itself takes over
    10 minutes on such a kernel: only the source is compiled here."""
    func = parse_kernel(index_chain_kernel(3000))
    source = NumbaSource(Kernel(func)).generate()
    compile(source, "<kernel>", "exec")
    a = np.full(4, -1, np.int32)
    compile_kernel(func, "numpy")((1, 1, 1), (4, 1, 1), [a])
    assert a.tolist() == [0, 1, 1, 1]


def generated_matmul(element: str) -> KernelFuncOp:
    """The kernel `lower-to-device` generates for `linalg.matmul` over `element`, taken
    from a lowered program: the same kernel, name included, as examples/mlp.mlir's, so that
    a run of the suite compiles it once (the kernel cache's key is the kernel's text; it
    takes about 20 CPU-s to compile)."""
    zero = "0.0" if element.startswith("f") else "0"
    text = f"""
func.func @main(%a: tensor<2x3x{element}>, %b: tensor<3x4x{element}>) -> tensor<2x4x{element}> {{
  %z = arith.constant {zero} : {element}
  %e = tensor.empty() : tensor<2x4x{element}>
  %c = linalg.fill ins(%z : {element}) outs(%e : tensor<2x4x{element}>) -> tensor<2x4x{element}>
  %r = linalg.matmul ins(%a, %b : tensor<2x3x{element}>, tensor<3x4x{element}>)
      outs(%c : tensor<2x4x{element}>) -> tensor<2x4x{element}>
  func.return %r : tensor<2x4x{element}>
}}"""
    module = devplan.apply(devplan.parse(text), "default-pipeline")
    kernels = [op for op in module.walk() if isinstance(op, KernelFuncOp)]
    (matmul,) = [k for k in kernels if k.sym_name.data.startswith("matmul_")]
    return matmul


@pytest.mark.parametrize(
    ("element", "m", "k", "n"),
    # ragged tiles and an empty reduction: each element type compiles its own kernels
    # (~30 CPU-s cold), so shapes that add no new case are not listed
    [("f32", 19, 11, 37), ("f32", 3, 0, 4)],
)
def test_generated_matmul_agrees_bitwise_across_backends_in_order_and_in_parallel(
    element: str, m: int, k: int, n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps of k in fours and then one by one (k = 11: 8 + 3), blocks of 8 rows along x
    and of 4 columns along y, so that blocks in parallel split both axes."""
    func = generated_matmul(element)
    rng = np.random.default_rng(5)
    dtype = np.dtype(np.int32 if element == "i32" else element.replace("f", "float"))
    a, b, c = (
        rng.integers(-9, 9, s).astype(dtype)
        if dtype.kind == "i"
        else rng.standard_normal(s).astype(dtype)
        for s in ((m, k), (k, n), (m, n))
    )
    out = np.zeros((m, n), dtype)
    grid, block = (-(-m // 8), -(-n // 4), 1), (4, 1, 1)
    args = [a, b, c, out]
    expected = outcome(func, "numpy", grid, block, args)
    assert not isinstance(expected, str), expected
    if dtype.kind == "i":
        np.testing.assert_array_equal(expected[3], c + a @ b)
    else:
        np.testing.assert_allclose(expected[3], c + a @ b, rtol=1e-5, atol=1e-5)
    assert_bitwise_equal(expected, outcome(func, "numba", grid, block, args))
    # Blocks of rows and of columns write their own elements: both axes run in parallel.
    assert ranges.separating_axes(Kernel(func)) == {"x", "y"}
    monkeypatch.setattr(numba_backend, "PARALLEL_THREADS", 0)
    assert_bitwise_equal(expected, outcome(func, "numba", grid, block, args))


def test_a_division_by_a_constant_that_cannot_fault_is_an_index_value_computed_again() -> None:
    """`K / 4 * 4`, the last multiple of 4 below K, bounds a loop that stays interchanged;
    a division by 0 or -1 keeps its check and faults alike on both backends."""
    assert is_interchanged(fast_path_of(ROWS_PER_THREAD.replace(
        "  %acc:2 = scf.for %k = %c0 to %K step %c1",
        "  %c4 = arith.constant 4 : index\n  %q = arith.divsi %K, %c4 : index\n"
        "  %K4 = arith.muli %q, %c4 : index\n  %acc:2 = scf.for %k = %c0 to %K4 step %c1",
    )))  # fmt: skip
    a = np.ones((4, 4), np.float32)
    for divisor, value in (("0", "%K"), ("-1", "%min")):
        text = ROWS_PER_THREAD.replace(
            "  %acc:2 = scf.for %k = %c0 to %K step %c1",
            f"  %d = arith.constant {divisor} : index\n"
            "  %min = arith.constant -9223372036854775808 : index\n"
            f"  %q = arith.divsi {value}, %d : index\n"
            "  %acc:2 = scf.for %k = %c0 to %q step %c1",
        )
        func = parse_kernel(text)
        expected = outcome(func, "numpy", (1, 2, 1), (4, 1, 1), [a, a, a])
        assert isinstance(expected, str)
        assert "'arith.divsi'" in expected, expected
        assert outcome(func, "numba", (1, 2, 1), (4, 1, 1), [a, a, a]) == expected


I1_DIVISION = """
kernel.func @t(%a: memref<?xi8>) {
  %true = arith.constant true
  %tx = kernel.thread_id x
  %x = memref.load %a[%tx] : memref<?xi8>
  %b = arith.trunci %x : i8 to i1
  %q = arith.divsi %b, %true : i1
  %y = arith.extui %q : i1 to i8
  memref.store %y, %a[%tx] : memref<?xi8>
  kernel.return
}
"""


def test_a_signed_i1_division_by_true_faults_alike_on_both_backends() -> None:
    """`true` is -1 as a signed i1: `true / true` overflows (thread 1), and is no division
    by a constant that cannot fault."""
    func = parse_kernel(I1_DIVISION)
    args = [np.array([0, 1, 0, 1], np.int8)]
    expected = outcome(func, "numpy", (1, 1, 1), (4, 1, 1), args)
    assert isinstance(expected, str)
    assert "the quotient overflows (block (0, 0, 0), thread (1, 0, 0))" in expected, expected
    assert outcome(func, "numba", (1, 1, 1), (4, 1, 1), args) == expected


YIELDS = """
kernel.func @t(%A: memref<?x?xf32>, %V: memref<?xf32>, %O: memref<2x?xf32>, %X: memref<2x?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %dx = kernel.block_dim x
  %q0 = arith.muli %bx, %dx : index
  %col = arith.addi %q0, %tx : index
  %v = memref.load %V[%col] : memref<?xf32>
  kernel.barrier
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %r:4 = scf.for %k = %c0 to %K step %c1 iter_args(%s = %zero, %n = %c0, %w = %zero, %m = %c0)
      -> (f32, index, f32, index) {
    %a = memref.load %A[%col, %k] : memref<?x?xf32>
    %rows = memref.dim %A, %c0 : memref<?x?xf32>
    %s2 = arith.addf %s, %a : f32
    scf.yield %s2, %rows, %v, %col : f32, index, f32, index
  }
  kernel.barrier
  memref.store %r#0, %O[%c0, %col] : memref<2x?xf32>
  %x = arith.index_cast %r#1 : index to i64
  memref.store %x, %X[%c0, %col] : memref<2x?xi64>
  memref.store %r#2, %O[%c1, %col] : memref<2x?xf32>
  %y = arith.index_cast %r#3 : index to i64
  memref.store %y, %X[%c1, %col] : memref<2x?xi64>
  kernel.return
}
"""
"""An interchanged loop over k whose scf.yield passes on values its body does not use:
`%rows`, of an op run once per step before the strip of threads, and `%v` and `%col`,
values of another phase, one per thread (one kernel: each is one Numba compilation)."""


def test_an_interchanged_loop_yields_values_its_body_does_not_use_as_the_numpy_backend() -> None:
    """The number of rows (hoisted before the strip) was named for the strip's own loop
    and undefined there (Numba could not compile the kernel); `%v`, kept per thread by an
    earlier phase, was the last thread's value in every thread."""
    assert is_interchanged(fast_path_of(YIELDS))
    func = parse_kernel(YIELDS)
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    args = [a, v, np.zeros((2, 6), np.float32), np.zeros((2, 6), np.int64)]
    expected = outcome(func, "numpy", (2, 1, 1), (3, 1, 1), args)
    assert not isinstance(expected, str), expected
    np.testing.assert_array_equal(expected[2][1], v)
    np.testing.assert_array_equal(expected[3], [[6] * 6, list(range(6))])
    assert_bitwise_equal(expected, outcome(func, "numba", (2, 1, 1), (3, 1, 1), args))
