"""Phase 5 of plan-devices: one walk that writes the planner's decisions into the IR
(`vdev.device` on ops, arguments and results; copies and constant clones where a use
expects another device; hints removed)."""

from __future__ import annotations

from typing import cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from ...diagnostics import diagnostic_at
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp
from ...dialects.virtual_device import DeviceAttr
from .planner import Planner
from .program import (
    SCALAR_WHY,
    Use,
    is_scalar,
    is_tensor,
    line_of,
    short,
    underlying,
    value_name,
    with_devices,
)


def rewrite(planner: Planner) -> list[str]:
    """Phase 5 over a planned round; returns the remarks (with `explain`)."""
    remarks: list[str] = []
    arguments = _set_function_attrs(planner)
    _set_op_attrs(planner)
    for copy in planner.copies:
        if is_tensor(copy.input):
            copy.src_device = planner.final(planner.node(copy.input))
            copy.dst_device = planner.final(planner.node(copy.result))
    materialiser = Materialiser(planner)
    constants = set(planner.constants)
    first_use: dict[Operation, Use] = {}
    for use in planner.uses:
        value = underlying(use.value)
        if isinstance(value, OpResult) and value.op in constants:
            first_use.setdefault(value.op, use)
    for op in planner.constants:
        materialiser.place_constant(op, first_use.get(op))
    for use in planner.uses:
        materialiser.serve(use, constants)
    for op in reversed(planner.on_devices):
        op.result.replace_all_uses_with(op.input)
        op.detach()
        op.erase()
    for op in planner.extracts:
        materialiser.read_on_host(op)
    for op in constants:
        if not op.results[0].uses and materialiser.moved_away(op):
            op.detach()
            op.erase()
    if planner.explain:
        _explain(planner, materialiser, arguments, remarks)
    return remarks


def _explain(
    planner: Planner,
    materialiser: Materialiser,
    arguments: dict[str, list[str]],
    remarks: list[str],
) -> None:
    """The remarks function by function: its arguments, then in program order each op
    that yields tensors (what decided its device) and the copies made for its operands."""
    copies = set(planner.copies)
    for name in sorted(planner.functions):
        remarks.extend(arguments.get(name, []))
        for op in planner.functions[name].walk():
            words = _placement_words(planner, materialiser, copies, op)
            remarks.extend(diagnostic_at(op, text, kind="remark") for text in words)
            remarks.extend(materialiser.copies_for.get(op, []))


def _placement_words(
    planner: Planner, materialiser: Materialiser, copies: set[DeviceCopyOp], op: Operation
) -> list[str]:
    constant = materialiser.constant_words.get(op)
    if constant is not None:
        return [f"{_subject(op)} is on {short(materialiser.home_of(op))}: {constant}"]
    node = planner.op_node.get(op)
    if node is not None:
        return [f"{_subject(op)} is on {short(planner.final(node))}: {planner.why(node)}"]
    if isinstance(op, DeviceCopyOp) and op in copies:
        node = planner.node(op.result)
        return [f"{_subject(op)} is on {short(planner.final(node))}: {planner.why(node)}"]
    words: list[str] = []
    for index, node in enumerate(planner.result_nodes.get(op, [])):
        if node is not None:
            value = value_name(op.results[index])
            words.append(
                f"result {index} ({value}) of '{op.name}' is on {short(planner.final(node))}: "
                f"{planner.why(node)}"
            )
    return words


def _subject(op: Operation) -> str:
    hints = {r.name_hint for r in op.results}
    if len(op.results) > 1 and len(hints) == 1 and None not in hints:
        return f"'{op.name}' (%{hints.pop()}:{len(op.results)})"  # as defined: %x:2 = ...
    names = [value_name(r) for r in op.results if r.name_hint]
    return f"'{op.name}'" + (f" ({', '.join(names)})" if names else "")


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


def _set_function_attrs(planner: Planner) -> dict[str, list[str]]:
    """Writes the arguments' and results' devices; returns, with `explain`, the remarks
    on each function's arguments."""
    remarks: dict[str, list[str]] = {}
    host = planner.complete(planner.host)
    for name in sorted(planner.functions):
        function = planner.functions[name]
        args = planner.arg_nodes[function]
        results = planner.res_nodes[function]
        types = function.function_type.inputs.data
        arg_devices = [
            planner.final(n) if n is not None else host if is_scalar(t) else None
            for n, t in zip(args, types, strict=True)
        ]
        if any(d is not None for d in arg_devices):
            function.arg_attrs = with_devices(function.arg_attrs, arg_devices)
        if any(n is not None for n in results):
            function.res_attrs = with_devices(
                function.res_attrs,
                [planner.final(n) if n is not None else None for n in results],
            )
        if planner.explain:
            for index, node in enumerate(args):
                if node is not None or arg_devices[index] is not None:
                    why = planner.why(node) if node is not None else SCALAR_WHY
                    device = arg_devices[index]
                    assert device is not None
                    remarks.setdefault(name, []).append(
                        diagnostic_at(
                            function,
                            f"argument {index} of @{name} is on {short(device)}: {why}",
                            kind="remark",
                        )
                    )
    return remarks


