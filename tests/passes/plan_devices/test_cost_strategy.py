"""plan-devices{strategy=cost}: optimal with two devices, never worse than the default
placement with more, and the modelled time it minimises is the planned program's."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import EXAMPLES
from xdsl.dialects.builtin import ModuleOp

import devplan
from devplan.diagnostics import DevplanError
from devplan.passes.plan_devices.cost_strategy import CostPlacement, planned_seconds
from devplan.passes.plan_devices.placement_cost import CopyTerm, Problem, solve
from devplan.passes.plan_devices.planner import Planner


def brute_force(problem: Problem) -> float:
    """The least objective over every placement of the free classes (vectorised)."""
    k = problem.devices
    free = [c for c, f in enumerate(problem.fixed) if f is None]
    grid = np.array(list(itertools.product(range(k), repeat=len(free))), dtype=np.int64)
    labels = np.tile(np.array([f or 0 for f in problem.fixed], dtype=np.int64), (len(grid), 1))
    if free:
        labels[:, free] = grid
    compute = np.array(problem.compute)
    total = compute[np.arange(len(problem.fixed)), labels].sum(axis=1)
    for term in problem.terms:
        src = labels[:, term.source]
        table = np.array(term.seconds)
        for d in range(k):
            used = (labels[:, term.consumers] == d).any(axis=1) & (src != d)
            total += np.where(used, table[src, d], 0.0)
    return float(total.min())


@st.composite
def problems(draw: st.DrawFn, devices: int, most: int) -> Problem:
    n = draw(st.integers(2, most))
    # the min cut scales capacities to integers: the unit of the times must not matter
    unit = draw(st.sampled_from([1e-9, 1.0, 1e6]))
    seconds = st.floats(1e-6, 1e-2).map(lambda t: t * unit)
    compute = [[draw(seconds) for _ in range(devices)] for _ in range(n)]
    # Links: host (device 0) to each other device, and some direct links between others.
    bandwidth = {(0, d): draw(st.floats(1e8, 1e11)) for d in range(1, devices)}
    for a, b in itertools.combinations(range(1, devices), 2):
        if draw(st.booleans()):
            bandwidth[(a, b)] = draw(st.floats(1e8, 1e11))

    def copy(a: int, b: int, nbytes: int) -> float:
        if a == b:
            return 0.0
        key = (min(a, b), max(a, b))
        if key in bandwidth:
            return (1e-5 + nbytes / bandwidth[key]) * unit
        return copy(a, 0, nbytes) + copy(0, b, nbytes)  # routed through the host

    terms: list[CopyTerm] = []
    for source in range(n):
        users = draw(st.sets(st.integers(0, n - 1), max_size=3))
        if users:
            nbytes = draw(st.integers(1, 1 << 24))
            table = [[copy(a, b, nbytes) for b in range(devices)] for a in range(devices)]
            terms.append(CopyTerm(source, sorted(users), table))
    fixed = [draw(st.none() | st.integers(0, devices - 1)) for _ in range(n)]
    default = [f if f is not None else 0 for f in fixed]
    return Problem(devices, compute, fixed, default, terms)


C8, C4, C2 = 7.8125e-12, 3.90625e-12, 1.953125e-12
RESIDUAL_OVERFLOW = Problem(
    2,
    [[C4, C8], [C8, C4], [C4, C2], *([[C8, C8]] * 7), [C4, C4]],
    [None] * 11,
    [0] * 11,
    [
        CopyTerm(4, [0, 2, 4], [[0.0, 1.001e-14], [1.001e-14, 0.0]]),
        CopyTerm(10, [0, 2], [[0.0, 1.94312e-12], [1.94312e-12, 0.0]]),
    ],
)
"""Found by the test below: the flow into class 4's node from a copy term's node made the
reverse of an infinite edge overflow int32 in the residual graph, and the cut read from it
moved class 4 for nothing (one copy, 1e-14 s, above the optimum)."""


@settings(max_examples=200, deadline=None)
@given(problems(2, 14))
@example(RESIDUAL_OVERFLOW)
def test_two_devices_reach_the_brute_force_optimum(problem: Problem) -> None:
    labels = solve(problem)
    assert all(labels[c] == f for c, f in enumerate(problem.fixed) if f is not None)
    assert problem.objective(labels) == pytest.approx(brute_force(problem), rel=1e-6, abs=0.0)


@settings(max_examples=100, deadline=None)
@given(problems(3, 10))
def test_three_devices_are_never_worse_than_the_default(problem: Problem) -> None:
    labels = solve(problem)
    assert all(labels[c] == f for c, f in enumerate(problem.fixed) if f is not None)
    value = problem.objective(labels)
    assert value <= problem.objective(problem.default) * (1 + 1e-12)
    assert value >= brute_force(problem) * (1 - 1e-9)


# --- through the pass: the IR it plans is the placement it modelled ----------------------


def system_toml(gpus: int, host_gbps: float, peer_gbps: float | None, gflops: float) -> str:
    text = (
        '[[device]]\ntype = "cpu"\nid = 0\ntarget = { kind = "llvm" }\napi = "cpu"\n'
        'scopes = { global = "64 GiB" }\n'
    )
    for g in range(gpus):
        text += (
            f'[[device]]\ntype = "cuda"\nid = {g}\ntarget = {{ kind = "cuda" }}\n'
            f'api = "simulated"\nscopes = {{ global = "64 GiB" }}\npeak_gflops = {gflops}\n'
            f'[[link]]\nbetween = ["cpu:0", "cuda:{g}"]\nbandwidth = "{host_gbps} GB/s"\n'
            'latency = "10 us"\n'
        )
    if gpus == 2 and peer_gbps is not None:
        text += (
            f'[[link]]\nbetween = ["cuda:0", "cuda:1"]\nbandwidth = "{peer_gbps} GB/s"\n'
            'latency = "5 us"\n'
        )
    return text


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, int]:
    gpus = draw(st.integers(1, 2))
    toml = system_toml(
        gpus,
        draw(st.sampled_from([1, 8, 32])),
        draw(st.none() | st.sampled_from([50, 300])),
        draw(st.sampled_from([200, 5000])),
    )
    n = draw(st.sampled_from([16, 128, 512]))
    t = f"tensor<{n}x{n}xf32>"
    lines: list[str] = []
    values = ["%a", "%b"]
    devices = ["cpu", *(f"cuda{g}" for g in range(gpus))]
    for i in range(draw(st.integers(1, 12))):
        x, y = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        kind = draw(st.sampled_from(["matmul", "addf", "tanh"]))
        if kind == "matmul":
            lines.append(f"%e{i} = tensor.empty() : {t}")
            lines.append(f"%v{i} = linalg.matmul ins({x}, {y} : {t}, {t}) outs(%e{i} : {t}) -> {t}")
        elif kind == "addf":
            lines.append(f"%v{i} = arith.addf {x}, {y} : {t}")
        else:
            lines.append(f"%v{i} = math.tanh {x} : {t}")
        values.append(f"%v{i}")
        if draw(st.integers(0, 4)) == 0:
            device = draw(st.sampled_from(devices))
            type_name, device_id = (
                device[:-1] if device != "cpu" else "cpu",
                (int(device[-1]) if device != "cpu" else 0),
            )
            lines.append(
                f'%h{i} = "vdev.on_device"(%v{i}) {{device = #vdev.device<"{type_name}", '
                f"{device_id}>, constrain_result}} : ({t}) -> {t}"
            )
            values.append(f"%h{i}")
    escaped = toml.replace('"', '\\"').replace("\n", "\\n")
    body = "\n    ".join(lines)
    text = (
        f'builtin.module attributes {{vdev.system = "{escaped}"}} {{\n'
        f"  func.func @main(%a: {t}, %b: {t}) -> {t} {{\n    {body}\n"
        f"    func.return {values[-1]} : {t}\n  }}\n}}\n"
    )
    return text, gpus + 1


def _problem(text: str) -> Problem:
    module = devplan.parse(text)
    planner = Planner(module, True, False)
    planner.collect()
    planner.unify_calls()
    placement = CostPlacement(planner, None, False)
    placement.default_placement()
    return placement.problem()


def _planned(text: str | Path, strategy: str) -> float:
    module = devplan.parse(text)
    devplan.apply(module, f"plan-devices{{strategy={strategy}}}")
    return planned_seconds(module)


@settings(max_examples=25, deadline=None)
@given(programs())
def test_cost_strategy_plans_the_optimum_it_models(program: tuple[str, int]) -> None:
    text, devices = program
    problem = _problem(text)
    cost, default = _planned(text, "cost"), _planned(text, "default")
    assert default == pytest.approx(problem.objective(problem.default), rel=1e-9)
    assert cost <= default * (1 + 1e-9)
    if devices == 2:
        assert cost == pytest.approx(brute_force(problem), rel=1e-6)


def test_hard_constraints_stay_where_the_default_strategy_puts_them() -> None:
    text = """
