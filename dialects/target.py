"""The `target` dialect: how to compile for a device (TVM's `Target`).

A target is a *kind* (`llvm`, `cuda`, a user kind such as `dsp`) or a *tag* (a
named configuration such as `nvidia/nvidia-a100`), attribute values checked
against the kind's schema, the `keys` derived from them, and an optional host
target. One class, `TargetAttr`, is both the IR attribute and the Python
`Target` object:

```mlir
#target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {mcpu = "skylake"}>>
#target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>
```

Semantics follow TVM (reference §a of `shared/reference/tvm.md`): the kinds, their
device types, default keys and attribute schemas (types and defaults), the options
every kind has, the derivation of `keys`, the kind checks, TVM's tags and its JSON
and legacy CLI string forms. Where TVM depends on the build machine or falls short,
devplan decides deterministically instead:

* **No hardware is queried.** A `cuda` target without `arch` gets `arch = "sm_50"`
  and an `nvptx` target without `mcpu` gets `mcpu = "sm_50"` (TVM's fallback on a
  machine without a GPU); a `rocm` target without `mcpu` gets `mcpu = "gfx900"`
  (TVM's fallback), and ROCm >= 3.5 is assumed (no `-code-object-v3` attribute is
  added). The TVM option `from_device`, which reads attributes from a physical
  device, is rejected with a message saying so.
* **`llvm` does not embed the build machine's triple**: TVM sets `mtriple` to the
  LLVM host triple when neither `mtriple` nor `mcpu` is given; devplan leaves it
  unset, so a target means the same on every machine.
* **Targets compare by value.** `==` and `hash` are structural on the resolved
  configuration (kind, tag, keys, every attribute with its default, host); the
  resolved configuration is computed once per attribute and cached. The same
  target with and without a host are different targets, and `without_host()` of
  the first equals the second.
* **Hosts must be host-capable**: kinds of device type `cpu` that compile host
  code (`llvm`, `c`), `hexagon` (TVM also treats it as a host), and user kinds
  registered with `host_capable=True`. `composite` and every GPU kind are not.
* **Tags keep their name** (`Target("nvidia/nvidia-a100").tag` is the tag, where
  TVM gives ""), and a tag may carry a host (`apple/m1-gpu`); a tagged target whose
  host was removed prints `host = none`.
* `str(target)` is the JSON form of `export()` with sorted keys.

The first parameter of `#target.target<...>` is a kind or a tag as written; the
optional dictionary holds attributes (strings, integers, `true`/`false`, arrays of
strings, arrays of targets for `composite`'s `devices`, and `keys`); `host = ...` is
a target or `none`. Printing is canonical: only attributes that differ from what the
kind or tag gives are printed, sorted by name, so `print(parse(print(x)))` equals
`print(x)`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, NoReturn, TypeVar, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    BytesAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class TargetError(ValueError):
    """A bad target: unknown kind, attribute, type, host, tag or malformed text.

    `field` names the configuration entry at fault (`"kind"`, `"tag"`, `"host"`, an
    attribute name) when there is one, so the IR parser can point at it; `at_name` says
    the entry's name is wrong rather than its value (an unknown attribute).
    """

    def __init__(self, message: str, field: str | None = None, at_name: bool = False):
        super().__init__(message)
        self.field = field
        self.at_name = at_name


# --------------------------------------------------------------------------------------
# Attribute types and kinds
# --------------------------------------------------------------------------------------

TargetValue = str | int | bool | tuple[str, ...] | tuple["TargetAttr", ...]
"""A resolved attribute value: arrays are tuples so that targets stay hashable."""

STR: Final = "str"
INT: Final = "int"
BOOL: Final = "bool"
STR_ARRAY: Final = "Array<str>"
TARGET_ARRAY: Final = "Array<Target>"
_TYPES: Final = (STR, INT, BOOL, STR_ARRAY, TARGET_ARRAY)
_TYPE_WORDS: Final = {
    STR: "a string",
    INT: "an integer",
    BOOL: "a boolean",
    STR_ARRAY: "a list of strings",
    TARGET_ARRAY: "a list of targets",
}
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

_DLPACK_DEVICE_TYPES: Final = {
    1: "cpu",
    2: "cuda",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    10: "rocm",
    12: "ext_dev",
    15: "webgpu",
    16: "hexagon",
}
"""`target_device_type` codes (DLPack's DLDeviceType) and their device type names."""


@dataclass(frozen=True)
class AttrSpec:
    """One attribute of a kind's schema: its type and default (None: no default)."""

    name: str
    type: str
    default: TargetValue | None = None


KindCheck = Callable[[dict[str, TargetValue], frozenset[str]], None]
"""A kind's canonicalizer: checks the attributes (and the names the user gave) and may
fill defaults that depend on other attributes; raises `TargetError(field=...)`."""


@dataclass(frozen=True)
class TargetKind:
    """A target kind: name, device type, default keys, attribute schema, checks."""

    name: str
    device_type: str
    default_keys: tuple[str, ...]
    attrs: Mapping[str, AttrSpec]
    host_capable: bool = False
    check: KindCheck | None = field(default=None, compare=False)

    def spec(self, name: str) -> AttrSpec | None:
        """The schema entry of `name`: the kind's own, or an option every kind has."""
        return self.attrs.get(name) or _COMMON_ATTRS.get(name)

    def attribute_names(self) -> list[str]:
        """The names users may give, sorted (listed in unknown-attribute errors)."""
        # `from_device` is in the schema only to be refused with a reason.
        return sorted({*self.attrs, *_COMMON_ATTRS} - {"from_device"})


_COMMON_ATTRS: Final = {
    spec.name: spec
    for spec in (
        AttrSpec("keys", STR_ARRAY),
        AttrSpec("device", STR),
        AttrSpec("model", STR),
        AttrSpec("libs", STR_ARRAY),
        AttrSpec("from_device", INT),
        AttrSpec("target_device_type", INT),
    )
}
"""Options every kind has (TVM's `TVM_REGISTER_TARGET_KIND`); `tag` and `host` are
handled apart because they are not attribute values."""


def _schema(*specs: tuple[str, str] | tuple[str, str, TargetValue]) -> dict[str, AttrSpec]:
    """Attribute specs from `(name, type)` and `(name, type, default)` rows."""
    return {row[0]: AttrSpec(row[0], row[1], row[2] if len(row) == 3 else None) for row in specs}


_SM_ARCH = re.compile(r"sm_[0-9]+[a-z]?")
_GFX_ARCH = re.compile(r"gfx[0-9a-f]+")
_NVPTX_TRIPLE: Final = "nvptx64-nvidia-cuda"
_ROCM_TRIPLE: Final = "amdgcn-amd-amdhsa-hcc"
_CL_OPT = re.compile(r"-?[A-Za-z0-9_.-]+(:(bool|int|uint|string))?=.*")


def _check_cuda(attrs: dict[str, TargetValue], given: frozenset[str]) -> None:
    arch = attrs["arch"]
    if not (isinstance(arch, str) and _SM_ARCH.fullmatch(arch)):
        raise TargetError(
            f"invalid CUDA arch '{arch}' for target kind 'cuda': expected 'sm_' followed "
            "by the compute capability, e.g. 'sm_80'",
            "arch",
        )


def _check_nvptx(attrs: dict[str, TargetValue], given: frozenset[str]) -> None:
    mcpu = attrs["mcpu"]
    if not (isinstance(mcpu, str) and _SM_ARCH.fullmatch(mcpu)):
        raise TargetError(
            f"invalid CUDA arch '{mcpu}' for target kind 'nvptx': expected 'sm_' followed "
            "by the compute capability, e.g. 'sm_80'",
            "mcpu",
        )
    _check_fixed_triple("nvptx", attrs, _NVPTX_TRIPLE)


def _check_rocm(attrs: dict[str, TargetValue], given: frozenset[str]) -> None:
    mcpu = attrs["mcpu"]
    if not (isinstance(mcpu, str) and _GFX_ARCH.fullmatch(mcpu)):
        raise TargetError(
            f"invalid ROCm GFX version '{mcpu}' for target kind 'rocm': expected 'gfx' "
            "followed by the GPU version, e.g. 'gfx900'",
            "mcpu",
        )
    _check_fixed_triple("rocm", attrs, _ROCM_TRIPLE)


def _check_fixed_triple(kind: str, attrs: dict[str, TargetValue], triple: str) -> None:
    # TVM overwrites a different triple silently; devplan refuses to drop user input.
    if attrs["mtriple"] != triple:
        raise TargetError(
            f"target kind '{kind}' requires mtriple '{triple}', got '{attrs['mtriple']}'",
            "mtriple",
        )


def _check_webgpu(attrs: dict[str, TargetValue], given: frozenset[str]) -> None:
    subgroups = attrs["supports_subgroups"] is True
    if "thread_warp_size" not in given:
        attrs["thread_warp_size"] = 32 if subgroups else 1
        return
    warp = attrs["thread_warp_size"]
    if subgroups and warp != 32:
        raise TargetError(
            f"a WebGPU target with supports_subgroups=true has thread_warp_size 32, got {warp}",
            "thread_warp_size",
        )
    if not subgroups and isinstance(warp, int) and warp > 1:
        raise TargetError(
            f"a WebGPU target with thread_warp_size={warp} requires supports_subgroups=true",
            "thread_warp_size",
        )


def _check_llvm(attrs: dict[str, TargetValue], given: frozenset[str]) -> None:
    jit = attrs.get("jit")
    if jit is not None and jit not in ("mcjit", "orcjit"):
        raise TargetError(
            f"attribute 'jit' of target kind 'llvm' must be 'mcjit' or 'orcjit', got '{jit}'",
            "jit",
        )
    for option in cast(tuple[str, ...], attrs.get("cl-opt", ())):
        if not _CL_OPT.fullmatch(option):
            raise TargetError(
                f"invalid LLVM option '{option}' in attribute 'cl-opt': expected "
                "'-name[:type]=value' with type bool, int, uint or string",
                "cl-opt",
            )


_LLVM_FAST_MATH = ("fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz")
_LLVM_FAST_MATH_2 = ("fast-math-arcp", "fast-math-contract", "fast-math-reassoc")

_VULKAN_BOOLS = (
    "supports_float16",
    "supports_float64",
    "supports_int8",
    "supports_int16",
    "supports_int64",
    "supports_8bit_buffer",
    "supports_16bit_buffer",
    "supports_storage_buffer_storage_class",
    "supports_push_descriptor",
    "supports_dedicated_allocation",
    "supports_integer_dot_product",
    "supports_cooperative_matrix",
)
_VULKAN_INTS = (
    "supported_subgroup_operations",
    "max_block_size_x",
    "max_block_size_y",
    "max_block_size_z",
    "max_push_constants_size",
    "max_uniform_buffer_range",
    "max_storage_buffer_range",
    "max_per_stage_descriptor_storage_buffer",
    "max_shared_memory_per_block",
    "driver_version",
    "vulkan_api_version",
    "max_spirv_version",
)

_BUILTIN_KINDS: Final = (
    TargetKind(
        "llvm",
        "cpu",
        ("cpu",),
        _schema(
            ("mattr", STR_ARRAY),
            ("mcpu", STR),
            ("mtriple", STR),
            ("mfloat-abi", STR),
            ("mabi", STR),
            ("num-cores", INT),
            *((name, BOOL) for name in _LLVM_FAST_MATH + _LLVM_FAST_MATH_2),
            ("opt-level", INT),
            ("cl-opt", STR_ARRAY),
            ("jit", STR),
            ("vector-width", INT),
        ),
        host_capable=True,
        check=_check_llvm,
    ),
    TargetKind(
        "c",
        "cpu",
        ("cpu",),
        _schema(
            ("mcpu", STR),
            ("march", STR),
            ("workspace-byte-alignment", INT),
            ("constants-byte-alignment", INT),
        ),
        host_capable=True,
    ),
    TargetKind(
        "cuda",
        "cuda",
        ("cuda", "gpu"),
        _schema(
            ("mcpu", STR),
            ("arch", STR, "sm_50"),
            ("max_shared_memory_per_block", INT),
            ("max_threads_per_block", INT),
            ("thread_warp_size", INT, 32),
            ("registers_per_block", INT),
            ("l2_cache_size_bytes", INT),
            ("max_num_threads", INT, 1024),
        ),
        check=_check_cuda,
    ),
    TargetKind(
        "nvptx",
        "cuda",
        ("cuda", "gpu"),
        _schema(
            ("mcpu", STR, "sm_50"),
            ("mtriple", STR, _NVPTX_TRIPLE),
            ("max_num_threads", INT, 1024),
            ("thread_warp_size", INT, 32),
        ),
        check=_check_nvptx,
    ),
    TargetKind(
        "rocm",
        "rocm",
        ("rocm", "gpu"),
        _schema(
            ("mcpu", STR, "gfx900"),
            ("mtriple", STR, _ROCM_TRIPLE),
            ("mattr", STR_ARRAY),
            ("max_num_threads", INT, 256),
            ("max_threads_per_block", INT, 256),
            ("max_shared_memory_per_block", INT, 65536),
            ("thread_warp_size", INT, 64),
        ),
        check=_check_rocm,
    ),
    TargetKind(
        "opencl",
        "opencl",
        ("opencl", "gpu"),
        _schema(
            ("max_threads_per_block", INT, 256),
            ("max_shared_memory_per_block", INT, 16384),
            ("max_num_threads", INT, 256),
            ("thread_warp_size", INT, 1),
            ("texture_spatial_limit", INT, 16384),
            ("texture_depth_limit", INT, 2048),
            ("max_function_args", INT, 128),
            ("image_base_address_alignment", INT, 64),
        ),
    ),
    TargetKind(
        "metal",
        "metal",
        ("metal", "gpu"),
        _schema(
            ("max_num_threads", INT, 256),
            ("max_threads_per_block", INT, 256),
            ("max_shared_memory_per_block", INT, 32768),
            ("thread_warp_size", INT, 16),
            ("max_function_args", INT, 31),
        ),
    ),
    TargetKind(
        "vulkan",
        "vulkan",
        ("vulkan", "gpu"),
        _schema(
            ("mattr", STR_ARRAY),
            *((name, BOOL) for name in _VULKAN_BOOLS),
            ("supports_float32", BOOL, True),
            ("supports_int32", BOOL, True),
            *((name, INT) for name in _VULKAN_INTS),
            ("max_num_threads", INT, 256),
            ("max_threads_per_block", INT, 256),
            ("thread_warp_size", INT, 1),
            ("device_type", STR),
            ("device_name", STR),
            ("driver_name", STR),
        ),
    ),
    TargetKind(
        "webgpu",
        "webgpu",
        ("webgpu", "gpu"),
        _schema(
            ("max_num_threads", INT, 256),
            ("max_shared_memory_per_block", INT, 32768),
            ("supports_subgroups", BOOL, False),
            # Its default (1, or 32 with subgroups) is set by the check.
            ("thread_warp_size", INT),
        ),
        check=_check_webgpu,
    ),
    TargetKind(
        "hexagon",
        "hexagon",
        ("hexagon", "cpu"),
        _schema(
            ("mattr", STR_ARRAY),
            ("mcpu", STR),
            ("mtriple", STR),
            ("llvm-options", STR_ARRAY),
            ("num-cores", INT),
            ("vtcm-capacity", INT),
        ),
        host_capable=True,
    ),
    TargetKind("ext_dev", "ext_dev", (), {}),
    TargetKind("composite", "cpu", (), _schema(("devices", TARGET_ARRAY))),
)

_KINDS: dict[str, TargetKind] = {kind.name: kind for kind in _BUILTIN_KINDS}


# --------------------------------------------------------------------------------------
# Values: checking Python and IR values against a schema
# --------------------------------------------------------------------------------------


def _describe(value: object) -> str:
    """How an offending value is named in a message."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the float {value}"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if value is None:
        return "null"
    if isinstance(value, TargetAttr):
        return f"the target {value.kind_name!r}"
    if isinstance(value, Attribute):
        return f"the attribute {value}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a dict"
    return f"a {type(value).__name__}"


POSITIVE_ATTRS: Final = frozenset(
    {
        "max_num_threads",
        "max_threads_per_block",
        "thread_warp_size",
        "max_shared_memory_per_block",
        "registers_per_block",
        "l2_cache_size_bytes",
        "max_block_size_x",
        "max_block_size_y",
        "max_block_size_z",
    }
)
"""Integer target attributes that are counts or sizes: below 1 they would only fail
later, at a launch, blamed on the program."""


def _coerce(kind: TargetKind, spec: AttrSpec, value: object) -> TargetValue:
    """`value` as the resolved value of `spec`, or a `TargetError` naming both."""

    def wrong(got: str) -> TargetError:
        return TargetError(
            f"attribute '{spec.name}' of target kind '{kind.name}' expects "
            f"{_TYPE_WORDS[spec.type]}, got {got}",
            spec.name,
        )

    if spec.type == INT and isinstance(value, int) and not isinstance(value, bool):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise wrong(f"{value}, which does not fit in 64 bits")
        if value < 1 and spec.name in POSITIVE_ATTRS:
            raise wrong(f"{value}; it is a count or a size and must be at least 1")
        return value
    if (spec.type == STR and isinstance(value, str)) or (
        spec.type == BOOL and isinstance(value, bool)
    ):
        return value
    if spec.type in (STR_ARRAY, TARGET_ARRAY) and isinstance(value, list | tuple):
        items = cast(Sequence[object], value)
        if spec.type == STR_ARRAY:
            for i, item in enumerate(items):
                if not isinstance(item, str):
                    raise wrong(f"a list whose element {i} is {_describe(item)}")
            return tuple(cast(Sequence[str], items))
        return tuple(_device_target(kind, spec, i, item) for i, item in enumerate(items))
    raise wrong(_describe(value))


def _device_target(kind: TargetKind, spec: AttrSpec, index: int, item: object) -> TargetAttr:
    try:
        if isinstance(item, TargetAttr):
            return item
        if isinstance(item, str):
            return TargetAttr.parse(item)
        if isinstance(item, Mapping):
            return TargetAttr.from_config(cast(Mapping[str, object], item))
    except TargetError as e:
        raise TargetError(f"in {spec.name}[{index}]: {e}", spec.name) from None
    raise TargetError(
        f"attribute '{spec.name}' of target kind '{kind.name}' expects a list of targets, "
        f"got a list whose element {index} is {_describe(item)}",
        spec.name,
    )


def _value_from_ir(attr: Attribute) -> object:
    """The Python value of an IR attribute value (the attribute itself when foreign)."""
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, BytesAttr):
        # xDSL prints non-ASCII string characters as byte escapes and reads them back
        # as bytes: UTF-8 text is still a string.
        try:
            return attr.data.decode("utf-8")
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, IntegerAttr):
        integer = cast(IntegerAttr[IntegerType], attr)
        value = integer.value.data
        return bool(value) if integer.type == i1 else value
    if isinstance(attr, TargetAttr):
        return attr
    if isinstance(attr, FloatAttr):
        return cast(FloatAttr, attr).value.data
    if isinstance(attr, ArrayAttr):
        return [_value_from_ir(item) for item in cast(ArrayAttr[Attribute], attr).data]
    return attr


def _value_to_ir(value: TargetValue) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, str):
        return StringAttr(value)
    return ArrayAttr(StringAttr(v) if isinstance(v, str) else v for v in value)


def _value_to_json(value: TargetValue) -> object:
    if isinstance(value, tuple):
        return [v if isinstance(v, str) else v.export() for v in value]
    return value


# --------------------------------------------------------------------------------------
# Resolution: (kind or tag, given attributes, host) -> the full configuration
# --------------------------------------------------------------------------------------


class _Inherit:
    """Marker: no host was given, so the tag's host (if any) applies."""

    def __repr__(self) -> str:
        return "INHERIT"


INHERIT: Final = _Inherit()


@dataclass(frozen=True)
class _Tag:
    name: str
    kind: str
    given: Mapping[str, TargetValue]
    host: TargetAttr | None


_TAGS: dict[str, _Tag] = {}


@dataclass(frozen=True)
class Resolved:
    """A target's full configuration: what `==`, `hash` and `export()` are based on."""

    kind: str
    tag: str | None
    keys: tuple[str, ...]
    attrs: tuple[tuple[str, TargetValue], ...]
    """Every attribute with a value (given or default), sorted by name."""
    host: TargetAttr | None

    @property
    def name(self) -> str:
        """The kind or tag the target is written with."""
        return self.tag or self.kind

    @cached_property
    def attr_map(self) -> Mapping[str, TargetValue]:
        return dict(self.attrs)


def _derive_keys(kind: TargetKind, attrs: Mapping[str, TargetValue]) -> tuple[str, ...]:
    # TVM FromConfig step 6: given keys replace the kind's defaults; `device` is appended.
    given = attrs.get("keys")
    keys = list(cast(tuple[str, ...], given)) if given is not None else []
    device = attrs.get("device")
    if isinstance(device, str):
        keys.append(device)
    if given is None:
        keys.extend(kind.default_keys)
    return tuple(dict.fromkeys(keys))


def _lookup(name: str) -> tuple[TargetKind, _Tag | None]:
    """The kind and tag named by `name` (a kind or a tag), or an unknown-name error."""
    if name in _KINDS:
        return _KINDS[name], None
    if name in _TAGS:
        tag = _TAGS[name]
        return _KINDS[tag.kind], tag
    raise _unknown_name_error(name)


def _did_you_mean(name: str, choices: Iterable[str]) -> str:
    near = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""


def _unknown_name_error(name: str) -> TargetError:
    """Unknown kind or tag: a name with '/' is taken for a tag, as all tags have one."""
    if "/" in name:
        return _unknown_tag_error(name)
    kinds = sorted(_KINDS)
    return TargetError(
        f"unknown target kind '{name}'{_did_you_mean(name, [*kinds, *_TAGS])}; "
        f"known kinds: {', '.join(kinds)}",
        "kind",
    )


def _unknown_tag_error(name: str) -> TargetError:
    return TargetError(
        f"unknown target tag '{name}'{_did_you_mean(name, _TAGS)}; list_tags() gives the "
        f"{len(_TAGS)} known tags",
        "tag",
    )


def _unknown_attribute_error(kind: TargetKind, name: str) -> TargetError:
    names = kind.attribute_names()
    return TargetError(
        f"target kind '{kind.name}' has no attribute '{name}'{_did_you_mean(name, names)}; "
        f"its attributes are: {', '.join(names)}",
        name,
        at_name=True,
    )


def _resolve(
    name: str, given: Mapping[str, TargetValue], host: TargetAttr | _Inherit | None
) -> Resolved:
    """The full configuration of kind or tag `name` with `given` attributes and `host`.

    `given` values must already have their schema types (see `_coerce`).
    """
    kind, tag = _lookup(name)
    merged: dict[str, TargetValue] = dict(tag.given) if tag else {}
    merged.update(given)
    attrs: dict[str, TargetValue] = {
        spec.name: spec.default for spec in kind.attrs.values() if spec.default is not None
    }
    attrs.update(merged)
    if "from_device" in merged:
        raise TargetError(
            "attribute 'from_device' would read attributes from a physical device, which "
            "devplan never queries so that targets mean the same on every machine; give "
            "the attributes explicitly",
            "from_device",
        )
    device_type = merged.get("target_device_type")
    if device_type is not None and device_type not in _DLPACK_DEVICE_TYPES:
        codes = ", ".join(f"{code} ({n})" for code, n in _DLPACK_DEVICE_TYPES.items())
        raise TargetError(
            f"attribute 'target_device_type' must be a DLPack device type code, got "
            f"{device_type}; known codes: {codes}",
            "target_device_type",
        )
    if kind.check is not None:
        kind.check(attrs, frozenset(merged))
    keys = _derive_keys(kind, attrs)
    attrs.pop("keys", None)
    if isinstance(host, _Inherit):
        host = tag.host if tag else None
    if host is not None:
        _check_host(host)
    return Resolved(kind.name, tag.name if tag else None, keys, tuple(sorted(attrs.items())), host)


def host_capable_kinds() -> list[str]:
    """Kinds whose targets may be a host: llvm, c, hexagon and user kinds so registered."""
    return sorted(name for name, kind in _KINDS.items() if kind.host_capable)


def _check_host(host: TargetAttr) -> None:
    kind = _KINDS[host.kind_name]
    if not kind.host_capable:
        raise TargetError(
            f"target kind '{kind.name}' (device type '{kind.device_type}') cannot be a "
            f"host; host-capable kinds: {', '.join(host_capable_kinds())}",
            "host",
        )


def _check_given(kind: TargetKind, given: Mapping[str, object]) -> dict[str, TargetValue]:
    """Type-check user-given attribute values against `kind`'s schema."""
    checked: dict[str, TargetValue] = {}
    for attr_name, value in given.items():
        spec = kind.spec(attr_name)
        if spec is None:
            raise _unknown_attribute_error(kind, attr_name)
        checked[attr_name] = _coerce(kind, spec, value)
    return checked


_CANONICAL: dict[Resolved, dict[str, TargetValue]] = {}
"""Canonical attributes of each resolved configuration printed or built so far."""

_MEMO_LIMIT: Final = 4096
_K = TypeVar("_K")
_V = TypeVar("_V")
_BUILT: dict[tuple[object, ...], TargetAttr] = {}
"""Targets by (kind or tag, checked attributes, host): constructors skip resolution."""
_INTERNED: dict[Resolved, TargetAttr] = {}
"""One target object per configuration."""


def _canonical_given(resolved: Resolved) -> dict[str, TargetValue]:
    """The fewest attributes that, given to `resolved.name`, resolve to `resolved`.

    Starts from every resolved attribute (and the keys) and drops, in name order, each
    one whose absence resolves to the same configuration. The result is a function of
    the configuration alone, so equal targets print the same text.
    """
    cached = _CANONICAL.get(resolved)
    if cached is not None:
        return cached
    candidate = dict(resolved.attr_map)
    candidate["keys"] = resolved.keys
    for attr_name in sorted(candidate):
        trial = {k: v for k, v in candidate.items() if k != attr_name}
        try:
            same = _resolve(resolved.name, trial, resolved.host) == resolved
        except TargetError:
            same = False
        if same:
            candidate = trial
    _bounded_put(_CANONICAL, resolved, candidate)
    return candidate


_NOT_ATTRIBUTES: Final = {
    "kind": 'name the kind first, e.g. Target("cuda", {...})',
    "tag": 'name the tag first, e.g. Target("nvidia/nvidia-a100", {...})',
    "host": 'pass it as host=..., e.g. Target("cuda", host="llvm")',
}


def _build(name: str, given: Mapping[str, object], host: object) -> TargetAttr:
    """A target from a kind or tag, raw attribute values and a host spec."""
    kind, _ = _lookup(name)
    for reserved, instead in _NOT_ATTRIBUTES.items():
        if reserved in given:
            raise TargetError(f"'{reserved}' is not an attribute: {instead}", reserved)
    checked = _check_given(kind, given)
    host_target = _host_target(host)
    depth, inner = 0, host_target
    while isinstance(inner, TargetAttr):
        depth, inner = depth + 1, inner.resolved.host
        if depth > MAX_HOST_DEPTH:
            raise _host_too_deep()
    key = (name, tuple(sorted(checked.items())), host_target)
    built = _BUILT.get(key)
    if built is None:
        built = TargetAttr.from_resolved(_resolve(name, checked, host_target))
        _bounded_put(_BUILT, key, built)
    return built


def _bounded_put(memo: dict[_K, _V], key: _K, value: _V) -> None:
    # Memos only save work; dropping them all when full keeps them small and simple.
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value


def _forget_everything_built() -> None:
    """Drop the memos: a tag's configuration changed."""
    for memo in (_CANONICAL, _RESOLVED_BY_PARAMS, _BUILT, _INTERNED):
        memo.clear()


MAX_HOST_DEPTH = 16
"""How many hosts deep a target may nest (a host of a host of ...); deeper configs are
an error rather than a recursion through every level."""
_hosts_being_read = [0]


def _host_too_deep() -> TargetError:
    return TargetError(
        f"the target's host chain is more than {MAX_HOST_DEPTH} targets deep "
        "(a host's host's ...); a device target needs one host",
        "host",
    )


def _host_target(host: object) -> TargetAttr | _Inherit | None:
    if host is None or isinstance(host, TargetAttr | _Inherit):
        return host
    if _hosts_being_read[0] >= MAX_HOST_DEPTH:
        raise _host_too_deep()
    _hosts_being_read[0] += 1
    try:
        if isinstance(host, str):
            return TargetAttr.parse(host)
        if isinstance(host, Mapping):
            return TargetAttr.from_config(cast(Mapping[str, object], host))
    except TargetError as e:
        if e.field == "host" and str(e).startswith("the target's host chain"):
            raise
        raise TargetError(f"in host: {e}", "host") from None
    finally:
        _hosts_being_read[0] -= 1
    raise TargetError(
        f"a host must be a target, a kind or tag name, or a config dict, got {_describe(host)}",
        "host",
    )


# --------------------------------------------------------------------------------------
# The attribute
# --------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """How to compile for a device: a kind or tag, attributes and an optional host.

    ```mlir
    #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>
    ```

    Immutable. Equality and hashing are structural on the resolved configuration
    (`Resolved`), computed once and cached. `Target` is the same class.
    """

    name = "target.target"

    kind: StringAttr
    """The kind or tag as written, e.g. `"cuda"` or `"nvidia/nvidia-a100"`."""
    config: DictionaryAttr
    """The attributes that differ from what the kind or tag gives (canonical)."""
    host: Attribute
    """The host target (`TargetAttr`), or `NoneAttr` for none."""

    def __init__(
        self,
        kind: str,
        attrs: Mapping[str, object] | None = None,
        host: TargetAttr | str | Mapping[str, object] | _Inherit | None = INHERIT,
    ):
        """`TargetAttr("cuda", {"arch": "sm_80"}, host="llvm")`; a tag works as `kind`.

        Without `host`, a tag's host applies; `host=None` means no host.
        """
        built = _build(kind, attrs or {}, host)
        # Share the built target's resolved configuration, so verification is a lookup.
        object.__setattr__(self, "_resolved", built.resolved)
        object.__setattr__(self, "_hash", hash(built))
        super().__init__(*built.parameters)

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_resolved(cls, resolved: Resolved) -> TargetAttr:
        """The target with configuration `resolved`, with canonical parameters.

        Targets are interned: the same configuration gives the same object, so the
        comparisons passes make are mostly identity checks.
        """
        interned = _INTERNED.get(resolved)
        if interned is not None:
            return interned
        given = _canonical_given(resolved)
        params = (
            StringAttr(resolved.name),
            DictionaryAttr({k: _value_to_ir(v) for k, v in sorted(given.items())}),
            resolved.host or NoneAttr(),
        )
        _remember(params, resolved)
        # As `cls.new(params)`, with the resolved configuration in place before verify().
        attr = cls.__new__(cls)
        object.__setattr__(attr, "_resolved", resolved)
        for (field_name, _), param in zip(
            cls.get_irdl_definition().parameters, params, strict=True
        ):
            object.__setattr__(attr, field_name, param)
        attr.__post_init__()
        _bounded_put(_INTERNED, resolved, attr)
        return attr

    @classmethod
    def from_config(cls, config: Mapping[str, object] | str | TargetAttr) -> TargetAttr:
        """A target from TVM's config dict or its JSON text.

        `{"kind": "cuda", "arch": "sm_80", "host": {"kind": "llvm"}}`. With `tag` (and
        optionally a matching `kind`), the tag's configuration is the starting point and
        the other entries override it. `host` may be a target, a kind or tag name, a
        dict, or None for no host.
        """
        if isinstance(config, TargetAttr):
            return config
        if isinstance(config, str):
            config = _load_json(config)
        if not isinstance(config, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TargetError(
                f"a target config must be a dict or a JSON object, got {_describe(config)}"
            )
        entries = dict(config)
        for key in entries:
            if not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TargetError(
                    f"a target config's keys are names such as 'kind' or 'arch', got "
                    f"{_describe(key)}"
                )
        kind = entries.pop("kind", None)
        tag = entries.pop("tag", None)
        host = entries.pop("host", INHERIT)
        return _build(_config_name(kind, tag), entries, host)

    @classmethod
    def parse(cls, text: str) -> TargetAttr:
        """A target from a string, as TVM's `Target(str)` (<= v0.23) reads it.

        A kind name (`"cuda"`), a tag name (`"nvidia/nvidia-a100"`), a JSON object, or
        the legacy CLI form `"cuda -arch=sm_80 --host='llvm -mcpu=skylake'"`. Anything
        but a string is a `TargetError`.
        """
        if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TargetError(
                f"Target.parse: text must be a string such as 'cuda', got {_describe(text)}"
            )
        return _parse_target_string(text)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return _IRTargetReader(parser).read()

    def print_parameters(self, printer: Printer) -> None:
        resolved = self.resolved
        given = _canonical_given(resolved)
        with printer.in_angle_brackets():
            printer.print_string_literal(resolved.name)
            if given:
                printer.print_string(", {")
                for i, (key, value) in enumerate(sorted(given.items())):
                    if i:
                        printer.print_string(", ")
                    _print_key(printer, key)
                    printer.print_string(" = ")
                    _print_value(printer, value)
                printer.print_string("}")
            tag_host = _TAGS[resolved.tag].host if resolved.tag in _TAGS else None
            if resolved.host != tag_host:
                printer.print_string(", host = ")
                if resolved.host is None:
                    printer.print_string("none")
                else:
                    printer.print_attribute(resolved.host)

    def verify(self) -> None:
        try:
            self.resolved  # noqa: B018 (resolving is the check)
        except TargetError as e:
            raise VerifyException(str(e)) from e

    # --- identity -----------------------------------------------------------------------

    @property
    def resolved(self) -> Resolved:
        """The full configuration (cached on the attribute)."""
        cached = self.__dict__.get("_resolved")
        if cached is None:
            cached = _resolved_from_params(self.parameters)
            object.__setattr__(self, "_resolved", cached)
        return cast(Resolved, cached)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TargetAttr):
            return NotImplemented
        mine, theirs = self.resolved, other.resolved
        return mine is theirs or (hash(self) == hash(other) and mine == theirs)

    def __hash__(self) -> int:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(self.resolved)
            object.__setattr__(self, "_hash", cached)
        return cast(int, cached)

    def __str__(self) -> str:
        """The JSON form of `export()`, keys sorted: the same text on every machine."""
        return json.dumps(self.export(), sort_keys=True)

    def __repr__(self) -> str:
        return f"Target({Attribute.__str__(self)})"

    # --- accessors ----------------------------------------------------------------------

    @property
    def kind_name(self) -> str:
        """The kind, e.g. "cuda" (also for a tag)."""
        return self.resolved.kind

    @property
    def target_kind(self) -> TargetKind:
        """The kind's registry entry (device type, default keys, schema)."""
        return _KINDS[self.resolved.kind]

    @property
    def device_type(self) -> str:
        """TVM's device type name ("cpu", "cuda", ...; a user kind's own, e.g. "dsp")."""
        code = self.get_attr("target_device_type")
        if isinstance(code, int):
            return _DLPACK_DEVICE_TYPES[code]
        return self.target_kind.device_type

    @property
    def keys(self) -> tuple[str, ...]:
        return self.resolved.keys

    @property
    def tag(self) -> str | None:
        return self.resolved.tag

    @property
    def host_target(self) -> TargetAttr | None:
        return self.resolved.host

    @property
    def attrs(self) -> dict[str, TargetValue]:
        """Every attribute that has a value, given or default."""
        return dict(self.resolved.attr_map)

    def get_attr(self, name: str, default: TargetValue | None = None) -> TargetValue | None:
        """The attribute's value (kind defaults applied), else `default`.

        As TVM's `GetAttr`, a name the kind does not have gives `default`, so passes
        can ask any target for, e.g., `thread_warp_size`. `"keys"` gives the keys.
        """
        if name == "keys":
            return self.resolved.keys
        return self.resolved.attr_map.get(name, default)

    def with_host(self, host: TargetAttr | str | Mapping[str, object]) -> TargetAttr:
        """This target with `host` as its host (replacing any host it had)."""
        return self._replace_host(cast(TargetAttr, _host_target(host)))

    def without_host(self) -> TargetAttr:
        """This target with no host."""
        return self._replace_host(None)

    def _replace_host(self, host: TargetAttr | None) -> TargetAttr:
        if host is not None:
            _check_host(host)
        r = self.resolved
        return TargetAttr.from_resolved(Resolved(r.kind, r.tag, r.keys, r.attrs, host))

    def export(self) -> dict[str, object]:
        """TVM's config dict: kind, tag ("" when none), keys, every attribute, host.

        A tagged target whose tag has a host but which has none exports `"host": None`,
        so that `from_config(export())` gives it back.
        """
        resolved = self.resolved
        out: dict[str, object] = {
            "kind": resolved.kind,
            "tag": resolved.tag or "",
            "keys": list(resolved.keys),
        }
        if resolved.host is not None:
            out["host"] = resolved.host.export()
        elif resolved.tag in _TAGS and _TAGS[resolved.tag].host is not None:
            out["host"] = None
        for key, value in resolved.attrs:
            out[key] = _value_to_json(value)
        return out


Target = TargetAttr
"""The Python name of a target: `Target.parse("cuda -arch=sm_80")`."""


_RESOLVED_BY_PARAMS: dict[tuple[Attribute, ...], Resolved] = {}
"""Resolved configurations by attribute parameters: passes rebuild targets often."""


def _remember(params: tuple[Attribute, ...], resolved: Resolved) -> None:
    _bounded_put(_RESOLVED_BY_PARAMS, params, resolved)


def _resolved_from_params(params: tuple[Attribute, ...]) -> Resolved:
    """Resolve an attribute's parameters (memoised: passes rebuild targets often)."""
    cache = _RESOLVED_BY_PARAMS
    cached = cache.get(params)
    if cached is not None:
        return cached
    name, config, host = params
    if not isinstance(name, StringAttr) or not isinstance(config, DictionaryAttr):
        raise TargetError("a #target.target needs a kind or tag string and a dictionary")
    if not isinstance(host, TargetAttr | NoneAttr):
        raise TargetError(f"the host of a target must be a #target.target, got {host}")
    kind, _ = _lookup(name.data)
    given = _check_given(kind, {k: _value_from_ir(v) for k, v in config.data.items()})
    resolved = _resolve(name.data, given, host if isinstance(host, TargetAttr) else None)
    _remember(params, resolved)
    return resolved


def _print_key(printer: Printer, key: str) -> None:
    if _BARE_KEY.fullmatch(key):
        printer.print_string(key)
    else:
        printer.print_string_literal(key)


def _print_value(printer: Printer, value: TargetValue) -> None:
    if isinstance(value, bool):
        printer.print_string("true" if value else "false")
    elif isinstance(value, int):
        printer.print_string(str(value))
    elif isinstance(value, str):
        printer.print_string_literal(value)
    else:
        printer.print_string("[")
        for i, item in enumerate(value):
            if i:
                printer.print_string(", ")
            if isinstance(item, str):
                printer.print_string_literal(item)
            else:
                printer.print_attribute(item)
        printer.print_string("]")


class _IRTargetReader:
    """Reads `"kind-or-tag" [, {attrs}] [, host = target | none]` keeping word spans."""

    def __init__(self, parser: AttrParser):
        self.parser = parser
        self.spans: dict[str, tuple[int, int]] = {}

    def end_of(self, start: int) -> int:
        """End of the text parsed since `start`, without trailing whitespace."""
        text = self.parser.lexer.input.content[start : self.parser.pos]
        return start + len(text.rstrip())

    def read(self) -> tuple[Attribute, ...]:
        parser = self.parser
        start = parser.pos
        name = parser.parse_optional_str_literal()
        if name is None:
            parser.raise_error(
                'expected the target kind or tag as a string, e.g. #target.target<"cuda">'
            )
        self.spans["kind"] = self.spans["tag"] = (start, self.end_of(start))
        given: dict[str, object] = {}
        host: TargetAttr | _Inherit | None = INHERIT
        while parser.parse_optional_punctuation(",") is not None:
            start = parser.pos
            if parser.parse_optional_keyword("host") is not None:
                if not isinstance(host, _Inherit):
                    parser.raise_error("'host' is given twice", start, self.end_of(start))
                parser.parse_punctuation("=")
                host = self.read_host()
            elif parser.parse_optional_punctuation("{") is not None:
                if given:
                    parser.raise_error("attributes are given twice", start, start + 1)
                given = self.read_attrs()
            else:
                parser.raise_error("expected an attribute dictionary '{...}' or 'host = ...'")
        try:
            target = _build(name, given, host)
        except TargetError as e:
            self.raise_at(e)
        return target.parameters

    def read_host(self) -> TargetAttr | None:
        parser = self.parser
        start = parser.pos
        host: TargetAttr | None = None
        if parser.parse_optional_keyword("none") is None:
            attr = parser.parse_attribute()
            if not isinstance(attr, TargetAttr):
                parser.raise_error(
                    f"a host must be a #target.target<...> or none, got {attr}",
                    start,
                    self.end_of(start),
                )
            host = attr
        self.spans["host"] = (start, self.end_of(start))
        return host

    def read_attrs(self) -> dict[str, object]:
        parser = self.parser
        given: dict[str, object] = {}
        if parser.parse_optional_punctuation("}") is not None:
            return given
        while True:
            start = parser.pos
            key = parser.parse_optional_identifier_or_str_literal()
            if key is None:
                parser.raise_error("expected an attribute name")
            key_span = (start, self.end_of(start))
            if key in given:
                parser.raise_error(f"attribute '{key}' is given twice", *key_span)
            if key in ("kind", "tag", "host"):
                parser.raise_error(_misplaced_entry_message(key), *key_span)
            parser.parse_punctuation("=")
            value_start = parser.pos
            given[key] = _value_from_ir(parser.parse_attribute())
            self.spans[key] = (value_start, self.end_of(value_start))
            self.spans[f"{key}:name"] = key_span
            if parser.parse_optional_punctuation(",") is None:
                parser.parse_punctuation("}")
                return given

    def raise_at(self, error: TargetError) -> NoReturn:
        """Report `error` at the word it is about (the kind or tag when not written)."""
        field_name = error.field or "kind"
        span = self.spans.get(f"{field_name}:name" if error.at_name else field_name)
        self.parser.raise_error(str(error), *(span or self.spans["kind"]))


def _misplaced_entry_message(key: str) -> str:
    if key == "host":
        return "'host' is written after the attributes: #target.target<\"cuda\", {...}, host = ...>"
    return f"'{key}' is the first parameter of a target, e.g. #target.target<\"cuda\">"


# --------------------------------------------------------------------------------------
# Text forms: JSON and the legacy CLI string
# --------------------------------------------------------------------------------------


def _load_json(text: str) -> Mapping[str, object]:
    try:
        data = cast(object, json.loads(text))
    except json.JSONDecodeError as e:
        raise TargetError(
            f"malformed target JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from None
    except RecursionError:  # json reads nested objects recursively
        raise TargetError(
            f"malformed target JSON: nested too deeply (a target's host chain is at most "
            f"{MAX_HOST_DEPTH} targets deep)"
        ) from None
    if not isinstance(data, dict):
        raise TargetError(f"a target JSON config must be an object, got {_describe(data)}")
    return cast(dict[str, object], data)


def _config_name(kind: object, tag: object) -> str:
    """The kind or tag a config dict names (TVM: a tag is expanded when it is known)."""
    if kind is not None and not isinstance(kind, str):
        raise TargetError(f'the "kind" of a target must be a string, got {_describe(kind)}')
    if tag is not None and not isinstance(tag, str):
        raise TargetError(f'the "tag" of a target must be a string, got {_describe(tag)}')
    if tag:
        if tag not in _TAGS:
            raise _unknown_tag_error(tag)
        if kind is not None and kind != _TAGS[tag].kind:
            raise TargetError(
                f"tag '{tag}' is a '{_TAGS[tag].kind}' target, but the config says kind '{kind}'",
                "kind",
            )
        return tag
    if kind is None:
        raise TargetError(
            f'a target config needs a "kind" (one of {", ".join(sorted(_KINDS))}) or a "tag"',
            "kind",
        )
    if kind not in _KINDS:
        if kind in _TAGS:
            raise TargetError(f'\'{kind}\' is a tag, not a kind: write {{"tag": "{kind}"}}', "kind")
        raise _unknown_name_error(kind)
    return kind


def _split_outside_quotes(text: str, separator: Callable[[str], bool]) -> list[str]:
    """Split `text` where `separator` holds outside quotes; quotes stay in the parts."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if quote is not None:
            quote = None if char == quote else quote
            current.append(char)
        elif char in "'\"":
            quote = char
            current.append(char)
        elif separator(char):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quote is not None:
        raise TargetError(f"mismatched quote ({quote}) in '{text}'")
    parts.append("".join(current))
    return parts


def _unquote(text: str) -> str:
    """Interpret quotes and backslash escapes: `'cortex a72'` -> `cortex a72`."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if quote is not None and char == quote:
            quote = None
        elif quote is None and char in "'\"":
            quote = char
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _legacy_scalar(key: str, type_name: str, value: str) -> int | bool:
    """TVM reads ints and bools with `istringstream`; devplan rejects trailing junk."""
    if type_name == BOOL:
        lowered = value.lower()
        if lowered in ("1", "true"):
            return True
        if lowered in ("0", "false"):
            return False
        raise TargetError(f"option '-{key}' expects a boolean (true, false, 1 or 0), got '{value}'")
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        raise TargetError(f"option '-{key}' expects an integer, got '{value}'")
    return int(value)


def _legacy_value(kind: TargetKind, key: str, value: str | None) -> object:
    """A legacy option's text as a value of the type the kind declares for it."""
    if key == "host":
        if value is None:
            raise TargetError("option '--host' needs a value, e.g. --host=llvm")
        return _unquote(value)
    if key == "tag":
        raise TargetError("option '-tag' is not supported: write the tag name instead")
    spec = kind.spec(key)
    if spec is None:
        raise _unknown_attribute_error(kind, key)
    if value is None:
        if spec.type != BOOL:
            raise TargetError(
                f"option '-{key}' needs a value ({_TYPE_WORDS[spec.type]}), e.g. -{key}=..."
            )
        return True
    if spec.type in (BOOL, INT):
        return _legacy_scalar(key, spec.type, value)
    if spec.type == STR:
        return _unquote(value)
    items = [_unquote(item) for item in _split_outside_quotes(value, lambda c: c == ",")]
    if spec.type == TARGET_ARRAY:
        return [TargetAttr.parse(item) for item in items]
    return items


def _legacy_options(kind: TargetKind, words: list[str]) -> dict[str, object]:
    """TVM <= v0.23 `FromRawString` rules for the words after the kind."""
    options: dict[str, object] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            raise TargetError(f"option '{word}' must start with '-', as in '-{word}'")
        body = word.lstrip("-")
        if not body or body.startswith("="):
            raise TargetError(f"'{word}' is not an option: an option is -name or -name=value")
        value: str | None
        if "=" in body:
            key, value = body.split("=", 1)
            if value == "":
                raise TargetError(f"option '-{key}' has an empty value")
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            key, value = body, words[i + 1]
            i += 1
        else:
            key, value = body, None
        if key in options:
            raise TargetError(f"option '-{key}' appears more than once")
        options[key] = _legacy_value(kind, key, value)
        i += 1
    return options


def _parse_target_string(text: str) -> TargetAttr:
    stripped = text.strip()
    if not stripped:
        raise TargetError(
            "empty target string; expected a kind (e.g. 'cuda'), a tag, a JSON object or "
            "a CLI string such as 'cuda -arch=sm_80'"
        )
    if stripped.startswith("{"):
        return TargetAttr.from_config(stripped)
    try:
        words = [w for w in _split_outside_quotes(stripped, str.isspace) if w]
        name = words[0]
        kind, _ = _lookup(name)
        options = _legacy_options(kind, words[1:])
        host = options.pop("host", INHERIT)
        return _build(name, options, host)
    except TargetError as e:
        if len(stripped.split()) == 1:
            raise
        raise TargetError(f'invalid target string "{stripped}": {e}', e.field) from None


# --------------------------------------------------------------------------------------
# Registries: kinds and tags
# --------------------------------------------------------------------------------------

_PY_TYPES: Final[dict[object, str]] = {str: STR, int: INT, bool: BOOL}


def _type_name(type_spec: object, attr_name: str) -> str:
    if type_spec in _PY_TYPES:
        return _PY_TYPES[type_spec]
    if isinstance(type_spec, str) and type_spec in _TYPES:
        return type_spec
    if str(type_spec) in ("list[str]", "tuple[str, ...]"):
        return STR_ARRAY
    raise TargetError(
        f"attribute '{attr_name}': unknown type {type_spec!r}; use str, int, bool or one of "
        f"{', '.join(repr(t) for t in _TYPES)}"
    )


def register_target_kind(
    name: str,
    device_type: str,
    attrs: Mapping[str, tuple[object, object]] | None = None,
    default_keys: Iterable[str] = (),
    host_capable: bool = False,
) -> TargetKind:
    """Register a kind whose name means something to its user, e.g. `dsp`.

    `attrs` maps each attribute to `(type, default)`: type `str`, `int`, `bool`,
    `"Array<str>"` (or `list[str]`) or `"Array<Target>"`; default None for none.
    Registering the same kind again with the same definition is a no-op.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name):
        raise TargetError(f"invalid target kind name {name!r}: use letters, digits, '_' and '-'")
    if name in _TAGS:
        raise TargetError(f"'{name}' is already a tag name")
    if not device_type:
        raise TargetError(f"target kind '{name}' needs a device type, e.g. 'cpu' or '{name}'")
    specs: dict[str, AttrSpec] = {}
    for attr_name, (type_spec, default) in (attrs or {}).items():
        if attr_name in _COMMON_ATTRS or attr_name in ("kind", "tag", "host"):
            raise TargetError(f"attribute '{attr_name}' is an option every kind has already")
        spec = AttrSpec(attr_name, _type_name(type_spec, attr_name))
        stub = TargetKind(name, device_type, (), {})
        value = None if default is None else _coerce(stub, spec, default)
        specs[attr_name] = AttrSpec(attr_name, spec.type, value)
    kind = TargetKind(name, device_type, tuple(default_keys), specs, host_capable)
    existing = _KINDS.get(name)
    if existing is not None:
        if existing == kind:
            return existing
        raise TargetError(f"target kind '{name}' is already registered with another definition")
    _KINDS[name] = kind
    return kind


def register_tag(
    name: str, config: Mapping[str, object] | str | TargetAttr, override: bool = False
) -> TargetAttr:
    """Register `name` for a target configuration (a config dict, JSON or a target).

    Re-registering a tag needs `override=True`; targets built before keep the old
    configuration. Returns the tag's target.
    """
    if not name or any(c.isspace() for c in name) or name.startswith(("{", "-")):
        raise TargetError(f"invalid tag name {name!r}: no spaces, not starting with '{{' or '-'")
    if name in _KINDS:
        raise TargetError(f"'{name}' is a target kind and cannot be a tag name")
    if name in _TAGS and not override:
        raise TargetError(
            f"tag '{name}' is already defined as {TargetAttr(name)}; pass override=True "
            "to replace it"
        )
    if isinstance(config, str):
        config = _load_json(config)
    target = TargetAttr.from_config(config)
    if isinstance(config, TargetAttr) or config.get("tag"):
        # Built from another target or tag: store every value, relative to the kind.
        given: dict[str, TargetValue] = {**target.resolved.attr_map, "keys": target.keys}
    else:
        # A plain config is stored as written, so `keys` derive as TVM derives them.
        raw = {k: v for k, v in config.items() if k not in ("kind", "host")}
        given = _check_given(target.target_kind, raw)
    _TAGS[name] = _Tag(name, target.kind_name, given, target.host_target)
    _forget_everything_built()
    return TargetAttr(name)


def list_tags() -> dict[str, TargetAttr]:
    """Every registered tag and its target, by name."""
    return {name: TargetAttr(name) for name in sorted(_TAGS)}


def list_target_kinds() -> list[str]:
    """The registered kinds, sorted."""
    return sorted(_KINDS)


def kind_device_type(kind: str) -> str:
    """The device type of `kind` ("cpu" for llvm, "cuda" for nvptx, "dsp" for a dsp kind)."""
    if kind not in _KINDS:
        raise _unknown_name_error(kind)
    return _KINDS[kind].device_type


def get_target_kind(kind: str) -> TargetKind:
    """The registry entry of `kind` (device type, default keys, attribute schema)."""
    if kind not in _KINDS:
        raise _unknown_name_error(kind)
    return _KINDS[kind]


# --------------------------------------------------------------------------------------
# Built-in tags (TVM's, reference §a.8 and TVM's tag tables)
# --------------------------------------------------------------------------------------


def _cuda_tag(arch: str, registers: int = 65536, **extra: object) -> dict[str, object]:
    # TVM_REGISTER_CUDA_TAG(name, arch, shared_mem, regs_per_block)
    return {
        "kind": "cuda",
        "keys": ["cuda", "gpu"],
        "arch": arch,
        "max_shared_memory_per_block": 49152,
        "max_threads_per_block": 1024,
        "thread_warp_size": 32,
        "registers_per_block": registers,
        **extra,
    }


def _jetson_tag(arch: str, host_cpu: str, cores: int) -> dict[str, object]:
    config = _cuda_tag(arch)
    del config["keys"]
    config["host"] = {
        "kind": "llvm",
        "keys": ["arm_cpu", "cpu"],
        "mtriple": "aarch64-linux-gnu",
        "mcpu": host_cpu,
        "num-cores": cores,
    }
    return config


def _metal_tag(threads: int, host_cpu: str) -> dict[str, object]:
    return {
        "kind": "metal",
        "max_threads_per_block": threads,
        "max_shared_memory_per_block": 32768,
        "thread_warp_size": 32,
        "host": {"kind": "llvm", "mtriple": "arm64-apple-macos", "mcpu": host_cpu},
    }


def _hexagon_tag(version: str, vtcm: int, extra_mattr: bool) -> dict[str, object]:
    mattr = [f"+hvx{version}", "+hvx-length128b"]
    if extra_mattr:
        mattr += ["+hvx-qfloat", "-hvx-ieee-fp"]
    config: dict[str, object] = {
        "kind": "hexagon",
        "mtriple": "hexagon",
        "mcpu": f"hexagon{version}",
        "mattr": mattr,
        "num-cores": 4,
        "vtcm-capacity": vtcm,
    }
    if version == "v68":
        config["llvm-options"] = ["-force-hvx-float"]
    return config


def _aws_c5_tag(cores: int, cpu: str) -> dict[str, object]:
    return {"kind": "llvm", "keys": ["x86", "cpu"], "mcpu": cpu, "num-cores": cores}


def _amd_tag(gfx: str, warp: int) -> dict[str, object]:
    # devplan's own: TVM registers no ROCm tags. LDS is 64 KiB per workgroup.
    return {"kind": "rocm", "mcpu": gfx, "thread_warp_size": warp}


_RPI4 = {
    "kind": "llvm",
    "keys": ["arm_cpu", "cpu"],
    "mtriple": "aarch64-linux-gnu",
    "mcpu": "cortex-a72",
    "mattr": ["+neon"],
    "num-cores": 4,
}
_MB: Final = 2**20

BUILTIN_TAGS: Final[dict[str, dict[str, object]]] = {
    # NVIDIA data centre
    "nvidia/nvidia-a100": _cuda_tag("sm_80", l2_cache_size_bytes=41943040),
    "nvidia/nvidia-h100": _cuda_tag("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-a40": _cuda_tag("sm_86"),
    "nvidia/nvidia-a30": _cuda_tag("sm_80"),
    "nvidia/nvidia-a10": _cuda_tag("sm_86"),
    "nvidia/nvidia-a10g": _cuda_tag("sm_86"),
    "nvidia/nvidia-t4": _cuda_tag("sm_75"),
    "nvidia/nvidia-v100": _cuda_tag("sm_70"),
    "nvidia/tesla-p100": _cuda_tag("sm_60"),
    "nvidia/tesla-k80": _cuda_tag("sm_37"),
    # NVIDIA consumer
    "nvidia/geforce-rtx-4090": _cuda_tag("sm_89", l2_cache_size_bytes=75497472),
    "nvidia/geforce-rtx-3090": _cuda_tag("sm_86"),
    "nvidia/geforce-rtx-3080": _cuda_tag("sm_86"),
    "nvidia/geforce-rtx-2080-ti": _cuda_tag("sm_75"),
    "nvidia/geforce-gtx-1080-ti": _cuda_tag("sm_61"),
    # NVIDIA Jetson
    "nvidia/jetson-nano": _cuda_tag("sm_53", registers=32768),
    "nvidia/jetson-tx2": _cuda_tag("sm_62", registers=32768),
    "nvidia/jetson-agx-xavier": _jetson_tag("sm_72", "carmel", 8),
    "nvidia/jetson-orin-nano": _jetson_tag("sm_87", "carmel", 6),
    "nvidia/jetson-agx-orin-32gb": _jetson_tag("sm_87", "cortex-a78", 8),
    "nvidia/jetson-agx-orin-64gb": _jetson_tag("sm_87", "cortex-a78", 12),
    # AMD (devplan's own)
    "amd/instinct-mi250x": _amd_tag("gfx90a", 64),
    "amd/instinct-mi300x": _amd_tag("gfx942", 64),
    "amd/radeon-rx-7900-xtx": _amd_tag("gfx1100", 32),
    # Apple
    "apple/m1-gpu": _metal_tag(1024, "apple-m1"),
    "apple/m1-gpu-restricted": _metal_tag(256, "apple-m1"),
    "apple/m2-gpu": _metal_tag(1024, "apple-m2"),
    # Qualcomm
    "qcom/hexagon-v66": _hexagon_tag("v66", _MB // 4, False),
    "qcom/hexagon-v68": _hexagon_tag("v68", 4 * _MB, True),
    "qcom/hexagon-v69": _hexagon_tag("v69", 8 * _MB, True),
    "qcom/hexagon-v73": _hexagon_tag("v73", 8 * _MB, True),
    "qcom/adreno-opencl": {
        "kind": "opencl",
        "device": "adreno",
        "keys": ["adreno", "opencl", "gpu"],
    },
    "qcom/adreno-vulkan": {
        "kind": "vulkan",
        "device": "adreno",
        "keys": ["adreno", "vulkan", "gpu"],
    },
    # AWS CPUs
    "aws/cpu/c5.large": _aws_c5_tag(1, "skylake-avx512"),
    "aws/cpu/c5.xlarge": _aws_c5_tag(2, "skylake-avx512"),
    "aws/cpu/c5.2xlarge": _aws_c5_tag(4, "skylake-avx512"),
    "aws/cpu/c5.4xlarge": _aws_c5_tag(8, "skylake-avx512"),
    "aws/cpu/c5.9xlarge": _aws_c5_tag(18, "skylake-avx512"),
    "aws/cpu/c5.12xlarge": _aws_c5_tag(24, "cascadelake"),
    "aws/cpu/c5.18xlarge": _aws_c5_tag(36, "skylake-avx512"),
    "aws/cpu/c5.24xlarge": _aws_c5_tag(48, "cascadelake"),
    # Raspberry Pi
    "raspberry-pi/4b-aarch64": {**_RPI4, "host": dict(_RPI4)},
}
"""The tags devplan registers at import, as TVM's config dicts."""

for _name, _config in BUILTIN_TAGS.items():
    register_tag(_name, _config)


TargetDialect = Dialect("target", [], [TargetAttr])
"""The `target` dialect: one attribute, `#target.target<...>`."""


__all__ = [
    "BUILTIN_TAGS",
    "INHERIT",
    "MAX_HOST_DEPTH",
    "POSITIVE_ATTRS",
    "AttrSpec",
    "Resolved",
    "Target",
    "TargetAttr",
    "TargetDialect",
    "TargetError",
    "TargetKind",
    "TargetValue",
    "get_target_kind",
    "host_capable_kinds",
    "kind_device_type",
    "list_tags",
    "list_target_kinds",
    "register_tag",
    "register_target_kind",
]
