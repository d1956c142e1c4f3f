"""The `vdev` dialect: virtual devices, memory scopes and placement (TVM's VirtualDevice).

A `#vdev.device<type, id, target, scope>` says where a value lives or a computation
runs. Each of its four fields may be unconstrained (`?`); the lattice operations
`join` and `default` are TVM's `VirtualDevice::Join` / `VirtualDevice::Default` as
TVM's *code* implements them, except that targets compare by value (TVM compares
them by object identity, so two separately built `cuda` targets fail to join).

```mlir
#vdev.device<"cuda", 0, #target.target<"cuda">, "global">   // type, virtual id, target, scope
#vdev.device<"cuda", 0>                                      // trailing fields unconstrained
#vdev.device<"cpu", ?, ?, "global">                          // ? = unconstrained
#vdev.device<?>                                              // fully unconstrained
```

Canonical form: a target fixes the device type. `#vdev.device<?, 0, #target.target<"cuda">>`
is read as `#vdev.device<"cuda", 0, #target.target<"cuda">>` (the derived type is stored,
so equal devices are equal attributes) and prints that way; a type that disagrees with
the target is an error naming both.

The dialect also holds placement ops (`vdev.on_device`, `vdev.device_copy`), the
placement attributes on functions and modules (`vdev.device`, `vdev.host_device`,
`vdev.default_device`, `vdev.targets`, `vdev.system`) with the dialect-level check
`verify_placement_attributes` that `devplan-opt` runs, and the memory-scope rules that
need no system description (`kernel_can_reach`, `host_can_access`).
"""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import ClassVar, Self, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import DevplanError, error_at
from .target import Target, TargetAttr


