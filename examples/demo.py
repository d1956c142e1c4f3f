"""`make demo`: devplan end to end, on the embedded default system (a CPU, two GPUs).

Part 1, level 1 (`examples/mlp.mlir`): a two-layer perceptron over tensors with three
placement hints (layer 1 on cuda:0, the ReLU on the CPU, layer 2 on cuda:1).
1. `plan-devices`: where each value lives, and the copies it planned;
2. `lower-to-device`: a summary of the level-2 program that runs;
3. the run, checked against the oracle (`devplan.reference.program.evaluate`), and its report.
Then the same three steps, without the report, for two models: a transformer block
(`examples/transformer.mlir`: attention on cuda:0, the MLP on cuda:1, the residuals on the
CPU) and a small CNN (`examples/cnn.mlir`: the features on cuda:0, the classifier on the
CPU).

Part 2, placement strategies (`examples/mlp_three_devices.mlir`, its own system with a
slow host link): `plan-devices` with TVM's default strategy (free values on the default
device, the CPU) and with `strategy=cost` (free values where the modelled time is
least), side by side: where the values went, the planner's modelled time, and the
executor's report of each run under the same cost model; both results against the oracle.

Part 3, data parallelism (`examples/split_batch.mlir`): a batch split in two halves
(`tensor.extract_slice`) that two GPUs compute, concatenated on the CPU (`tensor.concat`):
the copies plan-devices planned with the bytes each moves (a half, not the batch), the run
against the oracle, and the bytes per link in its report.

Part 4, level 2 (`examples/two_gpus.mlir`): one multi-device host program.
1. `classify-regions` says what kind of program each function is;
2. `outline-device-regions` splits the multi-device function into device programs;
3. the executor runs both versions on the simulated devices, and each result is
   checked against NumPy computing the same thing on the host;
4. the run's report: allocations, launches and copies per device and per link.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import devplan
from devplan.dialects import device as dev
from devplan.dialects.kernel import KernelModuleOp
from devplan.dialects.placement import result_placement
from devplan.dialects.vdev import DeviceCopyOp
from devplan.dialects.virtual_device import DeviceAttr, ir_text
from devplan.passes.default_pipeline import DEFAULT_PIPELINE
from devplan.passes.plan_devices.cost_strategy import planned_seconds
from devplan.reference.program import evaluate
from devplan.runtime.executor import random_inputs
from devplan.runtime.report import format_bytes
from devplan.system.description import System

EXAMPLE = Path(__file__).with_name("two_gpus.mlir")
MLP = Path(__file__).with_name("mlp.mlir")
MLP_THREE = Path(__file__).with_name("mlp_three_devices.mlir")
MODELS = [Path(__file__).with_name(name) for name in ("transformer.mlir", "cnn.mlir")]
SPLIT = Path(__file__).with_name("split_batch.mlir")


def section(title: str) -> None:
    print(f"\n== {title}")


def show_system(system: System) -> None:
    for device in system.devices:
        scopes = ", ".join(f"{name} {format_bytes(size)}" for name, size in device.scopes.items())
        print(f"  {device.name:7} {device.api:10} {ir_text(device.target)}\n          {scopes}")
    for link in system.links:
        rate, latency = link.bandwidth / 1e9, link.latency * 1e6
        print(f"  link {link.a} <-> {link.b}: {rate:g} GB/s, {latency:g} us")


def show_regions(module: ModuleOp) -> None:
    functions = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    for op in functions[:4]:
        region = op.attributes["device.region"]
        assert isinstance(region, StringAttr)
        target = op.attributes.get("device.target")
        suffix = f"  device.target = {ir_text(target)}" if target is not None else ""
        print(f"  @{op.sym_name.data:14} {region.data:13}{suffix}")
    if len(functions) > 4:
        print(f"  ... and {len(functions) - 4} more device programs")


def where(device: DeviceAttr | None) -> str:
    """`cuda:0` (the scope too when it is not global)."""
    if device is None:
        return "?"
    scope = "" if device.scope in (None, "global") else f"/{device.scope}"
    return f"{device.type_name}:{device.device_id}{scope}"


def tensor_bytes(type_: object) -> int:
    shape = type_.get_shape()
    element = type_.element_type
    return int(np.prod(shape)) * np.dtype(str(element).replace("f", "float")).itemsize


def show_placements(planned: ModuleOp) -> None:
    """One line per device: the values plan-devices put there."""
    by_device: dict[str, list[str]] = {}
    for function in (op for op in planned.ops if isinstance(op, func.FuncOp)):
        for i, arg in enumerate(function.body.block.args):
            device = (
                function.arg_attrs.data[i].data.get("vdev.device") if function.arg_attrs else None
            )
            if isinstance(device, DeviceAttr):
                by_device.setdefault(where(device), []).append(f"%{arg.name_hint}")
        for op in function.walk():
            if isinstance(op, DeviceCopyOp) or not op.results or op is function:
                continue
            device = result_placement(op, 0)
            if device is not None:
                name = op.results[0].name_hint or "?"
                by_device.setdefault(where(device), []).append(f"%{name}")
    for device, values in sorted(by_device.items()):
        line = textwrap.fill(" ".join(values), 86, subsequent_indent=" " * 11)
        print(f"  {device:8} {line}")


def show_copies(planned: ModuleOp) -> None:
    copies = [op for op in planned.walk() if isinstance(op, DeviceCopyOp)]
    for op in copies:
        value = op.input.name_hint or "?"
        size = format_bytes(tensor_bytes(op.input.type))
        print(f"  %{value:6} {where(op.src_device):7} -> {where(op.dst_device):7} {size}")
    if not copies:
        print("  none")


def show_lowered(lowered: ModuleOp) -> None:
    for module in (op for op in lowered.ops if isinstance(op, KernelModuleOp)):
        names = ", ".join(f"@{k.sym_name.data}" for k in module.kernels)
        print(f"  kernel.module @{module.sym_name.data} ({ir_text(module.target)}): {names}")
    for function in (op for op in lowered.ops if isinstance(op, func.FuncOp)):
        ops = list(function.walk())
        launches: dict[str, int] = {}
        for op in ops:
            if isinstance(op, dev.LaunchOp):
                launches[where(op.device)] = launches.get(where(op.device), 0) + 1
        count = {
            kind: sum(isinstance(op, kind) for op in ops)
            for kind in (dev.AllocOp, dev.FreeOp, dev.CopyOp)
        }
        region = function.attributes.get("device.region")
        kind = region.data if isinstance(region, StringAttr) else "?"
        per_device = ", ".join(f"{n} on {d}" for d, n in sorted(launches.items()))
        print(
            f"  @{function.sym_name.data} ({kind}): {count[dev.AllocOp]} device.alloc, "
            f"{count[dev.FreeOp]} device.free, {count[dev.CopyOp]} device.copy; "
            f"launches {per_device}"
        )


def level_1(system: System, path: Path = MLP, report: bool = True) -> bool:
    """Part 1: plan, lower and run a level-1 example (examples/mlp.mlir, then the models);
    True when it matches the oracle."""
    module = devplan.parse(path)
    planned = devplan.apply(devplan.parse(path), "plan-devices")
    section(f"level 1: plan-devices on {path.name} (where each value lives)")
    show_placements(planned)
    section("copies plan-devices planned (value, from -> to, bytes)")
    show_copies(planned)
    lowered = devplan.apply(planned.clone(), ",".join(DEFAULT_PIPELINE[1:]))  # what runs
    section("lower-to-device: the program that runs")
    show_lowered(lowered)

    section("execute (default-pipeline, numpy kernels) and compare with the oracle")
    inputs = random_inputs(module, seed=0)
    result = devplan.execute(module, inputs, system=system, strict=True)
    (expected,) = evaluate(module, inputs)
    (got,) = result.outputs
    error = float(np.max(np.abs(got - expected)))
    good = bool(np.allclose(got, expected, rtol=1e-5, atol=1e-6 * float(np.max(np.abs(expected)))))
    verdict = "matches" if good else "DIFFERS from"
    shape = "x".join(map(str, got.shape))
    print(f"  result {got.dtype}[{shape}]: {verdict} the oracle (max abs error {error:.2g})")
    if report:
        section("report of the level-1 run")
        print(result.report.format())
    return good


def strategies() -> bool:
    """Part 2: the default and the cost strategy on examples/mlp_three_devices.mlir; True
    when both runs match the oracle and the report's times are the planner's."""
    module = devplan.parse(MLP_THREE)
    inputs = random_inputs(module, seed=0)
    (expected,) = evaluate(module, inputs)
    ok = True
    for strategy in ("default", "cost"):
        planned = devplan.apply(devplan.parse(MLP_THREE), f"plan-devices{{strategy={strategy}}}")
        section(f"placement strategies: plan-devices{{strategy={strategy}}} on {MLP_THREE.name}")
        show_placements(planned)
        modelled = planned_seconds(planned)
        for name in DEFAULT_PIPELINE[1:]:
            devplan.apply(planned, name)
        result = devplan.execute(planned, inputs, strict=True)
        (got,) = result.outputs
        good = bool(np.allclose(got, expected, rtol=1e-4, atol=1e-4))
        same = abs(result.report.model_seconds - modelled) <= 1e-9 * modelled
        ok &= good and same
        print(
            f"  modelled by the planner {modelled * 1e3:.3f} ms; the executor's report "
            f"{result.report.model_seconds * 1e3:.3f} ms (cost model), "
            f"{result.report.wall_seconds * 1e3:.1f} ms wall; result "
            f"{'matches' if good else 'DIFFERS from'} the oracle"
        )
    return ok


def split_batch(system: System) -> bool:
    """Part 3: examples/split_batch.mlir planned, run and checked against the oracle."""
    module = devplan.parse(SPLIT)
    planned = devplan.apply(devplan.parse(SPLIT), "plan-devices")
    section(f"data parallelism: plan-devices on {SPLIT.name} (value, from -> to, bytes)")
    show_copies(planned)
    inputs = random_inputs(module, seed=0)
    result = devplan.execute(module, inputs, system=system, strict=True)
    (expected,) = evaluate(module, inputs)
    (got,) = result.outputs
    good = bool(np.allclose(got, expected, rtol=1e-5, atol=1e-5))
    shape = "x".join(map(str, got.shape))
    verdict = "matches" if good else "DIFFERS from"
    print(f"  result {got.dtype}[{shape}] of both halves: {verdict} the oracle")
    section(f"report of the {SPLIT.name} run")
    print(result.report.format())
    return good


def main() -> int:
    system = System.default()
    section(f"system: {system.name}")
    show_system(system)

    ok = level_1(system)
    for model in MODELS:
        ok &= level_1(system, model, report=False)
    ok &= strategies()
    ok &= split_batch(system)

    module = devplan.parse(EXAMPLE)
    inputs = random_inputs(module, seed=0)
    a, b = (np.asarray(x) for x in inputs)
    oracle = 2 * a + 3 * b

    section(f"level 2: classify-regions on {EXAMPLE.name}")
    devplan.apply(module, "classify-regions")
    show_regions(module)

    outlined = devplan.parse(EXAMPLE)
    devplan.apply(outlined, "outline-device-regions,classify-regions")
    section("outline-device-regions, then classify-regions")
    show_regions(outlined)

    section("execute both versions (numpy kernel backend) and compare with NumPy")
    result = None
    for name, program in (("original", module), ("outlined", outlined)):
        result = devplan.execute(program, inputs, system=system)
        for i, output in enumerate(result.outputs):
            error = float(np.max(np.abs(output - oracle)))
            good = np.allclose(output, oracle, rtol=1e-6, atol=1e-6)
            ok &= good
            verdict = "matches" if good else "DIFFERS from"
            print(f"  {name:9} result {i}: {verdict} NumPy 2a + 3b (max abs error {error:.2g})")

    assert result is not None
    section("report of the outlined run")
    print(result.report.format())
    trace = Path("build") / "demo_trace.json"
    trace.parent.mkdir(exist_ok=True)
    result.report.write_chrome_trace(trace)
    print(f"\nChrome trace (one track per device stream and copy engine): {trace}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
