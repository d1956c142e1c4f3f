"""elide-copies: results never change, every necessary copy stays, stats, cap, errors.

The property test builds random level-2 programs over host buffers, two GPUs' global
memory and a GPU's host scope, with redundant copies injected on purpose (copy-backs,
copies overwritten before any read, copies of a buffer onto itself, copies to a
scratch buffer that is only read) among ordinary ones, sync and async. A copy is
*necessary* when deleting it alone changes the program's results (or makes the run
fail); every such copy must survive elide-copies, and the elided program must compute
exactly what the original did.

At level 1 (values, not buffers), random programs planned by plan-devices get round
trips, duplicates, chains and copies of constants injected; after elide-copies every
op reads the same values as before, each where it runs, and no redundant copy is left.
(Running level-1 programs needs lower-to-device: that test joins when it lands.)
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.ir import Block, Operation, Region, SSAValue

import devplan
from devplan.analysis.memory_areas import MemoryAreas
from devplan.diagnostics import DevplanError, verify_located
from devplan.dialects import device as dev
from devplan.dialects.placement import value_device
from devplan.dialects.vdev import DEFAULT_DEVICE_ATTR, DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from devplan.dialects.virtual_device import DeviceAttr
from devplan.passes.elide_copies import elision
from devplan.passes.elide_copies.decisions import Elide
from devplan.passes.elide_copies.elision import analyse
from devplan.passes.elide_copies.value_copies import same_place
from devplan.passes.plan_devices import PlanDevicesPass
from devplan.system.description import System

N = 8
ROOT = Path(__file__).resolve().parents[2]

HEADER = f"""\
!h = memref<{N}xf32>
!x = memref<{N}xf32, #vdev.device<"cuda", 0, ?, "global">>
!y = memref<{N}xf32, #vdev.device<"cuda", 1, ?, "global">>
!p = memref<{N}xf32, #vdev.device<"cuda", 0, ?, "host">>
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @inc(%a: memref<{N}xf32>) {{
    %tx = kernel.thread_id x
    %v = memref.load %a[%tx] : memref<{N}xf32>
    %one = arith.constant 1.5 : f32
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%tx] : memref<{N}xf32>
    kernel.return
  }}
  kernel.func @twice(%a: memref<{N}xf32>, %b: memref<{N}xf32>) {{
    %tx = kernel.thread_id x
    %v = memref.load %a[%tx] : memref<{N}xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%tx] : memref<{N}xf32>
    kernel.return
  }}
}}
"""

TYPES = {"a0": "!h", "a1": "!h", "h0": "!h", "x0": "!x", "x1": "!x", "y0": "!y", "p0": "!p"}
"""The program's buffers: two host arguments, a host local, two buffers in cuda:0's
global memory, one in cuda:1's, one in cuda:0's host scope. Scratch buffers `sN` are
in cuda:0's global memory, results `rN` in host memory."""
HOST = ("a0", "a1", "h0")
DEVICE_BUFFERS_OF = {"x0": 0, "x1": 0, "p0": 0, "y0": 1}
SAME_DEVICE = {"x0": ("x1", "p0"), "x1": ("x0", "p0"), "p0": ("x0", "x1")}


def type_of(name: str) -> str:
    return TYPES.get(name) or {"s": "!x", "r": "!h"}[name[0]]


def device_of(name: str) -> int:
    return DEVICE_BUFFERS_OF.get(name, 0)