class VirtualDeviceError(DevplanError, ValueError):
    """A bad virtual device built from Python (bad device string, type/target mismatch)."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
"""Device types and memory scopes: identifiers that may contain `.` and `-`
(`global.texture`, `shared.dyn`), but never `:` or `/`, which device strings use."""


def _check_name(what: str, name: str) -> str | None:
    """Why `name` is not a valid device type / memory scope, or None when it is."""
    if _NAME.fullmatch(name) is None:
        return (
            f"invalid {what} '{name}': expected an identifier such as "
            + ("'cuda'" if what == "device type" else "'global'")
            + " (use ? for unconstrained)"
        )
    return None


def ir_text(attr: Attribute) -> str:
    """An attribute as IR text; unlike `str()`, also for a target (whose `str()` is TVM's
    JSON form)."""
    return Attribute.__str__(attr)


def _mismatch(type_name: str, target: TargetAttr) -> str:
    return (
        f"device type '{type_name}' does not match the device type "
        f"'{target.device_type}' of target {ir_text(target)}"
    )


@irdl_attr_definition
class DeviceAttr(ParametrizedAttribute):
    """A virtual device: device type, virtual id, target and memory scope, each optional.

    TVM's VirtualDevice (`include/tvm/target/virtual_device.h`). Used for placement
    (`vdev.on_device`, `vdev.device` argument attributes) and as a memref memory space.

    ```mlir
    memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
    ```
    """

    name = "vdev.device"

    device_type: StringAttr | NoneAttr
    """Device type name (`"cpu"`, `"cuda"`, a user kind's own such as `"dsp"`)."""
    virtual_id: IntAttr | NoneAttr
    """Which device of that type (0, 1, ...); a virtual id, mapped onto a real device by
    the system description."""
    target: TargetAttr | NoneAttr
    """How code placed here is compiled; its device type is the device's type."""
    memory_scope: StringAttr | NoneAttr
    """Memory scope (`"global"`, `"shared"`, `"host"`, a system's `"vtcm"`, ...)."""

    # --- IR syntax -------------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        readers: tuple[Callable[[], Attribute], ...] = (
            lambda: StringAttr(
                parser.parse_str_literal(" for the device type (or ? for unconstrained)")
            ),
            lambda: IntAttr(
                parser.parse_integer(
                    allow_boolean=False,
                    allow_negative=True,
                    context_msg=" for the virtual id (or ? for unconstrained)",
                )
            ),
            parser.parse_attribute,
            lambda: StringAttr(
                parser.parse_str_literal(" for the memory scope (or ? for unconstrained)")
            ),
        )
        what = ("device type", "virtual id", "target", "memory scope")
        fields: list[Attribute] = [NoneAttr()] * len(readers)
        starts = [0] * len(readers)
        ends = [0] * len(readers)
        with parser.in_angle_brackets():
            for i, read in enumerate(readers):
                if i and parser.parse_optional_punctuation(",") is None:
                    break
                starts[i] = parser.pos
                if parser.parse_optional_punctuation("?") is None:
                    fields[i] = read()
                ends[i] = parser.pos
                field = fields[i]
                if isinstance(field, StringAttr) and (why := _check_name(what[i], field.data)):
                    parser.raise_error(why, starts[i], ends[i])
                if isinstance(field, IntAttr) and (value := cast(IntAttr[int], field).data) < 0:
                    parser.raise_error(
                        f"invalid virtual id {value}: expected 0 or more (? = unconstrained)",
                        starts[i],
                        ends[i],
                    )
                if i == 2 and not isinstance(field, TargetAttr | NoneAttr):
                    parser.raise_error(
                        "expected a #target.target or ? as the device's target, "
                        f"got {ir_text(cast(Attribute, field))}",
                        starts[i],
                        ends[i],
                    )
        target = fields[2]
        if isinstance(target, TargetAttr):
            type_field = fields[0]
            if isinstance(type_field, NoneAttr):
                fields[0] = StringAttr(target.device_type)
            elif isinstance(type_field, StringAttr) and type_field.data != target.device_type:
                parser.raise_error(_mismatch(type_field.data, target), starts[0], ends[2])
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
                printer.print_int(cast(IntAttr[int], field).data)
            else:
                printer.print_attribute(field)

        with printer.in_angle_brackets():
            printer.print_list(fields, print_field)

    def verify(self) -> None:
        if isinstance(self.device_type, StringAttr) and (
            why := _check_name("device type", self.device_type.data)
        ):
            raise VerifyException(why)
        if isinstance(self.memory_scope, StringAttr) and (
            why := _check_name("memory scope", self.memory_scope.data)
        ):
            raise VerifyException(why)
        if (device_id := self.device_id) is not None and device_id < 0:
            raise VerifyException(
                f"invalid virtual id {device_id}: expected 0 or more (? = unconstrained)"
            )
        if isinstance(self.target, TargetAttr):
            if isinstance(self.device_type, NoneAttr):
                # Canonical form stores the type a target implies (DeviceAttr.make does).
                raise VerifyException(
                    f"a device with target {ir_text(self.target)} must also give its "
                    f"device type '{self.target.device_type}'"
                )
            if self.device_type.data != self.target.device_type:
                raise VerifyException(_mismatch(self.device_type.data, self.target))

    # --- Python API ------------------------------------------------------------------

    @staticmethod
    def make(
        type_name: str | None = None,
        device_id: int | None = None,
        target: TargetAttr | str | None = None,
        scope: str | None = None,
    ) -> DeviceAttr:
        """A virtual device; None fields are unconstrained. A target (a `TargetAttr`, or
        a string for `Target.parse`) implies the device type, which must agree if given."""
        if isinstance(target, str):
            target = Target.parse(target)
        if target is not None:
            if type_name is None:
                type_name = target.device_type
            elif type_name != target.device_type:
                raise VirtualDeviceError(_mismatch(type_name, target))
        for what, name in (("device type", type_name), ("memory scope", scope)):
            if name is not None and (why := _check_name(what, name)):
                raise VirtualDeviceError(why)
        if device_id is not None and device_id < 0:
            raise VirtualDeviceError(
                f"invalid virtual id {device_id}: expected 0 or more (None = unconstrained)"
            )
        return DeviceAttr(
            StringAttr(type_name) if type_name is not None else NoneAttr(),
            IntAttr(device_id) if device_id is not None else NoneAttr(),
            target if target is not None else NoneAttr(),
            StringAttr(scope) if scope is not None else NoneAttr(),
        )

    @staticmethod
    def from_string(text: str) -> DeviceAttr:
        """`"cuda"`, `"cuda:0"`, `"cuda:0/global"`, `"?/shared"`: `TYPE[:ID][/SCOPE]`,
        `?` for an unconstrained type or id."""
        if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise VirtualDeviceError(
                "VirtualDevice.from_string: text must be a string such as 'cuda:0', "
                f"got {type(text).__name__} {text!r}"
            )
        match = re.fullmatch(r"([^:/]+)(?::([^:/]+))?(?:/(.+))?", text.strip())
        if match is None or (
            match.group(2) is not None and not re.fullmatch(r"\d+|\?", match.group(2))
        ):
            raise VirtualDeviceError(
                f"invalid device string '{text}': expected TYPE[:ID][/SCOPE], "
                "e.g. 'cuda', 'cuda:0' or 'cuda:0/global'"
            )
        type_text, id_text, scope = match.groups()
        return DeviceAttr.make(
            None if type_text == "?" else type_text,
            None if id_text in (None, "?") else int(id_text),
            None,
            scope,
        )

    def to_string(self) -> str:
        """The inverse of `from_string` (the target is not part of it): `"cuda:0/global"`."""
        text = self.type_name or "?"
        if self.device_id is not None:
            text += f":{self.device_id}"
        if self.scope is not None:
            text += f"/{self.scope}"
        return text

    @property
    def type_name(self) -> str | None:
        """The device type, or None when unconstrained."""
        return self.device_type.data if isinstance(self.device_type, StringAttr) else None

    @property
    def device_id(self) -> int | None:
        """The virtual device id, or None when unconstrained."""
        return self.virtual_id.data if isinstance(self.virtual_id, IntAttr) else None

    @property
    def target_value(self) -> TargetAttr | None:
        """The target, or None when unconstrained."""
        return self.target if isinstance(self.target, TargetAttr) else None

    @property
    def scope(self) -> str | None:
        """The memory scope, or None when unconstrained."""
        return self.memory_scope.data if isinstance(self.memory_scope, StringAttr) else None

    @property
    def is_fully_constrained(self) -> bool:
        """TVM's `IsFullyConstrained`: target, id and scope are set (the target fixes the
        device type)."""
        return (
            self.target_value is not None and self.device_id is not None and self.scope is not None
        )

    @property
    def is_fully_unconstrained(self) -> bool:
        """All four fields are `?` (`#vdev.device<?>`)."""
        return all(isinstance(p, NoneAttr) for p in self.parameters)

    def join(self, other: DeviceAttr) -> DeviceAttr | None:
        """`join(self, other)`."""
        return join(self, other)

    def default(self, other: DeviceAttr) -> DeviceAttr:
        """`default(self, other)`."""
        return default(self, other)


