"""The `vdev` dialect: placement ops and placement attributes (TVM's `on_device` and
`device_copy`, and its VirtualDevice annotations).

The dialect's attribute is `#vdev.device<type, id, target, scope>` (`virtual_device.py`,
which holds the lattice `join`/`default` beside it). This file holds the placement ops
(`vdev.on_device`, `vdev.device_copy`), the names of the placement attributes on
functions and modules (`vdev.device`, `vdev.host_device`, `vdev.default_device`,
`vdev.targets`, `vdev.system`) with the dialect-level check
`verify_placement_attributes` that `devplan-opt` runs, and the `Vdev` dialect object.
Reading placement from IR is `placement.py`; the memory-scope rules that need no system
description (`kernel_can_reach`, `host_can_access`) are `memory_scopes.py`.

```mlir
%y = vdev.on_device %x to #vdev.device<"cuda", 0> : tensor<4xf32>
%y = vdev.device_copy %x from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Iterator
from typing import ClassVar, Self, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at
from .target import TargetAttr
from .target_registry import host_capable_kinds, kind_device_type
from .virtual_device import DeviceAttr, ir_text, memory_space_problem

# --- ops -----------------------------------------------------------------------------


def _parse_device(parser: Parser, role: str) -> DeviceAttr:
    start = parser.pos
    device = parser.parse_attribute()
    if not isinstance(device, DeviceAttr):
        parser.raise_error(
            f"expected a #vdev.device {role}, got {ir_text(device)}", start, parser.pos
        )
    return device


class _PlacementOp(IRDLOperation, ABC):
    """What `vdev.on_device` and `vdev.device_copy` share: the result is the operand,
    unchanged, and the syntax is `%x <keyword> #vdev.device ... attr-dict : type`."""

    input = operand_def()
    result = result_def()

    DEVICE_KEYWORDS: ClassVar[tuple[tuple[str, str], ...]]
    """Each keyword of the syntax with the property that holds its device, in order."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        operand = parser.parse_unresolved_operand()
        devices: dict[str, Attribute] = {}
        for keyword, prop in cls.DEVICE_KEYWORDS:
            parser.parse_keyword(keyword)
            devices[prop] = _parse_device(parser, f"after '{keyword}'")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(operand, value_type)],
            result_types=[value_type],
            properties=devices,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        for keyword, prop in self.DEVICE_KEYWORDS:
            printer.print_string(f" {keyword} ")
            printer.print_attribute(self.properties[prop])
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)

    def verify_(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(
                f"result type {self.result.type} differs from operand type {self.input.type}; "
                "placement never changes a value's type"
            )


@irdl_op_definition
class OnDeviceOp(_PlacementOp):
    """Places a computation on a device (TVM's `on_device`); the result is the operand.

    By default the operand is computed on `device` (`constrain_body`, true unless
    `{constrain_body = false}`) and the result may be used elsewhere (plan-devices
    puts a copy at the use); `{constrain_result}` pins the result there too. With
    neither (`{constrain_body = false}` alone) it is TVM's "free" form, which allows a
    copy here and places nothing, so its device must be `#vdev.device<?>`.

    ```mlir
    %y = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    ```
    """

    name = "vdev.on_device"

    device = prop_def(DeviceAttr)
    """Where the operand (and with `constrain_result` the result) lives."""

    DEVICE_KEYWORDS: ClassVar[tuple[tuple[str, str], ...]] = (("to", "device"),)

    # Both flags are checked in verify_ (not by their constraint) for a clearer message.
    constrain_result_attr = opt_attr_def(Attribute, attr_name="constrain_result")
    """Present (a unit attribute): the result is pinned to `device` as well."""
    constrain_body_attr = opt_attr_def(Attribute, attr_name="constrain_body")
    """`false`: the operand is not constrained (absent means true, as in TVM)."""

    def __init__(
        self,
        value: SSAValue | Operation,
        device: DeviceAttr,
        constrain_result: bool = False,
        constrain_body: bool = True,
    ):
        attributes: dict[str, Attribute] = {}
        if constrain_result:
            attributes["constrain_result"] = UnitAttr()
        if not constrain_body:
            attributes["constrain_body"] = IntegerAttr(0, IntegerType(1))
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"device": device},
            attributes=attributes,
        )

    @property
    def constrain_result(self) -> bool:
        """Whether the result is pinned to the device."""
        return self.constrain_result_attr is not None

    @property
    def constrain_body(self) -> bool:
        """Whether the operand is computed on the device (default true)."""
        flag = self.constrain_body_attr
        return flag is None or not _is_bool(flag) or bool(cast(BoolAttr, flag).value.data)

    def verify_(self) -> None:
        super().verify_()
        result_flag, body_flag = self.constrain_result_attr, self.constrain_body_attr
        if result_flag is not None and not isinstance(result_flag, UnitAttr):
            raise VerifyException(
                f"constrain_result is a flag: write {{constrain_result}}, "
                f"not constrain_result = {ir_text(result_flag)}"
            )
        if body_flag is not None and not _is_bool(body_flag):
            raise VerifyException(f"constrain_body must be true or false, got {ir_text(body_flag)}")
        if self.constrain_body or self.constrain_result:
            if self.device.is_fully_unconstrained:
                raise VerifyException(
                    "places nothing: #vdev.device<?> is fully unconstrained "
                    "(give at least a device type, or use {constrain_body = false} alone "
                    "for the free form)"
                )
        elif not self.device.is_fully_unconstrained:
            raise VerifyException(
                f"with neither constrain_body nor constrain_result is the free form, "
                f"which places nothing; its device must be #vdev.device<?>, not {self.device}"
            )


