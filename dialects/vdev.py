"""The `vdev` dialect: virtual devices, memory scopes and placement (TVM's VirtualDevice).

SKELETON — to be completed by the virtual-device work (join/default, ops, verifiers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntAttr, MemRefType, NoneAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from .target import TargetAttr


@irdl_attr_definition
class DeviceAttr(ParametrizedAttribute):
    """`#vdev.device<"cuda", 0, #target.target<"cuda">, "global">`; `?` = unconstrained."""

    name = "vdev.device"

    device_type: StringAttr | NoneAttr
    virtual_id: IntAttr | NoneAttr
    target: TargetAttr | NoneAttr
    memory_scope: StringAttr | NoneAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        readers: tuple[Callable[[], Attribute], ...] = (
            lambda: StringAttr(parser.parse_str_literal("device type")),
            lambda: IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)),
            parser.parse_attribute,
            lambda: StringAttr(parser.parse_str_literal("memory scope")),
        )
        fields: list[Attribute] = [NoneAttr()] * len(readers)
        with parser.in_angle_brackets():
            for i, read in enumerate(readers):
                if i and parser.parse_optional_punctuation(",") is None:
                    break
                if parser.parse_optional_punctuation("?") is None:
                    fields[i] = read()
        return tuple(fields)

    def print_parameters(self, printer: Printer) -> None:
        fields = list(self.parameters)
        while len(fields) > 1 and isinstance(fields[-1], NoneAttr):
            fields.pop()

        def print_field(field: Attribute) -> None:
            if isinstance(field, NoneAttr):
                printer.print_string("?")
            elif isinstance(field, StringAttr):
                printer.print_string_literal(field.data)
            elif isinstance(field, IntAttr):
                printer.print_int(field.data)
            else:
                printer.print_attribute(field)

        with printer.in_angle_brackets():
            printer.print_list(fields, print_field)


def memory_space_of(memref: MemRefType) -> DeviceAttr | None:
    """The device a memref's memory lives on; None for host memory (no memory space)."""
    space = memref.memory_space
    return space if isinstance(space, DeviceAttr) else None


Vdev = Dialect("vdev", [], [DeviceAttr])