VirtualDevice = DeviceAttr
"""The Python name of TVM's concept; the same class."""

UNCONSTRAINED = DeviceAttr(NoneAttr(), NoneAttr(), NoneAttr(), NoneAttr())
"""`#vdev.device<?>`."""


def join(a: DeviceAttr, b: DeviceAttr) -> DeviceAttr | None:
    """The most constrained device agreeing with both, or None when they conflict.

    TVM's `VirtualDevice::Join`: each field comes from whichever side constrains it; a
    field both sides constrain to different values means no join. Targets compare by
    value. Example: `join(cpu/?/llvm/?, ?/3/?/"local") == cpu/3/llvm/"local"`.
    """
    fields: list[Attribute] = []
    for mine, theirs in zip(a.parameters, b.parameters, strict=True):
        if isinstance(mine, NoneAttr):
            fields.append(theirs)
        elif isinstance(theirs, NoneAttr) or mine == theirs:
            fields.append(mine)
        else:
            return None
    # Both sides are canonical (a target's type is stored), so a target from one side
    # and a type from the other already agree or were rejected above.
    return DeviceAttr.new(fields)


def default(a: DeviceAttr, b: DeviceAttr) -> DeviceAttr:
    """`a` with its unconstrained fields filled from `b` (always defined).

    TVM's `VirtualDevice::Default`: type, id and scope come from `a` when constrained,
    else from `b`; `b`'s target is taken only when `a` has none and `b`'s target's device
    type equals the resulting device type (otherwise the target stays unconstrained).
    """
    type_name = a.type_name if a.type_name is not None else b.type_name
    target = a.target_value
    if target is None and b.target_value is not None and b.target_value.device_type == type_name:
        target = b.target_value
    return DeviceAttr.make(
        type_name,
        a.device_id if a.device_id is not None else b.device_id,
        target,
        a.scope if a.scope is not None else b.scope,
    )


class MemorySpaceError(VirtualDeviceError, VerifyException):
    """A memref memory space that is not a `#vdev.device`. It is also a verify failure, so
    an op verifier that meets one is reported at the op (`verify_located`)."""


def memory_space_problem(memref: MemRefType) -> str | None:
    """Why `memref`'s memory space is not one devplan understands, or None when it is
    (no memory space, or a `#vdev.device`)."""
    space = memref.memory_space
    if isinstance(space, NoneAttr | DeviceAttr):
        return None
    return (
        f"memory space {ir_text(space)} of {ir_text(memref)} is not a #vdev.device; a memref "
        "lives in host memory (no memory space) or on a device (a #vdev.device memory "
        'space such as #vdev.device<"cuda", 0>)'
    )


def memory_space_of(memref: MemRefType) -> DeviceAttr | None:
    """The device (and scope) a memref's memory lives on; None for host memory (no
    memory space). A memory space that is not a `#vdev.device` is a `MemorySpaceError`."""
    if (problem := memory_space_problem(memref)) is not None:
        raise MemorySpaceError(problem)
    space = memref.memory_space
    return space if isinstance(space, DeviceAttr) else None


