"""The virtual device: `#vdev.device<type, id, target, scope>` (TVM's VirtualDevice).

A virtual device says where a value lives or a computation runs. Each of its four fields
may be unconstrained (`?`); the lattice operations `join` and `default` are TVM's
`VirtualDevice::Join` / `VirtualDevice::Default` as TVM's *code* implements them, except
that targets compare by value (TVM compares them by object identity, so two separately
built `cuda` targets fail to join).

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

One class, `DeviceAttr`, is both the IR attribute and the Python `VirtualDevice`. A
`#vdev.device` is also a memref memory space: `memory_space_of` reads it. The `vdev`
dialect that holds the attribute, with its ops, is in `vdev.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral
from typing import cast

from xdsl.dialects.builtin import IntAttr, MemRefType, NoneAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import DevplanError, describe_value
from .target import Target, TargetAttr
from .target_kinds import DLPACK_DEVICE_TYPES, INT64_MAX


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
                if isinstance(field, IntAttr) and (
                    why := _id_problem(cast(IntAttr[int], field).data)
                ):
                    parser.raise_error(f"{why} (? = unconstrained)", starts[i], ends[i])
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
        if (device_id := self.device_id) is not None and (why := _id_problem(device_id)):
            raise VerifyException(f"{why} (? = unconstrained)")
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

    def __init__(
        self,
        device_type: str | int | None = None,
        virtual_device_id: int | None = None,
        target: TargetAttr | str | Mapping[str, object] | None = None,
        memory_scope: str | None = None,
    ):
        """`VirtualDevice("cuda", 0)`: TVM's `VirtualDevice(device_type, virtual_device_id,
        target, memory_scope)`, positional or by keyword.

        `device_type` is a name (`"cuda"`) or TVM's DLDeviceType code (`2`); `target`
        anything `Target(...)` takes. A field that is None, or TVM's unconstrained marker
        (-1 for the type and the id, `""` for the scope), is unconstrained. Wrong types and
        values raise `VirtualDeviceError` naming the argument.
        """
        super().__init__(
            *_fields(
                _device_type_name(device_type),
                _virtual_id(virtual_device_id),
                _target(target),
                _memory_scope(memory_scope),
            )
        )

    @staticmethod
    def make(
        type_name: str | None = None,
        device_id: int | None = None,
        target: TargetAttr | str | None = None,
        scope: str | None = None,
    ) -> DeviceAttr:
        """A virtual device; None fields are unconstrained. A target (a `TargetAttr`, or
        a string for `Target.parse`) implies the device type, which must agree if given."""
        for parameter, value, accepted in (
            ("type_name", type_name, str),
            ("device_id", device_id, Integral),
            ("target", target, TargetAttr | str),
            ("scope", scope, str),
        ):
            if value is not None and (
                not isinstance(value, accepted) or value is True or value is False
            ):
                raise VirtualDeviceError(
                    f"VirtualDevice.make: {parameter} must be a {_MAKE_TYPES[parameter]} or None, "
                    f"got {describe_value(value)}"
                )
        return DeviceAttr.new(
            _fields(
                type_name,
                device_id,
                Target.parse(target) if isinstance(target, str) else target,
                scope,
            )
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
        return join(self, _check_device("VirtualDevice.join", "other", other))

    def default(self, other: DeviceAttr) -> DeviceAttr:
        """`default(self, other)`."""
        return default(self, _check_device("VirtualDevice.default", "other", other))


def _fields(
    type_name: str | None, device_id: int | None, target: TargetAttr | None, scope: str | None
) -> tuple[Attribute, ...]:
    """The attribute's parameters, checked: None fields are unconstrained; a target
    implies the device type, which must agree if given."""
    if target is not None:
        if type_name is None:
            type_name = target.device_type
        elif type_name != target.device_type:
            raise VirtualDeviceError(_mismatch(type_name, target))
    for what, name in (("device type", type_name), ("memory scope", scope)):
        if name is not None and (why := _check_name(what, name)):
            raise VirtualDeviceError(why)
    if device_id is not None and (why := _id_problem(device_id)):
        raise VirtualDeviceError(why + " (None = unconstrained)")
    return (
        StringAttr(type_name) if type_name is not None else NoneAttr(),
        IntAttr(device_id) if device_id is not None else NoneAttr(),
        target if target is not None else NoneAttr(),
        StringAttr(scope) if scope is not None else NoneAttr(),
    )


def _id_problem(device_id: int) -> str | None:
    """Why `device_id` is not a virtual id, or None when it is."""
    if device_id < 0:
        return f"invalid virtual id {device_id}: expected 0 or more"
    if device_id > INT64_MAX:
        return f"invalid virtual id {device_id}: it does not fit in 64 bits"
    return None


_MAKE_TYPES = {
    "type_name": "device type name such as 'cuda'",
    "device_id": "virtual id (an integer)",
    "target": "Target or a target string",
    "scope": "memory scope name such as 'global'",
}
"""What `DeviceAttr.make` takes for each parameter (None: unconstrained)."""

_UNCONSTRAINED_CODE = -1
"""TVM's marker of an unconstrained device type (`kInvalidDeviceType`) and virtual id."""


def _is_unconstrained_code(value: object) -> bool:
    return type(value) is int and value == _UNCONSTRAINED_CODE


def _wrong(parameter: str, accepted: str, value: object) -> VirtualDeviceError:
    return VirtualDeviceError(
        f"VirtualDevice: {parameter} must be {accepted}, got {describe_value(value)}"
    )


def _device_type_name(value: object) -> str | None:
    codes = ", ".join(f"{code} ({name})" for code, name in DLPACK_DEVICE_TYPES.items())
    accepted = "a device type name such as 'cuda', a DLDeviceType code such as 2, or None"
    if value is None or _is_unconstrained_code(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in DLPACK_DEVICE_TYPES:
            raise VirtualDeviceError(
                f"VirtualDevice: device_type {value} is not a DLDeviceType code; known "
                f"codes: {codes} (-1 or None = unconstrained)"
            )
        return DLPACK_DEVICE_TYPES[value]
    raise _wrong("device_type", accepted, value)


def _virtual_id(value: object) -> int | None:
    if value is None or _is_unconstrained_code(value):
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong("virtual_device_id", "an integer 0 or more, or None (or -1)", value)
    if why := _id_problem(value):
        raise VirtualDeviceError(f"VirtualDevice: {why} (-1 or None = unconstrained)")
    return value


def _target(value: object) -> TargetAttr | None:
    if value is None or isinstance(value, TargetAttr):
        return value
    if isinstance(value, str | Mapping):
        return Target(cast(str | Mapping[str, object], value))
    raise _wrong("target", "a Target, anything Target(...) takes, or None", value)


def _memory_scope(value: object) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise _wrong("memory_scope", "a memory scope name such as 'global', or None", value)


def _check_device(function: str, parameter: str, value: object) -> DeviceAttr:
    if not isinstance(value, DeviceAttr):
        raise VirtualDeviceError(
            f"{function}: {parameter} must be a VirtualDevice, got {describe_value(value)}"
        )
    return value


VirtualDevice = DeviceAttr
"""The Python name of TVM's concept; the same class."""

UNCONSTRAINED = DeviceAttr.new((NoneAttr(), NoneAttr(), NoneAttr(), NoneAttr()))
"""`#vdev.device<?>`."""


def join(a: DeviceAttr, b: DeviceAttr) -> DeviceAttr | None:
    """The most constrained device agreeing with both, or None when they conflict.

    TVM's `VirtualDevice::Join`: each field comes from whichever side constrains it; a
    field both sides constrain to different values means no join. Targets compare by
    value. Example: `join(cpu/?/llvm/?, ?/3/?/"local") == cpu/3/llvm/"local"`.
    """
    _check_device("join", "a", a)
    _check_device("join", "b", b)
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
    _check_device("default", "a", a)
    _check_device("default", "b", b)
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
