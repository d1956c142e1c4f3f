"""The Python Target API: kinds, keys, tags, legacy strings, JSON, equality, hosts."""

from __future__ import annotations

import json

import pytest

from devplan.diagnostics import DevplanError
from devplan.dialects.target import (
    Target,
    TargetAttr,
    list_tags,
    register_tag,
    register_target_kind,
)
from devplan.dialects.target_kinds import TargetError
from devplan.dialects.target_registry import kind_device_type, list_target_kinds
from devplan.dialects.target_tags import BUILTIN_TAGS

# --- built-in kinds -------------------------------------------------------------------

# kind -> (device type, default keys, attributes with defaults), as in TVM (tvm.md §a.3).
KINDS: dict[str, tuple[str, list[str], dict[str, object]]] = {
    "llvm": ("cpu", ["cpu"], {}),
    "c": ("cpu", ["cpu"], {}),
    "cuda": (
        "cuda",
        ["cuda", "gpu"],
        {"arch": "sm_50", "max_num_threads": 1024, "thread_warp_size": 32},
    ),
    "nvptx": (
        "cuda",
        ["cuda", "gpu"],
        {
            "mcpu": "sm_50",
            "mtriple": "nvptx64-nvidia-cuda",
            "max_num_threads": 1024,
            "thread_warp_size": 32,
        },
    ),
    "rocm": (
        "rocm",
        ["rocm", "gpu"],
        {
            "mcpu": "gfx900",
            "mtriple": "amdgcn-amd-amdhsa-hcc",
            "max_num_threads": 256,
            "max_threads_per_block": 256,
            "max_shared_memory_per_block": 65536,
            "thread_warp_size": 64,
        },
    ),
    "opencl": (
        "opencl",
        ["opencl", "gpu"],
        {
            "max_threads_per_block": 256,
            "max_shared_memory_per_block": 16384,
            "max_num_threads": 256,
            "thread_warp_size": 1,
            "texture_spatial_limit": 16384,
            "texture_depth_limit": 2048,
            "max_function_args": 128,
            "image_base_address_alignment": 64,
        },
    ),
    "metal": (
        "metal",
        ["metal", "gpu"],
        {
            "max_num_threads": 256,
            "max_threads_per_block": 256,
            "max_shared_memory_per_block": 32768,
            "thread_warp_size": 16,
            "max_function_args": 31,
        },
    ),
    "vulkan": (
        "vulkan",
        ["vulkan", "gpu"],
        {
            "supports_float32": True,
            "supports_int32": True,
            "max_num_threads": 256,
            "max_threads_per_block": 256,
            "thread_warp_size": 1,
        },
    ),
    "webgpu": (
        "webgpu",
        ["webgpu", "gpu"],
        {
            "max_num_threads": 256,
            "max_shared_memory_per_block": 32768,
            "supports_subgroups": False,
            "thread_warp_size": 1,
        },
    ),
    "hexagon": ("hexagon", ["hexagon", "cpu"], {}),
    "ext_dev": ("ext_dev", [], {}),
    "composite": ("cpu", [], {}),
}


def test_every_builtin_kind_is_registered() -> None:
    assert set(KINDS) <= set(list_target_kinds())


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_builtin_kind_device_type_keys_and_defaults(kind: str) -> None:
    device_type, keys, defaults = KINDS[kind]
    target = Target(kind)
    assert target.kind_name == kind
    assert target.device_type == device_type == kind_device_type(kind)
    assert target.keys == tuple(keys)
    assert target.tag is None
    assert target.host_target is None
    assert target.export() == {"kind": kind, "tag": "", "keys": keys, **defaults}
    for name, value in defaults.items():
        assert target.get_attr(name) == value


def test_llvm_does_not_embed_the_build_machine_triple() -> None:
    assert Target("llvm").get_attr("mtriple") is None
    assert "mtriple" not in Target("llvm").export()


def test_cuda_without_arch_is_sm_50_on_every_machine() -> None:
    assert Target("cuda").get_attr("arch") == "sm_50"
    assert Target("cuda") == Target("cuda", {"arch": "sm_50"})


def test_get_attr_of_an_attribute_without_value_gives_the_default() -> None:
    assert Target("cuda").get_attr("registers_per_block") is None
    assert Target("cuda").get_attr("registers_per_block", 7) == 7
    assert Target("llvm").get_attr("thread_warp_size", 1) == 1


def test_options_every_kind_has() -> None:
    target = Target("ext_dev", {"model": "npu", "libs": ["cudnn"], "device": "npu0"})
    assert target.get_attr("model") == "npu"
    assert target.get_attr("libs") == ("cudnn",)
    assert target.keys == ("npu0",)


def test_target_device_type_overrides_the_kind_device_type() -> None:
    assert Target("llvm", {"target_device_type": 2}).device_type == "cuda"
    with pytest.raises(
        TargetError, match=r"DLPack device type code, got 99; known codes: 1 \(cpu\)"
    ):
        Target("llvm", {"target_device_type": 99})


def test_from_device_is_refused_because_no_hardware_is_queried() -> None:
    with pytest.raises(TargetError) as info:
        Target("cuda", {"from_device": 0})
    assert str(info.value) == (
        "attribute 'from_device' would read attributes from a physical device, which devplan "
        "never queries so that targets mean the same on every machine; give the attributes "
        "explicitly"
    )


# --- keys (tvm.md §a.4) -----------------------------------------------------------------


def test_keys_device_is_prepended_to_default_keys() -> None:
    assert Target.from_config({"kind": "opencl", "device": "mali"}).keys == (
        "mali",
        "opencl",
        "gpu",
    )