# --- memory scopes without a system description ----------------------------------------

BUILTIN_SCOPES: tuple[str, ...] = ("global", "shared", "local", "global.texture", "host")
"""Scopes every devplan tool knows; a system description may declare more (`"vtcm"`)."""

DEFAULT_SCOPE = "global"
"""What an unconstrained scope means at run time (TVM: `""` is global)."""

HOST_SCOPE = "host"
"""A device's host-visible memory (pinned / mapped host memory on a GPU)."""

KERNEL_PRIVATE_SCOPES: frozenset[str] = frozenset({"shared", "local"})
"""Scopes that exist only during one launch (per block / per thread): a kernel allocates
them (`kernel.alloc_shared`); they are never passed to a kernel as arguments."""

_GPU_SCOPES = ("global", "shared", "local", "host")
DEVICE_TYPE_SCOPES: dict[str, tuple[str, ...]] = {
    "cpu": ("global", "shared", "local"),
    "cuda": _GPU_SCOPES,
    "rocm": _GPU_SCOPES,
    "vulkan": _GPU_SCOPES,
    "metal": _GPU_SCOPES,
    "webgpu": _GPU_SCOPES,
    "opencl": (*_GPU_SCOPES, "global.texture"),
}
"""Built-in scopes per device type; other types (hexagon, ext_dev, user kinds) have
`global` and whatever their system entry declares."""


def scopes_of(type_name: str) -> tuple[str, ...]:
    """The built-in memory scopes a device of this type has."""
    return DEVICE_TYPE_SCOPES.get(type_name, (DEFAULT_SCOPE,))


def effective_scope(memory: DeviceAttr | None) -> str:
    """The scope of memory on `memory`; unconstrained means `global` (None = host global)."""
    if memory is None or memory.scope is None:
        return DEFAULT_SCOPE
    return memory.scope


def host_can_access(memory: DeviceAttr | None) -> bool:
    """Whether host code may read and write memory in `memory` directly.

    Host memory (no memory space), any scope of a `cpu` device, and any device's `host`
    scope are host-visible; everything else needs a copy. A system description may
    declare more (`System.host_visible`).
    """
    if memory is None or memory.type_name == "cpu":
        return True
    return memory.scope == HOST_SCOPE


def _agree(a: DeviceAttr, b: DeviceAttr) -> bool:
    """Type and id agree where both are constrained (a `?` matches anything)."""
    return all(
        x is None or y is None or x == y
        for x, y in ((a.type_name, b.type_name), (a.device_id, b.device_id))
    )


def kernel_can_reach(launch_device: DeviceAttr, memory: DeviceAttr | None) -> bool:
    """Whether memory in `memory` may be an argument of a kernel launched on `launch_device`.

    Kernels of a `cpu` device run on the host and reach what the host can access (plain
    host memory included); other kernels reach their own device's memory (unconstrained
    type or id on either side match) in any scope but the kernel-private ones
    (`shared`, `local`). A system description may declare more (`System.kernel_reachable`).
    """
    if effective_scope(memory) in KERNEL_PRIVATE_SCOPES:
        return False
    if launch_device.type_name == "cpu":
        return host_can_access(memory)
    return memory is not None and _agree(launch_device, memory)


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


@cache
def default_host_device() -> DeviceAttr:
    """`#vdev.device<"cpu", 0, #target.target<"llvm">, "global">`."""
    return DeviceAttr.make("cpu", 0, Target.parse("llvm"), DEFAULT_SCOPE)


