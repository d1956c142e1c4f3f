"""classify-regions: the lattice, the RFC's multi-device example with a user `dsp` kind,
target resolution and its errors, and running outlined multi-device programs.

RFC example (c) needs a user-registered target kind, which lit cannot register, so it
lives here: `register_target_kind("dsp", "dsp")`, then the pass runs from Python.
"""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

import devplan
from devplan.analysis.region_footprint import Footprint, RegionAnalysis
from devplan.diagnostics import DevplanError
from devplan.dialects.target import TargetAttr, register_target_kind
from devplan.system.description import System

CUDA0 = ("cuda", 0)
CUDA1 = ("cuda", 1)


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def region(module: ModuleOp, name: str) -> str:
    attr = functions(module)[name].attributes["device.region"]
    assert isinstance(attr, StringAttr)
    return attr.data


# ---- the lattice ---------------------------------------------------------------------


def test_empty_footprint_is_host() -> None:
    assert Footprint().region_class == "host"
    assert Footprint(host_memory=True).region_class == "host"


def test_one_device_is_device_and_with_host_memory_mixed() -> None:
    device = Footprint(frozenset({CUDA0}))
    assert device.region_class == "device"
    assert device.join(Footprint(host_memory=True)).region_class == "mixed"


def test_two_devices_are_multi_device_whatever_else() -> None:
    two = Footprint(frozenset({CUDA0})).join(Footprint(frozenset({CUDA1})))
    assert two.region_class == "multi-device"
    assert two.join(Footprint(host_memory=True)).region_class == "multi-device"


def test_join_is_commutative_idempotent_and_monotone() -> None:
    elements = [
        Footprint(),
        Footprint(host_memory=True),
        Footprint(frozenset({CUDA0})),
        Footprint(frozenset({CUDA1}), True),
    ]
    order = ["host", "device", "mixed", "multi-device"]
    for a in elements:
        assert a.join(a) == a
        for b in elements:
            assert a.join(b) == b.join(a)
            joined = order.index(a.join(b).region_class)
            assert joined >= max(order.index(a.region_class), order.index(b.region_class))


def test_unconstrained_id_is_absorbed_by_a_concrete_one() -> None:
    any_cuda = Footprint(frozenset({("cuda", None)}))
    assert any_cuda.join(Footprint(frozenset({CUDA0}))).devices == {CUDA0}
    assert Footprint(frozenset({CUDA0})).join(any_cuda).devices == {CUDA0}


# ---- RFC example (c): a CUDA kernel, copies through the CPU and a DSP kernel ----------

KERNEL_BODY = """
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<8xf32>
    %y = arith.{op} %x, %x : f32
    memref.store %y, %a[%tx] : memref<8xf32>
    kernel.return
"""

RFC_C = f"""
!host = memref<8xf32>
!gpu = memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
!dsp = memref<8xf32, #vdev.device<"dsp", 0, ?, "global">>

kernel.module @gpu_kernels target #target.target<"cuda"> {{
  kernel.func @double(%a: memref<8xf32>) {{{KERNEL_BODY.format(op="addf")}  }}
}}
kernel.module @dsp_kernels target #target.target<"dsp"> {{
  kernel.func @square(%a: memref<8xf32>) {{{KERNEL_BODY.format(op="mulf")}  }}
}}

func.func @main(%h: !host) -> !host {{
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %g = device.alloc() : !gpu
  device.copy %h to %g : !host to !gpu
  device.launch @gpu_kernels::@double on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c8, %c1, %c1) args(%g) : !gpu
  %mid = memref.alloc() : !host
  device.copy %g to %mid : !gpu to !host
  device.free %g : !gpu
  %d = device.alloc() : !dsp
  device.copy %mid to %d : !host to !dsp
  device.launch @dsp_kernels::@square on #vdev.device<"dsp", 0> grid(%c1, %c1, %c1) block(%c8, %c1, %c1) args(%d) : !dsp
  %out = memref.alloc() : !host
  device.copy %d to %out : !dsp to !host
  device.free %d : !dsp
  func.return %out : !host
}}
"""


@pytest.fixture(scope="module")
def dsp_kind() -> None:
    register_target_kind("dsp", "dsp")