def test_keys_given_replace_the_defaults() -> None:
    assert Target.from_config({"kind": "cuda", "keys": ["foo"]}).keys == ("foo",)


def test_keys_device_already_in_given_keys_is_deduplicated() -> None:
    config = {"kind": "llvm", "keys": ["cpu", "arm_cpu"], "device": "arm_cpu"}
    assert Target.from_config(config).keys == ("cpu", "arm_cpu")


def test_keys_equal_to_the_derived_ones_are_not_printed() -> None:
    target = Target("cuda", {"keys": ["cuda", "gpu"]})
    assert target == Target("cuda")
    assert repr(target) == 'Target(#target.target<"cuda">)'


# --- kind checks ------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a", "sm_100a", "sm_53"])
def test_cuda_arch_accepts_sm_versions(arch: str) -> None:
    assert Target("cuda", {"arch": arch}).get_attr("arch") == arch


@pytest.mark.parametrize("arch", ["compute_80", "80", "sm_", "SM_80"])
def test_cuda_arch_must_start_with_sm(arch: str) -> None:
    with pytest.raises(TargetError, match=f"invalid CUDA arch '{arch}' for target kind 'cuda'"):
        Target("cuda", {"arch": arch})


def test_nvptx_triple_is_fixed() -> None:
    assert Target("nvptx").get_attr("mtriple") == "nvptx64-nvidia-cuda"
    with pytest.raises(TargetError) as info:
        Target("nvptx", {"mtriple": "x86_64-linux-gnu"})
    assert str(info.value) == (
        "target kind 'nvptx' requires mtriple 'nvptx64-nvidia-cuda', got 'x86_64-linux-gnu'"
    )


def test_nvptx_mcpu_is_an_sm_version() -> None:
    with pytest.raises(TargetError, match="invalid CUDA arch 'gfx900' for target kind 'nvptx'"):
        Target("nvptx", {"mcpu": "gfx900"})


def test_rocm_mcpu_is_a_gfx_version() -> None:
    assert Target("rocm", {"mcpu": "gfx90a"}).get_attr("mcpu") == "gfx90a"
    with pytest.raises(
        TargetError, match="invalid ROCm GFX version 'sm_80' for target kind 'rocm'"
    ):
        Target("rocm", {"mcpu": "sm_80"})
    with pytest.raises(TargetError, match="requires mtriple 'amdgcn-amd-amdhsa-hcc'"):
        Target("rocm", {"mtriple": "amdgcn"})


def test_webgpu_subgroups_make_the_warp_32() -> None:
    target = Target("webgpu", {"supports_subgroups": True})
    assert target.get_attr("thread_warp_size") == 32
    assert target == Target("webgpu", {"supports_subgroups": True, "thread_warp_size": 32})
    assert repr(target) == 'Target(#target.target<"webgpu", {supports_subgroups = true}>)'


def test_webgpu_warp_above_one_needs_subgroups() -> None:
    with pytest.raises(TargetError) as info:
        Target("webgpu", {"thread_warp_size": 32})
    assert str(info.value) == (
        "a WebGPU target with thread_warp_size=32 requires supports_subgroups=true"
    )
    with pytest.raises(
        TargetError, match="supports_subgroups=true has thread_warp_size 32, got 16"
    ):
        Target("webgpu", {"supports_subgroups": True, "thread_warp_size": 16})


def test_llvm_jit_and_cl_opt_are_checked() -> None:
    assert Target("llvm", {"jit": "orcjit", "cl-opt": ["-unroll-threshold:int=100"]})
    with pytest.raises(
        TargetError, match="'jit' of target kind 'llvm' must be 'mcjit' or 'orcjit'"
    ):
        Target("llvm", {"jit": "lazy"})
    with pytest.raises(TargetError, match="invalid LLVM option 'unroll' in attribute 'cl-opt'"):
        Target("llvm", {"cl-opt": ["unroll"]})


# --- errors -----------------------------------------------------------------------------


def test_unknown_kind_suggests_the_nearest_and_lists_the_known() -> None:
    with pytest.raises(TargetError) as info:
        Target("cdua")
    assert str(info.value) == (
        "unknown target kind 'cdua' (did you mean 'cuda'?); known kinds: "
        + ", ".join(sorted(list_target_kinds()))
    )
    assert isinstance(info.value, ValueError)


def test_unknown_attribute_lists_the_kind_attributes() -> None:
    with pytest.raises(TargetError) as info:
        Target("metal", {"max_num_thread": 4})
    assert str(info.value) == (
        "target kind 'metal' has no attribute 'max_num_thread' (did you mean "
        "'max_num_threads'?); its attributes are: device, keys, libs, max_function_args, "
        "max_num_threads, max_shared_memory_per_block, max_threads_per_block, model, "
        "target_device_type, thread_warp_size"
    )


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            {"arch": 80},
            "attribute 'arch' of target kind 'cuda' expects a string, got the integer 80",
        ),
        (
            {"max_num_threads": "1024"},
            "attribute 'max_num_threads' of target kind 'cuda' expects an integer, "
            'got the string "1024"',
        ),
        (
            {"max_num_threads": True},
            "attribute 'max_num_threads' of target kind 'cuda' expects an integer, "
            "got the boolean true",
        ),
        (
            {"max_num_threads": 2**64},
            f"attribute 'max_num_threads' of target kind 'cuda' expects an integer, got {2**64}, "
            "which does not fit in 64 bits",
        ),
        (
            {"libs": "cudnn"},
            "attribute 'libs' of target kind 'cuda' expects a list of strings, "
            'got the string "cudnn"',
        ),
        (
            {"keys": ["gpu", 3]},
            "attribute 'keys' of target kind 'cuda' expects a list of strings, got a list whose "
            "element 1 is the integer 3",
        ),
    ],
)
def test_wrong_type_names_attribute_expected_and_got(
    attrs: dict[str, object], message: str
) -> None:
    with pytest.raises(TargetError) as info:
        Target("cuda", attrs)
    assert str(info.value) == message


