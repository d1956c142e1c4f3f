"""`plan-devices`: place every tensor value of a level-1 program (TVM's PlanDevices).

A level-1 program with a few placement hints comes out *planned* (DESIGN §4 and the
placement contract): every op with a tensor result carries `vdev.device` (one fully
constrained `#vdev.device`, or an array with one per result for `scf.if`, `scf.for`,
`func.call` and other multi-result ops), every tensor argument and result of every
function carries the `vdev.device` argument/result attribute, no `vdev.on_device`
remains, and a `vdev.device_copy` sits right after a value's definition (at the start
of the block for a block argument) for each other device the value is used on.

Algorithm
=========

Domains. A *domain* is a node of a union-find whose root holds a partial
`#vdev.device` (the join of every constraint on the class) and the *origin* of its
first constraint (the op and the words that name it, for diagnostics and remarks).
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
  earlier one.

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

Phase 3 — dataflow, in program order, where a region op's own operands count as used
after its regions (a loop's init values after its body). Each tensor operand of an op
is unified with the op's execution domain; a `func.return` operand with the function's
result, a `scf.yield` operand with its `scf.if` / `scf.for` result, a `scf.for` init
value with its result. These edges are soft: when the two sides are already placed
differently the edge is not unified and becomes a copy. So a free value consumed on
several devices lives where its first consumer in program order runs and is copied to
the others; a hinted operand decides where an unhinted op runs (the first operand whose
domain is placed wins when two disagree, TVM's "conflicted inputs"). Dense tensor
constants take part in no soft edge: they are materialised on each consuming device.
Last, the result of each `on_device` that does not constrain its body (`{constrain_body
= false}`) is unified with its operand when their devices join, so that defaulting
does not create a copy there (TVM's FreeOnDeviceDefaulter).

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
operand). With `explain=true`, each inserted copy and each function argument gets a
remark saying which constraint decided the placement.

Invariants: the union-find is iterative (no recursion: a 10,000-op chain plans) and
every phase is linear in the number of ops and uses (near-linear: union-find); the
result depends only on the IR and the function names, not on dictionary order nor on
the order of functions; op order matters only through the rules that name it (a free
value's first consumer, an op's first placed operand, a function's first call); a
planned module plans to itself (idempotent); hints are consumed.

Not handled: `scf.while` and other region ops with tensor block arguments (their block
arguments are free values; no loop-carried placement); ops with tensor operands but no
tensor result (`tensor.dim`, `tensor.extract`) are not placed and use their operands
where they live; indirect calls; a conflict that arises only through phase 3 (a value
placed by dataflow, then passed to a callee placed elsewhere) is resolved with copies
at the dataflow edges, not by specialisation.

Strategy `cost` (`strategy=cost`, module `plan_cost.py`) runs between phase 2 and
phase 3: it places every class no hard constraint touches where the program's modelled
time is least, then phases 3-5 run as above. `strategy=default` is TVM's behaviour.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from ...diagnostics import diagnostic_at, error_at, location_of
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.placement import default_device, host_device, module_targets
from ...dialects.target import Target, TargetAttr
from ...dialects.target_kinds import TargetError
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from ...dialects.virtual_device import UNCONSTRAINED, DeviceAttr, default, ir_text, join

# --- domains (union-find) ------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where a constraint comes from: the op to point at and the words that name it."""

    op: Operation
    what: str