@pytest.mark.usefixtures("dsp_kind")
def test_rfc_c_cuda_then_dsp_through_the_host_is_multi_device() -> None:
    module = devplan.parse(RFC_C)
    devplan.apply(module, "classify-regions")
    assert region(module, "main") == "multi-device"
    assert "device.target" not in functions(module)["main"].attributes


@pytest.mark.usefixtures("dsp_kind")
def test_rfc_c_explain_names_the_second_device(capsys: pytest.CaptureFixture[str]) -> None:
    module = devplan.parse(RFC_C)
    devplan.apply(module, "classify-regions{explain=true}")
    err = capsys.readouterr().err
    line = RFC_C.splitlines().index("  %d = device.alloc() : !dsp") + 1
    assert (
        f"<string>:{line}:3: remark: @main is multi-device: 'device.alloc' allocates memory "
        "of dsp:0, beside work on cuda:0 and host memory"
    ) in err


@pytest.mark.usefixtures("dsp_kind")
def test_rfc_c_outlined_dsp_program_gets_the_dsp_target_with_host() -> None:
    module = devplan.parse(RFC_C)
    devplan.apply(module, "outline-device-regions,classify-regions")
    found = functions(module)
    dsp_programs = [f for name, f in found.items() if name.startswith("main_dsp0")]
    assert dsp_programs
    expected = TargetAttr.from_config({"kind": "dsp", "host": {"kind": "llvm"}})
    for program in dsp_programs:
        assert program.attributes["device.region"] == StringAttr("device")
        assert program.attributes["device.target"] == expected
    assert region(module, "main") == "multi-device"


@pytest.mark.usefixtures("dsp_kind")
def test_rfc_c_outlined_program_computes_the_same_result(
    simulated_system: Callable[..., System],
) -> None:
    system = simulated_system(
        {
            "cuda:0": {"global": "1 GiB", "shared": "48 KiB"},
            "dsp:0": {"global": "64 MiB", "shared": "48 KiB"},
        },
        [("cpu:0", "cuda:0", "24 GB/s", "10 us"), ("cpu:0", "dsp:0", "1 GB/s", "50 us")],
    )
    h = np.arange(8, dtype=np.float32)
    before = devplan.execute(devplan.parse(RFC_C), [h.copy()], system=system)
    module = devplan.parse(RFC_C)
    devplan.apply(module, "outline-device-regions")
    after = devplan.execute(module, [h.copy()], system=system)
    np.testing.assert_array_equal(before.outputs[0], (2 * h) ** 2)
    np.testing.assert_array_equal(after.outputs[0], before.outputs[0])


# ---- targets ---------------------------------------------------------------------------


def test_two_written_targets_for_one_device_is_a_located_error() -> None:
    module = devplan.parse(
        """
func.func @f() {
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_80"}>, "global">>
  %b = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_90"}>, "global">>
  func.return
}
"""
    )
    with pytest.raises(DevplanError) as e:
        devplan.apply(module, "classify-regions")
    assert str(e.value).startswith("<string>:4:3: error: device program @f names two targets")


def test_device_program_with_no_known_target_is_a_located_error() -> None:
    module = devplan.parse(
        """
func.func @f() {
  %a = device.alloc() : memref<4xf32, #vdev.device<"npu", 0, ?, "global">>
  func.return
}
"""
    )
    with pytest.raises(DevplanError) as e:
        devplan.apply(module, "classify-regions")
    message = str(e.value)
    assert message.startswith("<string>:2:1: error: cannot tell the target of device program @f")
    assert "vdev.targets" in message


def test_stale_target_is_removed_when_a_function_is_no_device_program() -> None:
    module = devplan.parse(
        """
func.func @f() attributes {device.region = "device", device.target = #target.target<"cuda">} {
  func.return
}
"""
    )
    devplan.apply(module, "classify-regions")
    f = functions(module)["f"]
    assert f.attributes["device.region"] == StringAttr("host")
    assert "device.target" not in f.attributes


def test_analysis_is_usable_from_python_without_changing_ir() -> None:
    module = devplan.parse(
        """
func.func @f(%h: memref<4xf32>) {
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %h to %a : memref<4xf32> to memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}
"""
    )
    text = str(module)
    analysis = RegionAnalysis(module)
    f = functions(module)["f"]
    assert analysis.region_class(f) == "mixed"
    step = analysis.deciding_step(f)
    assert step is not None
    assert step.op.name == "device.copy"
    assert str(module) == text
