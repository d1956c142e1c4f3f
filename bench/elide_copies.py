"""elide-copies benchmark: copies and bytes before and after, next to the lower bound;
pass time on a 100k-op module against xDSL's canonicalize (issue 10).

    .venv/bin/python bench/elide_copies.py [--programs 40] [--ops 100000] [--repeat 3]

1. Level-2 examples (`examples/*.mlir` with device ops): copies in the IR, and copies
   and bytes the executor moved (its report: every link plus on-device copies), before
   and after `elide-copies`.
   Level-1 examples (with lower-to-device): bytes the executor moved between devices
   without elide-copies and through `default-pipeline`, next to the lower bound.
2. A generated suite of level-1 programs: random DAGs of elementwise ops with device
   hints, planned by `plan-devices`, then given the redundant copies that passes
   inserting copies for correctness leave behind (round trips, duplicates, a chain
   through a third device instead of a direct copy) — the copies and bytes of the
   planned module as plan-devices left it, with the injected copies, and after
   `elide-copies`, next to the lower bound of issue 10 item 5 (`necessary_bytes`: for
   each value, its size times the number of devices other than its own, one memory
   area counting as one device, where it is consumed; constants are cloned, never
   copied). With lower-to-device, also the bytes the executor moved between devices
   (less the driver's transfers of arguments and results living on a device), lowered
   without elide-copies and through the default pipeline's passes.
3. Pass time: a planned 100k-op chain with a round trip every 50 ops; the median of
   `--repeat` runs of `elide-copies` and of `canonicalize`, each on a fresh clone.

Not a test: nothing here asserts. Static figures count each copy once; executed ones
are one run of @main with `random_inputs(seed=0)`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.transforms.canonicalize import CanonicalizePass

import devplan
from devplan.analysis.memory_areas import MemoryAreas, byte_size
from devplan.diagnostics import DevplanError
from devplan.dialects import device as dev
from devplan.dialects.placement import value_device
from devplan.dialects.vdev import DEFAULT_DEVICE_ATTR, DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from devplan.dialects.virtual_device import DeviceAttr, memory_space_of
from devplan.passes.elide_copies import ElideCopiesPass
from devplan.passes.elide_copies.statistics import necessary_bytes
from devplan.passes.plan_devices import PlanDevicesPass
from devplan.passes.registry import PASSES
from devplan.runtime.executor import random_inputs
from devplan.system.description import System

ROOT = Path(__file__).resolve().parents[1]
T = TensorType(f32, [256])
CPU = DeviceAttr.make("cpu", 0)
GPU0 = DeviceAttr.make("cuda", 0)
GPU1 = DeviceAttr.make("cuda", 1)


# --- 1. level-2 examples ---------------------------------------------------------------


def ir_copies(module: Operation) -> int:
    return sum(isinstance(op, DeviceCopyOp | dev.CopyOp | dev.CopyAsyncOp) for op in module.walk())


def moved(module: ModuleOp, inputs: list[object]) -> tuple[int, int]:
    """(copies, bytes) the executor's report counts for one run of @main."""
    report = devplan.execute(module, inputs, kernel_backend="numpy").report
    copies = sum(link.copies for link in report.links.values())
    copies += sum(d.local_copies for d in report.devices.values())
    nbytes = sum(link.bytes for link in report.links.values())
    nbytes += sum(d.local_copy_bytes for d in report.devices.values())
    return copies, nbytes


def example_inputs(module: ModuleOp) -> list[object]:
    import numpy as np

    main = next(
        op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )
    rng = np.random.default_rng(0)
    inputs: list[object] = []
    for type_ in main.function_type.inputs.data:
        shape = getattr(type_, "get_shape", None)
        if shape is None:
            inputs.append(1.5)
        else:
            inputs.append(rng.standard_normal(shape()).astype(np.float32))
    return inputs


def examples() -> None:
    print("level-2 examples: copies in the IR / copies and bytes moved by the executor")
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        text = path.read_text()
        if "device.copy" not in text:
            continue
        module = devplan.parse(path)
        inputs = example_inputs(module)
        before_ir, (before_n, before_b) = ir_copies(module), moved(module, inputs)
        module = devplan.apply(devplan.parse(path), "elide-copies")  # a fresh module: the
        after_ir, (after_n, after_b) = ir_copies(module), moved(module, inputs)  # run cache
        print(
            f"  {path.name:20} IR {before_ir:3d} -> {after_ir:3d}   moved {before_n:3d} "
            f"copies {before_b:10d} B -> {after_n:3d} copies {after_b:10d} B"
        )


# --- 2. generated level-1 suite -----------------------------------------------------------