@dataclass
class Builder:
    """Level-2 program text, one op a line; each copy tagged with its number."""

    lines: list[str]
    copies: int = 0
    tokens: int = 0

    def copy(self, src: str, dst: str, is_async: bool = False) -> str | None:
        tag = f"{{tag = {self.copies} : i64}}"
        self.copies += 1
        types = f"{type_of(src)} to {type_of(dst)}"
        if not is_async:
            self.lines.append(f"device.copy %{src} to %{dst} {tag} : {types}")
            return None
        token = f"%t{self.tokens}"
        self.tokens += 1
        self.lines.append(f"{token} = device.copy_async [] %{src} to %{dst} {tag} : {types}")
        return token

    def launch(self, kernel: str, *args: str) -> None:
        device = device_of(args[0])
        types = ", ".join(type_of(a) for a in args)
        operands = ", ".join(f"%{a}" for a in args)
        self.lines.append(
            f'device.launch @k::@{kernel} on #vdev.device<"cuda", {device}> '
            f"grid(%c1, %c1, %c1) block(%c{N}, %c1, %c1) args({operands}) : {types}"
        )


BUFFERS = st.sampled_from(sorted(TYPES))
DEVICE_BUFFERS = st.sampled_from(sorted(DEVICE_BUFFERS_OF))

STEPS = st.one_of(
    st.tuples(st.just("copy"), BUFFERS, BUFFERS, st.booleans(), st.integers(0, 2)),
    st.tuples(st.just("inc"), DEVICE_BUFFERS),
    st.tuples(st.just("twice"), st.sampled_from(["x0", "x1", "p0"]), st.integers(0, 1)),
    st.tuples(st.just("store"), st.sampled_from(HOST), st.integers(0, N - 1)),
    st.tuples(st.just("copy_back"), BUFFERS, BUFFERS),
    st.tuples(st.just("overwritten"), BUFFERS, BUFFERS, BUFFERS),
    st.tuples(st.just("onto_itself"), BUFFERS),
    st.tuples(st.just("scratch"), st.sampled_from(["x0", "x1"]), st.booleans(), st.booleans()),
)

INNER_STEPS = st.one_of(
    st.tuples(st.just("copy"), BUFFERS, BUFFERS, st.just(False), st.just(0)),
    st.tuples(st.just("inc"), DEVICE_BUFFERS),
    st.tuples(st.just("store"), st.sampled_from(HOST), st.integers(0, N - 1)),
    st.tuples(st.just("copy_back"), BUFFERS, BUFFERS),
)
"""Steps inside a region: synchronous, so that no token crosses the region's edge."""

REGIONS = st.one_of(
    st.tuples(st.just("branch"), st.booleans(), st.lists(INNER_STEPS, min_size=1, max_size=3)),
    st.tuples(st.just("loop"), st.integers(0, 2), st.lists(INNER_STEPS, min_size=1, max_size=3)),
)
"""An `scf.if` (taken or not) or an `scf.for` (0 to 2 trips) holding a few steps."""


def emit(b: Builder, step: tuple[Any, ...], waits: list[tuple[int, str]], at: int) -> None:
    kind = step[0]
    if kind == "copy":
        _, src, dst, is_async, delay = step
        if src == dst:
            return
        token = b.copy(src, dst, is_async)
        if token is not None:
            waits.append((at + delay, token))
    elif kind == "inc":
        b.launch("inc", step[1])
    elif kind == "twice":
        a = step[1]
        b.launch("twice", a, SAME_DEVICE[a][step[2]])
    elif kind == "store":
        b.lines.append(f"memref.store %f, %{step[1]}[%c{step[2]}] : !h")
    elif kind == "copy_back" and step[1] != step[2]:
        b.copy(step[1], step[2])
        b.copy(step[2], step[1])
    elif kind == "overwritten" and step[3] not in (step[1], step[2]):
        b.copy(step[1], step[3])
        b.copy(step[2], step[3])
    elif kind == "onto_itself":
        b.copy(step[1], step[1])
    elif kind in ("branch", "loop"):
        emit_region(b, step, waits, at)
    elif kind == "scratch":
        emit_scratch(b, step[1], step[2], step[3])


