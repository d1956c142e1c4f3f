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

This file holds the attribute and what builds one: checking values against a kind's
schema, resolving a kind or tag with given attributes and a host into the full
configuration, the memos that make rebuilding a target a lookup, and `register_target_kind`
and `register_tag`, which check what they register by building targets. These parts call
one another (a host and a composite's devices are targets themselves), so they read best
in one file, longer than most. Beside it, parts that need no `TargetAttr`:
`target_kinds.py` (the schema, the built-in kinds, `TargetError`), `target_tags.py` (the
built-in tags as data), `target_registry.py` (which kinds and tags exist) and
`target_parsing.py` (JSON, CLI strings and the attribute's IR text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Final, TypeVar, cast

from xdsl.dialects.builtin import DictionaryAttr, NoneAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import check_argument
from .target_kinds import (
    BOOL,
    COMMON_ATTRS,
    DLPACK_DEVICE_TYPES,
    INT,
    INT64_MAX,
    INT64_MIN,
    MAX_HOST_DEPTH,
    POSITIVE_ATTRS,
    STR,
    STR_ARRAY,
    TARGET_ARRAY,
    TYPE_WORDS,
    TYPES,
    AttrSpec,
    TargetError,
    TargetKind,
    TargetValue,
    describe,
    unknown_attribute_error,
)
from .target_parsing import (
    IRTargetReader,
    legacy_options,
    load_json,
    print_key,
    print_value,
    split_outside_quotes,
    value_from_ir,
    value_to_ir,
)
from .target_registry import (
    INHERIT,
    Inherit,
    Tag,
    add_kind,
    add_tag,
    find_kind,
    find_tag,
    get_target_kind,
    host_capable_kinds,
    list_target_kinds,
    lookup,
    tag_names,
    unknown_name_error,
    unknown_tag_error,
)

# --------------------------------------------------------------------------------------
# Values: checking Python values against a schema
# --------------------------------------------------------------------------------------


def _describe(value: object) -> str:
    """How an offending value is named in a message."""
    if isinstance(value, TargetAttr):
        return f"the target {value.kind_name!r}"
    return describe(value)


def _coerce(kind: TargetKind, spec: AttrSpec, value: object) -> TargetValue:
    """`value` as the resolved value of `spec`, or a `TargetError` naming both."""

    def wrong(got: str) -> TargetError:
        return TargetError(
            f"attribute '{spec.name}' of target kind '{kind.name}' expects "
            f"{TYPE_WORDS[spec.type]}, got {got}",
            spec.name,
        )

    if spec.type == INT and isinstance(value, int) and not isinstance(value, bool):
        if not INT64_MIN <= value <= INT64_MAX:
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


def _check_given(kind: TargetKind, given: Mapping[str, object]) -> dict[str, TargetValue]:
    """Type-check user-given attribute values against `kind`'s schema."""
    checked: dict[str, TargetValue] = {}
    for attr_name, value in given.items():
        spec = kind.spec(attr_name)
        if spec is None:
            raise unknown_attribute_error(kind, attr_name)
        checked[attr_name] = _coerce(kind, spec, value)
    return checked


def _value_to_json(value: TargetValue) -> object:
    if isinstance(value, tuple):
        return [v if isinstance(v, str) else cast(TargetAttr, v).export() for v in value]
    return value


# --------------------------------------------------------------------------------------
# Resolution: (kind or tag, given attributes, host) -> the full configuration
# --------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class _TagValues:
    """A tag's attributes and host, checked against its kind."""

    name: str
    given: Mapping[str, TargetValue]
    host: TargetAttr | None


_TAG_VALUES: dict[str, _TagValues] = {}
"""Each tag's checked values, by name: checked when the tag is first resolved."""


def _tag_values(tag: Tag) -> _TagValues:
    checked = _TAG_VALUES.get(tag.name)
    if checked is None:
        kind = get_target_kind(tag.kind)
        host = cast(TargetAttr | None, _host_target(tag.host))
        checked = _TagValues(tag.name, _check_given(kind, tag.given), host)
        _TAG_VALUES[tag.name] = checked
    return checked


def _tag_host(name: str) -> TargetAttr | None:
    """The host a tag gives its targets."""
    tag = find_tag(name)
    return _tag_values(tag).host if tag else None


def _lookup(name: str) -> tuple[TargetKind, _TagValues | None]:
    """The kind and the tag's checked values named by `name`, or an unknown-name error."""
    kind, tag = lookup(name)
    return kind, _tag_values(tag) if tag else None


def _resolve(
    name: str, given: Mapping[str, TargetValue], host: TargetAttr | Inherit | None
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
    if device_type is not None and device_type not in DLPACK_DEVICE_TYPES:
        codes = ", ".join(f"{code} ({n})" for code, n in DLPACK_DEVICE_TYPES.items())
        raise TargetError(
            f"attribute 'target_device_type' must be a DLPack device type code, got "
            f"{device_type}; known codes: {codes}",
            "target_device_type",
        )
    if kind.check is not None:
        kind.check(attrs, frozenset(merged))
    keys = _derive_keys(kind, attrs)
    attrs.pop("keys", None)
    if isinstance(host, Inherit):
        host = tag.host if tag else None
    if host is not None:
        _check_host(host)
    return Resolved(kind.name, tag.name if tag else None, keys, tuple(sorted(attrs.items())), host)


def _check_host(host: TargetAttr) -> None:
    kind = get_target_kind(host.kind_name)
    if not kind.host_capable:
        raise TargetError(
            f"target kind '{kind.name}' (device type '{kind.device_type}') cannot be a "
            f"host; host-capable kinds: {', '.join(host_capable_kinds())}",
            "host",
        )


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
    for memo in (_CANONICAL, _RESOLVED_BY_PARAMS, _BUILT, _INTERNED, _TAG_VALUES):
        memo.clear()


_hosts_being_read = [0]


def _host_too_deep() -> TargetError:
    return TargetError(
        f"the target's host chain is more than {MAX_HOST_DEPTH} targets deep "
        "(a host's host's ...); a device target needs one host",
        "host",
    )


def _host_target(host: object) -> TargetAttr | Inherit | None:
    if host is None or isinstance(host, TargetAttr | Inherit):
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


_TARGET_FORMS: Final = (
    "a kind or tag name, a CLI string such as 'cuda -arch=sm_80', JSON text, a config "
    "dict or a Target"
)
"""What `Target(...)` takes for a target or a host, as TVM's `Target(...)` does."""


def _is_host_form(second: object) -> bool:
    """Whether `Target(target, second)` gives a host, as TVM's second argument does: a
    target, a string, or a config dict naming its kind or tag (attributes never do)."""
    if isinstance(second, TargetAttr | str):
        return True
    return isinstance(second, Mapping) and ("kind" in second or "tag" in second)


def _build_from(
    target: str | Mapping[str, object] | TargetAttr, attrs: Mapping[str, object], host: object
) -> TargetAttr:
    """`Target(target, attrs, host=host)`: a plain kind or tag name is built directly;
    any other form is read first, then `attrs` and `host` override what it gives."""
    if isinstance(target, str) and (find_kind(target) or find_tag(target)):
        return _build(target, attrs, host)
    if isinstance(target, TargetAttr):
        base = target
    elif isinstance(target, str):
        base = _parse_target_string(target)
    else:
        base = TargetAttr.from_config(target)
    if not attrs and isinstance(host, Inherit):
        return base
    resolved = base.resolved
    given = {**_canonical_given(resolved), **attrs}
    return _build(resolved.name, given, resolved.host if isinstance(host, Inherit) else host)


# --------------------------------------------------------------------------------------
# The attribute
# --------------------------------------------------------------------------------------


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
        target: str | Mapping[str, object] | TargetAttr,
        attrs: Mapping[str, object] | str | TargetAttr | None = None,
        host: TargetAttr | str | Mapping[str, object] | Inherit | None = INHERIT,
    ):
        """A target from what TVM's `Target(...)` takes, plus attributes.

        `target` is a kind (`"cuda"`), a tag (`"nvidia/nvidia-a100"`), a CLI string
        (`"cuda -arch=sm_80"`), JSON text, a config dict or a target. `attrs` overrides
        its attributes (`Target("cuda", {"arch": "sm_80"})`); as in TVM, a second
        argument that is a target, a string or a config dict with a `"kind"` or `"tag"`
        is the host instead (`Target("cuda", "llvm")`). `host` (a target or anything
        `Target` takes) replaces the host; without it, the host `target` gives (a tag's
        or a CLI string's) applies, and `host=None` means no host.
        """
        if not isinstance(target, str | Mapping | TargetAttr):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TargetError(
                f"Target: target must be {_TARGET_FORMS}, got {_describe(target)}", "kind"
            )
        if _is_host_form(attrs):
            if not isinstance(host, Inherit):
                raise TargetError(
                    "Target: the host is given twice, as the second argument (TVM's "
                    "Target(target, host)) and as host=; give it once",
                    "host",
                )
            attrs, host = None, cast(TargetAttr | str | Mapping[str, object], attrs)
        if attrs is not None and not isinstance(attrs, Mapping):
            raise TargetError(
                "Target: attrs must be a dict of attribute values such as "
                f'{{"arch": "sm_80"}} (or, as in TVM, the host: {_TARGET_FORMS}), '
                f"got {_describe(attrs)}",
                "attrs",
            )
        if not isinstance(host, Inherit | TargetAttr | str | Mapping | None):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TargetError(
                f"Target: host must be {_TARGET_FORMS}, or None for no host, got {_describe(host)}",
                "host",
            )
        built = _build_from(target, attrs or {}, host)
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
            DictionaryAttr({k: value_to_ir(v) for k, v in sorted(given.items())}),
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
            config = load_json(config)
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
            reader = IRTargetReader(parser, TargetAttr)
            text = reader.read()
            try:
                return _build(text.name, text.given, text.host).parameters
            except TargetError as e:
                reader.raise_at(e)

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
                    print_key(printer, key)
                    printer.print_string(" = ")
                    print_value(printer, value)
                printer.print_string("}")
            tag_host = _tag_host(resolved.tag) if resolved.tag else None
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
        return get_target_kind(self.resolved.kind)

    @property
    def device_type(self) -> str:
        """TVM's device type name ("cpu", "cuda", ...; a user kind's own, e.g. "dsp")."""
        code = self.get_attr("target_device_type")
        if isinstance(code, int):
            return DLPACK_DEVICE_TYPES[code]
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
        _argument_checker("Target.get_attr")("name", name, str, "an attribute name")
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
        elif resolved.tag and _tag_host(resolved.tag) is not None:
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
    given = _check_given(kind, {k: value_from_ir(v) for k, v in config.data.items()})
    resolved = _resolve(name.data, given, host if isinstance(host, TargetAttr) else None)
    _remember(params, resolved)
    return resolved


# --------------------------------------------------------------------------------------
# Text forms: JSON and the legacy CLI string
# --------------------------------------------------------------------------------------


def _config_name(kind: object, tag: object) -> str:
    """The kind or tag a config dict names (TVM: a tag is expanded when it is known)."""
    if kind is not None and not isinstance(kind, str):
        raise TargetError(f'the "kind" of a target must be a string, got {_describe(kind)}')
    if tag is not None and not isinstance(tag, str):
        raise TargetError(f'the "tag" of a target must be a string, got {_describe(tag)}')
    if tag:
        entry = find_tag(tag)
        if entry is None:
            raise unknown_tag_error(tag)
        if kind is not None and kind != entry.kind:
            raise TargetError(
                f"tag '{tag}' is a '{entry.kind}' target, but the config says kind '{kind}'",
                "kind",
            )
        return tag
    if kind is None:
        raise TargetError(
            f'a target config needs a "kind" (one of {", ".join(list_target_kinds())}) or a "tag"',
            "kind",
        )
    if find_kind(kind) is None:
        if find_tag(kind) is not None:
            raise TargetError(f'\'{kind}\' is a tag, not a kind: write {{"tag": "{kind}"}}', "kind")
        raise unknown_name_error(kind)
    return kind


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
        words = [w for w in split_outside_quotes(stripped, str.isspace) if w]
        name = words[0]
        kind, _ = lookup(name)
        options = legacy_options(kind, words[1:], TargetAttr.parse)
        host = options.pop("host", INHERIT)
        return _build(name, options, host)
    except TargetError as e:
        if len(stripped.split()) == 1:
            raise
        raise TargetError(f'invalid target string "{stripped}": {e}', e.field) from None


# --------------------------------------------------------------------------------------
# Registering kinds and tags
# --------------------------------------------------------------------------------------

_PY_TYPES: Final[dict[object, str]] = {str: STR, int: INT, bool: BOOL}


def _type_name(type_spec: object, attr_name: str) -> str:
    if type_spec in _PY_TYPES:
        return _PY_TYPES[type_spec]
    if isinstance(type_spec, str) and type_spec in TYPES:
        return type_spec
    if str(type_spec) in ("list[str]", "tuple[str, ...]"):
        return STR_ARRAY
    raise TargetError(
        f"attribute '{attr_name}': unknown type {type_spec!r}; use str, int, bool or one of "
        f"{', '.join(repr(t) for t in TYPES)}"
    )


def _argument_checker(function: str) -> Callable[[str, object, type | tuple[type, ...], str], None]:
    """`check(parameter, value, expected, description)` for `function`'s arguments,
    raising `TargetError` naming the parameter."""

    def check(
        parameter: str, value: object, expected: type | tuple[type, ...], description: str
    ) -> None:
        check_argument(function, parameter, value, expected, description, TargetError)

    return check


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
    check = _argument_checker("register_target_kind")
    check("name", name, str, "a kind name such as 'dsp'")
    check("device_type", device_type, str, "a device type name such as 'cpu' or 'dsp'")
    check("attrs", attrs, (Mapping, type(None)), "a dict of name: (type, default), or None")
    check("default_keys", default_keys, (list, tuple), "a list of key strings")
    check("host_capable", host_capable, bool, "True or False")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name):
        raise TargetError(f"invalid target kind name {name!r}: use letters, digits, '_' and '-'")
    if find_tag(name) is not None:
        raise TargetError(f"'{name}' is already a tag name")
    if not device_type:
        raise TargetError(f"target kind '{name}' needs a device type, e.g. 'cpu' or '{name}'")
    specs: dict[str, AttrSpec] = {}
    for attr_name, (type_spec, default) in (attrs or {}).items():
        if attr_name in COMMON_ATTRS or attr_name in ("kind", "tag", "host"):
            raise TargetError(f"attribute '{attr_name}' is an option every kind has already")
        spec = AttrSpec(attr_name, _type_name(type_spec, attr_name))
        stub = TargetKind(name, device_type, (), {})
        value = None if default is None else _coerce(stub, spec, default)
        specs[attr_name] = AttrSpec(attr_name, spec.type, value)
    kind = TargetKind(name, device_type, tuple(default_keys), specs, host_capable)
    existing = find_kind(name)
    if existing is not None:
        if existing == kind:
            return existing
        raise TargetError(f"target kind '{name}' is already registered with another definition")
    add_kind(kind)
    return kind


def register_tag(
    name: str, config: Mapping[str, object] | str | TargetAttr, override: bool = False
) -> TargetAttr:
    """Register `name` for a target configuration (a config dict, JSON or a target).

    Re-registering a tag needs `override=True`; targets built before keep the old
    configuration. Returns the tag's target.
    """
    check = _argument_checker("register_tag")
    check("name", name, str, "a tag name such as 'my/board'")
    check("config", config, (Mapping, str, TargetAttr), "a config dict, JSON text or a Target")
    check("override", override, bool, "True or False")
    if not name or any(c.isspace() for c in name) or name.startswith(("{", "-")):
        raise TargetError(f"invalid tag name {name!r}: no spaces, not starting with '{{' or '-'")
    if find_kind(name) is not None:
        raise TargetError(f"'{name}' is a target kind and cannot be a tag name")
    if find_tag(name) is not None and not override:
        raise TargetError(
            f"tag '{name}' is already defined as {TargetAttr(name)}; pass override=True "
            "to replace it"
        )
    if isinstance(config, str):
        config = load_json(config)
    target = TargetAttr.from_config(config)
    if isinstance(config, TargetAttr) or config.get("tag"):
        # Built from another target or tag: store every value, relative to the kind.
        given: dict[str, TargetValue] = {**target.resolved.attr_map, "keys": target.keys}
    else:
        # A plain config is stored as written, so `keys` derive as TVM derives them.
        raw = {k: v for k, v in config.items() if k not in ("kind", "host")}
        given = _check_given(target.target_kind, raw)
    add_tag(Tag(name, target.kind_name, given, target.host_target))
    _forget_everything_built()
    return TargetAttr(name)


def list_tags() -> dict[str, TargetAttr]:
    """Every registered tag and its target, by name."""
    return {name: TargetAttr(name) for name in tag_names()}


TargetDialect = Dialect("target", [], [TargetAttr])
"""The `target` dialect: one attribute, `#target.target<...>`."""


__all__ = [
    "Resolved",
    "Target",
    "TargetAttr",
    "TargetDialect",
    "list_tags",
    "register_tag",
    "register_target_kind",
]
