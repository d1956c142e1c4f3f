"""Level-1 rules: decisions for `vdev.device_copy` of tensor values.

Tensors are values: nothing writes them, so only dominance matters. The rules, in the
order they are tried, are listed in the package's header (`elision.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import NoneAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ...analysis.dominance import Positions, dominates
from ...analysis.memory_areas import MemoryAreas, byte_size
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from ...dialects.virtual_device import DeviceAttr
from .decisions import Decision, Elide, Keep, erase


def same_place(a: DeviceAttr, b: DeviceAttr) -> bool:
    """Same device type, id and scope (an unset scope is `global`): where lower-to-device
    puts one buffer, and what an op's operands must share with it."""
    return (
        a.type_name is not None
        and a.device_id is not None
        and (a.type_name, a.device_id, a.scope or DEFAULT_SCOPE)
        == (b.type_name, b.device_id, b.scope or DEFAULT_SCOPE)
    )


def _result_of(op: Operation) -> Callable[[], SSAValue]:
    return lambda: op.results[0]


def _replace_and_erase(copy: DeviceCopyOp, value: Callable[[], SSAValue]) -> Callable[[], None]:
    """Uses of the copy take `value()`, read when the rewrite runs: an earlier decision
    of the round may have replaced the value it names (a duplicate copy erased)."""

    def rewrite() -> None:
        copy.result.replace_all_uses_with(value())
        erase(copy)

    return rewrite


def _reroute(
    copy: DeviceCopyOp, previous: DeviceCopyOp, erase_previous: bool
) -> Callable[[], None]:
    def rewrite() -> None:
        copy.operands[0] = previous.input
        copy.properties["src_device"] = previous.src_device
        if erase_previous:
            erase(previous)

    return rewrite


def _materialise(
    copy: DeviceCopyOp,
    constant: arith.ConstantOp,
    pins: Sequence[OnDeviceOp],
    existing: Operation | None = None,
) -> Callable[[], None]:
    """Uses of the copy take `existing` (the constant already on the destination) or a
    clone of `constant` placed there; `pins` (the `vdev.on_device` ops between the
    constant and the copy) and `constant` go when nothing else uses them."""

    def rewrite() -> None:
        if existing is None:
            clone = constant.clone()
            clone.attributes[DEVICE_ATTR] = copy.dst_device
            assert copy.parent is not None
            copy.parent.insert_op_before(clone, copy)
            value = clone.result
        else:
            value = existing.results[0]
        copy.result.replace_all_uses_with(value)
        erase(copy)
        for op in (*pins, constant):
            if not op.results[0].uses:
                erase(op)

    return rewrite


def copied_constant(value: SSAValue) -> tuple[arith.ConstantOp, list[OnDeviceOp]] | None:
    """The tensor constant `value` is, through any `vdev.on_device` ops (whose result is
    their operand), with those ops from `value` down; None when it is no constant."""
    pins: list[OnDeviceOp] = []
    while isinstance(value.owner, OnDeviceOp):
        pins.append(value.owner)
        value = value.owner.operands[0]
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.result.type, TensorType):
        return owner, pins
    return None


def _constant_key(op: arith.ConstantOp, device: Attribute) -> tuple[Attribute, ...]:
    value: Attribute = op.value
    return (value, op.result.type, device)


class Level1:
    """Decisions for every `vdev.device_copy` of a module."""

    def __init__(self, ops: list[Operation], areas: MemoryAreas):
        self.areas = areas
        self.positions = Positions()
        self.copies: list[DeviceCopyOp] = []
        self.constants: dict[tuple[Attribute, ...], list[Operation]] = {}
        """Tensor constants by (value, type, device): where a copied constant may already
        be materialised."""
        for op in ops:
            if isinstance(op, DeviceCopyOp):
                self.copies.append(op)
            elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
                key = _constant_key(op, op.attributes.get(DEVICE_ATTR, NoneAttr()))
                self.constants.setdefault(key, []).append(op)
        self.earlier: dict[tuple[SSAValue, DeviceAttr], list[DeviceCopyOp]] = {}

    def decisions(self) -> Iterator[Decision]:
        for copy in self.copies:
            yield self.decide(copy)
            self.earlier.setdefault((copy.input, copy.dst_device), []).append(copy)

    def decide(self, copy: DeviceCopyOp) -> Decision:
        here = frozenset((copy,))
        if not copy.result.uses:
            return Elide("unused", copy, lambda: erase(copy), here)
        if same_place(copy.src_device, copy.dst_device):
            return Elide("same-memory", copy, _replace_and_erase(copy, lambda: copy.input), here)
        for first in self.earlier.get((copy.input, copy.dst_device), ()):
            if dominates(first, copy, self.positions):
                rewrite = _replace_and_erase(copy, _result_of(first))
                return Elide("duplicate", copy, rewrite, here | {first})
        source = copy.input.owner
        if isinstance(source, DeviceCopyOp):
            return self.decide_after_copy(copy, source)
        if (found := copied_constant(copy.input)) is not None:
            constant, pins = found
            touched = here | {constant, *pins}
            key = _constant_key(constant, copy.dst_device)
            for existing in self.constants.get(key, ()):
                if dominates(existing, copy, self.positions):
                    rewrite = _materialise(copy, constant, pins, existing)
                    return Elide("constant", copy, rewrite, touched | {existing})
            return Elide("constant", copy, _materialise(copy, constant, pins), touched)
        return Keep(copy, self.transfer_text(copy))

    def decide_after_copy(self, copy: DeviceCopyOp, previous: DeviceCopyOp) -> Decision:
        touches = frozenset((copy, previous))
        if not self.areas.one_area(previous.dst_device, copy.src_device):
            return Keep(
                copy,
                f"its operand is copied to {previous.dst_device}, but the copy says it "
                f"is on {copy.src_device}",
            )
        if same_place(previous.src_device, copy.dst_device):
            return Elide(
                "round-trip", copy, _replace_and_erase(copy, lambda: previous.input), touches
            )
        nbytes = byte_size(copy.result.type)
        direct = self.areas.route_seconds(previous.src_device, copy.dst_device, nbytes)
        if previous.result.has_one_use():
            if direct is None:
                return Keep(
                    copy,
                    f"the middle of a chain, but the system has no route from "
                    f"{self.place(previous.src_device)} to {self.place(copy.dst_device)}",
                )
            return Elide("chain", copy, _reroute(copy, previous, True), touches)
        hop = self.areas.route_seconds(copy.src_device, copy.dst_device, nbytes)
        if direct is not None and (hop is None or direct < hop):
            return Elide("reroute", copy, _reroute(copy, previous, False), touches, False)
        return Keep(
            copy,
            f"{self.transfer_text(copy)}; its operand has other uses and copying from "
            f"{self.place(previous.src_device)} instead is not cheaper",
        )

    def transfer_text(self, copy: DeviceCopyOp) -> str:
        """Why a copy is a real one."""
        if not self.areas.one_area(copy.src_device, copy.dst_device):
            return f"a transfer between distinct memories ({self.route_text(copy)})"
        return (
            f"{self.route_text(copy)} are one memory area, but two places: lower-to-device "
            "gives each place its own buffer, and kernels reach only their own device's "
            "(at level 2 the copy goes where one buffer can serve both)"
        )

    def route_text(self, copy: DeviceCopyOp) -> str:
        return f"{self.place(copy.src_device)} to {self.place(copy.dst_device)}"

    def place(self, device: DeviceAttr) -> str:
        """`cuda:0/global` for a device of the system, else the attribute."""
        ref = self.areas.scope_ref(device)
        return str(device) if ref is None else f"{ref[0]}/{ref[1]}"
