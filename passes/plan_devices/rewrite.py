"""Phase 5 of plan-devices: one walk that writes the planner's decisions into the IR
(`vdev.device` on ops, arguments and results; copies and constant clones where a use
expects another device; hints removed)."""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from ...diagnostics import diagnostic_at
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp
from ...dialects.virtual_device import DeviceAttr
from .planner import Planner
from .program import Use, is_tensor, short, underlying, value_name, with_devices


def rewrite(planner: Planner) -> list[str]:
    """Phase 5 over a planned round; returns the remarks (with `explain`)."""
    remarks: list[str] = []
    _set_function_attrs(planner, remarks)
    _set_op_attrs(planner)
    for copy in planner.copies:
        if is_tensor(copy.input):
            copy.src_device = planner.final(planner.node(copy.input))
            copy.dst_device = planner.final(planner.node(copy.result))
    materialiser = Materialiser(planner, remarks)
    constants = set(planner.constants)
    first_use: dict[Operation, int] = {}
    for use in planner.uses:
        value = underlying(use.value)
        if isinstance(value, OpResult) and value.op in constants:
            first_use.setdefault(value.op, use.target)
    for op in planner.constants:
        materialiser.place_constant(op, first_use.get(op))
    for use in planner.uses:
        materialiser.serve(use, constants)
    for op in reversed(planner.on_devices):
        op.result.replace_all_uses_with(op.input)
        op.detach()
        op.erase()
    for op in constants:
        if not op.results[0].uses and materialiser.moved_away(op):
            op.detach()
            op.erase()
    return remarks


def _set_op_attrs(planner: Planner) -> None:
    host = planner.complete(planner.host)
    for op, node in planner.op_node.items():
        device = planner.final(node)
        if len(op.results) == 1:
            op.attributes[DEVICE_ATTR] = device
        else:
            op.attributes[DEVICE_ATTR] = ArrayAttr(
                [device if is_tensor(r) else host for r in op.results]
            )
    for op, nodes in planner.result_nodes.items():
        if any(n is not None for n in nodes):
            op.attributes[DEVICE_ATTR] = ArrayAttr(
                [planner.final(n) if n is not None else host for n in nodes]
            )


def _set_function_attrs(planner: Planner, remarks: list[str]) -> None:
    for name in sorted(planner.functions):
        function = planner.functions[name]
        args = planner.arg_nodes[function]
        results = planner.res_nodes[function]
        if any(n is not None for n in args):
            function.arg_attrs = with_devices(
                function.arg_attrs, [planner.final(n) if n is not None else None for n in args]
            )
        if any(n is not None for n in results):
            function.res_attrs = with_devices(
                function.res_attrs,
                [planner.final(n) if n is not None else None for n in results],
            )
        if planner.explain:
            for index, node in enumerate(args):
                if node is not None:
                    why = planner.why(node)
                    remarks.append(
                        diagnostic_at(
                            function,
                            f"argument {index} of @{name} is on "
                            f"{short(planner.final(node))}: {why}",
                            kind="remark",
                        )
                    )


class Materialiser:
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

    def copy(self, value: SSAValue, have: DeviceAttr, expected: DeviceAttr, use: Use) -> SSAValue:
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
                    f"copy of {value_name(value)} from {short(have)} to {short(expected)} for "
                    f"'{use.op.name}': {value_name(value)} is on {short(have)}, "
                    f"{planner.why(planner.node(value))}; this use is on {short(expected)}, "
                    f"{planner.why(use.target)}",
                    kind="remark",
                )
            )
        return made

    def serve(self, use: Use, constants: set[Operation]) -> None:
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
