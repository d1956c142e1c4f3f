"""`#target.target<...>` in IR: parsing, canonical printing, located errors, round trips."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DictionaryAttr, NoneAttr, StringAttr
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import devplan
from devplan.dialects.target import Target, TargetAttr, list_tags
from devplan.dialects.target_kinds import BOOL, INT, POSITIVE_ATTRS, STR, STR_ARRAY
from devplan.dialects.target_registry import get_target_kind
from devplan.dialects.target_tags import BUILTIN_TAGS


def parse_attr(text: str) -> TargetAttr:
    attr = Parser(devplan.context(), text).parse_attribute()
    assert isinstance(attr, TargetAttr)
    return attr


def printed(target: TargetAttr) -> str:
    return TargetAttr.__mro__[1].__str__(target)  # the IR text, not the JSON `str()`


def test_ir_and_python_build_the_same_target() -> None:
    ir = parse_attr('#target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>')
    assert ir == Target.parse("cuda -arch=sm_80 --host=llvm")
    assert ir.kind_name == "cuda"
    assert ir.host_target == Target("llvm")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ('#target.target<"cuda", {max_num_threads = 1024}>', '#target.target<"cuda">'),
        (
            '#target.target<"cuda", {max_num_threads = 512, arch = "sm_80"}>',
            '#target.target<"cuda", {arch = "sm_80", max_num_threads = 512}>',
        ),
        ('#target.target<"cuda", {keys = ["cuda", "gpu"]}>', '#target.target<"cuda">'),
        ('#target.target<"cuda", {}>', '#target.target<"cuda">'),
        (
            '#target.target<"nvidia/nvidia-a100", {arch = "sm_80", max_num_threads = 512}>',
            '#target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>',
        ),
        (
            '#target.target<"llvm", {"num-cores" = 4 : i32, "fast-math" = true}>',
            '#target.target<"llvm", {"fast-math" = true, "num-cores" = 4}>',
        ),
        (
            '#target.target<"apple/m1-gpu", host = none>',
            '#target.target<"apple/m1-gpu", host = none>',
        ),
        ('#target.target<"cuda", host = none>', '#target.target<"cuda">'),
        (
            '#target.target<"composite", {devices = [#target.target<"cuda", {}>]}>',
            '#target.target<"composite", {devices = [#target.target<"cuda">]}>',
        ),
    ],
)
def test_printing_is_canonical(text: str, canonical: str) -> None:
    target = parse_attr(text)
    assert printed(target) == canonical
    assert printed(parse_attr(printed(target))) == canonical
    assert parse_attr(canonical) == target


def test_parsed_parameters_are_canonical() -> None:
    target = parse_attr('#target.target<"cuda", {max_num_threads = 1024, arch = "sm_86"}>')
    assert target.kind == StringAttr("cuda")
    assert target.config == DictionaryAttr({"arch": StringAttr("sm_86")})
    assert target.host == NoneAttr()


def test_a_module_with_targets_parses_through_devplan() -> None:
    module = devplan.parse('"test.op"() {t = #target.target<"nvidia/jetson-nano">} : () -> ()\n')
    op = next(iter(module.ops))
    assert op.attributes["t"] == Target("nvidia/jetson-nano")


def test_parse_error_points_at_the_offending_word() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse('"test.op"() {t = #target.target<"cuda", {arc = "sm_80"}>} : () -> ()\n')
    lines = str(info.value).splitlines()
    assert lines[0].startswith(
        "<string>:1:42: error: target kind 'cuda' has no attribute 'arc' (did you mean 'arch'?)"
    )
    assert lines[2] == " " * 41 + "^^^"


def test_generic_construction_with_bad_parameters_fails_verification() -> None:
    with pytest.raises(VerifyException, match="unknown target kind 'tpu'"):
        TargetAttr.new([StringAttr("tpu"), DictionaryAttr({}), NoneAttr()])


def test_generic_construction_with_defaults_equals_the_canonical_target() -> None:
    from xdsl.dialects.builtin import IntegerAttr, i64

    raw = TargetAttr.new(
        [
            StringAttr("cuda"),
            DictionaryAttr({"max_num_threads": IntegerAttr(1024, i64)}),
            NoneAttr(),
        ]
    )
    assert raw == Target("cuda")
    assert hash(raw) == hash(Target("cuda"))
    assert printed(raw) == '#target.target<"cuda">'


# --- property: every valid configuration round-trips ------------------------------------

_SPECIAL_VALUES: dict[tuple[str, str], list[object]] = {
    ("cuda", "arch"): ["sm_50", "sm_80", "sm_90a"],
    ("nvptx", "mcpu"): ["sm_61", "sm_86"],
    ("nvptx", "mtriple"): ["nvptx64-nvidia-cuda"],
    ("rocm", "mcpu"): ["gfx900", "gfx90a", "gfx1100"],
    ("rocm", "mtriple"): ["amdgcn-amd-amdhsa-hcc"],
    ("llvm", "jit"): ["mcjit", "orcjit"],
    ("llvm", "cl-opt"): [["-unroll-threshold:int=100"], []],
}
_SKIPPED = {("webgpu", "thread_warp_size"), ("llvm", "from_device")}
_KINDS = [
    "llvm",
    "c",
    "cuda",
    "nvptx",
    "rocm",
    "opencl",
    "metal",
    "vulkan",
    "webgpu",
    "hexagon",
    "ext_dev",
]
_text = st.text(st.sampled_from("ab_-+. ,'\"\\=é"), min_size=1, max_size=8)


def _value(kind: str, name: str, type_name: str) -> st.SearchStrategy[object]:
    if (kind, name) in _SPECIAL_VALUES:
        return st.sampled_from(_SPECIAL_VALUES[(kind, name)])
    if type_name == STR:
        return _text
    if type_name == INT:
        return st.integers(1 if name in POSITIVE_ATTRS else -(2**63), 2**63 - 1)
    if type_name == BOOL:
        return st.booleans()
    assert type_name == STR_ARRAY
    return st.lists(_text, max_size=3)


@st.composite
def configs(draw: st.DrawFn, depth: int = 0) -> dict[str, object]:
    if draw(st.booleans()):
        tag = draw(st.sampled_from(sorted(BUILTIN_TAGS)))
        config: dict[str, object] = {"tag": tag}
        kind = list_tags()[tag].kind_name
    else:
        kind = draw(st.sampled_from(_KINDS))
        config = {"kind": kind}
    spec = get_target_kind(kind)
    names = sorted(n for n in spec.attrs if (kind, n) not in _SKIPPED)
    for name in draw(st.lists(st.sampled_from(names), unique=True, max_size=4)) if names else []:
        config[name] = draw(_value(kind, name, spec.attrs[name].type))
    if draw(st.booleans()):
        config["keys"] = draw(st.lists(_text, max_size=3))
    if draw(st.booleans()):
        config["device"] = draw(_text)
    if depth == 0 and draw(st.booleans()):
        host = draw(configs(depth=1).filter(lambda c: c.get("kind") in ("llvm", "c", "hexagon")))
        config["host"] = host
    return config


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(configs())
def test_every_valid_config_round_trips(config: dict[str, object]) -> None:
    target = Target.from_config(config)
    assert Target.from_config(target.export()) == target
    assert Target.parse(str(target)) == target
    text = printed(target)
    again = parse_attr(text)
    assert again == target
    assert hash(again) == hash(target)
    assert printed(again) == text
    assert str(again) == str(target)