def random_program(rnd: random.Random, n: int) -> ModuleOp:
    """A function of `n` elementwise ops over 2 arguments, a hint every ~6 ops."""
    block = Block(arg_types=[T, T])
    values: list[SSAValue] = list(block.args)
    for _ in range(n):
        a, b = rnd.choice(values[-6:]), rnd.choice(values[-6:])
        if rnd.random() < 0.15:
            op: Operation = OnDeviceOp(a, rnd.choice([CPU, GPU0, GPU1]))
        else:
            kind = rnd.choice([arith.AddfOp, arith.MulfOp, arith.NegfOp])
            op = kind(a) if kind is arith.NegfOp else kind(a, b)
        block.add_op(op)
        values.append(op.results[0])
    block.add_op(func.ReturnOp(values[-1], values[-2]))
    function = func.FuncOp("main", ([T, T], [T, T]), Region(block))
    function.arg_attrs = ArrayAttr(
        [DictionaryAttr({DEVICE_ATTR: rnd.choice([CPU, GPU0])}), DictionaryAttr({})]
    )
    module = ModuleOp([function])
    module.attributes[DEFAULT_DEVICE_ATTR] = GPU0
    return module


def planned_devices(module: ModuleOp) -> list[DeviceAttr]:
    found: dict[str, DeviceAttr] = {}
    for op in module.walk():
        for result in op.results:
            device = value_device(result)
            if device is not None:
                found.setdefault(str(device), device)
    return list(found.values())


