"""The target registry: which kinds and tags exist, and the errors that name them.

Kinds start as the built-in ones (`target_kinds.BUILTIN_KINDS`) and tags as the built-in
table (`target_tags.BUILTIN_TAGS`); `register_target_kind` and `register_tag` add more.
Those two live in `target.py`, because registering checks values as targets. A tag is
kept as written (its kind, the attributes it gives, its host); `target.py` checks them
into a target's values the first time it resolves the tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from .target_kinds import BUILTIN_KINDS, TargetError, TargetKind, did_you_mean
from .target_tags import BUILTIN_TAGS


class Inherit:
    """Marker: no host was given, so the tag's host (if any) applies."""

    def __repr__(self) -> str:
        return "INHERIT"


INHERIT: Final = Inherit()


@dataclass(frozen=True)
class Tag:
    """A named configuration: its kind, the attributes it gives and its host."""

    name: str
    kind: str
    given: Mapping[str, object]
    """Attribute values: as the config dict writes them, or already checked."""
    host: object
    """None, a host target, or a host's config dict."""


def _builtin_tag(name: str, config: Mapping[str, object]) -> Tag:
    given = {key: value for key, value in config.items() if key not in ("kind", "host")}
    return Tag(name, cast(str, config["kind"]), given, config.get("host"))


_KINDS: dict[str, TargetKind] = {kind.name: kind for kind in BUILTIN_KINDS}
_TAGS: dict[str, Tag] = {name: _builtin_tag(name, c) for name, c in BUILTIN_TAGS.items()}


def find_kind(name: str) -> TargetKind | None:
    """The kind named `name`, or None."""
    return _KINDS.get(name)


def find_tag(name: str) -> Tag | None:
    """The tag named `name`, or None."""
    return _TAGS.get(name)


def tag_names() -> list[str]:
    """The registered tags' names, sorted."""
    return sorted(_TAGS)


def add_kind(kind: TargetKind) -> None:
    """Enter a checked kind (see `register_target_kind`)."""
    _KINDS[kind.name] = kind


def add_tag(tag: Tag) -> None:
    """Enter or replace a checked tag (see `register_tag`)."""
    _TAGS[tag.name] = tag


def lookup(name: str) -> tuple[TargetKind, Tag | None]:
    """The kind and tag named by `name` (a kind or a tag), or an unknown-name error."""
    if name in _KINDS:
        return _KINDS[name], None
    if name in _TAGS:
        tag = _TAGS[name]
        return _KINDS[tag.kind], tag
    raise unknown_name_error(name)


def unknown_name_error(name: str) -> TargetError:
    """Unknown kind or tag: a name with '/' is taken for a tag, as all tags have one."""
    if "/" in name:
        return unknown_tag_error(name)
    kinds = sorted(_KINDS)
    return TargetError(
        f"unknown target kind '{name}'{did_you_mean(name, [*kinds, *_TAGS])}; "
        f"known kinds: {', '.join(kinds)}",
        "kind",
    )


def unknown_tag_error(name: str) -> TargetError:
    return TargetError(
        f"unknown target tag '{name}'{did_you_mean(name, _TAGS)}; list_tags() gives the "
        f"{len(_TAGS)} known tags",
        "tag",
    )


def host_capable_kinds() -> list[str]:
    """Kinds whose targets may be a host: llvm, c, hexagon and user kinds so registered."""
    return sorted(name for name, kind in _KINDS.items() if kind.host_capable)


def list_target_kinds() -> list[str]:
    """The registered kinds, sorted."""
    return sorted(_KINDS)


def kind_device_type(kind: str) -> str:
    """The device type of `kind` ("cpu" for llvm, "cuda" for nvptx, "dsp" for a dsp kind)."""
    if kind not in _KINDS:
        raise unknown_name_error(kind)
    return _KINDS[kind].device_type


def get_target_kind(kind: str) -> TargetKind:
    """The registry entry of `kind` (device type, default keys, attribute schema)."""
    if kind not in _KINDS:
        raise unknown_name_error(kind)
    return _KINDS[kind]