def test_bool_attribute_rejects_an_integer() -> None:
    with pytest.raises(
        TargetError, match="'fast-math' of target kind 'llvm' expects a boolean, got the integer 1"
    ):
        Target("llvm", {"fast-math": 1})


def test_unknown_tag_suggests_the_nearest() -> None:
    with pytest.raises(TargetError) as info:
        Target("nvidia/nvidia-a1000")
    assert str(info.value).startswith(
        "unknown target tag 'nvidia/nvidia-a1000' (did you mean 'nvidia/nvidia-a100'?); "
        "list_tags() gives the"
    )


def test_config_without_kind_or_tag() -> None:
    with pytest.raises(TargetError, match=r'a target config needs a "kind" \(one of c, composite'):
        Target.from_config({"arch": "sm_80"})


def test_config_kind_must_be_a_string() -> None:
    with pytest.raises(
        TargetError, match='the "kind" of a target must be a string, got the integer 2'
    ):
        Target.from_config({"kind": 2})


def test_config_must_be_a_dict() -> None:
    with pytest.raises(
        TargetError, match="a target config must be a dict or a JSON object, got a list"
    ):
        Target.from_config([("kind", "cuda")])  # type: ignore[arg-type]


def test_malformed_target_json_quotes_the_json_error() -> None:
    with pytest.raises(TargetError) as info:
        Target.from_config('{"kind": "cuda",')
    assert str(info.value) == (
        "malformed target JSON: Expecting property name enclosed in double quotes "
        "at line 1 column 17"
    )
    with pytest.raises(TargetError, match="a target JSON config must be an object, got a list"):
        Target.from_config('["cuda"]')


def test_target_json_nested_too_deeply_is_malformed_json_not_a_recursion_error() -> None:
    deep = '{"kind": "llvm", "host": ' * 3000 + '{"kind": "llvm"}' + "}" * 3000
    with pytest.raises(TargetError) as info:
        Target.parse(deep)
    assert str(info.value) == (
        "malformed target JSON: nested too deeply (a target's host chain is at most 16 "
        "targets deep)"
    )


def test_a_config_key_that_is_not_a_string_is_named() -> None:
    with pytest.raises(TargetError) as info:  # it was a TypeError from inside the lookup
        Target.from_config({"kind": "cuda", 5: 1})  # type: ignore[dict-item]
    assert str(info.value) == (
        "a target config's keys are names such as 'kind' or 'arch', got the integer 5"
    )


def test_a_tag_given_as_kind_says_so() -> None:
    with pytest.raises(TargetError, match=r"'nvidia/nvidia-a100' is a tag, not a kind"):
        Target.from_config({"kind": "nvidia/nvidia-a100"})


# --- hosts ------------------------------------------------------------------------------


def test_host_from_config_forms() -> None:
    expected = Target("cuda", host=Target("llvm", {"mcpu": "skylake"}))
    assert (
        Target.from_config({"kind": "cuda", "host": {"kind": "llvm", "mcpu": "skylake"}})
        == expected
    )
    assert Target.from_config({"kind": "cuda", "host": "llvm -mcpu=skylake"}) == expected
    assert Target.from_config({"kind": "cuda", "host": "aws/cpu/c5.large"}).host_target == Target(
        "aws/cpu/c5.large"
    )


def test_same_target_with_and_without_host_differ_and_without_host_is_the_other() -> None:
    plain = Target("cuda", {"arch": "sm_80"})
    hosted = plain.with_host("llvm")
    assert hosted != plain
    assert hosted.without_host() == plain
    assert hash(hosted.without_host()) == hash(plain)
    assert hosted.host_target == Target("llvm")


def test_with_host_replaces_the_host() -> None:
    hosted = Target("cuda", host="llvm")
    assert hosted.with_host("c").host_target == Target("c")


@pytest.mark.parametrize("host", ["cuda", "rocm", "composite", "ext_dev", "nvidia/nvidia-a100"])
def test_host_must_be_host_capable(host: str) -> None:
    with pytest.raises(
        TargetError, match=r"cannot be a host; host-capable kinds: .*c, hexagon, llvm"
    ):
        Target("cuda", host=host)


def test_hexagon_can_be_a_host() -> None:
    assert Target("ext_dev", host="qcom/hexagon-v68").host_target == Target("qcom/hexagon-v68")


def test_a_host_can_have_a_host() -> None:
    hexagon = Target("hexagon", host="llvm")
    assert Target("cuda", host=hexagon).host_target == hexagon


def test_host_of_another_type_is_an_error_listing_the_forms() -> None:
    with pytest.raises(
        TargetError,
        match="a host must be a target, a kind or tag name, or a config dict, got the integer 3",
    ):
        Target.from_config({"kind": "cuda", "host": 3})


def test_tag_host_removed_round_trips_through_export() -> None:
    bare = Target("apple/m1-gpu").without_host()
    assert bare.host_target is None
    assert bare.tag == "apple/m1-gpu"
    assert bare.export()["host"] is None
    assert Target.from_config(bare.export()) == bare
    assert bare.with_host(Target("apple/m1-gpu").host_target or "llvm") == Target("apple/m1-gpu")


