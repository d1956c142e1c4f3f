"""`plan-devices`: place every tensor value of a level-1 program (TVM's PlanDevices).

A level-1 program with a few placement hints comes out *planned* (the
placement contract): every op with a tensor result carries `vdev.device` (one fully
constrained `#vdev.device`, or an array with one per result for `scf.if`, `scf.for`,
`func.call` and other multi-result ops), every tensor argument and result of every
function carries the `vdev.device` argument/result attribute (a scalar argument the host
device's: scalars live there), no `vdev.on_device`
remains, and a `vdev.device_copy` sits right after a value's definition (at the start
of the block for a block argument) for each other device the value is used on.

Algorithm
=========

Domains. A *domain* is a node of a union-find (`analysis/placement_domains.py`) whose
root holds a partial `#vdev.device` (the join of every constraint on the class) and the
*origin* of its first constraint (the op and the words that name it, for diagnostics
and remarks).
Every function argument and result has a domain; every op with tensor results has
one domain for all its results (its *execution domain*), except `scf.if`, `scf.for`
and `func.call`, which have one per result; the body block argument i+1 of `scf.for`
is its result i's domain. Scalars (`index`, `i1`, `f32`, ...) have none: they live on
the host device.

Phase 1 — hard constraints, function by function in the order of their names (so the
result does not depend on the order of functions in the module), ops in program order:
  * `vdev.on_device %x to D`: `%x`'s domain joins D (unless `{constrain_body = false}`);
    the result has its own domain, which joins D with `{constrain_result}` — or when the
    result is returned directly by `func.return` (TVM's phase 0). Otherwise the result
    is free: it goes where its users run, and a copy follows if that is not D.
  * `vdev.device_copy %x from S to D`: `%x`'s domain joins S, the result's joins D.
  * `vdev.device` argument and result attributes of functions; `vdev.device` already
    on an op (a planned module plans to itself).
  * `vdev.on_device` or `vdev.device_copy` of a scalar is an error: scalars live on
    the host device, and a placement that cannot hold is not dropped silently.
  Two constraints that do not join are an error at the later one with a note at the
  earlier one. A scalar argument whose `vdev.device` does not join the host device is
  an error at its function.

  * the shape operand of `tensor.reshape` is a use on the host device (a soft edge to a
    domain pinned there: shapes are computed on the host, as in TVM).
  * so is the operand of a `tensor.cast` to an unranked tensor: unranked values are what
    MLIR's runner printers read, on the host.

Phase 2 — calls. Each `func.call` operand i is unified with the callee's argument i,
each result j with the callee's result j (hard: a call never copies its own operands).
Calls are visited in the order of phase 1, so the first call of a function
(by caller name, then program order) gives it its context. When a later call's context
conflicts with what the callee's domain already holds and that comes from another call
site (not from the callee, nor from a function it reaches), the callee is
*specialised*: cloned for this context, named after the original and the context's
devices (`@sq` -> `@sq_cuda0`, `@add` -> `@add_cuda0_cuda1`; a clone of a clone is
named from the original), the call redirected, and planning restarts on the changed
module. A call's *context* is, per tensor argument and result, the device the caller's
side holds before the call is unified (`?` where that side is open or already one class
with the callee's, i.e. follows the callee), all sides, not only the clashing ones. A
later round meeting the same (original function, context) reuses the clone, unless
the call already calls that clone and still conflicts with it (an earlier call gave the
clone another context): then it gets a new clone. So every conflicting call moves to
another function each round; the rounds are bounded by the number of calls, after
which a conflict is reported as with `specialize=false`. A recursive callee is never
cloned. The original keeps the context of its first call, so it is still called and
stays.
With `specialize=false`, or when the callee pins the placement itself, the conflict is
an error at the call with a note at the callee's constraint.

Phase 3 — dataflow. First, unification by majority: an op whose class is still open
joins the device most of its placed neighbours' bytes are on, counting each distinct
tensor operand placed somewhere once (dense constants aside) and, per result, each
distinct device it is used on once (one copy a value and device); a worklist revisits
the open neighbours of each op it places, so an open chain follows its pinned end. A tie
leaves the op to the edges below. So an op between a CPU operand and a GPU operand whose
result is pinned to the GPU runs on the GPU: one copy, as TVM's unification gives.
Then the edges, in program order, where a region op's own operands count as used
after its regions (a loop's init values after its body). Each tensor operand of an op
is unified with the op's execution domain; a `func.return` operand with the function's
result, a `scf.yield` operand with its `scf.if` / `scf.for` result, a `scf.for` init
value with its result. These edges are soft: when the two sides are already placed
differently the edge is not unified and becomes a copy. So a free value consumed on
several devices lives where its first consumer in program order runs and is copied to
the others; a hinted operand decides where an unhinted op runs (when the bytes around
it tie, the first operand whose domain is placed wins, TVM's "conflicted inputs"). Dense tensor
constants take part in no soft edge: they are materialised on each consuming device.
Last, the result of each `on_device` that does not constrain its body (`{constrain_body
= false}`) is unified with its operand when their devices join, so that defaulting
does not create a copy there (TVM's FreeOnDeviceDefaulter). Then a slice runs where its
source lives: a `tensor.extract_slice` these rules put on another device than its source
(its result pinned or used there) moves to its source's domain, so the copy that follows
moves only the slice's bytes, not the whole source (one written `vdev.device` on the
slice, or a dense-constant source, keeps it where it is).

Phase 4 — defaulting, per class and independent of any order: a class's device is
`default(class, vdev.default_device)` (then the host device for a type still open), its
id 0 when still open, its target the module's `vdev.targets` entry for its type, else
the system description's device (`vdev.system`, else the default system), else the
registered target kind named like the type; its memory scope `global`.

Phase 5 — rewrite, one walk consulting the facts above: `vdev.device` on ops and
arguments/results; for each use whose expected device differs from where its value
lives, the value's copy to that device (made once per (value, destination), right after
the definition), or for a dense constant its clone on that device (once per device;
the original moves to its first consumer's device when nothing pins it);
`vdev.device_copy` endpoints completed; every `vdev.on_device` removed (its uses use its
operand). A `tensor.extract` of a value on a device reads a host scalar: the one element
it reads is sliced there (`tensor.extract_slice` of 1 x ... x 1, a rank-0 value whole)
and that is copied to the host, where the extract reads it (TVM copies a scalar to the
host; the copy is planned, so the report counts its bytes and explain names it).
With `explain=true`, each function argument, each op that yields tensors
(per result for `scf.if`, `scf.for` and `func.call`; dense constants and their clones
included) and each inserted copy gets a remark naming what decided its device: the
constraint nearest to it over the edges that merged its class (a hint, an argument or
result attribute, a `device_copy` endpoint, a `vdev.device` already written, the cost
model with the modelled time on its device and on the best other one), and the first
of those edges (a dataflow operand, a return, a yield or loop init value, a call);
or, when no constraint reaches it, the default device. The nearest constraint, not the
class's first: a class merged from two halves that agree has two explanations.

Invariants: the union-find is iterative (no recursion: a 10,000-op chain plans) and
every phase is linear in the number of ops and uses (near-linear: union-find); the
result depends only on the IR and the function names, not on dictionary order nor on
the order of functions; op order matters only through the rules that name it (a free
value's first consumer, an op's first placed operand, a function's first call); a
planned module plans to itself (idempotent); hints are consumed.

Not handled: `scf.while` and other region ops with tensor block arguments (their block
arguments are free values; no loop-carried placement); ops with tensor operands but no
tensor result (`tensor.dim`, `tensor.extract`) are not placed: their results are host
scalars and `tensor.dim` reads only the shape of its operand where it lives; indirect calls;
a conflict that arises only through phase 3 (a value
placed by dataflow, then passed to a callee placed elsewhere) is resolved with copies
at the dataflow edges, not by specialisation.

Strategy `cost` (`strategy=cost`, `cost_strategy.py`) runs between phase 2 and
phase 3: it places every class no hard constraint touches where the program's modelled
time is least, then phases 3-5 run as above. `strategy=default` is TVM's behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp
from xdsl.passes import ModulePass

from ...diagnostics import emit_remark
from .planner import Planner
from .rewrite import rewrite
from .specialisation import NeedsSpecialisation, Specialiser


@dataclass(frozen=True)
class PlanDevicesPass(ModulePass):
    """Places every tensor value, argument and result of a level-1 program.

    Hints (`vdev.on_device`) are consumed; the result carries `vdev.device` on every op
    with a tensor result and on every tensor argument/result, and a `vdev.device_copy`
    right after a value's definition for each other device it is used on. Planning a
    planned module changes nothing. `specialize=false` reports a function called from
    incompatible device contexts instead of cloning it; `explain=true` prints a remark
    for each function argument, each op that yields tensors and each inserted copy
    saying what decided its device. See the module docstring for the algorithm.
    """

    name = "plan-devices"

    strategy: str = "default"
    """`default` (TVM's: free values go to vdev.default_device) or `cost` (cost_strategy.py)."""
    specialize: bool = True
    explain: bool = False
    dynamic_size: int | None = None
    """With `strategy=cost`: the size assumed for every dynamic dimension; without it,
    classes touching dynamic shapes are placed as the default strategy places them."""

    def __post_init__(self) -> None:
        # Bad options are errors of the pipeline, said before any IR is read (raised
        # from `apply`, they would be placed at the module as if its IR were wrong).
        if self.strategy not in ("default", "cost"):
            raise ValueError(f"unknown strategy '{self.strategy}' (valid: default, cost)")
        if self.dynamic_size is not None and self.dynamic_size < 1:
            raise ValueError(f"dynamic-size must be 1 or more, got {self.dynamic_size}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        calls = sum(1 for inner in op.walk() if isinstance(inner, CallOp))
        specialiser = Specialiser()
        for round_index in range(calls + 1):
            planner = Planner(op, self.specialize and round_index < calls, self.explain)
            planner.collect()
            try:
                planner.unify_calls()
            except NeedsSpecialisation as e:
                specialiser.apply(op, e.pending)
                continue
            remarks: list[str] = []
            if self.strategy == "cost":
                # Here, not at the top: the cost model's min cut is built only when asked.
                from .cost_strategy import CostPlacement

                placement = CostPlacement(planner, self.dynamic_size, self.explain)
                placement.place()
                remarks += placement.remarks
            planner.flow()
            planner.keep_slices_with_sources()
            remarks += rewrite(planner)
            for remark in remarks:
                emit_remark(remark)
            break