def host_device(module: ModuleOp) -> DeviceAttr:
    """The module's `vdev.host_device`, or `default_host_device()`."""
    device = module.attributes.get(HOST_DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else default_host_device()


def default_device(module: ModuleOp) -> DeviceAttr:
    """The module's `vdev.default_device`, or its host device."""
    device = module.attributes.get(DEFAULT_DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else host_device(module)


def module_targets(module: ModuleOp) -> dict[str, TargetAttr]:
    """The module's `vdev.targets` by device type (empty when absent)."""
    targets = module.attributes.get(TARGETS_ATTR)
    if not isinstance(targets, ArrayAttr):
        return {}
    items = cast(ArrayAttr[Attribute], targets).data
    return {t.device_type: t for t in items if isinstance(t, TargetAttr)}


def _function_attr_dicts(op: Operation, key: str) -> list[DictionaryAttr | None]:
    value = op.properties.get(key) or op.attributes.get(key)
    if not isinstance(value, ArrayAttr):
        return []
    return [d if isinstance(d, DictionaryAttr) else None for d in cast(ArrayAttr[Attribute], value)]


def arg_device(func: Operation, index: int) -> DeviceAttr | None:
    """The `vdev.device` of argument `index` of a `func.func`, or None."""
    dicts = _function_attr_dicts(func, "arg_attrs")
    entry = dicts[index] if index < len(dicts) else None
    device = entry.data.get(DEVICE_ATTR) if entry is not None else None
    return device if isinstance(device, DeviceAttr) else None


def result_device(func: Operation, index: int) -> DeviceAttr | None:
    """The `vdev.device` of result `index` of a `func.func`, or None."""
    dicts = _function_attr_dicts(func, "res_attrs")
    entry = dicts[index] if index < len(dicts) else None
    device = entry.data.get(DEVICE_ATTR) if entry is not None else None
    return device if isinstance(device, DeviceAttr) else None


def op_device(op: Operation) -> DeviceAttr | None:
    """The `vdev.device` an op carries (plan-devices puts one on each tensor op), or None.

    None also when the op carries one device per result (an array): ask
    `result_placement` for each result then.
    """
    device = op.attributes.get(DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else None


def result_placement(op: Operation, index: int) -> DeviceAttr | None:
    """The device of result `index` of `op` in a planned module, or None.

    `vdev.device` on an op is one `#vdev.device` for all its results, or an array with
    one `#vdev.device` per result (ops whose results live apart: `scf.if`, `scf.for`,
    `func.call`). A `vdev.device_copy` result lives at its destination.
    """
    if isinstance(op, DeviceCopyOp):
        return op.dst_device
    device = op.attributes.get(DEVICE_ATTR)
    if isinstance(device, DeviceAttr):
        return device
    if isinstance(device, ArrayAttr):
        items = cast(ArrayAttr[Attribute], device).data
        if index < len(items) and isinstance(items[index], DeviceAttr):
            return cast(DeviceAttr, items[index])
    return None


def value_device(value: SSAValue) -> DeviceAttr | None:
    """Where a value of a planned module lives, or None when nothing says.

    An op result: `result_placement`. A function argument: its `vdev.device` argument
    attribute. A loop-carried block argument of `scf.for`: the device of the loop
    result it carries (plan-devices keeps init value, block argument, yield and result
    of one iteration value on one device). Other block arguments: None.
    """
    if isinstance(value, OpResult):
        return result_placement(value.op, value.index)
    if not isinstance(value, BlockArgument):
        return None
    parent = value.block.parent_op()
    if parent is None:
        return None
    if parent.name == "func.func":
        return arg_device(parent, value.index)
    if parent.name == "scf.for" and value.index > 0:
        return result_placement(parent, value.index - 1)
    return None


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


def _check_module_attr(op: Operation, name: str, value: Attribute) -> None:
    if not isinstance(op, ModuleOp):
        raise error_at(op, f"'{name}' is a module attribute; put it on the builtin.module")
    if name in (HOST_DEVICE_ATTR, DEFAULT_DEVICE_ATTR):
        _check_device_value(op, f"'{name}'", value)
        if name == HOST_DEVICE_ATTR and cast(DeviceAttr, value).type_name is None:
            raise error_at(op, f"'{name}' {value} must name a device type")
    elif name == TARGETS_ATTR:
        _check_targets(op, value)
    elif not isinstance(value, StringAttr):
        raise error_at(
            op, f"'{name}' must be a string (TOML text or a .toml path), got {ir_text(value)}"
        )


def _check_function_attrs(op: Operation) -> None:
    for key, role in (("arg_attrs", "argument"), ("res_attrs", "result")):
        for index, entry in enumerate(_function_attr_dicts(op, key)):
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
    "BUILTIN_SCOPES",
    "DEFAULT_SCOPE",
    "DEVICE_TYPE_SCOPES",
    "HOST_SCOPE",
    "KERNEL_PRIVATE_SCOPES",
    "UNCONSTRAINED",
    "DeviceAttr",
    "DeviceCopyOp",
    "MemorySpaceError",
    "OnDeviceOp",
    "Vdev",
    "VirtualDevice",
    "VirtualDeviceError",
    "arg_device",
    "default",
    "default_device",
    "default_host_device",
    "effective_scope",
    "host_can_access",
    "host_device",
    "ir_text",
    "join",
    "kernel_can_reach",
    "memory_space_of",
    "memory_space_problem",
    "module_targets",
    "op_device",
    "result_device",
    "result_placement",
    "scopes_of",
    "value_device",
    "verify_placement_attributes",
]