# --- equality, hashing, text ------------------------------------------------------------


def test_equal_resolved_configs_are_equal_targets() -> None:
    forms = [
        Target("cuda", {"arch": "sm_80"}),
        Target.from_config({"kind": "cuda", "arch": "sm_80", "max_num_threads": 1024}),
        Target.parse("cuda -arch=sm_80 -thread_warp_size=32"),
        Target.parse('{"kind": "cuda", "arch": "sm_80", "keys": ["cuda", "gpu"]}'),
    ]
    assert all(f == forms[0] for f in forms)
    assert len(set(forms)) == 1


def test_differing_attribute_makes_different_targets() -> None:
    assert Target("cuda", {"arch": "sm_80"}) != Target("cuda", {"arch": "sm_86"})
    assert Target("cuda", {"keys": ["x"]}) != Target("cuda")


def test_a_tag_differs_from_its_expansion_because_the_tag_is_part_of_the_config() -> None:
    tagged = Target("nvidia/nvidia-a100")
    expanded = {k: v for k, v in tagged.export().items() if k != "tag"}
    untagged = Target.from_config(expanded)
    assert untagged.tag is None
    assert untagged != tagged
    assert untagged.attrs == tagged.attrs


def test_str_is_sorted_json_and_parses_back() -> None:
    target = Target("cuda", {"arch": "sm_80"}, host="llvm")
    text = str(target)
    assert text == json.dumps(json.loads(text), sort_keys=True)
    assert text == (
        '{"arch": "sm_80", "host": {"keys": ["cpu"], "kind": "llvm", "tag": ""}, '
        '"keys": ["cuda", "gpu"], '
        '"kind": "cuda", "max_num_threads": 1024, "tag": "", "thread_warp_size": 32}'
    )
    assert Target.parse(text) == target


def test_resolved_configuration_is_cached() -> None:
    target = Target("vulkan", {"supports_float16": True})
    assert target.resolved is target.resolved
    assert hash(target) == hash(Target("vulkan", {"supports_float16": True}))


def test_targets_are_immutable() -> None:
    target = Target("cuda")
    with pytest.raises(AttributeError):
        target.kind = target.kind  # type: ignore[misc]


def test_composite_devices_are_targets() -> None:
    target = Target("composite", {"devices": ["cuda", {"kind": "llvm"}]}, host="llvm")
    assert target.get_attr("devices") == (Target("cuda"), Target("llvm"))
    assert Target.from_config(target.export()) == target
    with pytest.raises(TargetError, match=r"in devices\[1\]: unknown target kind 'cdua'"):
        Target("composite", {"devices": ["cuda", "cdua"]})


# --- legacy CLI strings (TVM <= v0.23) --------------------------------------------------


def test_parse_bare_kind_tag_and_json() -> None:
    assert Target.parse("cuda") == Target("cuda")
    assert Target.parse("nvidia/jetson-nano") == Target("nvidia/jetson-nano")
    assert Target.parse(' {"kind": "rocm"} ') == Target("rocm")


def test_parse_key_value_forms() -> None:
    expected = Target("cuda", {"arch": "sm_80", "max_num_threads": 512})
    assert Target.parse("cuda -arch=sm_80 -max_num_threads=512") == expected
    assert Target.parse("cuda -arch sm_80 --max_num_threads 512") == expected


def test_parse_bare_boolean_flags() -> None:
    target = Target.parse("llvm -fast-math -mcpu=skylake")
    assert target.get_attr("fast-math") is True
    assert Target.parse("llvm -fast-math=0").get_attr("fast-math") is False
    assert Target.parse("llvm -fast-math=TRUE").get_attr("fast-math") is True


def test_parse_comma_arrays_and_quotes() -> None:
    target = Target.parse("llvm -mattr=+neon,+v8.2a -keys=arm_cpu,cpu -mcpu='cortex a72'")
    assert target.get_attr("mattr") == ("+neon", "+v8.2a")
    assert target.keys == ("arm_cpu", "cpu")
    assert target.get_attr("mcpu") == "cortex a72"
    assert Target.parse("llvm -libs='a,b',c").get_attr("libs") == ("a,b", "c")
    assert Target.parse(r"llvm -mcpu=it\'s").get_attr("mcpu") == "it's"


def test_parse_takes_the_host_as_quoted_option_or_next_word() -> None:
    expected = Target("cuda", host=Target("llvm", {"mcpu": "skylake"}))
    assert Target.parse("cuda --host='llvm -mcpu=skylake'") == expected
    assert Target.parse('cuda -host "llvm -mcpu=skylake"') == expected
    assert Target.parse("cuda --host llvm").host_target == Target("llvm")
    assert Target.parse("cuda --host=aws/cpu/c5.large").host_target == Target("aws/cpu/c5.large")