@irdl_op_definition
class DeviceCopyOp(_PlacementOp):
    """Copies a value from one device to another (TVM's `device_copy`).

    The result equals the operand and lives on `to`; the operand lives on `from`.
    Both must name at least a device type.

    ```mlir
    %y = vdev.device_copy %x from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
    ```
    """

    name = "vdev.device_copy"

    src_device = prop_def(DeviceAttr)
    """Where the operand lives."""
    dst_device = prop_def(DeviceAttr)
    """Where the result lives."""

    DEVICE_KEYWORDS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("from", "src_device"),
        ("to", "dst_device"),
    )

    def __init__(self, value: SSAValue | Operation, src: DeviceAttr, dst: DeviceAttr):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"src_device": src, "dst_device": dst},
        )

    def verify_(self) -> None:
        super().verify_()
        for role, device in (("from", self.src_device), ("to", self.dst_device)):
            if device.type_name is None:
                raise VerifyException(
                    f"'{role}' device {device} must name at least a device type, "
                    'e.g. #vdev.device<"cuda", 0>'
                )


def _is_bool(attr: Attribute) -> bool:
    return isinstance(attr, IntegerAttr) and cast(BoolAttr, attr).type == IntegerType(1)


# --- placement attributes on functions and modules ---------------------------------------

DEVICE_ATTR = "vdev.device"
"""Placement of a function argument / result (arg and res attribute) or an op's result."""
HOST_DEVICE_ATTR = "vdev.host_device"
"""Module attribute: the device host code runs on."""
DEFAULT_DEVICE_ATTR = "vdev.default_device"
"""Module attribute: where unconstrained computation goes (default: the host device)."""
TARGETS_ATTR = "vdev.targets"
"""Module attribute: array of `#target.target`, at most one per device type."""
SYSTEM_ATTR = "vdev.system"
"""Module attribute: the module's own system description, TOML text or a `.toml` path
(read by `devplan.system.description.System.from_module`)."""

MODULE_ATTRS = (HOST_DEVICE_ATTR, DEFAULT_DEVICE_ATTR, TARGETS_ATTR, SYSTEM_ATTR)
KNOWN_ATTRS = (DEVICE_ATTR, *MODULE_ATTRS)


def function_attr_dicts(op: Operation, key: str) -> list[DictionaryAttr | None]:
    """The argument or result attribute dictionaries (`key`: "arg_attrs" or "res_attrs")
    of a function-like op, one per argument or result (None where an entry is no dictionary)."""
    value = op.properties.get(key) or op.attributes.get(key)
    if not isinstance(value, ArrayAttr):
        return []
    return [d if isinstance(d, DictionaryAttr) else None for d in cast(ArrayAttr[Attribute], value)]


def _check_device_value(op: Operation, where: str, value: Attribute) -> None:
    if not isinstance(value, DeviceAttr):
        raise error_at(op, f"{where} must be a #vdev.device, got {ir_text(value)}")


def _check_op_placement(op: Operation, value: Attribute) -> None:
    """`vdev.device` on an op: one `#vdev.device`, or an array of one per result."""
    if not isinstance(value, ArrayAttr):
        _check_device_value(op, f"'{DEVICE_ATTR}'", value)
        return
    items = cast(ArrayAttr[Attribute], value).data
    if len(items) != len(op.results):
        raise error_at(
            op,
            f"'{DEVICE_ATTR}' has {len(items)} devices for {len(op.results)} results "
            "(give one #vdev.device, or an array with one per result)",
        )
    for index, item in enumerate(items):
        _check_device_value(op, f"'{DEVICE_ATTR}' of result {index}", item)


def _check_targets(op: Operation, value: Attribute) -> None:
    if not isinstance(value, ArrayAttr):
        raise error_at(
            op, f"'{TARGETS_ATTR}' must be an array of #target.target, got {ir_text(value)}"
        )
    seen: dict[str, TargetAttr] = {}
    for target in cast(ArrayAttr[Attribute], value):
        if not isinstance(target, TargetAttr):
            raise error_at(
                op, f"'{TARGETS_ATTR}' must hold only #target.target, got {ir_text(target)}"
            )
        first = seen.setdefault(target.device_type, target)
        if first is not target:
            raise error_at(
                op,
                f"'{TARGETS_ATTR}' has two targets for device type '{target.device_type}': "
                f"{ir_text(first)} and {ir_text(target)} "
                "(at most one target per device type)",
            )


