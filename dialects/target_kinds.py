"""Target kinds: what a kind is, and TVM's built-in kinds (reference §a of
`shared/reference/tvm.md`).

A kind has a name, a device type, default keys and an attribute schema (name, type,
default); some kinds also check their attributes together (`cuda`'s `arch`, `webgpu`'s
warp size). This module holds the attribute types, the schema records, the options every
kind has, the built-in kinds with their checks, and `TargetError` with the wording of the
errors about values and attribute names. Which kinds exist (the built-in ones and those
users register) is the registry's business, in `dialects/target.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, cast

from xdsl.ir import Attribute

from ..diagnostics import DevplanError


class TargetError(DevplanError, ValueError):
    """A bad target: unknown kind, attribute, type, host, tag or malformed text.

    A `DevplanError`, so callers of the Python API catch one error type; still a
    `ValueError`, as TVM raises for a bad target.

    `field` names the configuration entry at fault (`"kind"`, `"tag"`, `"host"`, an
    attribute name) when there is one, so the IR parser can point at it; `at_name` says
    the entry's name is wrong rather than its value (an unknown attribute).
    """

    def __init__(self, message: str, field: str | None = None, at_name: bool = False):
        super().__init__(message)
        self.field = field
        self.at_name = at_name


TargetValue = str | int | bool | tuple[str, ...] | tuple[Attribute, ...]
"""A resolved attribute value: arrays are tuples so that targets stay hashable. The
elements of an `Array<Target>` value are `TargetAttr`s (the attribute is defined on top
of this module, so the type here names their base class)."""

STR: Final = "str"
INT: Final = "int"
BOOL: Final = "bool"
STR_ARRAY: Final = "Array<str>"
TARGET_ARRAY: Final = "Array<Target>"
TYPES: Final = (STR, INT, BOOL, STR_ARRAY, TARGET_ARRAY)
TYPE_WORDS: Final = {
    STR: "a string",
    INT: "an integer",
    BOOL: "a boolean",
    STR_ARRAY: "a list of strings",
    TARGET_ARRAY: "a list of targets",
}
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

DLPACK_DEVICE_TYPES: Final = {
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
        return self.attrs.get(name) or COMMON_ATTRS.get(name)

    def attribute_names(self) -> list[str]:
        """The names users may give, sorted (listed in unknown-attribute errors)."""
        # `from_device` is in the schema only to be refused with a reason.
        return sorted({*self.attrs, *COMMON_ATTRS} - {"from_device"})


COMMON_ATTRS: Final = {
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

BUILTIN_KINDS: Final = (
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

MAX_HOST_DEPTH = 16
"""How many hosts deep a target may nest (a host of a host of ...); deeper configs are
an error rather than a recursion through every level."""


def describe(value: object) -> str:
    """How an offending value is named in a message (targets: see `target.py`)."""
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
    if isinstance(value, Attribute):
        return f"the attribute {value}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a dict"
    return f"a {type(value).__name__}"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    import difflib  # here, not at the top: only a misspelt name pays for it

    near = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""


def unknown_attribute_error(kind: TargetKind, name: str) -> TargetError:
    names = kind.attribute_names()
    return TargetError(
        f"target kind '{kind.name}' has no attribute '{name}'{did_you_mean(name, names)}; "
        f"its attributes are: {', '.join(names)}",
        name,
        at_name=True,
    )