def test_parse_tag_with_options() -> None:
    assert Target.parse("nvidia/nvidia-a100 -max_num_threads=512") == Target(
        "nvidia/nvidia-a100", {"max_num_threads": 512}
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("cuda -arch=sm_80 -arch=sm_86", "option '-arch' appears more than once"),
        ("cuda arch=sm_80", "option 'arch=sm_80' must start with '-', as in '-arch=sm_80'"),
        ("cuda -arch=", "option '-arch' has an empty value"),
        ("cuda --", "'--' is not an option: an option is -name or -name=value"),
        ("cuda -arch", "option '-arch' needs a value (a string), e.g. -arch=..."),
        (
            "cuda -max_num_threads=1024abc",
            "option '-max_num_threads' expects an integer, got '1024abc'",
        ),
        (
            "llvm -fast-math=yes",
            "option '-fast-math' expects a boolean (true, false, 1 or 0), got 'yes'",
        ),
        ("llvm -mcpu='skylake", "mismatched quote (') in 'llvm -mcpu='skylake'"),
        ("cuda --host", "option '--host' needs a value, e.g. --host=llvm"),
        ("cuda -arc=sm_80", "target kind 'cuda' has no attribute 'arc' (did you mean 'arch'?)"),
        ("cuda -arch=compute_80", "invalid CUDA arch 'compute_80' for target kind 'cuda'"),
        ("cuda -host=cuda", "target kind 'cuda' (device type 'cuda') cannot be a host"),
        ("cdua -arch=sm_80", "unknown target kind 'cdua' (did you mean 'cuda'?)"),
    ],
)
def test_malformed_legacy_string(text: str, problem: str) -> None:
    with pytest.raises(TargetError) as info:
        Target.parse(text)
    assert str(info.value).startswith(f'invalid target string "{text}": {problem}')


def test_empty_target_string() -> None:
    with pytest.raises(TargetError, match="empty target string; expected a kind"):
        Target.parse("  ")


def test_bare_unknown_word_is_an_unknown_kind() -> None:
    with pytest.raises(TargetError, match=r"^unknown target kind 'tpu'; known kinds: c, composite"):
        Target.parse("tpu")


# --- tags -------------------------------------------------------------------------------

_CUDA_TAG = {
    "max_shared_memory_per_block": 49152,
    "max_threads_per_block": 1024,
    "thread_warp_size": 32,
}
_ORIN_HOST = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "keys": ["arm_cpu", "cpu"]}

