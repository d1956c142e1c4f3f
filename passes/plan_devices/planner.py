"""The planner: one round of plan-devices over a module, phases 1-4 (hard constraints,
calls, dataflow, defaulting) of the algorithm in `planning.py`; phase 5 (`rewrite.py`)
writes what it decided into the IR."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from ...analysis.placement_domains import Domains, Origin, Reason, Tie
from ...diagnostics import error_at
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.placement import default_device, host_device, module_targets
from ...dialects.target import Target, TargetAttr
from ...dialects.target_kinds import TargetError
from ...dialects.vdev import DEFAULT_DEVICE_ATTR, DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from ...dialects.virtual_device import DeviceAttr, default, ir_text, join
from ...system.cost import tensor_bytes
from .program import (
    Use,
    and_list,
    dict_device,
    function_of,
    is_dense_constant,
    is_tensor,
    line_of,
    name_suffix,
    not_a_tensor,
    underlying,
    value_name,
    walk_with_exits,
)
from .specialisation import NeedsSpecialisation, Pending

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
        self.uses: list[Use] = []
        self.calls: list[tuple[CallOp, FuncOp]] = []
        self.free_on_devices: list[OnDeviceOp] = []
        self.on_devices: list[OnDeviceOp] = []
        self.constants: list[Operation] = []
        self.copies: list[DeviceCopyOp] = []
        self.slices: list[Operation] = []
        self.extracts: list[Operation] = []
        """The `tensor.extract` ops: a scalar read, on the host (`rewrite.py` plans the copy
        of the element it reads from a device)."""
        """The `tensor.extract_slice` ops, in program order (`keep_slices_with_sources`)."""
        self._final: dict[DeviceAttr, DeviceAttr] = {}
        self._root_final: dict[int, DeviceAttr] = {}
        self._reached: dict[FuncOp, set[FuncOp]] = {}
        self._default = default_device(module)
        self.host = host_device(module)
        self._targets = module_targets(module)
        self._system_targets: dict[tuple[str, int], TargetAttr] | None = None
        self._reasons: list[Reason | None] | None = None
        self.notes: dict[int, str] = {}
        """Why a node no constraint reaches is not placed by the cost model (strategy=cost)."""

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
        for name in sorted(self.functions):
            self._scalar_arguments(self.functions[name])

    def _scalar_arguments(self, function: FuncOp) -> None:
        """A scalar argument's `vdev.device` must be the host device: that is where
        scalars live (an attribute elsewhere would be dropped silently)."""
        for index, arg_type in enumerate(function.function_type.inputs.data):
            device = dict_device(function.arg_attrs, index)
            if isinstance(arg_type, TensorType) or device is None:
                continue
            if join(device, self.host) is None:
                raise error_at(
                    function,
                    f"argument {index} of @{function.sym_name.data} is a scalar "
                    f"({ir_text(arg_type)}) placed on {ir_text(device)}: scalars live on the "
                    f"host device {ir_text(self.host)}; remove the vdev.device attribute or "
                    "place it there",
                )

    def _signature(self, function: FuncOp) -> None:
        name = function.sym_name.data
        args: list[int | None] = []
        for index, arg_type in enumerate(function.function_type.inputs.data):
            node = self.domains.fresh() if isinstance(arg_type, TensorType) else None
            args.append(node)
            device = dict_device(function.arg_attrs, index)
            if node is not None and device is not None:
                what = f"the vdev.device attribute of argument {index} of @{name}"
                self.pin(node, device, Origin(function, what), f"argument {index}")
        results: list[int | None] = []
        for index, res_type in enumerate(function.function_type.outputs.data):
            node = self.domains.fresh() if isinstance(res_type, TensorType) else None
            results.append(node)
            device = dict_device(function.res_attrs, index)
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
        for op, leaving in walk_with_exits(list(function.body.blocks[0].ops)):
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
            if not is_tensor(result):
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
        elif any(is_tensor(r) for r in op.results):
            self._execution_domain(op)

    def _execution_domain(self, op: Operation) -> int:
        node = self.op_node.get(op)
        if node is not None:
            return node
        node = self.domains.fresh()
        self.op_node[op] = node
        for result in op.results:
            if is_tensor(result):
                self.value_node[result] = node
        if DEVICE_ATTR not in op.attributes:
            return node
        for index, device in enumerate(self._written(op)):
            if device is not None and is_tensor(op.results[index]):
                what = f"the vdev.device attribute of '{op.name}'"
                self.pin(node, device, Origin(op, what), "its results")
        return node

    def _soft(self, op: Operation, index: int, target: int | None) -> None:
        value = op.operands[index]
        if target is not None and isinstance(value.type, TensorType):
            self.uses.append(Use(op, index, value, target, True))

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
        elif name == "tensor.cast" and isinstance(op.results[0].type, UnrankedTensorType):
            # An unranked tensor is what MLIR's runner printers take: it lives on the host.
            what = "the operand of a 'tensor.cast' to an unranked tensor"
            self._soft(op, 0, self._on_host(op, what))
        elif name == "tensor.extract":
            if _in_control_flow_of(op, function):
                self.extracts.append(op)
        elif name != "scf.if" and any(isinstance(r.type, TensorType) for r in op.results):
            # (scf.if's only operand is its i1 condition, on the host.)
            self._tensor_op(op)

    def _tensor_op(self, op: Operation) -> None:
        """An op with tensor results: its operands are read where it runs (shapes on the
        host)."""
        node = self._execution_domain(op)
        if is_dense_constant(op):
            self.constants.append(op)
        if op.name == "tensor.extract_slice":
            self.slices.append(op)
        targets: list[int | None] = [node] * len(op.operands)
        if op.name == "tensor.reshape":
            targets[1] = self._on_host(op, "the shape operand of 'tensor.reshape'")
        self._soft_all(op, targets, 0)

    def _on_host(self, op: Operation, what: str) -> int:
        """A domain pinned to the host device: where an operand holding shape values is
        read (TVM computes shapes on the host)."""
        node = self.domains.fresh()
        self.pin(node, self.host, Origin(op, what), what)
        return node

    def _soft_all(self, op: Operation, targets: Sequence[int | None], first: int) -> None:
        """Soft edges from operands `first`, `first + 1`, ... to `targets`."""
        for index, target in enumerate(targets, first):
            if index < len(op.operands):
                self._soft(op, index, target)

    def _on_device(self, op: OnDeviceOp) -> None:
        self.on_devices.append(op)
        x, y = op.input, op.result
        device = op.device
        if not is_tensor(x):
            raise not_a_tensor(op)
        what = f"the '{op.name}' hint"
        if op.constrain_body:
            self.pin(self.node(x), device, Origin(op, what), value_name(x))
        returned = op.constrain_body and any(isinstance(u.operation, ReturnOp) for u in y.uses)
        if op.constrain_result or returned:
            self.pin(self.node(y), device, Origin(op, what), f"its result {value_name(y)}")
        else:
            self.node(y)
        if not op.constrain_body:
            self.free_on_devices.append(op)

    def _device_copy(self, op: DeviceCopyOp) -> None:
        self.copies.append(op)
        if not is_tensor(op.input):
            raise not_a_tensor(op)
        x = self.node(op.input)
        self.pin(
            x, op.src_device, Origin(op, f"the 'from' device of '{op.name}'"), value_name(op.input)
        )
        self.pin(
            self.node(op.result),
            op.dst_device,
            Origin(op, f"the 'to' device of '{op.name}'"),
            f"its result {value_name(op.result)}",
        )
        self.uses.append(Use(op, 0, op.input, x, False))

    def _call(self, op: CallOp) -> None:
        callee = self.functions.get(op.callee.string_value())
        self._per_result_nodes(op)
        if callee is None:
            for index in range(len(op.operands)):
                value = op.operands[index]
                if is_tensor(value):
                    self.uses.append(Use(op, index, value, self.node(value), False))
            return
        self.calls.append((op, callee))
        args = self.arg_nodes[callee]
        for index, target in enumerate(args):
            if target is not None and index < len(op.operands):
                self.uses.append(Use(op, index, op.operands[index], target, False))

    # -- phase 2 -----------------------------------------------------------------------

    def unify_calls(self) -> None:
        pending: list[Pending] = []
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
                tie = Tie(call, f"the call to @{callee.sym_name.data} at {line_of(call)} ({what})")
                if not self.domains.union(a, b, tie if self.explain else None):
                    pending.append(self._call_conflict(call, callee, [(a, b, what)], context))
                    break
        if pending:
            raise NeedsSpecialisation(pending)

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
    ) -> Pending:
        domains = self.domains
        mine_node, theirs_node, what = clash[0]
        mine_root, theirs_root = domains.find(mine_node), domains.find(theirs_node)
        theirs = domains.origin[theirs_root]
        mine = domains.origin[mine_root]
        if self.specialize and theirs is not None and self._specialisable(callee, theirs):
            key = tuple("?" if d is None else ir_text(d) for d in context)
            suffix = "_".join(dict.fromkeys(name_suffix(d) for d in context if d is not None))
            return Pending(call, callee, key, suffix)
        name = callee.sym_name.data
        here = ir_text(domains.device[mine_root])
        there = ir_text(domains.device[theirs_root])
        why_here = f" (by {mine.what} at {line_of(mine.op)})" if mine is not None else ""
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
        source = function_of(theirs.op)
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
        self.settle_open_ops()
        constants = set(self.constants)
        for use in self.uses:
            if not use.soft:
                continue
            value = use.value
            if isinstance(value, OpResult) and value.op in constants:
                continue  # a constant is made on each device that needs it
            tie = self._use_tie(use) if self.explain else None
            self.domains.union(self.node(value), use.target, tie)
        for op in self.free_on_devices:
            tie = None
            if self.explain:
                words = f"the '{op.name}' hint at {line_of(op)} (its result stays with its operand)"
                tie = Tie(op, words)
            self.domains.union(self.node(op.result), self.node(op.input), tie)

    def keep_slices_with_sources(self) -> None:
        """A slice runs where its source lives: a `tensor.extract_slice` that the rules
        above put on another device than its source (its result is pinned there, or used
        there) moves to its source's device, so that only the slice's bytes are copied to
        where it was, not its whole source. One written `vdev.device` keeps it where it is;
        a slice of a dense constant stays (the constant is made where it is used). After
        `flow`, once (it changes the op and value maps, which a snapshot does not keep)."""
        constants = set(self.constants)
        for op in self.slices:
            source = underlying(op.operands[0])
            if DEVICE_ATTR in op.attributes or (
                isinstance(source, OpResult) and source.op in constants
            ):
                continue
            node = self.op_node[op]
            have = self.final(self.node(source))
            if have == self.final(node):
                continue
            home = self.domains.fresh()
            what = (
                f"the device of {value_name(source)}, the source of the '{op.name}' at "
                f"{line_of(op)} (a slice runs where its source lives)"
            )
            self.domains.constrain(home, have, Origin(op, what, located=False))
            self.op_node[op] = home
            self.value_node[op.results[0]] = home
            for use in self.uses:
                if use.op is op and use.index == 0:
                    use.target = home

    def settle_open_ops(self) -> None:
        """Each op whose class nothing placed joins the device its placed neighbours
        agree on most, counting bytes: the distinct tensor operands placed somewhere, and
        each distinct device its results are used on (one copy a value and device). A
        tie leaves the op to the program-order edges below. A worklist revisits the open
        neighbours of each op it places, so a chain follows a pinned end."""
        constants = set(self.constants)
        operand_uses: dict[Operation, list[Use]] = {}
        result_uses: dict[Operation, list[Use]] = {}
        for use in self.uses:
            if not use.soft:
                continue
            operand_uses.setdefault(use.op, []).append(use)
            if isinstance(use.value, OpResult):
                result_uses.setdefault(use.value.op, []).append(use)
        pending = deque(op for op in self.op_node if op not in constants)
        while pending:
            op = pending.popleft()
            node = self.op_node[op]
            if self.domains.placed(node):
                continue
            chosen = self._majority(operand_uses.get(op, []), result_uses.get(op, []), constants)
            if chosen is None:
                continue
            other, use = chosen
            self.domains.union(node, other, self._use_tie(use) if self.explain else None)
            for near in operand_uses.get(op, []):
                if isinstance(near.value, OpResult) and near.value.op in self.op_node:
                    pending.append(near.value.op)
            pending.extend(u.op for u in result_uses.get(op, []) if u.op in self.op_node)

    def _majority(
        self, operands: list[Use], users: list[Use], constants: set[Operation]
    ) -> tuple[int, Use] | None:
        """The node to join and the edge to it, where most placed bytes around an op are;
        None on a tie or when no neighbour is placed."""
        votes: dict[DeviceAttr, int] = {}
        edge: dict[DeviceAttr, tuple[int, Use]] = {}
        counted: set[tuple[SSAValue, DeviceAttr]] = set()
        sides = [(u.value, self.node(u.value), u) for u in operands] + [
            (u.value, u.target, u) for u in users
        ]
        sized = [tensor_bytes(value.type) for value, _, _ in sides]
        known = None not in sized
        for (value, other, use), nbytes in zip(sides, sized, strict=True):
            if isinstance(value, OpResult) and value.op in constants:
                continue
            if not self.domains.placed(other):
                continue
            device = self.complete(self.domains.device[self.domains.find(other)])
            if (value, device) in counted:
                continue
            counted.add((value, device))
            votes[device] = votes.get(device, 0) + (nbytes if known and nbytes is not None else 1)
            edge.setdefault(device, (other, use))
        if not votes:
            return None
        ranked = sorted(votes.values(), reverse=True)
        if len(ranked) > 1 and ranked[0] == ranked[1]:
            return None
        return edge[max(votes, key=votes.__getitem__)]

    def _use_tie(self, use: Use) -> Tie:
        """The words for a soft edge: the value, the op using it, and which rule ties them."""
        op, value = use.op, value_name(use.value)
        if op.name == "func.return":
            return Tie(op, f"dataflow: {value} is returned at {line_of(op)}")
        parent = op.parent_op() if op.name == "scf.yield" else None
        if parent is not None:
            return Tie(
                op,
                f"control flow: {value} is yielded at {line_of(op)} as result {use.index} "
                f"of the '{parent.name}' at {line_of(parent)}",
            )
        if op.name == "scf.for":
            return Tie(
                op,
                f"control flow: {value} is init value {use.index - 3} of the 'scf.for' at "
                f"{line_of(op)}",
            )
        return Tie(op, f"dataflow: {value} is operand {use.index} of '{op.name}' at {line_of(op)}")

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
            filled = default(filled, self.host)
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

    def why(self, node: int) -> str:
        """Which constraint decided the placement of `node`, in words: the nearest one
        over the ties that merged it with others (`Domains.reasons`), and the first tie
        on the way; or the default device when none reaches it."""
        if self._reasons is None:
            self._reasons = self.domains.reasons()
        reason = self._reasons[node]
        if reason is None:
            if node in self.notes:
                return self.notes[node]
            if DEFAULT_DEVICE_ATTR in self.module.attributes:
                return "nothing constrains it, so it goes to vdev.default_device"
            return (
                "nothing constrains it, so it goes to the host device (the module sets no "
                "vdev.default_device)"
            )
        origin = reason.origin
        text = f"decided by {origin.what}"
        if origin.located:
            text += f" at {line_of(origin.op)}"
        if reason.first is not None:
            text += f", through {reason.first.what}"
            if reason.ties > 1:
                more = reason.ties - 1
                text += f" and {more} more tie{'s' if more > 1 else ''}"
        device = self.domains.device[self.domains.find(node)]
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
            text += f" ({and_list(open_fields)} by default)"
        return text


def _in_control_flow_of(op: Operation, function: FuncOp) -> bool:
    """`op` sits in `function`'s body or in its `scf.if`/`scf.for` regions, the places
    planning places values: not in a region of another op (a `linalg.generic`'s body reads
    scalars, and what it may not read is the lowering's error to give)."""
    parent = op.parent_op()
    while parent is not None and parent is not function:
        if parent.name not in ("scf.if", "scf.for"):
            return False
        parent = parent.parent_op()
    return parent is function