builtin.module {
  func.func @main(%a: tensor<512x512xf32> {vdev.device = #vdev.device<"cpu", 0>})
      -> tensor<512x512xf32> {
    %e = tensor.empty() : tensor<512x512xf32>
    %m = linalg.matmul ins(%a, %a : tensor<512x512xf32>, tensor<512x512xf32>)
           outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
    %p = "vdev.on_device"(%m) {device = #vdev.device<"cpu", 0>, constrain_result}
           : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %t = math.tanh %p : tensor<512x512xf32>
    func.return %t : tensor<512x512xf32>
  }
}
"""
    module = devplan.parse(text)
    devplan.apply(module, "plan-devices{strategy=cost}")
    printed = str(module)
    # The hint pins the matmul (its operand) to the CPU; the free tanh may move.
    assert 'linalg.matmul {vdev.device = #vdev.device<"cpu", 0' in printed


def test_dynamic_shapes_are_placed_by_default_unless_a_size_is_given() -> None:
    text = """
builtin.module attributes {vdev.default_device = #vdev.device<"cpu", 0>} {
  func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %e: tensor<?x?xf32>)
      -> tensor<?x?xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
           outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    func.return %m : tensor<?x?xf32>
  }
}
"""
    unsized = devplan.parse(text)
    devplan.apply(unsized, "plan-devices{strategy=cost}")
    assert 'linalg.matmul {vdev.device = #vdev.device<"cpu", 0' in str(unsized)
    sized = devplan.parse(text)
    devplan.apply(sized, "plan-devices{strategy=cost dynamic-size=4096}")
    assert 'linalg.matmul {vdev.device = #vdev.device<"cuda"' in str(sized)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ("strategy=fast", "unknown strategy 'fast' (valid: default, cost)"),
        ("strategy=cost dynamic-size=0", "dynamic-size must be 1 or more, got 0"),
    ],
)
def test_a_bad_option_is_an_error_of_the_pipeline_not_of_the_module(
    options: str, problem: str
) -> None:
    # Both were raised when the pass ran, placed at the module: "<string>:1:1: error:
    # plan-devices: unknown strategy 'fast'" as if the IR were wrong.
    module = devplan.parse("builtin.module {}")
    with pytest.raises(DevplanError) as info:
        devplan.apply(module, f"plan-devices{{{options}}}")
    assert str(info.value) == f"error: pass 'plan-devices': {problem}"


EXAMPLE = EXAMPLES / "mlp_three_devices.mlir"


def test_the_mlp_example_is_faster_under_the_cost_strategy() -> None:
    cost, default = _planned(EXAMPLE, "cost"), _planned(EXAMPLE, "default")
    assert cost < 0.75 * default


def _cost_remarks() -> tuple[ModuleOp, list[str]]:
    module = devplan.parse(EXAMPLE)
    remarks: list[str] = []
    devplan.apply(module, "plan-devices{strategy=cost explain=true}", remarks=remarks)
    return module, [r.splitlines()[0] for r in remarks]


def test_explain_gives_the_modelled_time_of_the_cost_and_the_default_placement() -> None:
    module, remarks = _cost_remarks()
    cost, default = planned_seconds(module), _planned(EXAMPLE, "default")
    assert (
        f"remark: strategy=cost: modelled time {cost * 1e3:.3f} ms (compute and copies; "
        f"the default placement: {default * 1e3:.3f} ms; devices: cpu:0, cuda:0, cuda:1)"
    ) in remarks[0]


def test_explain_gives_each_op_the_cost_on_its_device_and_on_the_best_alternative() -> None:
    module, remarks = _cost_remarks()
    total = f"{planned_seconds(module) * 1e3:.3f} ms"
    assert any(
        r.endswith(
            "mlp_three_devices.mlir:23:5: remark: 'linalg.matmul' (%m1) is on cuda:1/global: "
            f"decided by the cost model (strategy=cost): modelled time {total} with it on "
            "cuda:1, 1.367 ms on cuda:0, the best alternative"
        )
        for r in remarks
    )
    assert any(
        r.endswith(
            "mlp_three_devices.mlir:34:5: remark: 'arith.addf' (%y) is on cpu:0/global: decided"
            f" by the cost model (strategy=cost): modelled time {total} with it on cpu:0, "
            "1.417 ms on cuda:1, the best alternative"
        )
        for r in remarks
    )


def test_explain_says_a_tie_is_a_tie_and_which_rule_broke_it() -> None:
    _, remarks = _cost_remarks()
    costed = [r for r in remarks if "the cost model" in r]
    assert costed
    for remark in costed:
        here, there = re.findall(r"(\d+\.\d+ (?:ms|us|s)) (?:with it )?on", remark)[:2]
        assert (here == there) == ("a tie:" in remark), remark
    # %w1 costs the same on either side (a copy from the host either way); it moved with
    # the layer that uses it. %w2 ties too and stays where the default strategy puts it.
    assert any(
        r.endswith(
            "argument 1 of @main is on cuda:1/global: decided by the cost model (strategy=cost):"
            " modelled time 1.345 ms with it on cuda:1, 1.345 ms on cpu:0, the best alternative;"
            " a tie: alpha-expansion moved it to cuda:1 together with other classes, in one move"
            " that lowered the modelled time"
        )
        for r in remarks
    )
    assert any(
        "argument 3 of @main is on cuda:1/global" in r
        and r.endswith("so it stays where the default strategy puts it")
        for r in remarks
    )


def test_explain_credits_hard_constraints_not_the_cost_model() -> None:
    _, remarks = _cost_remarks()
    assert any(
        r.endswith(
            "remark: argument 0 of @main is on cpu:0/global: decided by the vdev.device "
            "attribute of argument 0 of @main at line 15 (target and scope by default)"
        )
        for r in remarks
    )
    assert any(
        r.endswith(
            "remark: 'linalg.matmul' (%m2) is on cuda:1/global: decided by the 'vdev.on_device'"
            " hint at line 32"
        )
        for r in remarks
    )
    assert not any("remark: argument 0 of" in r and "cost model" in r for r in remarks)


def test_the_executor_reports_the_time_the_planner_modelled_for_both_strategies() -> None:
    from devplan.passes.default_pipeline import DEFAULT_PIPELINE
    from devplan.runtime.executor import random_inputs

    outputs: list[np.ndarray] = []
    for strategy in ("default", "cost"):
        module = devplan.parse(EXAMPLE)
        devplan.apply(module, f"plan-devices{{strategy={strategy}}}")
        modelled = planned_seconds(module)
        for name in DEFAULT_PIPELINE[1:]:
            devplan.apply(module, name)
        result = devplan.execute(
            module, random_inputs(module, "main", seed=0), kernel_backend="numpy"
        )
        assert result.report.model_seconds == pytest.approx(modelled, rel=1e-9)
        outputs.append(result.outputs[0])
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-4)


def test_explain_says_when_a_dynamic_size_keeps_a_value_off_the_cost_model() -> None:
    text = (
        'builtin.module attributes {vdev.default_device = #vdev.device<"cpu", 0>} {\n'
        "  func.func @main(%x: tensor<?xf32>, %y: tensor<4xf32>) -> (tensor<?xf32>, "
        "tensor<4xf32>) {\n"
        "    %a = arith.addf %x, %x : tensor<?xf32>\n"
        "    %b = arith.mulf %y, %y : tensor<4xf32>\n"
        "    func.return %a, %b : tensor<?xf32>, tensor<4xf32>\n  }\n}\n"
    )
    remarks: list[str] = []
    devplan.apply(devplan.parse(text), "plan-devices{strategy=cost explain=true}", remarks=remarks)
    lines = [r.splitlines()[0] for r in remarks]
    assert (
        "<string>:3:5: remark: 'arith.addf' (%a) is on cpu:0/global: strategy=cost leaves it "
        "where the default strategy puts it, as a size it depends on is dynamic "
        "(dynamic-size=N would assume N)"
    ) in lines
    assert any(
        line.startswith(
            "<string>:4:5: remark: 'arith.mulf' (%b) is on cpu:0/global: decided by the cost "
            "model (strategy=cost): modelled time "
        )
        for line in lines
    )


CONV = """
func.func @conv(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>)
    -> tensor<1x64x54x54xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x54x54xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x54x54xf32>)
         -> tensor<1x64x54x54xf32>
  %c = linalg.conv_2d_nchw_fchw
         {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>)
         outs(%o : tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  func.return %c : tensor<1x64x54x54xf32>
}"""


def test_a_convolution_costs_its_flops_and_goes_to_a_gpu() -> None:
    from devplan.analysis.op_work import op_work
    from devplan.system.cost import WORK_ATTR

    planned: dict[str, ModuleOp] = {}
    for strategy in ("default", "cost"):
        planned[strategy] = devplan.parse(CONV)
        devplan.apply(planned[strategy], f"plan-devices{{strategy={strategy}}}")
    conv = next(op for op in planned["cost"].walk() if op.name == "linalg.conv_2d_nchw_fchw")
    assert str(conv.attributes["vdev.device"]).startswith('#vdev.device<"cuda"')
    # 0.215 GFLOP on the host's modelled CPU takes milliseconds; on the GPU, with the
    # copies there and back, a tenth of that.
    assert planned_seconds(planned["cost"]) < 0.1 * planned_seconds(planned["default"])
    # The launch lower-to-device makes is charged the same work.
    work = op_work(conv)
    assert work is not None
    assert work.flops == 2 * 64 * 54 * 54 * 64 * 9
    devplan.apply(planned["cost"], "lower-to-device")
    charged = [
        tuple(op.attributes[WORK_ATTR].get_values())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        for op in planned["cost"].walk()
        if op.name == "device.launch" and WORK_ATTR in op.attributes
    ]
    assert (work.flops, work.nbytes) in charged