class Domains:
    """Union-find over placement domains; a root holds its class's device and origin."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.device: list[DeviceAttr] = []
        self.origin: list[Origin | None] = []

    def fresh(self) -> int:
        self.parent.append(len(self.parent))
        self.device.append(UNCONSTRAINED)
        self.origin.append(None)
        return len(self.parent) - 1

    def find(self, node: int) -> int:
        parent = self.parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def constrain(self, node: int, device: DeviceAttr, origin: Origin) -> int | None:
        """Join `device` into `node`'s class; the root in conflict, or None."""
        root = self.find(node)
        current = self.device[root]
        unchanged = current is UNCONSTRAINED or current == device
        joined = device if unchanged else join(current, device)
        if joined is None:
            return root
        self.device[root] = joined
        if self.origin[root] is None:
            self.origin[root] = origin
        return None

    def joinable(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        da, db = self.device[ra], self.device[rb]
        return ra == rb or da is UNCONSTRAINED or db is UNCONSTRAINED or join(da, db) is not None

    def union(self, a: int, b: int) -> bool:
        """Merge the classes of `a` and `b` when their devices join; False otherwise."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        da, db = self.device[ra], self.device[rb]
        if da is UNCONSTRAINED or da is db:
            joined = db
        elif db is UNCONSTRAINED:
            joined = da
        else:
            joined = da if da == db else join(da, db)
        if joined is None:
            return False
        # The constrained side stays the root, so its origin stays the explanation.
        if self.origin[ra] is None and self.origin[rb] is not None:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.device[ra] = joined
        return True

    def placed(self, node: int) -> bool:
        return not self.device[self.find(node)].is_fully_unconstrained


# --- helpers ---------------------------------------------------------------------------


def _not_a_tensor(op: OnDeviceOp | DeviceCopyOp) -> Exception:
    """Placement of a scalar, which plan-devices does not place: an error, not ignored."""
    return error_at(
        op,
        f"'{op.name}' of {ir_text(op.input.type)}: plan-devices places tensors; scalars "
        "live on the host device (place the tensor op that uses the scalar instead)",
    )


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def _is_dense_constant(op: Operation) -> bool:
    return (
        op.name == "arith.constant"
        and len(op.results) == 1
        and _is_tensor(op.results[0])
        and isinstance(op.get_attr_or_prop("value"), DenseIntOrFPElementsAttr)
    )


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "the value"


def _function_of(op: Operation) -> FuncOp | None:
    current: Operation | None = op
    while current is not None and not isinstance(current, FuncOp):
        current = current.parent_op()
    return current


def _short(device: DeviceAttr) -> str:
    """`cuda:0/global`-style text for messages."""
    return device.to_string()


def _line(op: Operation) -> str:
    loc = location_of(op)
    return f"line {loc.line.data}" if loc is not None else "an unknown place"


def _suffix(device: DeviceAttr) -> str:
    """The name part of a specialisation for `device`: `cuda0`, `cpu0_texture`."""
    text = (device.type_name or "any") + (
        str(device.device_id) if device.device_id is not None else ""
    )
    if device.scope is not None and device.scope != DEFAULT_SCOPE:
        text += "_" + device.scope.replace(".", "_").replace("-", "_")
    return text


def _walk_with_exits(block_ops: Sequence[Operation]) -> Iterator[tuple[Operation, bool]]:
    """Ops in program order as (op, False); a region op is followed, after its nested
    ops, by (op, True). Ops without regions come once, as (op, True)."""
    stack: list[tuple[Operation, bool]] = [(op, False) for op in reversed(block_ops)]
    while stack:
        op, leaving = stack.pop()
        if leaving or not op.regions:
            yield op, True
            continue
        yield op, False
        stack.append((op, True))
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend((inner, False) for inner in reversed(list(block.ops)))


@dataclass(slots=True)
class _Use:
    """A tensor operand and the domain it is expected on."""

    op: Operation
    index: int
    value: SSAValue
    """The operand as written (before the rewrite replaces it)."""
    target: int
    soft: bool


@dataclass
class _Pending:
    """A call whose context conflicts with its callee's: specialise the callee for it."""

    call: CallOp
    callee: FuncOp
    context: tuple[str, ...]
    """What the call places on each tensor argument and result, independently of the
    callee (`?` where it follows the callee): the key of the clone that serves it."""
    suffix: str


class _NeedsSpecialisation(Exception):
    def __init__(self, pending: list[_Pending]):
        self.pending = pending


# --- the planner -------------------------------------------------------------------------


class Planner:
    """One planning round over a module (phases 1-5 of the module docstring)."""

    def __init__(self, module: ModuleOp, specialize: bool, explain: bool):
        self.module = module
        self.specialize = specialize
        self.explain = explain
        self.domains = Domains()
        self.functions: dict[str, FuncOp] = {
            f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)
        }
        self.value_node: dict[SSAValue, int] = {}
        self.op_node: dict[Operation, int] = {}
        """Execution domain of ops whose results share one device."""
        self.result_nodes: dict[Operation, list[int | None]] = {}
        """Per-result domains of `scf.if`, `scf.for` and `func.call`."""
        self.arg_nodes: dict[FuncOp, list[int | None]] = {}
        self.res_nodes: dict[FuncOp, list[int | None]] = {}
        self.uses: list[_Use] = []
        self.calls: list[tuple[CallOp, FuncOp]] = []
        self.free_on_devices: list[OnDeviceOp] = []
        self.on_devices: list[OnDeviceOp] = []
        self.constants: list[Operation] = []
        self.copies: list[DeviceCopyOp] = []
        self._final: dict[DeviceAttr, DeviceAttr] = {}
        self._root_final: dict[int, DeviceAttr] = {}
        self._reached: dict[FuncOp, set[FuncOp]] = {}
        self._default = default_device(module)
        self._host = host_device(module)
        self._targets = module_targets(module)
        self._system_targets: dict[tuple[str, int], TargetAttr] | None = None

    # -- phase 1 ---------------------------------------------------------------------

    def node(self, value: SSAValue) -> int:
        node = self.value_node.get(value)
        if node is None:
            node = self.value_node[value] = self.domains.fresh()
        return node

    def pin(self, node: int, device: DeviceAttr, origin: Origin, subject: str) -> None:
        conflict = self.domains.constrain(node, device, origin)
        if conflict is None:
            return
        held = self.domains.device[conflict]
        earlier = self.domains.origin[conflict]
        message = (
            f"conflicting placement: {origin.what} places {subject} on {ir_text(device)}, "
            f"but it is already placed on {ir_text(held)}"
        )
        notes = [(earlier.op, f"{earlier.what} places it on {ir_text(held)}")] if earlier else []
        raise error_at(origin.op, message, notes)

    def collect(self) -> None:
        for name in sorted(self.functions):
            self._signature(self.functions[name])
        for name in sorted(self.functions):
            function = self.functions[name]
            if function.body.blocks:
                self._body(function)

    def _signature(self, function: FuncOp) -> None:
        name = function.sym_name.data
        args: list[int | None] = []
        for index, arg_type in enumerate(function.function_type.inputs.data):
            node = self.domains.fresh() if isinstance(arg_type, TensorType) else None
            args.append(node)
            device = _dict_device(function.arg_attrs, index)
            if node is not None and device is not None:
                what = f"the vdev.device attribute of argument {index} of @{name}"
                self.pin(node, device, Origin(function, what), f"argument {index}")
        results: list[int | None] = []
        for index, res_type in enumerate(function.function_type.outputs.data):
            node = self.domains.fresh() if isinstance(res_type, TensorType) else None
            results.append(node)
            device = _dict_device(function.res_attrs, index)
            if node is not None and device is not None:
                what = f"the vdev.device attribute of result {index} of @{name}"
                self.pin(node, device, Origin(function, what), f"result {index}")
        self.arg_nodes[function] = args
        self.res_nodes[function] = results
        if function.body.blocks:
            for arg, node in zip(function.body.blocks[0].args, args, strict=False):
                if node is not None:
                    self.value_node[arg] = node

    def _body(self, function: FuncOp) -> None:
        for op, leaving in _walk_with_exits(list(function.body.blocks[0].ops)):
            if not leaving:
                self._enter_region_op(op)
            else:
                self._visit(op, function)

    def _written(self, op: Operation) -> list[DeviceAttr | None]:
        """The `vdev.device` an op already carries, per result (a planned module)."""
        placed = op.attributes.get(DEVICE_ATTR)
        if isinstance(placed, DeviceAttr):
            return [placed] * len(op.results)
        if isinstance(placed, ArrayAttr):
            items = cast(ArrayAttr[Attribute], placed).data
            return [item if isinstance(item, DeviceAttr) else None for item in items]
        return [None] * len(op.results)

    def _per_result_nodes(self, op: Operation) -> list[int | None]:
        nodes: list[int | None] = []
        written = self._written(op)
        for index, result in enumerate(op.results):
            if not _is_tensor(result):
                nodes.append(None)
                continue
            node = self.node(result)
            nodes.append(node)
            if index < len(written) and (device := written[index]) is not None:
                what = f"the vdev.device attribute of '{op.name}'"
                self.pin(node, device, Origin(op, what), f"result {index}")
        self.result_nodes[op] = nodes
        return nodes

    def _enter_region_op(self, op: Operation) -> None:
        """Before a region op's body: its result domains (a loop body uses them)."""
        if op.name in ("scf.for", "scf.if"):
            nodes = self._per_result_nodes(op)
            if op.name == "scf.for" and op.regions[0].blocks:
                body_args = op.regions[0].blocks[0].args[1:]
                for arg, node in zip(body_args, nodes, strict=False):
                    if node is not None:
                        self.value_node[arg] = node
        elif any(_is_tensor(r) for r in op.results):
            self._execution_domain(op)

    def _execution_domain(self, op: Operation) -> int:
        node = self.op_node.get(op)
        if node is not None:
            return node
        node = self.domains.fresh()
        self.op_node[op] = node
        for result in op.results:
            if _is_tensor(result):
                self.value_node[result] = node
        if DEVICE_ATTR not in op.attributes:
            return node
        for index, device in enumerate(self._written(op)):
            if device is not None and _is_tensor(op.results[index]):
                what = f"the vdev.device attribute of '{op.name}'"
                self.pin(node, device, Origin(op, what), "its results")
        return node

    def _soft(self, op: Operation, index: int, target: int | None) -> None:
        value = op.operands[index]
        if target is not None and isinstance(value.type, TensorType):
            self.uses.append(_Use(op, index, value, target, True))

    def _visit(self, op: Operation, function: FuncOp) -> None:
        name = op.name
        if name == "vdev.on_device":
            self._on_device(cast(OnDeviceOp, op))
        elif name == "vdev.device_copy":
            self._device_copy(cast(DeviceCopyOp, op))
        elif name == "func.call":
            self._call(cast(CallOp, op))
        elif name == "func.return":
            self._soft_all(op, self.res_nodes[function], 0)
        elif name == "scf.yield":
            parent = op.parent_op()
            if parent is not None and parent.name in ("scf.for", "scf.if"):
                self._soft_all(op, self.result_nodes.get(parent, []), 0)
        elif name == "scf.for":
            self._soft_all(op, self.result_nodes[op], 3)  # after lower bound, upper, step
        elif name != "scf.if" and any(isinstance(r.type, TensorType) for r in op.results):
            # (scf.if's only operand is its i1 condition, on the host.)
            node = self._execution_domain(op)
            if _is_dense_constant(op):
                self.constants.append(op)
            self._soft_all(op, [node] * len(op.operands), 0)

    def _soft_all(self, op: Operation, targets: Sequence[int | None], first: int) -> None:
        """Soft edges from operands `first`, `first + 1`, ... to `targets`."""
        for index, target in enumerate(targets, first):
            if index < len(op.operands):
                self._soft(op, index, target)

    def _on_device(self, op: OnDeviceOp) -> None:
        self.on_devices.append(op)
        x, y = op.input, op.result
        device = op.device
        if not _is_tensor(x):
            raise _not_a_tensor(op)
        what = f"the '{op.name}' hint"
        if op.constrain_body:
            self.pin(self.node(x), device, Origin(op, what), _name(x))
        returned = op.constrain_body and any(isinstance(u.operation, ReturnOp) for u in y.uses)
        if op.constrain_result or returned:
            self.pin(self.node(y), device, Origin(op, what), f"its result {_name(y)}")
        else:
            self.node(y)
        if not op.constrain_body:
            self.free_on_devices.append(op)

    def _device_copy(self, op: DeviceCopyOp) -> None:
        self.copies.append(op)
        if not _is_tensor(op.input):
            raise _not_a_tensor(op)
        x = self.node(op.input)
        self.pin(x, op.src_device, Origin(op, f"the 'from' device of '{op.name}'"), _name(op.input))
        self.pin(
            self.node(op.result),
            op.dst_device,
            Origin(op, f"the 'to' device of '{op.name}'"),
            f"its result {_name(op.result)}",
        )
        self.uses.append(_Use(op, 0, op.input, x, False))

    def _call(self, op: CallOp) -> None:
        callee = self.functions.get(op.callee.string_value())
        self._per_result_nodes(op)
        if callee is None:
            for index in range(len(op.operands)):
                value = op.operands[index]
                if _is_tensor(value):
                    self.uses.append(_Use(op, index, value, self.node(value), False))
            return
        self.calls.append((op, callee))
        args = self.arg_nodes[callee]
        for index, target in enumerate(args):
            if target is not None and index < len(op.operands):
                self.uses.append(_Use(op, index, op.operands[index], target, False))

    # -- phase 2 -----------------------------------------------------------------------

    def unify_calls(self) -> None:
        pending: list[_Pending] = []
        for call, callee in self.calls:
            edges: list[tuple[int, int, str]] = []
            for index, target in enumerate(self.arg_nodes[callee]):
                if target is not None and index < len(call.operands):
                    value = call.operands[index]
                    edges.append((self.node(value), target, f"argument {index}"))
            for index, target in enumerate(self.res_nodes[callee]):
                mine = self.result_nodes[call][index] if index < len(call.results) else None
                if target is not None and mine is not None:
                    edges.append((mine, target, f"result {index}"))
            context = [self._call_side(a, b) for a, b, _ in edges]
            clash = [(a, b, what) for a, b, what in edges if not self.domains.joinable(a, b)]
            if clash:
                pending.append(self._call_conflict(call, callee, clash, context))
                continue
            for a, b, what in edges:
                if not self.domains.union(a, b):
                    pending.append(self._call_conflict(call, callee, [(a, b, what)], context))
                    break
        if pending:
            raise _NeedsSpecialisation(pending)

    def _call_side(self, mine: int, theirs: int) -> DeviceAttr | None:
        """The device a call places on one side of a call edge by itself: None when
        that side is open or already one class with the callee's side (it follows the
        callee)."""
        domains = self.domains
        root = domains.find(mine)
        if root == domains.find(theirs) or not domains.placed(root):
            return None
        return domains.device[root]

    def _call_conflict(
        self,
        call: CallOp,
        callee: FuncOp,
        clash: list[tuple[int, int, str]],
        context: list[DeviceAttr | None],
    ) -> _Pending:
        domains = self.domains
        mine_node, theirs_node, what = clash[0]
        mine_root, theirs_root = domains.find(mine_node), domains.find(theirs_node)
        theirs = domains.origin[theirs_root]
        mine = domains.origin[mine_root]
        if self.specialize and theirs is not None and self._specialisable(callee, theirs):
            key = tuple("?" if d is None else ir_text(d) for d in context)
            suffix = "_".join(dict.fromkeys(_suffix(d) for d in context if d is not None))
            return _Pending(call, callee, key, suffix)
        name = callee.sym_name.data
        here = ir_text(domains.device[mine_root])
        there = ir_text(domains.device[theirs_root])
        why_here = f" (by {mine.what} at {_line(mine.op)})" if mine is not None else ""
        message = (
            f"conflicting placement: this call to @{name} places its {what} on {here}"
            f"{why_here}, but @{name}'s {what} is placed on {there}"
        )
        if theirs is not None and self._specialisable(callee, theirs):
            message += (
                f" by another call; plan-devices{{specialize=true}} would clone @{name} "
                "for this call"
            )
        notes = [(theirs.op, f"{theirs.what} places it on {there}")] if theirs else []
        raise error_at(call, message, notes)

    def _specialisable(self, callee: FuncOp, theirs: Origin) -> bool:
        """Whether the callee's conflicting placement comes from outside it (another call
        site) rather than from the callee or a function it reaches, and the callee is
        not recursive."""
        if not callee.body.blocks:
            return False
        source = _function_of(theirs.op)
        reached = self._reachable(callee)
        return (
            source is not None
            and source is not callee
            and source not in reached
            and (callee not in reached)
        )

    def _reachable(self, start: FuncOp) -> set[FuncOp]:
        """Functions called from `start`, transitively (not `start` unless recursive)."""
        known = self._reached.get(start)
        if known is not None:
            return known
        seen: set[FuncOp] = set()
        self._reached[start] = seen
        stack = [start]
        while stack:
            function = stack.pop()
            for op in function.walk():
                if isinstance(op, CallOp):
                    callee = self.functions.get(op.callee.string_value())
                    if callee is not None and callee not in seen:
                        seen.add(callee)
                        stack.append(callee)
        return seen

    # -- phase 3 -----------------------------------------------------------------------

    def flow(self) -> None:
        constants = set(self.constants)
        for use in self.uses:
            if not use.soft:
                continue
            value = use.value
            if isinstance(value, OpResult) and value.op in constants:
                continue  # a constant is made on each device that needs it
            self.domains.union(self.node(value), use.target)
        for op in self.free_on_devices:
            self.domains.union(self.node(op.result), self.node(op.input))

    # -- phase 4 -----------------------------------------------------------------------

    def reset_final(self) -> None:
        """Forget completed class devices (the union-find was changed under them)."""
        self._root_final.clear()

    def final(self, node: int) -> DeviceAttr:
        """The fully constrained device of `node`'s class (after phase 3)."""
        root = self.domains.find(node)
        done = self._root_final.get(root)
        if done is None:
            done = self._root_final[root] = self.complete(
                self.domains.device[root], self.domains.origin[root]
            )
        return done

    def complete(self, device: DeviceAttr, origin: Origin | None = None) -> DeviceAttr:
        done = self._final.get(device)
        if done is not None:
            return done
        filled = default(device, self._default)
        if filled.type_name is None:
            filled = default(filled, self._host)
        type_name = cast(str, filled.type_name)
        device_id = filled.device_id if filled.device_id is not None else 0
        target = filled.target_value or self._target_for(type_name, device_id, origin)
        scope = filled.scope if filled.scope is not None else DEFAULT_SCOPE
        done = self._final[device] = DeviceAttr.make(type_name, device_id, target, scope)
        return done

    def _target_for(self, type_name: str, device_id: int, origin: Origin | None) -> TargetAttr:
        target = self._targets.get(type_name)
        if target is not None:
            return target
        if self._system_targets is None:
            from ...system.description import System

            system = System.from_module(self.module) or System.default()
            self._system_targets = {}
            for spec in system.devices:
                self._system_targets.setdefault((spec.type, spec.id), spec.target)
                self._system_targets.setdefault((spec.type, -1), spec.target)
        target = self._system_targets.get((type_name, device_id)) or self._system_targets.get(
            (type_name, -1)
        )
        if target is not None:
            return target
        try:
            return Target.parse(type_name)
        except TargetError:
            pass
        message = (
            f"no target for device type '{type_name}': add one to the module's "
            "vdev.targets, describe the device in the system description (vdev.system), "
            "or write the target on the #vdev.device"
        )
        raise error_at(origin.op if origin is not None else self.module, message)

    # -- phase 5 -----------------------------------------------------------------------

    def rewrite(self) -> list[str]:
        """Phase 5; returns the remarks (with `explain`)."""
        remarks: list[str] = []
        self._set_function_attrs(remarks)
        self._set_op_attrs()
        for copy in self.copies:
            if _is_tensor(copy.input):
                copy.src_device = self.final(self.node(copy.input))
                copy.dst_device = self.final(self.node(copy.result))
        materialiser = _Materialiser(self, remarks)
        constants = set(self.constants)
        first_use: dict[Operation, int] = {}
        for use in self.uses:
            value = underlying(use.value)
            if isinstance(value, OpResult) and value.op in constants:
                first_use.setdefault(value.op, use.target)
        for op in self.constants:
            materialiser.place_constant(op, first_use.get(op))
        for use in self.uses:
            materialiser.serve(use, constants)
        for op in reversed(self.on_devices):
            op.result.replace_all_uses_with(op.input)
            op.detach()
            op.erase()
        for op in constants:
            if not op.results[0].uses and materialiser.moved_away(op):
                op.detach()
                op.erase()
        return remarks

    def _set_op_attrs(self) -> None:
        host = self.complete(self._host)
        for op, node in self.op_node.items():
            device = self.final(node)
            if len(op.results) == 1:
                op.attributes[DEVICE_ATTR] = device
            else:
                op.attributes[DEVICE_ATTR] = ArrayAttr(
                    [device if _is_tensor(r) else host for r in op.results]
                )
        for op, nodes in self.result_nodes.items():
            if any(n is not None for n in nodes):
                op.attributes[DEVICE_ATTR] = ArrayAttr(
                    [self.final(n) if n is not None else host for n in nodes]
                )

    def _set_function_attrs(self, remarks: list[str]) -> None:
        for name in sorted(self.functions):
            function = self.functions[name]
            args = self.arg_nodes[function]
            results = self.res_nodes[function]
            if any(n is not None for n in args):
                function.arg_attrs = _with_devices(
                    function.arg_attrs, [self.final(n) if n is not None else None for n in args]
                )
            if any(n is not None for n in results):
                function.res_attrs = _with_devices(
                    function.res_attrs,
                    [self.final(n) if n is not None else None for n in results],
                )
            if self.explain:
                for index, node in enumerate(args):
                    if node is not None:
                        why = self.why(node)
                        remarks.append(
                            diagnostic_at(
                                function,
                                f"argument {index} of @{name} is on "
                                f"{_short(self.final(node))}: {why}",
                                kind="remark",
                            )
                        )

    def why(self, node: int) -> str:
        """Which constraint decided the placement of `node`'s class, in words."""
        root = self.domains.find(node)
        origin = self.domains.origin[root]
        device = self.domains.device[root]
        if origin is None:
            return "nothing constrains it, so it goes to vdev.default_device"
        text = f"decided by {origin.what} at {_line(origin.op)}"
        open_fields = [
            field
            for field, value in (
                ("id", device.device_id),
                ("target", device.target_value),
                ("scope", device.scope),
            )
            if value is None
        ]
        if open_fields:
            text += f" ({_and(open_fields)} by default)"
        return text


