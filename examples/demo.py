"""`make demo`: one multi-device program through devplan, end to end.

1. the system it runs on (the embedded default: a CPU and two simulated GPUs);
2. `classify-regions` says what kind of program each function is;
3. `outline-device-regions` splits the multi-device function into device programs;
4. the executor runs both versions on the simulated devices, and each result is
   checked against NumPy computing the same thing on the host;
5. the run's report: allocations, launches and copies per device and per link.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import devplan
from devplan.dialects.vdev import ir_text
from devplan.runtime.executor import random_inputs
from devplan.runtime.report import format_bytes
from devplan.runtime.system import System

EXAMPLE = Path(__file__).with_name("two_gpus.mlir")


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


def main() -> int:
    system = System.default()
    section(f"system: {system.name}")
    show_system(system)

    module = devplan.parse(EXAMPLE)
    inputs = random_inputs(module, seed=0)
    a, b = (np.asarray(x) for x in inputs)
    oracle = 2 * a + 3 * b

    section(f"classify-regions on {EXAMPLE.name}")
    devplan.apply(module, "classify-regions")
    show_regions(module)

    outlined = devplan.parse(EXAMPLE)
    devplan.apply(outlined, "outline-device-regions,classify-regions")
    section("outline-device-regions, then classify-regions")
    show_regions(outlined)

    section("execute both versions (numpy kernel backend) and compare with NumPy")
    ok = True
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