def _check_host_device(op: Operation, device: DeviceAttr) -> None:
    """The host device runs host code: its type is one a host-capable target kind
    compiles for (`cpu`, `hexagon`, ...), and its target, if any, is host-capable."""
    where = f"'{HOST_DEVICE_ATTR}' {ir_text(device)}"
    if device.type_name is None:
        raise error_at(op, f"{where} must name a device type")
    target = device.target_value
    host_kinds = host_capable_kinds()
    if target is not None and not target.target_kind.host_capable:
        raise error_at(
            op,
            f"{where} has target kind '{target.kind_name}', which cannot compile host code "
            f"(host-capable kinds: {', '.join(host_kinds)})",
        )
    host_types = sorted({kind_device_type(kind) for kind in host_kinds})
    if device.type_name not in host_types:
        raise error_at(
            op,
            f"{where} is a '{device.type_name}' device, which cannot run host code "
            f"(host device types: {', '.join(host_types)}); name a host device such as "
            '#vdev.device<"cpu", 0>',
        )


def _check_module_attr(op: Operation, name: str, value: Attribute) -> None:
    if not isinstance(op, ModuleOp):
        raise error_at(op, f"'{name}' is a module attribute; put it on the builtin.module")
    if name in (HOST_DEVICE_ATTR, DEFAULT_DEVICE_ATTR):
        _check_device_value(op, f"'{name}'", value)
        if name == HOST_DEVICE_ATTR:
            _check_host_device(op, cast(DeviceAttr, value))
    elif name == TARGETS_ATTR:
        _check_targets(op, value)
    elif not isinstance(value, StringAttr):
        raise error_at(
            op, f"'{name}' must be a string (TOML text or a .toml path), got {ir_text(value)}"
        )


def _check_function_attrs(op: Operation) -> None:
    for key, role in (("arg_attrs", "argument"), ("res_attrs", "result")):
        for index, entry in enumerate(function_attr_dicts(op, key)):
            for name, value in entry.data.items() if entry is not None else ():
                if name == DEVICE_ATTR:
                    _check_device_value(op, f"'{DEVICE_ATTR}' of {role} {index}", value)
                elif name.startswith("vdev."):
                    raise error_at(
                        op,
                        f"unknown {role} attribute '{name}' of {role} {index} "
                        f"(valid: {DEVICE_ATTR})",
                    )


def _memref_types(attr: Attribute) -> Iterator[MemRefType]:
    """Every memref type inside `attr` (a type, a function type, an array, ...)."""
    if isinstance(attr, MemRefType):
        yield cast(MemRefType, attr)
    if isinstance(attr, ParametrizedAttribute):
        for parameter in attr.parameters:
            yield from _memref_types(parameter)
    elif isinstance(attr, ArrayAttr):
        for item in cast(ArrayAttr[Attribute], attr):
            yield from _memref_types(item)
    elif isinstance(attr, DictionaryAttr):
        for item in attr.data.values():
            yield from _memref_types(item)


def _check_memory_spaces(op: Operation) -> None:
    """Every memref type `op` defines or names (results, block arguments of its regions,
    attributes such as a function type) has no memory space or a `#vdev.device`."""
    named: list[Attribute] = [
        *op.result_types,
        *(t for region in op.regions for block in region.blocks for t in block.arg_types),
        *op.properties.values(),
        *op.attributes.values(),
    ]
    for attr in named:
        for memref in _memref_types(attr):
            if (problem := memory_space_problem(memref)) is not None:
                raise error_at(op, f"'{op.name}' {problem}")


def verify_placement_attributes(module: Operation) -> None:
    """The vdev dialect's module check, run by `verify_located`.

    `vdev.device` (on an op, or a function argument / result) must be a `#vdev.device`;
    the module attributes must sit on a `builtin.module` and have their types
    (`vdev.targets`: at most one target per device type); any other `vdev.*` attribute
    name is unknown. Every memref is host memory (no memory space) or lives on a
    `#vdev.device` — except in `gpu`-dialect input, whose integer memory spaces
    `convert-gpu-to-device` translates. Raises a `LocatedError` at the offending op.
    """
    gpu_input = any(op.name.startswith("gpu.") for op in module.walk())
    for op in module.walk():
        if not gpu_input:
            _check_memory_spaces(op)
        for name, value in op.attributes.items():
            if not name.startswith("vdev."):
                continue
            if name == DEVICE_ATTR:
                _check_op_placement(op, value)
            elif name in MODULE_ATTRS:
                _check_module_attr(op, name, value)
            else:
                raise error_at(op, f"unknown attribute '{name}' (valid: {', '.join(KNOWN_ATTRS)})")
        _check_function_attrs(op)


Vdev = Dialect("vdev", [OnDeviceOp, DeviceCopyOp], [DeviceAttr])


__all__ = [
    "DEFAULT_DEVICE_ATTR",
    "DEVICE_ATTR",
    "HOST_DEVICE_ATTR",
    "KNOWN_ATTRS",
    "MODULE_ATTRS",
    "SYSTEM_ATTR",
    "TARGETS_ATTR",
    "DeviceCopyOp",
    "OnDeviceOp",
    "Vdev",
    "function_attr_dicts",
    "verify_placement_attributes",
]
