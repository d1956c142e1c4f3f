"""`plan-devices{strategy=cost}`: place the values no constraint pins where the program's
modelled time is least.

Runs inside `plan-devices` between its phase 2 (hard constraints and calls) and phase 3
(dataflow); the default strategy's phases are reused unchanged around it.

Phase A — the default placement. Phase 3 and 4 of the default strategy run on a copy
of the union-find (it is restored afterwards): for every class left by phase 2, the
device the default strategy gives it.

Phase B — the problem (`placement_cost.Problem`), from the system description's one
cost model (`runtime/cost.py`):
  * candidate devices: the system's devices (memory scope `global`);
  * a class is *fixed* at its default device when a hard constraint touches it (any
    field of its `#vdev.device` is constrained: `on_device` with `constrain_result`
    or on its operand, function argument/result attributes, `device_copy` endpoints,
    a `vdev.device` already written) or when its work or a value it defines or uses
    has a dynamic dimension and no `dynamic-size` is given (`dynamic-size=N` assumes N
    for every dynamic dimension instead); every other class is *free*;
  * compute: the modelled time of each op of the class on each device (`op_work`,
    `CostModel.kernel_seconds`); arguments of entry functions (functions nothing calls)
    add the copy from the host, their results the copy back to the host, since that is
    where the caller's data is;
  * copy terms: one per tensor value with uses (dense constants are cloned, not
    copied), its defining class and the classes of its uses.

Phase C — solve (`placement_cost.solve`: exact min cut for two devices, alpha-expansion
from the default placement for more), then pin every free class to its device. Phase 3
and 4 then run as for the default strategy: every class is placed, so dataflow edges
between different devices become copies, one per (value, destination).

With `explain=true` a remark at the module gives the modelled time of the chosen and
of the default placement, and the origin of each class the cost model places carries
the program's modelled time with the class on its device and on the best other device
(everything else kept; a tie names the solver's rule that decided), which the
placement remarks of `plan-devices` quote.

Not handled: classes whose default device is not in the system description (they are
fixed, but a copy to or from a device without a route is an error naming it); the
model charges no time to `scf.for` iterations beyond one (loop bodies count once).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from ...analysis.op_work import op_work
from ...analysis.placement_domains import Origin
from ...diagnostics import diagnostic_at, error_at
from ...dialects.virtual_device import DeviceAttr
from ...system.cost import NO_WORK, CostModel, NoLinkError, tensor_bytes
from ...system.description import System
from .placement_cost import CopyTerm, Problem, solve
from .planner import Planner
from .program import underlying


@dataclass
class _Class:
    """One placement class of phase 2."""

    root: int
    default: DeviceAttr
    ops: list[Operation]
    fixed: bool
    where: Operation | None = None
    """What a remark points at (its first op, or the function of an argument)."""
    what: str = ""
    dynamic: bool = False
    """Fixed because a size is unknown (no `dynamic-size`)."""


class CostPlacement:
    """Phases A-C of the module docstring over one planner's phase-2 classes."""

    def __init__(self, planner: Planner, dynamic_size: int | None, explain: bool) -> None:
        self.planner = planner
        self.dynamic_size = dynamic_size
        self.explain = explain
        module = planner.module
        system = System.from_module(module) or System.default()
        self.model: CostModel = system.cost_model()
        self.host = system.host.name
        self.names = [spec.name for spec in system.devices]
        self.candidates = [planner.complete(DeviceAttr.make(s.type, s.id)) for s in system.devices]
        self.classes: list[_Class] = []
        self.class_of: dict[int, int] = {}
        self.remarks: list[str] = []
        self.fixed_seconds = 0.0
        """Copies the program writes itself (`vdev.device_copy`): the same under any plan."""
        self.relevant: set[int] = set()
        """Classes with compute or copies; the others are left to dataflow."""

    # -- phase A -----------------------------------------------------------------------

    def default_placement(self) -> None:
        planner = self.planner
        domains = planner.domains
        roots = sorted({domains.find(n) for n in range(len(domains.parent))})
        saved = domains.snapshot()
        planner.flow()
        defaults = [planner.final(r) for r in roots]
        domains.restore(saved)
        planner.reset_final()
        for root, device in zip(roots, defaults, strict=True):
            constrained = not domains.device[root].is_fully_unconstrained
            self.class_of[root] = len(self.classes)
            self.classes.append(_Class(root, device, [], constrained))

    def _class(self, node: int) -> int:
        return self.class_of[self.planner.domains.find(node)]

    def _device_index(self, device: DeviceAttr, where: Operation) -> int:
        name = f"{device.type_name}:{device.device_id}"
        if name not in self.names:
            raise error_at(
                where,
                f"plan-devices{{strategy=cost}}: {name} is not in the system description "
                f"(devices: {', '.join(self.names)}); describe it in vdev.system",
            )
        return self.names.index(name)

    # -- phase B -----------------------------------------------------------------------

    def problem(self) -> Problem:
        planner = self.planner
        k = len(self.names)
        compute = [[0.0] * k for _ in self.classes]
        for op, node in planner.op_node.items():
            c = self._class(node)
            self.classes[c].ops.append(op)
            if self.classes[c].where is None:
                self.classes[c].where, self.classes[c].what = op, f"'{op.name}'"
            work = op_work(op, self.dynamic_size)
            if work is None:
                self.classes[c].fixed = self.classes[c].dynamic = True
            elif work != NO_WORK:
                row = compute[c]
                for d, name in enumerate(self.names):
                    row[d] += self.model.kernel_seconds(name, work.flops, work.nbytes)
        for op, nodes in planner.result_nodes.items():
            for index, node in enumerate(nodes):
                cls = self.classes[self._class(node)] if node is not None else None
                if cls is not None and cls.where is None:
                    cls.where, cls.what = op, f"result {index} of '{op.name}'"
        self._boundaries(compute)
        terms = self._terms(k)
        self.relevant = {c for t in terms for c in (t.source, *t.consumers)}
        self.relevant |= {c for c, row in enumerate(compute) if any(row)}
        fixed: list[int | None] = []
        default: list[int] = []
        for cls in self.classes:
            index = self._device_index(cls.default, cls.where or planner.module)
            default.append(index)
            fixed.append(index if cls.fixed else None)
        for copy in planner.copies:
            nbytes = tensor_bytes(copy.input.type, self.dynamic_size)
            src = planner.final(planner.node(copy.input))
            dst = planner.final(planner.node(copy.result))
            self.fixed_seconds += self._copy(src, dst, nbytes or 0, copy)
        return Problem(k, compute, fixed, default, terms)

    def _copy(self, src: DeviceAttr, dst: DeviceAttr, nbytes: int, where: Operation) -> float:
        try:
            return self.model.copy_seconds(
                f"{src.type_name}:{src.device_id}", f"{dst.type_name}:{dst.device_id}", nbytes
            )
        except NoLinkError as e:
            raise error_at(where, f"plan-devices{{strategy=cost}}: {e}") from None

    def _boundaries(self, compute: list[list[float]]) -> None:
        """Entry functions: their arguments come from the host, their results go back."""
        planner = self.planner
        called = {callee for _, callee in planner.calls}
        for function in planner.functions.values():
            if function in called or not function.body.blocks:
                continue
            types = function.function_type
            sides = (
                (planner.arg_nodes[function], types.inputs.data, "argument", True),
                (planner.res_nodes[function], types.outputs.data, "result", False),
            )
            for nodes, value_types, what, inbound in sides:
                for index, node in enumerate(nodes):
                    if node is None:
                        continue
                    c = self._class(node)
                    cls = self.classes[c]
                    if cls.where is None:
                        cls.where = function
                        cls.what = f"{what} {index} of @{function.sym_name.data}"
                    nbytes = tensor_bytes(value_types[index], self.dynamic_size)
                    if nbytes is None:
                        cls.fixed = cls.dynamic = True
                        continue
                    for d, name in enumerate(self.names):
                        ends = (self.host, name) if inbound else (name, self.host)
                        compute[c][d] += self._route(*ends, nbytes, function)

    def _route(self, src: str, dst: str, nbytes: int, where: Operation) -> float:
        try:
            return self.model.copy_seconds(src, dst, nbytes)
        except NoLinkError as e:
            raise error_at(where, f"plan-devices{{strategy=cost}}: {e}") from None

    def _terms(self, k: int) -> list[CopyTerm]:
        planner = self.planner
        constants = set(planner.constants)
        consumers: dict[SSAValue, dict[int, None]] = {}
        for use in planner.uses:
            value = underlying(use.value)
            if isinstance(value, OpResult) and value.op in constants:
                continue
            if value not in planner.value_node:
                continue
            consumers.setdefault(value, {})[self._class(use.target)] = None
        terms: list[CopyTerm] = []
        for value, users in consumers.items():
            source = self._class(planner.value_node[value])
            nbytes = tensor_bytes(value.type, self.dynamic_size)
            if nbytes is None:
                for c in (source, *users):
                    self.classes[c].fixed = self.classes[c].dynamic = True
                continue
            where = value.op if isinstance(value, OpResult) else planner.module
            seconds = [
                [self._route(a, b, nbytes, where) if a != b else 0.0 for b in self.names]
                for a in self.names
            ]
            terms.append(CopyTerm(source, list(users), seconds))
        return terms

    # -- phase C -----------------------------------------------------------------------

    def place(self) -> None:
        self.default_placement()
        problem = self.problem()
        labels = solve(problem)
        planner = self.planner
        module = planner.module
        total = problem.objective(labels) + self.fixed_seconds
        touching: dict[int, list[CopyTerm]] = {}
        if self.explain:
            for term in problem.terms:
                for c in dict.fromkeys((term.source, *term.consumers)):
                    touching.setdefault(c, []).append(term)
        for c, cls in enumerate(self.classes):
            if cls.fixed or c not in self.relevant:
                continue  # (an irrelevant class, a constant's say, is placed by dataflow)
            chosen = labels[c]
            device = cls.default if chosen == problem.default[c] else self.candidates[chosen]
            what = "the cost model (strategy=cost)"
            if self.explain:
                what = self._costs(problem, labels, c, total, touching.get(c, []))
            planner.domains.constrain(cls.root, device, Origin(module, what, located=False))
        if self.explain:
            self._note_dynamic()
            self.remarks.append(
                diagnostic_at(
                    module,
                    f"strategy=cost: modelled time {_seconds(total)} (compute and copies; the "
                    f"default placement: "
                    f"{_seconds(problem.objective(problem.default) + self.fixed_seconds)}; "
                    f"devices: {', '.join(self.names)})",
                    kind="remark",
                )
            )

    def _note_dynamic(self) -> None:
        """Tell the remarks why a class the cost model left alone is where the default
        strategy puts it (a class a hard constraint fixes is explained by it)."""
        planner = self.planner
        domains = planner.domains
        note = (
            "strategy=cost leaves it where the default strategy puts it, as a size it "
            "depends on is dynamic (dynamic-size=N would assume N)"
        )
        for node in range(len(domains.parent)):
            cls = self.classes[self._class(node)]
            if cls.dynamic and domains.device[cls.root].is_fully_unconstrained:
                planner.notes[node] = note

    def _costs(
        self,
        problem: Problem,
        labels: Sequence[int],
        c: int,
        total: float,
        terms: list[CopyTerm],
    ) -> str:
        """The cost model's words for class `c`: the program's modelled time with the class
        where it was put, and with it alone on the best other device (everything else
        where it is); a tie says which rule of the solver decided."""
        here = labels[c]
        name = self.names[here]
        if problem.devices < 2:
            return f"the cost model (strategy=cost; {name} is the only device)"

        def moved(d: int) -> float:
            def at(k: int) -> int:
                return d if k == c else labels[k]

            delta = problem.compute[c][d] - problem.compute[c][here]
            for term in terms:
                delta += _term_seconds(term, at) - _term_seconds(term, labels.__getitem__)
            return total + delta

        alternatives = [(moved(d), d) for d in range(problem.devices) if d != here]
        best, other = min(alternatives)
        words = (
            f"the cost model (strategy=cost): modelled time {_seconds(total)} with it on "
            f"{name}, {_seconds(best)} on {self.names[other]}, the best alternative"
        )
        if best > total * (1 + 1e-9):
            return words
        return words + f"; a tie: {self._tie_rule(problem, c, here)}"

    def _tie_rule(self, problem: Problem, c: int, here: int) -> str:
        """Which rule of `placement_cost.solve` decides a class whose devices cost alike."""
        if problem.devices == 2:
            if here == 1:
                return (
                    "the two-device min cut puts a class whose devices cost the same on the "
                    "system's second device"
                )
            return (
                "the min cut's placement was no better than the default strategy's, which was kept"
            )
        if here == problem.default[c]:
            return (
                "alpha-expansion moves a class only when the modelled time drops, so it stays "
                "where the default strategy puts it"
            )
        return (
            f"alpha-expansion moved it to {self.names[here]} together with other classes, in "
            "one move that lowered the modelled time"
        )