class Materialiser:
    """Inserts copies and constant clones, once per (value, device)."""

    def __init__(self, planner: Planner):
        self.planner = planner
        self.copies_for: dict[Operation, list[str]] = {}
        """With `explain`: the remarks on the copies made for each op's operands."""
        self.made: dict[tuple[SSAValue, DeviceAttr], SSAValue] = {}
        self.anchor: dict[Operation | Block, Operation] = {}
        self.home: dict[Operation, DeviceAttr] = {}
        self.constant_words: dict[Operation, str] = {}
        """Why each dense constant and clone is where it is (with `explain`)."""

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
            self.copies_for.setdefault(use.op, []).append(
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

    def read_on_host(self, op: Operation) -> None:
        """A `tensor.extract` reads a scalar, which lives on the host: from a value on a
        device, the one element it reads is sliced there (`tensor.extract_slice` of 1 x
        ... x 1 at its indices) and that slice is copied to the host, where the extract
        reads it at index 0 (a rank-0 value, one element, is copied whole)."""
        assert isinstance(op, tensor.ExtractOp)
        planner = self.planner
        source = op.tensor
        owner = source.op if isinstance(source, OpResult) else None
        if owner is not None and owner in self.home:
            have = self.home_of(owner)
        elif source in planner.value_node:
            have = planner.final(planner.node(source))
        else:
            return
        host = planner.complete(planner.host)
        if have == host:
            return
        block = op.parent_block()
        assert block is not None
        kind = cast(TensorType[Attribute], source.type)
        rank = kind.get_num_dims()
        where = f" [{', '.join(value_name(i) for i in op.indices)}]" if rank else ""
        if not rank:  # one element: the value's own copy, right after its definition
            made = self.made.get((source, host))
            if made is None:
                whole = DeviceCopyOp(source, have, host)
                self._insert(source, whole)
                made = self.made[source, host] = whole.result
            op.operands[0] = made
        else:
            ones = [1] * rank
            element = TensorType(kind.get_element_type(), ones)
            window = tensor.ExtractSliceOp(source, list(op.indices), ones, ones, element)
            window.attributes[DEVICE_ATTR] = have
            copy = DeviceCopyOp(window.result, have, host)
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            for made_op in (window, copy, zero):
                made_op.location = op.location  # a run-time error there points at the extract
            block.insert_ops_before([window, copy, zero], op)
            op.operands[0] = copy.result
            for index in range(rank):
                op.operands[1 + index] = zero.result
        if planner.explain:
            self.copies_for.setdefault(op, []).append(
                diagnostic_at(
                    op,
                    f"copy of the element{where} of {value_name(source)} from {short(have)} to "
                    f"{short(host)} for '{op.name}': a scalar read lives on the host device; "
                    f"{value_name(source)} is on {short(have)}, "
                    f"{planner.why(planner.node(source))}",
                    kind="remark",
                )
            )

    def serve(self, use: Use, constants: set[Operation]) -> None:
        """Make `use` read its value on the device it expects."""
        planner = self.planner
        value = underlying(use.value)
        expected = planner.final(use.target)
        if isinstance(value, OpResult) and value.op in constants:
            replacement = self.constant_on(value.op, expected, use)
        else:
            have = planner.final(planner.node(value))
            replacement = value if have == expected else self.copy(value, have, expected, use)
        if use.value is not replacement:
            use.op.operands[use.index] = replacement

    def place_constant(self, op: Operation, first_use: Use | None) -> None:
        """Where the original constant lives: its own placement when something pins it,
        else its first consumer's device."""
        planner = self.planner
        node = planner.op_node[op]
        if planner.domains.placed(node) or first_use is None:
            self.home[op] = planner.final(node)
            if planner.explain:
                self.constant_words[op] = planner.why(node)
        else:
            self.home[op] = planner.final(first_use.target)
            if planner.explain:
                self.constant_words[op] = (
                    "a dense constant is made on each device that uses it; this one where its "
                    f"first use runs, '{first_use.op.name}' at {line_of(first_use.op)}"
                )
        op.attributes[DEVICE_ATTR] = self.home[op]

    def home_of(self, op: Operation) -> DeviceAttr:
        device = self.home.get(op)
        return device if device is not None else cast(DeviceAttr, op.attributes[DEVICE_ATTR])

    def constant_on(self, op: Operation, device: DeviceAttr, use: Use) -> SSAValue:
        if self.home[op] == device:
            return op.results[0]
        key = (op.results[0], device)
        made = self.made.get(key)
        if made is not None:
            return made
        clone = op.clone()
        clone.attributes[DEVICE_ATTR] = device
        if self.planner.explain:
            self.constant_words[clone] = (
                f"a clone of the dense constant for its use by '{use.op.name}' at "
                f"{line_of(use.op)}, which runs there (a constant is made where it is used, "
                "not copied)"
            )
        self._insert(op.results[0], clone)
        made = self.made[key] = clone.results[0]
        return made

    def moved_away(self, op: Operation) -> bool:
        return any(value is op.results[0] for value, _ in self.made)