# tag -> (kind, attributes the tag sets, host config or None): TVM's tag tables (§a.8).
TAGS: dict[str, tuple[str, dict[str, object], dict[str, object] | None]] = {
    "nvidia/nvidia-a100": (
        "cuda",
        {"arch": "sm_80", "registers_per_block": 65536, "l2_cache_size_bytes": 41943040},
        None,
    ),
    "nvidia/nvidia-h100": (
        "cuda",
        {"arch": "sm_90a", "registers_per_block": 65536, "l2_cache_size_bytes": 52428800},
        None,
    ),
    "nvidia/nvidia-a40": ("cuda", {"arch": "sm_86", "registers_per_block": 65536}, None),
    "nvidia/nvidia-a30": ("cuda", {"arch": "sm_80", "registers_per_block": 65536}, None),
    "nvidia/nvidia-a10": ("cuda", {"arch": "sm_86", "registers_per_block": 65536}, None),
    "nvidia/nvidia-a10g": ("cuda", {"arch": "sm_86", "registers_per_block": 65536}, None),
    "nvidia/nvidia-t4": ("cuda", {"arch": "sm_75", "registers_per_block": 65536}, None),
    "nvidia/nvidia-v100": ("cuda", {"arch": "sm_70", "registers_per_block": 65536}, None),
    "nvidia/tesla-p100": ("cuda", {"arch": "sm_60", "registers_per_block": 65536}, None),
    "nvidia/tesla-k80": ("cuda", {"arch": "sm_37", "registers_per_block": 65536}, None),
    "nvidia/geforce-rtx-4090": (
        "cuda",
        {"arch": "sm_89", "registers_per_block": 65536, "l2_cache_size_bytes": 75497472},
        None,
    ),
    "nvidia/geforce-rtx-3090": ("cuda", {"arch": "sm_86", "registers_per_block": 65536}, None),
    "nvidia/geforce-rtx-3080": ("cuda", {"arch": "sm_86", "registers_per_block": 65536}, None),
    "nvidia/geforce-rtx-2080-ti": ("cuda", {"arch": "sm_75", "registers_per_block": 65536}, None),
    "nvidia/geforce-gtx-1080-ti": ("cuda", {"arch": "sm_61", "registers_per_block": 65536}, None),
    "nvidia/jetson-nano": ("cuda", {"arch": "sm_53", "registers_per_block": 32768}, None),
    "nvidia/jetson-tx2": ("cuda", {"arch": "sm_62", "registers_per_block": 32768}, None),
    "nvidia/jetson-agx-xavier": (
        "cuda",
        {"arch": "sm_72", "registers_per_block": 65536},
        {**_ORIN_HOST, "mcpu": "carmel", "num-cores": 8},
    ),
    "nvidia/jetson-orin-nano": (
        "cuda",
        {"arch": "sm_87", "registers_per_block": 65536},
        {**_ORIN_HOST, "mcpu": "carmel", "num-cores": 6},
    ),
    "nvidia/jetson-agx-orin-32gb": (
        "cuda",
        {"arch": "sm_87", "registers_per_block": 65536},
        {**_ORIN_HOST, "mcpu": "cortex-a78", "num-cores": 8},
    ),
    "nvidia/jetson-agx-orin-64gb": (
        "cuda",
        {"arch": "sm_87", "registers_per_block": 65536},
        {**_ORIN_HOST, "mcpu": "cortex-a78", "num-cores": 12},
    ),
    "amd/instinct-mi250x": ("rocm", {"mcpu": "gfx90a", "thread_warp_size": 64}, None),
    "amd/instinct-mi300x": ("rocm", {"mcpu": "gfx942", "thread_warp_size": 64}, None),
    "amd/radeon-rx-7900-xtx": ("rocm", {"mcpu": "gfx1100", "thread_warp_size": 32}, None),
    "apple/m1-gpu": (
        "metal",
        {
            "max_threads_per_block": 1024,
            "max_shared_memory_per_block": 32768,
            "thread_warp_size": 32,
        },
        {"kind": "llvm", "mtriple": "arm64-apple-macos", "mcpu": "apple-m1"},
    ),
    "apple/m1-gpu-restricted": (
        "metal",
        {
            "max_threads_per_block": 256,
            "max_shared_memory_per_block": 32768,
            "thread_warp_size": 32,
        },
        {"kind": "llvm", "mtriple": "arm64-apple-macos", "mcpu": "apple-m1"},
    ),
    "apple/m2-gpu": (
        "metal",
        {
            "max_threads_per_block": 1024,
            "max_shared_memory_per_block": 32768,
            "thread_warp_size": 32,
        },
        {"kind": "llvm", "mtriple": "arm64-apple-macos", "mcpu": "apple-m2"},
    ),
    "qcom/hexagon-v66": (
        "hexagon",
        {
            "mcpu": "hexagonv66",
            "mtriple": "hexagon",
            "num-cores": 4,
            "vtcm-capacity": 262144,
            "mattr": ("+hvxv66", "+hvx-length128b"),
        },
        None,
    ),
    "qcom/hexagon-v68": (
        "hexagon",
        {
            "mcpu": "hexagonv68",
            "mtriple": "hexagon",
            "num-cores": 4,
            "vtcm-capacity": 4194304,
            "mattr": ("+hvxv68", "+hvx-length128b", "+hvx-qfloat", "-hvx-ieee-fp"),
            "llvm-options": ("-force-hvx-float",),
        },
        None,
    ),
    "qcom/hexagon-v69": (
        "hexagon",
        {
            "mcpu": "hexagonv69",
            "num-cores": 4,
            "vtcm-capacity": 8388608,
            "mattr": ("+hvxv69", "+hvx-length128b", "+hvx-qfloat", "-hvx-ieee-fp"),
        },
        None,
    ),
    "qcom/hexagon-v73": (
        "hexagon",
        {
            "mcpu": "hexagonv73",
            "num-cores": 4,
            "vtcm-capacity": 8388608,
            "mattr": ("+hvxv73", "+hvx-length128b", "+hvx-qfloat", "-hvx-ieee-fp"),
        },
        None,
    ),
    "qcom/adreno-opencl": ("opencl", {"device": "adreno"}, None),
    "qcom/adreno-vulkan": ("vulkan", {"device": "adreno"}, None),
    "aws/cpu/c5.large": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 1}, None),
    "aws/cpu/c5.xlarge": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 2}, None),
    "aws/cpu/c5.2xlarge": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 4}, None),
    "aws/cpu/c5.4xlarge": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 8}, None),
    "aws/cpu/c5.9xlarge": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 18}, None),
    "aws/cpu/c5.12xlarge": ("llvm", {"mcpu": "cascadelake", "num-cores": 24}, None),
    "aws/cpu/c5.18xlarge": ("llvm", {"mcpu": "skylake-avx512", "num-cores": 36}, None),
    "aws/cpu/c5.24xlarge": ("llvm", {"mcpu": "cascadelake", "num-cores": 48}, None),
    "raspberry-pi/4b-aarch64": (
        "llvm",
        {"mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72", "mattr": ("+neon",), "num-cores": 4},
        {
            "kind": "llvm",
            "keys": ["arm_cpu", "cpu"],
            "mtriple": "aarch64-linux-gnu",
            "mcpu": "cortex-a72",
            "mattr": ["+neon"],
            "num-cores": 4,
        },
    ),
}
TAG_KEYS = {
    "qcom/adreno-opencl": ("adreno", "opencl", "gpu"),
    "qcom/adreno-vulkan": ("adreno", "vulkan", "gpu"),
    "raspberry-pi/4b-aarch64": ("arm_cpu", "cpu"),
    **{
        f"aws/cpu/c5.{size}": ("x86", "cpu")
        for size in (
            "large",
            "xlarge",
            "2xlarge",
            "4xlarge",
            "9xlarge",
            "12xlarge",
            "18xlarge",
            "24xlarge",
        )
    },
}


def test_at_least_twenty_tags_and_every_one_is_specified_here() -> None:
    assert len(BUILTIN_TAGS) >= 20
    assert set(BUILTIN_TAGS) == set(TAGS)
    assert set(TAGS) <= set(list_tags())


@pytest.mark.parametrize("name", sorted(TAGS))
def test_tag_configuration(name: str) -> None:
    kind, attrs, host = TAGS[name]
    target = list_tags()[name]
    assert target == Target(name) == Target.parse(name) == Target.from_config({"tag": name})
    assert target.tag == name
    assert target.kind_name == kind
    for attr, value in attrs.items():
        assert target.get_attr(attr) == value, attr
    if kind == "cuda":
        for attr, value in _CUDA_TAG.items():
            assert target.get_attr(attr) == value, attr
    expected_keys = TAG_KEYS.get(name, Target(kind).keys)
    assert target.keys == expected_keys
    assert target.host_target == (None if host is None else Target.from_config(host))
    assert Target.from_config(target.export()) == target
    assert repr(target) == f'Target(#target.target<"{name}">)'


def test_a100_exports_as_tvm_prints_it() -> None:
    assert Target("nvidia/nvidia-a100").export() == {
        "kind": "cuda",
        "tag": "nvidia/nvidia-a100",
        "keys": ["cuda", "gpu"],
        "max_num_threads": 1024,
        "registers_per_block": 65536,
        "thread_warp_size": 32,
        "max_shared_memory_per_block": 49152,
        "l2_cache_size_bytes": 41943040,
        "max_threads_per_block": 1024,
        "arch": "sm_80",
    }


