"""elide-copies in default-pipeline: the oracle's results, and no byte beyond the bound.

The random level-1 programs are the differential fuzzer's (`support.level1_programs`).

* Random programs of the fuzzer, planned, with redundant copies injected (round trips,
  duplicates, chains, copies of constants), then elided, lowered, elided again and run:
  the results equal the oracle's (`devplan.reference.program.evaluate`). A necessary copy
  removed would leave an operand on another device than its op, which lower-to-device
  rejects, or change the results.
* After `default-pipeline`, the bytes the executor moves between
  devices are exactly the placement's lower bound (`necessary_bytes`: per value, its
  size times the other memory areas where it is read), once the driver's transfers of
  arguments and results that live on a device and the loads of constant data onto a
  device are set aside; on examples/mlp.mlir and on fuzzer programs without loops or
  branches (whose values each run a known number of times).
"""

from __future__ import annotations

import random
from typing import Any, cast

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT, level1_programs
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp

import devplan
from devplan.analysis.memory_areas import MemoryAreas, byte_size
from devplan.diagnostics import verify_located
from devplan.dialects import device as dev
from devplan.dialects.placement import value_device
from devplan.dialects.vdev import DeviceCopyOp
from devplan.dialects.virtual_device import DeviceAttr, memory_space_of
from devplan.passes.elide_copies.statistics import necessary_bytes
from devplan.runtime.executor import random_inputs
from devplan.system.description import System


def inject_copies(module: ModuleOp, rnd: random.Random) -> None:
    """Redundant copies: round trips before a use, duplicates, chains through a third
    device; each placed after its operand's definition, between fully constrained
    devices of the default system (as plan-devices places them)."""
    devices = [spec.virtual_device() for spec in System.default().devices]
    placed = [
        r for op in module.walk() for r in op.results if value_device(r) is not None and r.uses
    ]
    for value in rnd.sample(placed, min(len(placed), 5)):
        home = value_device(value)
        assert home is not None
        user = next(iter(value.uses)).operation
        away: DeviceAttr = rnd.choice(devices)
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


@st.composite
def fuzzer_programs(draw: Any, steps: tuple[str, ...] = level1_programs.STEPS) -> str:
    """A random program of the differential fuzzer made of `steps`."""
    element = draw(st.sampled_from(["f32", "i32"]))
    program = level1_programs.Program(
        draw, element, draw(st.integers(1, 4)), draw(st.integers(1, 4))
    )
    args: list[str] = []
    for kind, name in (("v", "%x"), ("v", "%y"), ("w", "%w")):
        device = draw(st.sampled_from((None, *level1_programs.DEVICES)))
        attr = f" {{vdev.device = {device}}}" if device is not None else ""
        args.append(f"{name}: {program.type_of(kind)}{attr}")
        program.values[kind].append(name)
    for step in draw(st.lists(st.sampled_from(steps), min_size=1, max_size=7)):
        if step == "elementwise":
            program.elementwise(draw(st.sampled_from(["v", "w"])))
        else:
            getattr(program, step)()
    results = [program.values["v"][-1], program.pick("v")]
    placements = [draw(st.sampled_from((None, *level1_programs.DEVICES))) for _ in results]
    return program.text(results, placements, args)


def lower_and_run(module: ModuleOp, text: str) -> None:
    """The rest of default-pipeline on a planned module; its results equal the oracle's."""
    original = devplan.parse(text)
    for name in ("elide-copies", "lower-to-device", "elide-copies", "classify-regions"):
        devplan.apply(module, name)
    inputs = random_inputs(module, seed=0)
    expected = level1_programs.evaluate(original, inputs)
    result = devplan.execute(module, inputs, strict=True)
    for got, want in zip(result.outputs, expected, strict=True):
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(fuzzer_programs(), st.randoms(use_true_random=False))
def test_level1_injected_copies_keep_the_oracle_results(text: str, rnd: random.Random) -> None:
    module = devplan.apply(devplan.parse(text), "plan-devices")
    inject_copies(module, rnd)
    verify_located(module)
    lower_and_run(module, text)


def runs_per_function(module: ModuleOp) -> dict[str, int]:
    """How often each function runs in one call of @main (programs without loops or
    branches: every call executes once per run of its caller)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    runs: dict[str, int] = dict.fromkeys(functions, 0)

    def visit(name: str, times: int) -> None:
        runs[name] += times
        for op in functions[name].walk():
            if isinstance(op, func.CallOp):
                visit(op.callee.string_value(), times)

    visit("main", 1)
    return runs


def moved_beyond_the_program(lowered: ModuleOp, runs: dict[str, int]) -> int:
    """Bytes the executor moves between devices that are not the program's copies: the
    driver's upload of arguments and download of results that live on a device, and
    loads of constant data (`memref.get_global`) onto a device."""
    main = next(f for f in lowered.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
    types = [*main.function_type.inputs.data, *main.function_type.outputs.data]
    total = sum(
        byte_size(t) or 0
        for t in types
        if isinstance(t, MemRefType) and memory_space_of(cast(MemRefType[Any], t)) is not None
    )
    for function in lowered.ops:
        if isinstance(function, func.FuncOp):
            for op in function.walk():
                if not isinstance(op, dev.CopyOp):
                    continue
                onto_device = memory_space_of(cast(MemRefType[Any], op.destination.type))
                if isinstance(op.source.owner, memref.GetGlobalOp) and onto_device is not None:
                    size = byte_size(op.source.type) or 0
                    total += size * runs.get(function.sym_name.data, 0)
    return total


def check_bytes_equal_the_bound(text: str) -> None:
    module = devplan.parse(text)
    planned = devplan.apply(module.clone(), "plan-devices")
    runs = runs_per_function(planned)
    bound = necessary_bytes(planned, MemoryAreas(System.default()), runs)
    lowered = devplan.apply(module, "default-pipeline")
    report = devplan.execute(lowered, random_inputs(lowered, seed=0), strict=True).report
    # Between devices: copies within one device (lower-to-device's copies of borrowed
    # values a function returns) move no data across devices.
    moved = sum(link.bytes for link in report.links.values())
    assert moved - moved_beyond_the_program(lowered, runs) == bound, text


def test_mlp_example_moves_exactly_the_bytes_its_placement_needs() -> None:
    check_bytes_equal_the_bound((ROOT / "examples" / "mlp.mlir").read_text())


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(fuzzer_programs(steps=("elementwise", "matmul", "constant", "hint", "call")))
def test_generated_programs_move_exactly_the_bytes_their_placement_needs(text: str) -> None:
    check_bytes_equal_the_bound(text)