def emit_scratch(b: Builder, x: str, written: bool, chained: bool) -> None:
    """x -> a scratch buffer (with `chained`, on to a second one), which a kernel reads
    into the other of x0 and x1; with `written`, a kernel writes x while the copy is
    still to be read."""
    scratch = [f"s{b.copies}"]
    b.lines.append(f"%{scratch[0]} = device.alloc() : !x")
    b.copy(x, scratch[0])
    if chained:
        scratch.append(f"s{b.copies}")
        b.lines.append(f"%{scratch[1]} = device.alloc() : !x")
        b.copy(scratch[0], scratch[1])
    if written:
        b.launch("inc", x)
    b.launch("twice", scratch[-1], "x1" if x == "x0" else "x0")
    b.lines += [f"device.free %{name} : !x" for name in reversed(scratch)]


def emit_region(b: Builder, step: tuple[Any, ...], waits: list[tuple[int, str]], at: int) -> None:
    kind, how, inner = step
    if kind == "branch":
        b.lines.append(f"scf.if %{'true' if how else 'false'} {{")
    else:
        b.lines.append(f"scf.for %i{b.copies} = %c0 to %c{how} step %c1 {{")
    for inner_step in inner:
        emit(b, inner_step, waits, at)
    b.lines.append("}")


def program(steps: list[tuple[Any, ...]]) -> tuple[str, int]:
    """The program text and its number of copies."""
    b = Builder([])
    b.lines += [f"%c{i} = arith.constant {i} : index" for i in range(N + 1)]
    b.lines += ["%f = arith.constant 7.0 : f32", "%h0 = memref.alloc() : !h"]
    b.lines += ["%true = arith.constant true", "%false = arith.constant false"]
    b.lines += [f"%{name} = device.alloc() : {TYPES[name]}" for name in DEVICE_BUFFERS_OF]
    for name in DEVICE_BUFFERS_OF:
        b.copy("a1", name)
    waits: list[tuple[int, str]] = []
    for at, step in enumerate(steps):
        emit(b, step, waits, at)
        for _, token in [w for w in waits if w[0] <= at]:
            b.lines.append(f"device.wait {token}")
        waits = [w for w in waits if w[0] > at]
    b.lines += [f"device.wait {token}" for _, token in waits]
    b.lines += [f"%r{i} = memref.alloc() : !h" for i in range(3)]
    for i, name in enumerate(("x0", "y0", "p0")):
        b.copy(name, f"r{i}")
    b.lines += [f"device.free %{name} : {TYPES[name]}" for name in DEVICE_BUFFERS_OF]
    b.lines.append("func.return %a0, %a1, %h0, %r0, %r1, %r2 : !h, !h, !h, !h, !h, !h")
    body = "\n  ".join(b.lines)
    signature = "(%a0: !h, %a1: !h) -> (!h, !h, !h, !h, !h, !h)"
    return f"{HEADER}func.func @main{signature} {{\n  {body}\n}}\n", b.copies


INPUTS = [np.arange(N, dtype=np.float32) - 3.0, np.linspace(-2.0, 5.0, N, dtype=np.float32)]


def run(text: str) -> list[np.ndarray[Any, Any]] | str:
    """The program's results, or its error message."""
    try:
        module = devplan.parse(text)
        return devplan.execute(module, INPUTS, kernel_backend="numpy").outputs
    except DevplanError as e:
        return str(e)