def test_tag_with_overrides() -> None:
    target = Target("nvidia/nvidia-a100", {"max_num_threads": 512})
    assert target.get_attr("max_num_threads") == 512
    assert target.get_attr("arch") == "sm_80"
    assert target.tag == "nvidia/nvidia-a100"
    assert target == Target.from_config({"tag": "nvidia/nvidia-a100", "max_num_threads": 512})
    assert target == Target.from_config(
        {"kind": "cuda", "tag": "nvidia/nvidia-a100", "max_num_threads": 512}
    )
    assert repr(target) == 'Target(#target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>)'


def test_tag_override_equal_to_the_tag_value_is_dropped() -> None:
    assert Target("nvidia/nvidia-a100", {"arch": "sm_80"}) == Target("nvidia/nvidia-a100")


def test_tag_with_a_different_kind_in_the_config() -> None:
    with pytest.raises(TargetError) as info:
        Target.from_config({"kind": "llvm", "tag": "nvidia/nvidia-a100"})
    assert (
        str(info.value)
        == "tag 'nvidia/nvidia-a100' is a 'cuda' target, but the config says kind 'llvm'"
    )


def test_tag_host_can_be_replaced() -> None:
    target = Target("nvidia/jetson-agx-orin-64gb", host="llvm")
    assert target.host_target == Target("llvm")
    assert (
        repr(target)
        == 'Target(#target.target<"nvidia/jetson-agx-orin-64gb", host = #target.target<"llvm">>)'
    )


# --- user kinds and tags ----------------------------------------------------------------


def register_vector_dsp() -> None:
    # The registry is per process and other tests register a plain "dsp": use our own
    # name. Registering the same definition again is a no-op.
    register_target_kind(
        "vector_dsp",
        "dsp",
        {"vector_bits": (int, 1024), "isa": (str, None), "features": ("Array<str>", None)},
        default_keys=("dsp",),
    )


def test_user_kind_with_its_own_device_type() -> None:
    register_vector_dsp()
    target = Target("vector_dsp", {"isa": "v3"})
    assert "vector_dsp" in list_target_kinds()
    assert kind_device_type("vector_dsp") == target.device_type == "dsp"
    assert target.keys == ("dsp",)
    assert target.get_attr("vector_bits") == 1024
    assert target.export() == {
        "kind": "vector_dsp",
        "tag": "",
        "keys": ["dsp"],
        "isa": "v3",
        "vector_bits": 1024,
    }
    assert Target.parse("vector_dsp -isa=v3 -features=a,b").get_attr("features") == ("a", "b")
    with pytest.raises(
        TargetError, match="'vector_bits' of target kind 'vector_dsp' expects an integer"
    ):
        Target("vector_dsp", {"vector_bits": "wide"})
    with pytest.raises(
        TargetError, match=r"target kind 'vector_dsp' \(device type 'dsp'\) cannot be a host"
    ):
        Target("cuda", host="vector_dsp")


def test_user_kind_re_registration() -> None:
    register_target_kind("fpga_conv2d", "fpga", {"lanes": (int, 8)})
    register_target_kind("fpga_conv2d", "fpga", {"lanes": (int, 8)})  # same: fine
    with pytest.raises(TargetError, match="already registered with another definition"):
        register_target_kind("fpga_conv2d", "fpga", {"lanes": (int, 16)})


def test_user_kind_definition_errors() -> None:
    with pytest.raises(TargetError, match="invalid target kind name 'my dsp'"):
        register_target_kind("my dsp", "dsp")
    with pytest.raises(TargetError, match="attribute 'keys' is an option every kind has already"):
        register_target_kind("dsp2", "dsp", {"keys": (str, None)})
    with pytest.raises(TargetError, match="attribute 'x': unknown type"):
        register_target_kind("dsp3", "dsp", {"x": (float, None)})
    with pytest.raises(
        TargetError, match="'n' of target kind 'dsp4' expects an integer, got the string"
    ):
        register_target_kind("dsp4", "dsp", {"n": (int, "8")})


def test_host_capable_user_kind() -> None:
    register_target_kind("riscv_host", "cpu", {}, default_keys=("cpu",), host_capable=True)
    assert Target("cuda", host="riscv_host").host_target == Target("riscv_host")


def test_user_tag_and_its_overrides() -> None:
    register_vector_dsp()
    register_tag(
        "test/my-dsp", {"kind": "vector_dsp", "isa": "v4", "vector_bits": 2048}, override=True
    )
    target = Target("test/my-dsp", {"vector_bits": 512})
    assert target.get_attr("isa") == "v4"
    assert target.get_attr("vector_bits") == 512
    assert "test/my-dsp" in list_tags()
    with pytest.raises(TargetError, match="tag 'test/my-dsp' is already defined as"):
        register_tag("test/my-dsp", {"kind": "vector_dsp"})
    register_tag("test/my-dsp", {"kind": "vector_dsp", "isa": "v5"}, override=True)
    assert Target("test/my-dsp").get_attr("isa") == "v5"


def test_user_tag_from_a_tag_with_overrides() -> None:
    register_tag(
        "test/a100-small", {"tag": "nvidia/nvidia-a100", "max_num_threads": 256}, override=True
    )
    target = Target("test/a100-small")
    assert target.get_attr("arch") == "sm_80"
    assert target.get_attr("max_num_threads") == 256
    assert target.tag == "test/a100-small"


