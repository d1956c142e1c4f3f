"""Lattice laws of `join` and `default` over random virtual devices (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import devplan
from devplan.dialects.target import Target, TargetAttr
from devplan.dialects.virtual_device import UNCONSTRAINED, DeviceAttr, default, join

TARGETS: list[TargetAttr] = [
    Target.parse("llvm"),
    Target.parse("c"),
    Target.parse("cuda"),
    Target.from_config({"kind": "cuda", "arch": "sm_80"}),
    Target.parse("rocm"),
]


@st.composite
def devices(draw: st.DrawFn) -> DeviceAttr:
    """Random canonical devices over a small domain, so that fields often collide."""
    target = draw(st.none() | st.sampled_from(TARGETS))
    if target is not None:
        # With a target the type is the target's (stated or left for make to derive).
        type_name = draw(st.sampled_from([None, target.device_type]))
    else:
        type_name = draw(st.none() | st.sampled_from(["cpu", "cuda", "rocm"]))
    return DeviceAttr.make(
        type_name,
        draw(st.none() | st.integers(0, 2)),
        target,
        draw(st.none() | st.sampled_from(["global", "shared", "host"])),
    )


FIELDS = ("type_name", "device_id", "target_value", "scope")


def fields(device: DeviceAttr) -> tuple[object, ...]:
    return tuple(getattr(device, name) for name in FIELDS)


@given(devices(), devices())
def test_join_is_commutative(a: DeviceAttr, b: DeviceAttr) -> None:
    assert join(a, b) == join(b, a)


@given(devices(), devices(), devices())
def test_join_is_associative(a: DeviceAttr, b: DeviceAttr, c: DeviceAttr) -> None:
    ab = join(a, b)
    bc = join(b, c)
    left = None if ab is None else join(ab, c)
    right = None if bc is None else join(a, bc)
    assert left == right


@given(devices())
def test_join_is_idempotent(a: DeviceAttr) -> None:
    assert join(a, a) == a


@given(devices())
def test_join_with_unconstrained_is_identity(a: DeviceAttr) -> None:
    assert join(a, UNCONSTRAINED) == a
    assert join(UNCONSTRAINED, a) == a


@given(devices(), devices())
def test_join_when_defined_agrees_with_both(a: DeviceAttr, b: DeviceAttr) -> None:
    joined = join(a, b)
    if joined is None:
        # Undefined only when some field is constrained differently on both sides.
        assert any(
            x is not None and y is not None and x != y
            for x, y in zip(fields(a), fields(b), strict=True)
        )
        return
    assert join(joined, a) == joined
    assert join(joined, b) == joined
    for mine, theirs, result in zip(fields(a), fields(b), fields(joined), strict=True):
        assert result == (mine if mine is not None else theirs)


@given(devices(), devices())
def test_join_result_is_canonical(a: DeviceAttr, b: DeviceAttr) -> None:
    joined = join(a, b)
    if joined is not None and joined.target_value is not None:
        assert joined.type_name == joined.target_value.device_type


@given(devices(), devices())
def test_default_never_loses_a_constrained_field(a: DeviceAttr, b: DeviceAttr) -> None:
    result = default(a, b)
    for mine, kept in zip(fields(a), fields(result), strict=True):
        if mine is not None:
            assert kept == mine


@given(devices(), devices())
def test_default_fills_open_fields_from_the_default(a: DeviceAttr, b: DeviceAttr) -> None:
    result = default(a, b)
    assert result.type_name == (a.type_name or b.type_name)
    assert result.device_id == (a.device_id if a.device_id is not None else b.device_id)
    assert result.scope == (a.scope or b.scope)
    if a.target_value is None:
        # TVM's rule: the default's target only when it fits the resulting device type.
        fits = b.target_value is not None and b.target_value.device_type == result.type_name
        assert result.target_value == (b.target_value if fits else None)


@given(devices(), devices())
def test_default_agrees_with_join_when_join_is_defined(a: DeviceAttr, b: DeviceAttr) -> None:
    joined = join(a, b)
    if joined is not None:
        assert default(a, b) == joined


@given(devices())
def test_default_with_unconstrained_is_identity(a: DeviceAttr) -> None:
    assert default(a, UNCONSTRAINED) == a
    assert default(UNCONSTRAINED, a) == a


@given(devices())
def test_printing_round_trips(a: DeviceAttr) -> None:
    module = devplan.parse(f'"test.op"() {{d = {a}}} : () -> ()')
    assert next(iter(module.ops)).attributes["d"] == a