def _and(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def underlying(value: SSAValue) -> SSAValue:
    """The value an `on_device` result stands for (hints are removed)."""
    while isinstance(value, OpResult) and isinstance(value.op, OnDeviceOp):
        value = value.op.input
    return value


def _dict_device(attrs: ArrayAttr[DictionaryAttr] | None, index: int) -> DeviceAttr | None:
    if attrs is None or index >= len(attrs.data):
        return None
    device = attrs.data[index].data.get(DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else None


def _with_devices(
    attrs: ArrayAttr[DictionaryAttr] | None, devices: list[DeviceAttr | None]
) -> ArrayAttr[DictionaryAttr]:
    entries: list[DictionaryAttr] = []
    for index, device in enumerate(devices):
        data: dict[str, Attribute] = {}
        if attrs is not None and index < len(attrs.data):
            data.update(attrs.data[index].data)
        if device is not None:
            data[DEVICE_ATTR] = device
        entries.append(DictionaryAttr(data))
    return ArrayAttr(entries)


class _Materialiser:
    """Inserts copies and constant clones, once per (value, device)."""

    def __init__(self, planner: Planner, remarks: list[str]):
        self.planner = planner
        self.remarks = remarks
        self.made: dict[tuple[SSAValue, DeviceAttr], SSAValue] = {}
        self.anchor: dict[Operation | Block, Operation] = {}
        self.home: dict[Operation, DeviceAttr] = {}

    def _insert(self, value: SSAValue, new: Operation) -> None:
        if isinstance(value, BlockArgument):
            block = value.block
            anchor = self.anchor.get(block)
            if anchor is None:
                first = block.first_op
                if first is None:
                    block.add_op(new)
                else:
                    block.insert_op_before(new, first)
            else:
                block.insert_op_after(new, anchor)
            self.anchor[block] = new
            return
        owner = cast(OpResult, value).op
        anchor = self.anchor.get(owner, owner)
        block = anchor.parent_block()
        assert block is not None
        block.insert_op_after(new, anchor)
        self.anchor[owner] = new

    def copy(self, value: SSAValue, have: DeviceAttr, expected: DeviceAttr, use: _Use) -> SSAValue:
        key = (value, expected)
        made = self.made.get(key)
        if made is not None:
            return made
        copy = DeviceCopyOp(value, have, expected)
        self._insert(value, copy)
        made = self.made[key] = copy.result
        if self.planner.explain:
            planner = self.planner
            self.remarks.append(
                diagnostic_at(
                    use.op,
                    f"copy of {_name(value)} from {_short(have)} to {_short(expected)} for "
                    f"'{use.op.name}': {_name(value)} is on {_short(have)}, "
                    f"{planner.why(planner.node(value))}; this use is on {_short(expected)}, "
                    f"{planner.why(use.target)}",
                    kind="remark",
                )
            )
        return made

    def serve(self, use: _Use, constants: set[Operation]) -> None:
        """Make `use` read its value on the device it expects."""
        planner = self.planner
        value = underlying(use.value)
        expected = planner.final(use.target)
        if isinstance(value, OpResult) and value.op in constants:
            replacement = self.constant_on(value.op, expected)
        else:
            have = planner.final(planner.node(value))
            replacement = value if have == expected else self.copy(value, have, expected, use)
        if use.value is not replacement:
            use.op.operands[use.index] = replacement

    def place_constant(self, op: Operation, first_use: int | None) -> None:
        """Where the original constant lives: its own placement when something pins it,
        else its first consumer's device."""
        planner = self.planner
        node = planner.op_node[op]
        if planner.domains.placed(node) or first_use is None:
            self.home[op] = planner.final(node)
        else:
            self.home[op] = planner.final(first_use)
        op.attributes[DEVICE_ATTR] = self.home[op]

    def constant_on(self, op: Operation, device: DeviceAttr) -> SSAValue:
        if self.home[op] == device:
            return op.results[0]
        key = (op.results[0], device)
        made = self.made.get(key)
        if made is not None:
            return made
        clone = op.clone()
        clone.attributes[DEVICE_ATTR] = device
        self._insert(op.results[0], clone)
        made = self.made[key] = clone.results[0]
        return made

    def moved_away(self, op: Operation) -> bool:
        return any(value is op.results[0] for value, _ in self.made)


# --- the pass --------------------------------------------------------------------------


class _Specialiser:
    """Clones callees per context across planning rounds: one clone per (original
    function, context), named after the original (`@sq` -> `@sq_cuda0`, never
    `@sq_cuda0_cpu0`), reused when a later round meets the same context."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, tuple[str, ...]], str] = {}
        self.original: dict[str, str] = {}

    def apply(self, module: ModuleOp, pending: list[_Pending]) -> None:
        functions = {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}
        for item in pending:
            callee = item.callee.sym_name.data
            original = self.original.get(callee, callee)
            name = self.made.get((original, item.context))
            # A clone made for this context that the call already uses conflicts with it
            # now (an earlier call gave the clone another context): a new clone serves it.
            if name is None or name not in functions or name == callee:
                name = self._fresh_name(f"{original}_{item.suffix}", functions)
                clone = functions[original if original in functions else callee].clone()
                clone.sym_name = StringAttr(name)
                module.body.block.insert_op_after(clone, functions[callee])
                functions[name] = clone
                self.made[(original, item.context)] = name
                self.original[name] = original
            item.call.callee = SymbolRefAttr(name)

    @staticmethod
    def _fresh_name(base: str, taken: dict[str, FuncOp]) -> str:
        name, counter = base, 1
        while name in taken:
            name, counter = f"{base}_{counter}", counter + 1
        return name


@dataclass(frozen=True)
class PlanDevicesPass(ModulePass):
    """Places every tensor value, argument and result of a level-1 program.

    Hints (`vdev.on_device`) are consumed; the result carries `vdev.device` on every op
    with a tensor result and on every tensor argument/result, and a `vdev.device_copy`
    right after a value's definition for each other device it is used on. Planning a
    planned module changes nothing. `specialize=false` reports a function called from
    incompatible device contexts instead of cloning it; `explain=true` prints a remark
    for each inserted copy and each function argument saying what decided it. See the
    module docstring for the algorithm.
    """

    name = "plan-devices"

    strategy: str = "default"
    """`default` (TVM's: free values go to vdev.default_device) or `cost` (plan_cost.py)."""
    specialize: bool = True
    explain: bool = False
    dynamic_size: int | None = None
    """With `strategy=cost`: the size assumed for every dynamic dimension; without it,
    classes touching dynamic shapes are placed as the default strategy places them."""

    def __post_init__(self) -> None:
        # Bad options are errors of the pipeline, said before any IR is read (raised
        # from `apply`, they were placed at the module as if its IR were wrong).
        if self.strategy not in ("default", "cost"):
            raise ValueError(f"unknown strategy '{self.strategy}' (valid: default, cost)")
        if self.dynamic_size is not None and self.dynamic_size < 1:
            raise ValueError(f"dynamic-size must be 1 or more, got {self.dynamic_size}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        calls = sum(1 for inner in op.walk() if isinstance(inner, CallOp))
        specialiser = _Specialiser()
        for round_index in range(calls + 1):
            planner = Planner(op, self.specialize and round_index < calls, self.explain)
            planner.collect()
            try:
                planner.unify_calls()
            except _NeedsSpecialisation as e:
                specialiser.apply(op, e.pending)
                continue
            remarks: list[str] = []
            if self.strategy == "cost":
                from .cost_strategy import CostPlacement

                placement = CostPlacement(planner, self.dynamic_size, self.explain)
                placement.place()
                remarks += placement.remarks
            planner.flow()
            remarks += planner.rewrite()
            for remark in remarks:
                print(remark, file=sys.stderr)
            break


__all__ = ["Domains", "Origin", "PlanDevicesPass", "Planner"]
