"""`classify-regions`: which functions are device programs (the Target RFC's rule).

The pass marks every `func.func` with `device.region` = `"host" | "device" | "mixed" |
"multi-device"` and each device program with `device.target`, its device's target with
the module's host target as its host.

Algorithm
=========

Phases 1-3 — footprints, summaries, classes and targets: `RegionAnalysis`
(`analysis/region_footprint.py`, whose header gives the rules).

Phase 4 — rewrite: set the attributes (stale `device.target` is removed from
functions that are not device programs). With `explain=true`, for each function
that is not a device program, a remark is emitted at the first op whose prefix
of the body already has the function's final class ("decides" it), with its reason;
a host function gets its remark at the function itself (nothing decides "host").

The analysis does not change IR; the rewrite changes only the two attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..analysis.region_footprint import RegionAnalysis
from ..diagnostics import diagnostic_at, emit_remark

REGION_ATTR = "device.region"
"""Function attribute holding the class (`"host"`, `"device"`, `"mixed"`, `"multi-device"`)."""

TARGET_ATTR = "device.target"
"""Function attribute holding a device program's target."""


def explain(analysis: RegionAnalysis, function: func.FuncOp) -> str:
    """The remark for a function that is not a device program."""
    name = function.sym_name.data
    cls = analysis.region_class(function)
    step = analysis.deciding_step(function)
    if function.is_declaration:
        return diagnostic_at(
            function,
            f"@{name} is host: it is a declaration, so calls to it count as host work",
            kind="remark",
        )
    if step is None:
        summary = analysis.summary(function)
        why = "it does no device work"
        if summary.host_memory:
            why += " (it works on host memory only)"
        return diagnostic_at(function, f"@{name} is host: {why}", kind="remark")
    return diagnostic_at(step.op, f"@{name} is {cls}: {step.reason}", kind="remark")


@dataclass(frozen=True)
class ClassifyRegionsPass(ModulePass):
    """Marks every function `device.region = "host" | "device" | "mixed" | "multi-device"`.

    Device programs also get `device.target` (their single target, with the host's
    target as its host): `func.func @f() attributes {device.region = "device",
    device.target = #target.target<"cuda", host = #target.target<"llvm">>}`.
    `explain=true` prints, for each other function, a remark at the op that decided
    its class. See the module docstring for the rules.
    """

    name = "classify-regions"

    explain: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        analysis = RegionAnalysis(op)
        targets = {
            name: analysis.target_of(f)
            for name, f in analysis.functions.items()
            if analysis.region_class(f) == "device"
        }
        remarks = [
            explain(analysis, f)
            for name, f in analysis.functions.items()
            if self.explain and name not in targets
        ]
        for name, function in analysis.functions.items():
            function.attributes[REGION_ATTR] = StringAttr(analysis.region_class(function))
            if name in targets:
                function.attributes[TARGET_ATTR] = targets[name]
            else:
                function.attributes.pop(TARGET_ATTR, None)
        for remark in remarks:
            emit_remark(remark)