def same(a: list[np.ndarray[Any, Any]] | str, b: list[np.ndarray[Any, Any]] | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def tags(module: Any) -> set[int]:
    found: set[int] = set()
    for op in module.walk():
        if isinstance(op, dev.CopyOp | dev.CopyAsyncOp) and "tag" in op.attributes:
            found.add(op.attributes["tag"].value.data)
    return found


def one_elision_at_a_time(text: str) -> Iterator[tuple[str, str]]:
    """Each program on the way to the elided one, removing one copy at a time (the first
    the analysis of the current program would elide), with the rule that removed it."""
    module = devplan.parse(text)
    areas = MemoryAreas(System.default())
    for _ in range(64):
        decisions = analyse(module, areas)
        first = next((d for d in decisions if isinstance(d, Elide)), None)
        if first is None:
            return
        first.rewrite()
        yield first.rule, str(module)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(st.lists(st.one_of(STEPS, REGIONS), min_size=1, max_size=7))
def test_elision_keeps_results_and_every_necessary_copy(steps: list[tuple[Any, ...]]) -> None:
    text, _ = program(steps)
    before = run(text)
    assume(not isinstance(before, str))  # a racy random program: nothing to compare
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert same(before, run(str(module))), f"results changed:\n{text}\n--- elided ---\n{module}"
    elided = str(module)
    assert str(devplan.apply(module, "elide-copies")) == elided, "a second run changed it"
    # A copy is necessary in a program when removing it changes the results: each
    # single elision, applied to the program before it, must leave them unchanged.
    for rule, step in one_elision_at_a_time(text):
        assert same(before, run(step)), f"'{rule}' removed a necessary copy:\n{text}\n{step}"


def test_injected_redundant_copies_are_removed() -> None:
    text, _ = program(
        [("copy_back", "a0", "x0"), ("overwritten", "a0", "a1", "x1"), ("onto_itself", "h0")]
    )
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert same(run(text), run(str(module)))
    # Tags: 0-3 fill x0, x1, p0, y0 from a1; 4, 5 copy a0 to x0 and back; 6, 7 copy a0
    # then a1 into x1; 8 copies h0 onto itself; 9-11 read x0, y0, p0 back. Removed: the
    # copy back (5), copies overwritten before any read (0, 1, 6), a copy into x1,
    # which nothing reads before it is freed (7), the copy onto itself (8).
    assert tags(module) == {2, 3, 4, 9, 10, 11}


PINNED_CONSTANT = """func.func @main(%a: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>})
    -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) {
  %c = arith.constant dense<1.5> : tensor<4xf32>
  %p = vdev.on_device %c to #vdev.device<"cpu", 0> {constrain_result} : tensor<4xf32>
  %d = vdev.device_copy %p from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
  %r = arith.addf %a, %d {vdev.device = #vdev.device<"cuda", 0>} : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def test_a_copied_constant_pinned_by_on_device_is_materialised_where_it_is_used() -> None:
    module = devplan.apply(devplan.parse(PINNED_CONSTANT), "elide-copies")
    names = [op.name for op in module.walk()]
    assert "vdev.device_copy" not in names
    assert "vdev.on_device" not in names  # it pinned only what the copy read
    (constant,) = [op for op in module.walk() if isinstance(op, arith.ConstantOp)]
    assert constant.attributes[DEVICE_ATTR] == DeviceAttr.make("cuda", 0)
    (add,) = [op for op in module.walk() if isinstance(op, arith.AddfOp)]
    assert add.operands[1] is constant.result


def test_a_pinned_constant_used_elsewhere_too_keeps_its_pin() -> None:
    text = PINNED_CONSTANT.replace(
        "func.return %r : tensor<4xf32>",
        '%s = arith.addf %p, %p {vdev.device = #vdev.device<"cpu", 0>} : tensor<4xf32>\n'
        "  func.return %r : tensor<4xf32>",
    )
    module = devplan.apply(devplan.parse(text), "elide-copies")
    names = [op.name for op in module.walk()]
    assert "vdev.device_copy" not in names
    assert names.count("vdev.on_device") == 1
    assert names.count("arith.constant") == 2  # the pinned one and its clone on cuda:0


def test_a_copy_in_a_branch_into_a_buffer_read_after_it_stays() -> None:
    """The copy is the last op of the branch touching h0, a local allocation of the
    function that is returned after the branch: its value is live at the region's end."""
    steps: list[tuple[Any, ...]] = [
        ("inc", "x0"),
        ("branch", True, [("copy", "x0", "h0", False, 0)]),
    ]
    text, _ = program(steps)
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert 4 in tags(module)
    results = run(str(module))
    assert not isinstance(results, str)
    np.testing.assert_array_equal(results[2], INPUTS[1] + np.float32(1.5))


def test_copy_back_after_a_kernel_wrote_the_device_copy_stays() -> None:
    """a0 -> x0, a kernel writes x0, x0 -> a0: the copy back carries the kernel's result."""
    text, _ = program(
        [("copy", "a0", "x0", False, 0), ("inc", "x0"), ("copy", "x0", "a0", False, 0)]
    )
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert {4, 5} <= tags(module)
    results = run(str(module))
    assert not isinstance(results, str)
    np.testing.assert_array_equal(results[0], INPUTS[0] + np.float32(1.5))


def test_a_copy_whose_source_is_written_before_the_copy_is_read_stays() -> None:
    """x1 -> scratch, a kernel writes x1, a kernel reads the scratch into x0: reading x1
    instead of the scratch would see the write."""
    text, _ = program([("scratch", "x1", True, False)])
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert 4 in tags(module)
    results = run(str(module))
    assert not isinstance(results, str)
    np.testing.assert_array_equal(results[3], 2 * INPUTS[1])
    # Unwritten, the kernel reads x1 itself, which has the scratch's type: no cast.
    text, _ = program([("scratch", "x1", False, False)])
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert 4 not in tags(module)
    assert "memory_space_cast" not in str(module)
    assert same(run(text), run(str(module)))


def test_a_chain_of_two_scratch_copies_is_forwarded_one_copy_a_round() -> None:
    """x0 -> s4 -> s5, a kernel reads s5: forwarding both copies in one round would
    leave the kernel reading s4 after s4's copy and allocation are gone."""
    text, _ = program([("scratch", "x0", False, True)])
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert not {4, 5} & tags(module)
    assert same(run(text), run(str(module)))


def test_a_copy_back_stays_when_another_argument_written_between_may_be_its_buffer() -> None:
    """a0 -> x0 -> a0 is removed (tag 5) unless a1, which the caller may pass as a0's
    buffer too, is written between the two copies."""
    back: list[tuple[Any, ...]] = [("copy", "a0", "x0", False, 0), ("copy", "x0", "a0", False, 0)]
    text, _ = program(back)
    assert 5 not in tags(devplan.apply(devplan.parse(text), "elide-copies"))
    text, _ = program([back[0], ("store", "a1", 0), back[1]])
    assert 5 in tags(devplan.apply(devplan.parse(text), "elide-copies"))


def test_a_copy_back_inside_a_branch_is_removed_like_one_outside() -> None:
    text, _ = program([("branch", True, [("copy_back", "a0", "x0")])])
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert 4 in tags(module)
    assert 5 not in tags(module)
    assert same(run(text), run(str(module)))


def test_example_keeps_results_with_three_copies_of_seven() -> None:
    path = ROOT / "examples" / "redundant_copies.mlir"
    inputs = [np.linspace(-3.0, 3.0, 256, dtype=np.float32)]
    before = devplan.execute(devplan.parse(path), inputs, kernel_backend="numpy")
    # A fresh module: the executor caches a compiled program per module object.
    module = devplan.apply(devplan.parse(path), "elide-copies")
    after = devplan.execute(module, inputs, kernel_backend="numpy")
    assert same(before.outputs, after.outputs)
    np.testing.assert_array_equal(after.outputs[1], 2 * inputs[0] + np.float32(1.5))
    link = "cpu:0<->cuda:0"
    assert (before.report.links[link].copies, before.report.devices["cuda:0"].local_copies) == (
        5,
        2,
    )
    assert (after.report.links[link].copies, after.report.devices["cuda:0"].local_copies) == (3, 0)
    assert ir_copies(module) == 3
    assert sum(op.name == "device.alloc" for op in module.walk()) == 2


def ir_copies(module: Any) -> int:
    return sum(isinstance(op, dev.CopyOp | dev.CopyAsyncOp) for op in module.walk())


def test_stats_report_removed_copies_by_rule_and_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    text, _ = program([("copy_back", "a0", "x0")])
    devplan.apply(devplan.parse(text), "elide-copies{stats=true}")
    err = capsys.readouterr().err
    assert (
        f"elide-copies: removed 3 of 9 copies ({3 * 4 * N} bytes per execution) "
        "in 2 iteration(s); 6 left\n"
    ) in err
    assert f"copy-back: 1 ({4 * N} bytes)" in err
    assert f"dead: 2 ({2 * 4 * N} bytes)" in err
    remarks: list[str] = []  # by default neither statistics nor explanations
    devplan.apply(devplan.parse(text), "elide-copies", remarks=remarks)
    assert remarks == []


def test_iteration_cap_is_a_remark(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each round removes the copy-back; the next round finds the copy into x0 dead.
    monkeypatch.setattr(elision, "MAX_ITERATIONS", 1)
    text, _ = program([("copy_back", "a0", "x1")])
    module = devplan.apply(devplan.parse(text), "elide-copies")
    assert "remark: elide-copies stopped after 1 iterations" in capsys.readouterr().err
    monkeypatch.undo()
    again = devplan.apply(module, "elide-copies{stats=true}")
    assert "removed 0 of" not in capsys.readouterr().err
    assert same(run(text), run(str(again)))


def test_bad_system_description_in_the_module_is_located(tmp_path: Path) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text(
        'module attributes {vdev.system = "[[device]]\\ntype = \\"cpu\\"\\n"} {\n'
        "  func.func @f() {\n    func.return\n  }\n}\n"
    )
    opt = Path(sys.executable).parent / "devplan-opt"
    done = subprocess.run(
        [str(opt), str(source), "-p", "elide-copies"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{source}:1:1: error: vdev.system: device[0]: missing key 'id'" in done.stderr


def test_bad_option_value_names_the_option() -> None:
    with pytest.raises(DevplanError, match="option 'stats' expects bool"):
        devplan.apply(
            devplan.parse("func.func @f() {\n  func.return\n}\n"), "elide-copies{stats=maybe}"
        )


# --- level 1: random planned programs with injected copies ------------------------------

T1 = TensorType(f32, [64])
CPU0, GPU0, GPU1 = (DeviceAttr.make(t, i) for t, i in (("cpu", 0), ("cuda", 0), ("cuda", 1)))


def planned_program(rnd: random.Random) -> ModuleOp | None:
    """A random level-1 function (elementwise ops, constants, device hints) planned by
    plan-devices; None when its hints conflict."""
    block = Block(arg_types=[T1, T1])
    values: list[SSAValue] = list(block.args)
    for _ in range(rnd.randint(5, 30)):
        a, b = rnd.choice(values[-5:]), rnd.choice(values[-5:])
        roll = rnd.random()
        if roll < 0.2:
            op: Operation = OnDeviceOp(a, rnd.choice([CPU0, GPU0, GPU1]))
        elif roll < 0.3:
            op = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(T1, [rnd.random()] * 64))
        elif roll < 0.65:
            op = arith.AddfOp(a, b)
        else:
            op = arith.MulfOp(a, b)
        block.add_op(op)
        values.append(op.results[0])
    block.add_op(func.ReturnOp(values[-1], values[-2]))
    function = func.FuncOp("main", ([T1, T1], [T1, T1]), Region(block))
    function.arg_attrs = ArrayAttr([DictionaryAttr({DEVICE_ATTR: CPU0}), DictionaryAttr({})])
    module = ModuleOp([function])
    module.attributes[DEFAULT_DEVICE_ATTR] = GPU0
    try:
        PlanDevicesPass().apply(devplan.context(), module)
    except DevplanError:
        return None
    return module


def inject_copies(module: ModuleOp, rnd: random.Random) -> None:
    """Redundant copies: round trips before a use, duplicates, chains through a third
    device, copies of constants; each placed after its operand's definition, between
    fully constrained devices of the default system (as plan-devices places them)."""
    devices = [spec.virtual_device() for spec in System.default().devices]  # fully placed
    placed = [
        r for op in module.walk() for r in op.results if value_device(r) is not None and r.uses
    ]
    for value in rnd.sample(placed, min(len(placed), 5)):
        home = value_device(value)
        assert home is not None
        user = next(iter(value.uses)).operation
        away = rnd.choice([d for d in devices if not d.type_name == home.type_name == "cpu"])
        there = DeviceCopyOp(value, home, away)
        back = DeviceCopyOp(there.result, away, home)
        assert user.parent is not None
        user.parent.insert_ops_before([there, back], user)
        user.operands = [back.result if v is value else v for v in user.operands]
    for copy in [op for op in module.walk() if isinstance(op, DeviceCopyOp)][:6]:
        assert copy.parent is not None
        twin = DeviceCopyOp(copy.input, copy.src_device, copy.dst_device)
        copy.parent.insert_op_after(twin, copy)
        for use in list(copy.result.uses)[::2]:
            use.operation.operands[use.index] = twin.result
        if rnd.random() < 0.5:
            middle = rnd.choice(devices)
            hop = DeviceCopyOp(copy.input, copy.src_device, middle)
            copy.parent.insert_op_before(hop, copy)
            copy.operands = [hop.result]
            copy.properties["src_device"] = middle


def origin(value: SSAValue) -> object:
    """What a value is, copies aside: the op (or argument) that computes it; a constant
    is its value (the pass may clone it onto another device)."""
    while isinstance(value.owner, DeviceCopyOp):
        value = value.owner.input
    if isinstance(value.owner, arith.ConstantOp):
        return str(value.owner.value)
    return value


def uses_by_origin(module: ModuleOp) -> dict[tuple[Operation, int], object]:
    return {
        (op, i): origin(v)
        for op in module.walk()
        if not isinstance(op, DeviceCopyOp | arith.ConstantOp)
        for i, v in enumerate(op.operands)
    }


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_level1_elision_keeps_every_value_and_its_placement(seed: int) -> None:
    rnd = random.Random(seed)
    module = planned_program(rnd)
    assume(module is not None)
    assert module is not None
    inject_copies(module, rnd)
    verify_located(module)
    before = uses_by_origin(module)
    areas = MemoryAreas(System.default())
    devplan.apply(module, "elide-copies")
    elided = str(module)
    assert str(devplan.apply(module, "elide-copies")) == elided, "a second run changed it"
    # Every op reads the same values as before (copies are the identity on values)...
    assert uses_by_origin(module) == before
    # ...where it runs: each operand lives in the op's memory area (the contract).
    for op in module.walk():
        device = op.attributes.get(DEVICE_ATTR)
        if isinstance(op, DeviceCopyOp):
            assert areas.one_area(value_device(op.input), op.src_device), str(op)
        elif isinstance(device, DeviceAttr):
            for v in op.operands:
                assert areas.one_area(value_device(v), device), f"{op} reads {v}"
    # ...and no copy is left that the placement does not need: at most one copy per
    # value and destination, none within one place, no copy of a constant, no chain
    # but through a middle value that is used too (the cheaper route is kept).
    copies = [op for op in module.walk() if isinstance(op, DeviceCopyOp)]
    assert len({(c.input, str(c.dst_device)) for c in copies}) == len(copies)
    for c in copies:
        assert not same_place(c.src_device, c.dst_device)
        assert not isinstance(c.input.owner, arith.ConstantOp)
        if isinstance(c.input.owner, DeviceCopyOp):  # a chain whose middle is used too
            assert c.input.has_more_than_one_use()
        assert c.result.uses