def inject(module: ModuleOp, rnd: random.Random) -> None:
    """Redundant copies as a copy-inserting pass leaves them: round trips, duplicates,
    chains through a third device."""
    devices = planned_devices(module)
    copies = [op for op in module.walk() if isinstance(op, DeviceCopyOp)]
    values = [
        r for op in module.walk() if op.attributes.get(DEVICE_ATTR) for r in op.results if r.uses
    ]
    for value in rnd.sample(values, min(len(values), 6)):
        home = value_device(value)
        others = [d for d in devices if d != home]
        if home is None or not others:
            continue
        user = next(iter(value.uses)).operation
        there = DeviceCopyOp(value, home, rnd.choice(others))
        back = DeviceCopyOp(there.result, there.dst_device, home)
        assert user.parent is not None
        user.parent.insert_ops_before([there, back], user)
        user.operands = [back.result if v is value else v for v in user.operands]
    for copy in rnd.sample(copies, min(len(copies), 4)):
        twin = DeviceCopyOp(copy.input, copy.src_device, copy.dst_device)
        assert copy.parent is not None
        copy.parent.insert_op_after(twin, copy)
        uses = list(copy.result.uses)
        for use in uses[: len(uses) // 2 + 1]:
            use.operation.operands[use.index] = twin.result
        middle = [d for d in devices if d not in (copy.src_device, copy.dst_device)]
        if middle:
            hop = DeviceCopyOp(copy.input, copy.src_device, middle[0])
            copy.parent.insert_op_before(hop, copy)
            copy.operands[0] = hop.result
            copy.properties["src_device"] = middle[0]


def static_bytes(module: ModuleOp, areas: MemoryAreas) -> tuple[int, int]:
    """(copies, bytes) of the level-1 copies between distinct memories."""
    copies = [
        op
        for op in module.walk()
        if isinstance(op, DeviceCopyOp) and not areas.one_area(op.src_device, op.dst_device)
    ]
    return len(copies), sum(byte_size(op.result.type) or 0 for op in copies)


def lower_bound(module: ModuleOp, areas: MemoryAreas) -> int:
    """Item 5's bound for a planned one-function program (its @main runs once)."""
    return necessary_bytes(module, areas, {"main": 1})


def link_bytes(lowered: ModuleOp) -> tuple[int, int]:
    """(bytes between devices, bytes of the driver): one run's link traffic from the
    executor's report, and the part that is the driver's upload of arguments and
    download of results living on a device (not the program's copies)."""
    report = devplan.execute(lowered, random_inputs(lowered, seed=0), strict=True).report
    main = next(f for f in lowered.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
    types = [*main.function_type.inputs.data, *main.function_type.outputs.data]
    driver = sum(
        byte_size(t) or 0
        for t in types
        if isinstance(t, MemRefType) and memory_space_of(cast(MemRefType[Any], t)) is not None
    )
    return sum(link.bytes for link in report.links.values()), driver


def executed(module: ModuleOp, pipeline: str) -> tuple[int, int]:
    return link_bytes(devplan.apply(module.clone(), pipeline))


def suite(programs: int, run: bool) -> None:
    ctx = devplan.context()
    areas = MemoryAreas(System.default())
    plan, elide = PlanDevicesPass(), ElideCopiesPass()
    sums = [0] * 10
    for seed in range(programs):
        rnd = random.Random(seed)
        module = random_program(rnd, rnd.randint(10, 60))
        try:
            plan.apply(ctx, module)
        except DevplanError:
            continue  # hints that conflict with the pinned argument
        planned = static_bytes(module, areas)
        inject(module, rnd)
        injected = static_bytes(module, areas)
        elided = module.clone()
        elide.apply(ctx, elided)
        after = static_bytes(elided, areas)
        bound = lower_bound(elided, areas)
        run_before = run_after = driver = 0
        if run:
            run_before, _ = executed(module, "lower-to-device,classify-regions")
            pipeline = "elide-copies,lower-to-device,elide-copies,classify-regions"
            run_after, driver = executed(module, pipeline)
        row = (*planned, *injected, *after, bound, run_before - driver, run_after - driver)
        for i, x in enumerate(row):
            sums[i] += x
    p_n, p_b, i_n, i_b, a_n, a_b, bound, r_b, r_a = sums[:9]
    print(f"generated level-1 suite ({programs} programs, 256 x f32 values):")
    print("  static level-1 copies / bytes:")
    print(f"    planned by plan-devices {p_n:5d} / {p_b:9d} B")
    print(f"    with injected copies    {i_n:5d} / {i_b:9d} B")
    print(f"    after elide-copies      {a_n:5d} / {a_b:9d} B")
    print(f"    lower bound (item 5)            {bound:9d} B")
    if not run:
        print("  executed: not run (this build has no lower-to-device)")
        return
    print(
        "  bytes the executor moved between devices, less the driver's argument/result transfers:"
    )
    print(f"    lowered without elide-copies    {r_b:9d} B")
    ratio = r_a / max(bound, 1)
    print(f"    default-pipeline                {r_a:9d} B  (bound {bound} B, ratio {ratio:.3f})")


def level1_examples() -> None:
    areas = MemoryAreas(System.default())
    print("level-1 examples: bytes between devices, less the driver's argument/result transfers")
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        module = devplan.parse(path)
        if "tensor<" not in path.read_text():
            continue  # a level-2 example
        planned = devplan.apply(module.clone(), "plan-devices")
        looped = any(op.name == "scf.for" for op in planned.walk())
        bound = (
            "n/a (a loop: the bound counts per iteration)"
            if looped
            else f"{lower_bound(planned, areas)} B"
        )
        before, driver = executed(module, "plan-devices,lower-to-device,classify-regions")
        after, _ = executed(module, "default-pipeline")
        print(
            f"  {path.name:20} without elide-copies {before - driver:8d} B, "
            f"default-pipeline {after - driver:8d} B, bound {bound}"
        )


# --- 3. pass time ----------------------------------------------------------------------


def chain(n: int) -> ModuleOp:
    """A planned-looking chain: `negf` on cuda:0, a round trip to the CPU every 50 ops."""
    block = Block(arg_types=[T])
    value: SSAValue = block.args[0]
    for i in range(1, n):
        if i % 50 == 0:
            there = DeviceCopyOp(value, GPU0, CPU)
            back = DeviceCopyOp(there.result, CPU, GPU0)
            block.add_ops([there, back])
            value = back.result
        op = arith.NegfOp(value)
        op.attributes[DEVICE_ATTR] = GPU0
        block.add_op(op)
        value = op.result
    block.add_op(func.ReturnOp(value))
    function = func.FuncOp("chain", ([T], [T]), Region(block))
    function.arg_attrs = ArrayAttr([DictionaryAttr({DEVICE_ATTR: GPU0})])
    function.res_attrs = ArrayAttr([DictionaryAttr({DEVICE_ATTR: GPU0})])
    return ModuleOp([function])


def median_time(module: ModuleOp, apply: Callable[[ModuleOp], None], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        copy = module.clone()
        start = time.perf_counter()
        apply(copy)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timing(n: int, repeat: int) -> None:
    ctx = devplan.context()
    module = chain(n)
    ops = sum(1 for _ in module.walk()) - 1
    elide, canonicalize = ElideCopiesPass(), CanonicalizePass()
    t_elide = median_time(module, lambda m: elide.apply(ctx, m), repeat)
    t_canon = median_time(module, lambda m: canonicalize.apply(ctx, m), repeat)
    print(
        f"pass time, {ops} ops ({ir_copies(module)} copies): elide-copies {t_elide * 1e3:.1f} ms, "
        f"canonicalize {t_canon * 1e3:.1f} ms, ratio {t_elide / t_canon:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--programs", type=int, default=40)
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.setrecursionlimit(10_000)
    examples()
    if "lower-to-device" in PASSES:
        level1_examples()
    else:
        print("level-1 examples: not run (this build has no lower-to-device)")
    suite(args.programs, run="lower-to-device" in PASSES)
    timing(args.ops, args.repeat)


if __name__ == "__main__":
    main()