def _term_seconds(term: CopyTerm, at: Callable[[int], int]) -> float:
    """The copies of one value when class k is on device `at(k)`."""
    src = at(term.source)
    row = term.seconds[src]
    return sum(row[d] for d in {at(k) for k in term.consumers} if d != src)


def planned_seconds(module: ModuleOp, system: System | None = None) -> float:
    """The modelled time of a *planned* level-1 module under `system`'s cost model (the
    quantity strategy=cost minimises), read from the IR alone: each op's work on its
    `vdev.device`, each `vdev.device_copy`, and the entry functions' arguments from and
    results to the host. Dynamic dimensions are an error here (ValueError)."""
    from ...dialects.placement import arg_device, op_device, result_device, value_device

    system = system or System.from_module(module) or System.default()
    model, host = system.cost_model(), system.host.name

    def name(device: DeviceAttr | None) -> str:
        return f"{device.type_name}:{device.device_id}" if device is not None else host

    total = 0.0
    called = {op.callee.string_value() for op in module.walk() if isinstance(op, CallOp)}
    for op in module.walk():
        if isinstance(op, FuncOp) and op.sym_name.data not in called and op.body.blocks:
            types = op.function_type
            for i, t in enumerate(types.inputs.data):
                total += model.copy_seconds(host, name(arg_device(op, i)), _known(t))
            for i, t in enumerate(types.outputs.data):
                total += model.copy_seconds(name(result_device(op, i)), host, _known(t))
        elif op.name == "vdev.device_copy":
            src, dst = value_device(op.operands[0]), value_device(op.results[0])
            total += model.copy_seconds(name(src), name(dst), _known(op.results[0].type))
        else:
            work = op_work(op)
            if work is None:
                raise ValueError(f"'{op.name}' has a dynamic shape")
            if work != NO_WORK:
                total += model.kernel_seconds(name(op_device(op)), work.flops, work.nbytes)
    return total


def _known(type: Attribute) -> int:
    nbytes = tensor_bytes(type)
    if nbytes is None:
        raise ValueError(f"{type} has a dynamic shape")
    return nbytes


def _seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} us"


__all__ = ["CostPlacement", "planned_seconds"]