def test_tag_registration_errors() -> None:
    with pytest.raises(TargetError, match="'cuda' is a target kind and cannot be a tag name"):
        register_tag("cuda", {"kind": "cuda"})
    with pytest.raises(TargetError, match="invalid tag name 'a b'"):
        register_tag("a b", {"kind": "cuda"})
    with pytest.raises(TargetError, match="invalid CUDA arch"):
        register_tag("test/bad", {"kind": "cuda", "arch": "compute_80"})
    assert "test/bad" not in list_tags()


def test_tags_are_listed_as_targets() -> None:
    tags = list_tags()
    assert list(tags) == sorted(tags)
    assert all(isinstance(t, TargetAttr) for t in tags.values())


def test_host_is_not_an_attribute() -> None:
    with pytest.raises(TargetError, match=r"^'host' is not an attribute: pass it as host=\.\.\."):
        Target("cuda", {"host": "x"})


@pytest.mark.parametrize("entry", ["kind", "tag"])
def test_a_second_argument_naming_a_kind_or_tag_is_the_host_as_in_tvm(entry: str) -> None:
    with pytest.raises(TargetError, match=r"^in host: unknown target "):
        Target("cuda", {entry: "x"})
    assert Target("cuda", {"kind": "llvm"}) == Target("cuda", host="llvm")


def test_tvm_legacy_str_output_parses_back() -> None:
    # What TVM <= v0.23 printed for str(target) (tvm.md §a.6), trailing space included.
    jetson = Target.parse(
        "cuda -keys=cuda,gpu -arch=sm_87 -max_num_threads=1024 -max_shared_memory_per_block=49152"
        " -max_threads_per_block=1024 -registers_per_block=65536 -thread_warp_size=32"
    )
    assert jetson.attrs == Target("nvidia/jetson-agx-orin-64gb").attrs
    assert Target.parse("llvm -keys=cpu ") == Target("llvm")


def test_equal_targets_are_one_interned_object() -> None:
    # Passes compare targets often: construction from equal configs gives the same object.
    first = Target.from_config({"kind": "rocm", "mcpu": "gfx90a"})
    assert Target.parse("rocm -mcpu=gfx90a") is first
    assert first.with_host("llvm").without_host() is first


# --- Target(...) takes what TVM's Target(...) takes ---------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        "cuda -arch=sm_80",
        '{"kind": "cuda", "arch": "sm_80"}',
        {"kind": "cuda", "arch": "sm_80"},
        Target("cuda", {"arch": "sm_80"}),
    ],
    ids=["cli string", "json", "dict", "target"],
)
def test_target_takes_every_form_tvm_takes(form: object) -> None:
    assert Target(form) == Target("cuda", {"arch": "sm_80"})  # type: ignore[arg-type]


def test_target_of_a_tag_is_the_tag() -> None:
    assert Target("nvidia/nvidia-a100").tag == "nvidia/nvidia-a100"


@pytest.mark.parametrize("host", ["llvm -mcpu=skylake", {"kind": "llvm", "mcpu": "skylake"}])
def test_target_host_takes_every_form_a_target_does(host: object) -> None:
    expected = Target("cuda", host=Target("llvm", {"mcpu": "skylake"}))
    assert Target("cuda", host=host) == expected  # type: ignore[arg-type]
    assert Target("cuda", host) == expected  # type: ignore[arg-type]  # TVM's Target(t, host)


def test_target_host_replaces_the_host_of_a_cli_string() -> None:
    hosted = Target("cuda -arch=sm_80 --host=llvm", host="c")
    assert hosted.host_target == Target("c")
    assert Target("cuda -arch=sm_80 --host=llvm").host_target == Target("llvm")


def test_target_attrs_override_those_of_a_cli_string() -> None:
    target = Target("cuda -arch=sm_80", {"max_num_threads": 512})
    assert (target.get_attr("arch"), target.get_attr("max_num_threads")) == ("sm_80", 512)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: Target(5),
            r"^Target: target must be a kind or tag name, a CLI string .*"
            r"got the integer 5$",
        ),
        (lambda: Target(None), r"^Target: target must be .*, got null$"),
        (
            lambda: Target("cuda", 5),
            r"^Target: attrs must be a dict of attribute values .*"
            r"got the integer 5$",
        ),
        (
            lambda: Target("cuda", host=5),
            r"^Target: host must be .* or None for no host, "
            r"got the integer 5$",
        ),
        (lambda: Target("cuda", "llvm", host="c"), r"^Target: the host is given twice"),
    ],
    ids=["Target(5)", "Target(None)", 'Target("cuda", 5)', "host=5", "host twice"],
)
def test_target_of_a_wrong_type_names_the_argument(call: object, message: str) -> None:
    with pytest.raises(TargetError, match=message) as raised:
        call()  # type: ignore[operator]
    assert isinstance(raised.value, DevplanError)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: register_target_kind(5, "dsp"), "register_target_kind: name must be"),
        (lambda: register_target_kind("k", "x", attrs=5), "register_target_kind: attrs must"),
        (
            lambda: register_target_kind("k", "x", default_keys=5),
            "register_target_kind: default_keys must be",
        ),
        (lambda: register_tag(5, {}), "register_tag: name must be a tag name"),
        (lambda: register_tag("a/b", 5), "register_tag: config must be a config dict"),
        (lambda: Target("cuda").get_attr(5), "Target.get_attr: name must be an attribute name"),
    ],
)
def test_registering_and_asking_with_wrong_types_name_the_argument(
    call: object, message: str
) -> None:
    with pytest.raises(TargetError, match=f"^{message}.*, got int 5$"):
        call()  # type: ignore[operator]
