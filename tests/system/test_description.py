"""The system description: loading, validation errors, queries, the default."""

from __future__ import annotations

from pathlib import Path

import pytest

import devplan
from devplan.dialects.device import DEVICE_ATTR_KINDS
from devplan.dialects.target import Target
from devplan.dialects.virtual_device import DeviceAttr
from devplan.system.description import (
    DEFAULT_SYSTEM_TOML,
    DeviceSpec,
    LinkSpec,
    ModuleSystemError,
    System,
    SystemDescriptionError,
)

CPU = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "1 GiB" }
"""

GPU = """
[[device]]
type = "cuda"
id = 0
target = { kind = "cuda", arch = "sm_80" }
api = "simulated"
scopes = { global = "16 GiB", shared = "48 KiB", host = "1 GiB" }
"""

LINK = """
[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"
"""


def error_of(text: str) -> str:
    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(text, "sys.toml")
    return str(info.value)


# --- the pinned shape ------------------------------------------------------------------


def test_designs_example_loads() -> None:
    system = System.from_text(
        """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "32 GiB" }

[[device]]
type = "cuda"
id = 0
target = { kind = "cuda", arch = "sm_80" }     # or tag = "nvidia/nvidia-a100"
api = "simulated"
scopes = { global = "16 GiB", shared = "48 KiB", host = "32 GiB" }

[[same_memory]]                                # one memory area, seen from two devices
scopes = ["cpu:0/global", "cuda:0/host"]

[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"
""",
        "design.toml",
    )
    cpu, gpu = system.devices
    assert cpu == DeviceSpec("cpu", 0, Target.parse("llvm"), "cpu", {"global": 32 * 2**30})
    assert gpu.name == "cuda:0"
    assert gpu.target == Target.from_config({"kind": "cuda", "arch": "sm_80"})
    assert gpu.scopes == {"global": 16 * 2**30, "shared": 48 * 1024, "host": 32 * 2**30}
    assert system.host is cpu
    assert system.links == (LinkSpec("cpu:0", "cuda:0", 24e9, 1e-5),)
    assert system.same_memory(("cpu:0", "global"), ("cuda:0", "host"))


def test_target_may_be_a_tag_table_or_a_string() -> None:
    for target in ('{ tag = "nvidia/nvidia-a100" }', '"nvidia/nvidia-a100"'):
        system = System.from_text(CPU + GPU.replace('{ kind = "cuda", arch = "sm_80" }', target))
        assert system.device("cuda", 0).target.tag == "nvidia/nvidia-a100"


# --- the default system ----------------------------------------------------------------------


def test_default_system_has_one_cpu_and_two_simulated_gpus() -> None:
    system = System.default()
    assert [d.name for d in system.devices] == ["cpu:0", "cuda:0", "cuda:1"]
    assert [d.api for d in system.devices] == ["cpu", "simulated", "simulated"]
    assert system.host.name == "cpu:0"
    assert system.name == "<default system>"


def test_default_gpus_have_tag_derived_targets() -> None:
    system = System.default()
    for gpu in system.devices[1:]:
        assert gpu.target.tag == "nvidia/nvidia-a100"
        assert gpu.target.get_attr("arch") == "sm_80"
        assert gpu.target.device_type == "cuda"
    assert system.host.target.kind_name == "llvm"


def test_default_host_memory_is_one_area_with_each_gpus_host_scope() -> None:
    system = System.default()
    assert system.memory_area("cpu:0", "global") == {
        ("cpu:0", "global"),
        ("cuda:0", "host"),
        ("cuda:1", "host"),
    }
    assert not system.same_memory(("cuda:0", "global"), ("cuda:1", "global"))


def test_default_links_join_every_pair() -> None:
    system = System.default()
    for a, b in (("cpu:0", "cuda:0"), ("cpu:0", "cuda:1"), ("cuda:0", "cuda:1")):
        link = system.link_between(a, b)
        assert link is not None
        assert system.link_between(b, a) is link
        assert link.bandwidth > 0
        assert link.latency > 0
    assert system.link_between("cpu:0", "cpu:0") is None


def test_default_gpu_attributes_come_from_the_target_and_the_entry() -> None:
    attrs = System.default().device("cuda", 0).attrs
    assert attrs["exist"] is True
    assert attrs["max_threads_per_block"] == 1024
    assert attrs["warp_size"] == 32
    assert attrs["max_shared_memory_per_block"] == 49152
    assert attrs["compute_version"] == "8.0"
    assert attrs["device_name"] == "nvidia/nvidia-a100"
    assert attrs["total_global_memory"] == 40 * 2**30
    assert list(attrs) == sorted(attrs, key=list(attrs).index)  # TVM's DeviceAttrKind order


def test_default_cpu_attributes_are_only_what_is_known() -> None:
    attrs = System.default().host.attrs
    assert attrs == {"exist": True, "device_name": "llvm", "total_global_memory": 32 * 2**30}


def test_default_description_text_is_a_loadable_file(tmp_path: Path) -> None:
    path = tmp_path / "default.toml"
    path.write_text(DEFAULT_SYSTEM_TOML)
    assert [d.name for d in System.load(path).devices] == ["cpu:0", "cuda:0", "cuda:1"]


# --- validation errors: file, entry, key --------------------------------------------------------


def test_unknown_device_key() -> None:
    assert error_of(CPU + GPU.replace("scopes =", "scops =")) == (
        "sys.toml: device[1]: unknown key 'scops' (valid: type, id, target, api, scopes, attrs, "
        "peak_gflops, memory_bandwidth, launch_latency, node, actor_api)"
    )


def test_missing_device_key() -> None:
    assert error_of(CPU.replace('api = "cpu"\n', "")) == "sys.toml: device[0]: missing key 'api'"


def test_duplicate_device_names_the_earlier_entry() -> None:
    assert error_of(CPU + GPU + GPU) == (
        "sys.toml: device[2]: duplicate device cuda:0 (already device[1])"
    )


def test_bad_size_unit_lists_the_valid_units() -> None:
    assert error_of(CPU.replace('"1 GiB"', '"1 GiBs"')) == (
        "sys.toml: device[0]: scopes.global: bad size unit 'GiBs' in '1 GiBs' "
        "(valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
    )


def test_size_without_unit() -> None:
    assert error_of(CPU.replace('"1 GiB"', "1024")) == (
        'sys.toml: device[0]: scopes.global: expected a size string with a unit such as "16 GiB",'
        " got 1024"
    )


def test_size_that_is_not_whole_bytes() -> None:
    assert error_of(CPU.replace('"1 GiB"', '"1.5 B"')) == (
        "sys.toml: device[0]: scopes.global: bad size '1.5 B': "
        "expected a positive whole number of bytes"
    )


def test_size_that_is_not_a_number() -> None:
    assert error_of(CPU.replace('"1 GiB"', '"lots"')) == (
        "sys.toml: device[0]: scopes.global: bad size 'lots': "
        'expected a number and a unit, e.g. "16 GiB"'
    )


def test_bad_bandwidth_unit() -> None:
    assert error_of(CPU + GPU + LINK.replace('"24 GB/s"', '"24 Gb/s"')) == (
        "sys.toml: link[0]: bandwidth: bad bandwidth unit 'Gb/s' in '24 Gb/s' "
        "(valid: B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)"
    )


def test_bad_latency_unit_lists_the_valid_units() -> None:
    assert error_of(CPU + GPU + LINK.replace('"10 us"', '"10 sec"')) == (
        "sys.toml: link[0]: latency: bad latency unit 'sec' in '10 sec' (valid: ns, us, ms, s)"
    )


def test_link_naming_an_unknown_device() -> None:
    assert error_of(CPU + GPU + LINK.replace('"cuda:0"]', '"cuda:3"]')) == (
        "sys.toml: link[0]: between[1]: unknown device 'cuda:3' (devices: cpu:0, cuda:0)"
    )


def test_link_from_a_device_to_itself() -> None:
    assert error_of(CPU + GPU + LINK.replace('"cuda:0"]', '"cpu:0"]')) == (
        "sys.toml: link[0]: between: a link joins two different devices, got cpu:0 twice"
    )


def test_duplicate_link_in_either_direction() -> None:
    reverse = LINK.replace('["cpu:0", "cuda:0"]', '["cuda:0", "cpu:0"]')
    assert error_of(CPU + GPU + LINK + reverse) == (
        "sys.toml: link[1]: duplicate link between cuda:0 and cpu:0 (already link[0])"
    )


def test_link_missing_latency() -> None:
    assert error_of(CPU + GPU + LINK.replace('latency = "10 us"\n', "")) == (
        "sys.toml: link[0]: missing key 'latency'"
    )


def test_same_memory_naming_an_unknown_device() -> None:
    text = CPU + GPU + '[[same_memory]]\nscopes = ["cpu:0/global", "cuda:1/host"]\n'
    assert error_of(text) == (
        "sys.toml: same_memory[0]: scopes[1]: unknown device 'cuda:1' (devices: cpu:0, cuda:0)"
    )


def test_same_memory_naming_an_unknown_scope() -> None:
    text = CPU + GPU + '[[same_memory]]\nscopes = ["cpu:0/global", "cuda:0/hots"]\n'
    assert error_of(text) == (
        "sys.toml: same_memory[0]: scopes[1]: device cuda:0 has no scope 'hots' "
        "(declared: global, shared, host)"
    )


def test_same_memory_needs_two_scopes() -> None:
    text = CPU + '[[same_memory]]\nscopes = ["cpu:0/global"]\n'
    assert error_of(text) == (
        "sys.toml: same_memory[0]: scopes: expected two or more scope references, "
        'e.g. ["cpu:0/global", "cuda:0/host"]'
    )


def test_same_memory_reference_needs_a_scope() -> None:
    text = CPU + GPU + '[[same_memory]]\nscopes = ["cpu:0", "cuda:0/host"]\n'
    assert error_of(text) == (
        'sys.toml: same_memory[0]: scopes[0]: expected a scope reference such as "cuda:0/host",'
        " got 'cpu:0'"
    )


def test_api_must_be_a_name() -> None:
    assert error_of(CPU + GPU.replace('"simulated"', "5")) == (
        'sys.toml: device[1]: api: expected a DeviceAPI name such as "simulated", got 5'
    )


def test_any_api_name_is_read_the_runtime_checks_it() -> None:
    system = System.from_text(CPU + GPU.replace('"simulated"', '"test-fpga-api"'))
    assert system.device("cuda", 0).api == "test-fpga-api"


def test_target_errors_come_from_the_target_dialect() -> None:
    text = error_of(CPU + GPU.replace('{ kind = "cuda", arch = "sm_80" }', '{ kind = "tpu" }'))
    assert text.startswith("sys.toml: device[1]: target: unknown target kind 'tpu'")
    assert "cuda" in text  # the valid kinds are listed


def test_target_attribute_error_names_the_attribute() -> None:
    text = error_of(CPU + GPU.replace('arch = "sm_80"', 'arch = "sm_80", warp = 32'))
    assert text.startswith("sys.toml: device[1]: target: ")
    assert "'warp'" in text


def test_target_of_another_device_type_than_the_entry_is_an_error() -> None:
    assert error_of(CPU.replace('type = "cpu"', 'type = "cuda"')) == (
        "sys.toml: device[0]: target: #target.target<\"llvm\"> has device type 'cpu' "
        'but type = "cuda"'
    )


def test_device_needs_a_global_scope() -> None:
    assert error_of(CPU.replace("global =", "host =")) == (
        "sys.toml: device[0]: scopes: every device needs a 'global' scope (its main memory)"
    )


def test_scope_name_that_is_not_an_identifier_is_an_error() -> None:
    assert error_of(
        CPU.replace('{ global = "1 GiB" }', '{ global = "1 GiB", "a/b" = "1 KiB" }')
    ) == (
        "sys.toml: device[0]: scopes.a/b: invalid memory scope 'a/b': expected an identifier "
        "such as 'global' (use ? for unconstrained)"
    )


@pytest.mark.parametrize("bad", ["-1", "true", '"0"'])
def test_device_id_must_be_an_integer_0_or_more(bad: str) -> None:
    assert error_of(CPU.replace("id = 0", f"id = {bad}")).startswith(
        "sys.toml: device[0]: id: expected an integer 0 or more, got "
    )


def test_unknown_top_level_key() -> None:
    assert error_of(CPU + '\n[[devices]]\ntype = "cpu"\n') == (
        "sys.toml: unknown top-level key 'devices' "
        "(valid: device, same_memory, link, host, target_kind, node, node_link)"
    )


def test_invalid_toml_names_the_file() -> None:
    assert error_of("[[device]\n").startswith("sys.toml: invalid TOML: ")


def test_toml_nested_too_deeply_is_invalid_toml_not_a_recursion_error() -> None:
    assert error_of("a = " + "[" * 100_000 + "]" * 100_000) == (
        "sys.toml: invalid TOML: arrays or tables nested too deeply"
    )


def test_system_without_devices_is_an_error() -> None:
    assert error_of("") == "sys.toml: no devices: add at least one [[device]] entry"


def test_no_cpu_device_means_no_host() -> None:
    assert error_of(GPU) == 'sys.toml: no host device: declare a [[device]] with type = "cpu"'


def test_host_key_names_the_host() -> None:
    second_cpu = CPU.replace("id = 0", "id = 1")
    system = System.from_text('host = "cpu:1"\n' + CPU + second_cpu)
    assert system.host.name == "cpu:1"


def test_host_key_must_name_a_cpu_device() -> None:
    assert error_of('host = "cuda:0"\n' + CPU + GPU) == (
        "sys.toml: host: device cuda:0 is not a cpu device; host code runs on a cpu"
    )
    assert error_of('host = "cpu:7"\n' + CPU) == (
        "sys.toml: host: unknown device 'cpu:7' (devices: cpu:0)"
    )


def test_device_attrs_override_and_unknown_names() -> None:
    system = System.from_text(
        CPU + GPU + "attrs = { multi_processor_count = 108, warp_size = 64 }\n"
    )
    attrs = system.device("cuda", 0).attrs
    assert attrs["multi_processor_count"] == 108
    assert attrs["warp_size"] == 64
    text = error_of(CPU + GPU + "attrs = { warpsize = 64 }\n")
    assert text.startswith("sys.toml: device[1]: attrs: unknown device attribute 'warpsize' ")
    assert "warp_size" in text


def test_a_string_device_attr_given_a_number_is_an_error() -> None:
    # It was kept, and get_attr("device_name") gave back the int 5.
    assert error_of(CPU + GPU + "attrs = { device_name = 5 }\n") == (
        "sys.toml: device[1]: attrs.device_name: expected a string, got 5"
    )


def test_every_device_attr_name_is_a_system_attribute() -> None:
    # One list: what a system may set is what device.attr can read.
    # Those that state a scope's capacity must state GPU's (48 KiB shared, 16 GiB global);
    # max_thread_dimensions has a form.
    values: dict[str, object] = {
        "max_shared_memory_per_block": 48 << 10,
        "total_global_memory": 16 << 30,
        "max_thread_dimensions": "[1024, 1024, 64]",
    }
    attrs = ", ".join(
        f"{name} = {values.get(name, 1) if kind == 'int' else repr(values.get(name, '1'))}"
        for name, kind in DEVICE_ATTR_KINDS.items()
    )
    system = System.from_text(CPU + GPU + f"attrs = {{ {attrs} }}\n")
    assert set(system.device("cuda", 0).attrs) >= set(DEVICE_ATTR_KINDS)


def test_missing_system_file_is_one_message() -> None:
    with pytest.raises(SystemDescriptionError) as info:
        System.load("/no/such/sys.toml")
    assert str(info.value) == (
        "error: cannot read system description '/no/such/sys.toml': No such file or directory"
    )


def test_errors_of_a_loaded_file_name_its_path(tmp_path: Path) -> None:
    path = tmp_path / "sys.toml"
    path.write_text(CPU.replace("scopes", "scops"))
    with pytest.raises(SystemDescriptionError) as info:
        System.load(path)
    assert str(info.value).startswith(f"{path}: device[0]: unknown key 'scops'")


# --- user target kinds ---------------------------------------------------------------------------


def test_target_kind_entry_registers_a_kind_devices_can_use() -> None:
    text = (
        """
[[target_kind]]
name = "test-dsp"
device_type = "dsp"
attrs = { vector_width = ["int", 128] }
keys = ["dsp"]
"""
        + CPU
        + """
[[device]]
type = "dsp"
id = 0
target = { kind = "test-dsp", vector_width = 256 }
api = "simulated"
scopes = { global = "256 MiB", vtcm = "4 MiB" }
"""
    )
    system = System.from_text(text)
    dsp = system.device("dsp", 0)
    assert dsp.target.get_attr("vector_width") == 256
    assert dsp.scopes["vtcm"] == 4 * 2**20
    assert System.from_text(text).device("dsp", 0) == dsp  # loading again is fine


def test_target_kind_entry_errors() -> None:
    text = '[[target_kind]]\nname = "test-bad"\nattrs = { w = "int" }\n' + CPU
    assert error_of(text) == (
        "sys.toml: target_kind[0]: attrs.w: expected [type] or [type, default], "
        "e.g. [\"int\", 128], got 'int'"
    )
    assert error_of('[[target_kind]]\ndevice_type = "x"\n' + CPU) == (
        "sys.toml: target_kind[0]: missing key 'name'"
    )


# --- queries ------------------------------------------------------------------------------------


def test_unknown_device_lists_the_known_ones() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        System.default().device("cuda", 2)
    assert str(info.value) == (
        "error: no device 'cuda:2' in system <default system> (devices: cpu:0, cuda:0, cuda:1)"
    )


def test_unknown_scope_lists_the_declared_ones() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        System.default().host_visible("cpu:0", "shared")
    assert str(info.value) == (
        "error: device cpu:0 has no memory scope 'shared' in system <default system> "
        "(declared: global)"
    )


def test_device_for_a_virtual_device() -> None:
    system = System.default()
    assert system.device_for(DeviceAttr.make("cuda", 1, None, "global")).name == "cuda:1"
    with pytest.raises(devplan.DevplanError, match="needs a device type and an id"):
        system.device_for(DeviceAttr.make("cuda"))


def test_spec_gives_its_fully_constrained_virtual_device() -> None:
    gpu = System.default().device("cuda", 0)
    device = gpu.virtual_device("shared")
    assert device.is_fully_constrained
    assert device == DeviceAttr.make("cuda", 0, gpu.target, "shared")


SCOPES = """
[[device]]
type = "hexagon"
id = 0
target = { kind = "hexagon" }
api = "simulated"
scopes = { global = "1 GiB", vtcm = "1 GiB" }

[[device]]
type = "cuda"
id = 1
target = { kind = "cuda", arch = "sm_80" }
api = "simulated"
scopes = { global = "1 GiB", shared = "48 KiB" }

[[same_memory]]
scopes = ["cuda:0/host", "cuda:1/global"]

[[same_memory]]
scopes = ["cuda:1/global", "hexagon:0/vtcm"]
"""


def test_same_memory_is_the_transitive_closure() -> None:
    system = System.from_text(CPU + GPU + SCOPES)
    assert system.same_memory(("cuda:0", "host"), ("hexagon:0", "vtcm"))
    assert system.same_memory(("hexagon:0", "vtcm"), ("cuda:0", "host"))
    assert system.same_memory(("cuda:0", "global"), ("cuda:0", "global"))
    assert not system.same_memory(("cuda:0", "global"), ("cuda:0", "host"))
    assert system.memory_area("cuda:1", None) == {
        ("cuda:0", "host"),
        ("cuda:1", "global"),
        ("hexagon:0", "vtcm"),
    }


def test_host_visibility_in_a_system() -> None:
    system = System.from_text(CPU + GPU + SCOPES)
    assert system.host_visible("cpu:0", "global")
    assert system.host_visible("cuda:0", "host")
    assert not system.host_visible("cuda:0", "global")
    # One memory area with cuda:0's host scope, so host-visible too.
    assert system.host_visible("hexagon:0", "vtcm")
    assert not system.host_visible("hexagon:0", "global")


def test_kernel_reachability_in_a_system() -> None:
    system = System.from_text(CPU + GPU + SCOPES)
    assert system.kernel_reachable("cuda:0", "cuda:0", "global")
    assert system.kernel_reachable("cuda:0", "cuda:0", None)
    assert not system.kernel_reachable("cuda:0", "cuda:0", "shared")
    assert not system.kernel_reachable("cuda:0", "cpu:0", "global")
    # Declared one memory area with a scope of the launch device:
    assert system.kernel_reachable("cuda:0", "cuda:1", "global")
    assert system.kernel_reachable("hexagon:0", "cuda:1", "global")
    assert system.kernel_reachable("cpu:0", "cuda:0", "host")
    assert not system.kernel_reachable("cuda:1", "cuda:0", "global")


def test_default_system_lets_gpu_kernels_reach_host_memory_through_the_host_scope() -> None:
    system = System.default()
    assert system.kernel_reachable("cuda:0", "cpu:0", "global")
    assert not system.kernel_reachable("cuda:0", "cuda:1", "global")


def test_link_transfer_time() -> None:
    link = LinkSpec("cpu:0", "cuda:0", 1e9, 1e-5)
    assert link.transfer_time(10**9) == pytest.approx(1.00001)


# --- from a module -------------------------------------------------------------------------------


def test_module_without_a_system_has_none() -> None:
    assert System.from_module(devplan.parse("builtin.module {\n}\n")) is None


def test_module_carrying_toml_text() -> None:
    text = (CPU + GPU).replace('"', '\\"').replace("\n", "\\n")
    module = devplan.parse(f'builtin.module attributes {{vdev.system = "{text}"}} {{\n}}\n')
    system = System.from_module(module)
    assert system is not None
    assert [d.name for d in system.devices] == ["cpu:0", "cuda:0"]
    assert system.name == "vdev.system"


def test_module_naming_a_file_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "sys.toml").write_text(CPU)
    source = tmp_path / "m.mlir"
    source.write_text('builtin.module attributes {vdev.system = "sys.toml"} {\n}\n')
    system = System.from_module(devplan.parse(source))
    assert system is not None
    assert system.name == str(tmp_path / "sys.toml")


def test_a_module_naming_a_missing_file_fails_its_verification(tmp_path: Path) -> None:
    source = tmp_path / "m.mlir"
    source.write_text('builtin.module attributes {vdev.system = "sys.toml"} {\n}\n')
    with pytest.raises(ModuleSystemError) as info:
        devplan.parse(source)
    assert str(info.value).splitlines()[0] == (
        f"{source}:1:1: error: cannot read system description '{tmp_path / 'sys.toml'}': "
        "No such file or directory"
    )
    (tmp_path / "sys.toml").write_text(CPU)
    devplan.parse(source)


def test_module_system_errors_are_placed_at_the_module(tmp_path: Path) -> None:
    source = tmp_path / "m.mlir"
    text = CPU.replace("scopes", "scops").replace('"', '\\"').replace("\n", "\\n")
    source.write_text(f'builtin.module attributes {{vdev.system = "{text}"}} {{\n}}\n')
    with pytest.raises(SystemDescriptionError) as info:
        System.from_module(devplan.parse(source))
    assert str(info.value).splitlines()[0] == (
        f"{source}:1:1: error: vdev.system: device[0]: unknown key 'scops' "
        "(valid: type, id, target, api, scopes, attrs, peak_gflops, memory_bandwidth, "
        "launch_latency, node, actor_api)"
    )


def test_resolve_accepts_none_a_path_or_a_system(tmp_path: Path) -> None:
    path = tmp_path / "sys.toml"
    path.write_text(CPU)
    assert [d.name for d in System.resolve(None).devices] == ["cpu:0", "cuda:0", "cuda:1"]
    assert [d.name for d in System.resolve(path).devices] == ["cpu:0"]
    system = System.default()
    assert System.resolve(system) is system


def test_default_system_is_read_once_and_cannot_be_changed():
    system = System.default()
    assert System.default() is system
    assert isinstance(system.devices, tuple)
    assert isinstance(system.links, tuple)


# --- one size stated twice must agree -------------------------------------------------------


def test_scopes_that_are_one_memory_area_must_declare_one_capacity() -> None:
    text = CPU + GPU + '\n[[same_memory]]\nscopes = ["cpu:0/global", "cuda:0/global"]\n'
    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(text, "sys.toml")
    assert str(info.value) == (
        "sys.toml: same_memory[0]: scopes: cpu:0/global = 1073741824 bytes, cuda:0/global = "
        "17179869184 bytes: scopes that are one memory area must declare the same capacity"
    )


@pytest.mark.parametrize(
    ("attr", "scope", "capacity"),
    [("max_shared_memory_per_block", "shared", 49152), ("total_global_memory", "global", 16 << 30)],
)
def test_an_attribute_stating_a_scope_size_must_match_the_scope(
    attr: str, scope: str, capacity: int
) -> None:
    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(CPU + GPU + f"attrs = {{ {attr} = 4096 }}\n", "sys.toml")
    assert str(info.value) == (
        f"sys.toml: device[1]: attrs.{attr} = 4096, but scopes.{scope} is {capacity} bytes; "
        "they are one memory size: make them equal"
    )
    agreeing = System.from_text(CPU + GPU + f"attrs = {{ {attr} = {capacity} }}\n")
    assert agreeing.device("cuda", 0).attrs[attr] == capacity


def test_a_target_stating_another_shared_size_than_the_scope_is_an_error() -> None:
    gpu = GPU.replace('{ kind = "cuda", arch = "sm_80" }', '"nvidia/nvidia-a100"').replace(
        '"48 KiB"', '"96 KiB"'
    )
    with pytest.raises(
        SystemDescriptionError,
        match=r"has max_shared_memory_per_block = 49152, "
        r"but scopes.shared is 98304 bytes",
    ):
        System.from_text(CPU + gpu)


def test_a_cuda_device_reports_cudas_block_limits_along_each_axis() -> None:
    assert System.default().device("cuda", 0).attrs["max_thread_dimensions"] == ("[1024, 1024, 64]")
    assert "max_thread_dimensions" not in System.default().host.attrs


@pytest.mark.parametrize("text", ["1024", "[1024, 1024]", "[1024, 0, 64]", "[a, b, c]"])
def test_max_thread_dimensions_must_give_three_positive_sizes(text: str) -> None:
    with pytest.raises(
        SystemDescriptionError,
        match="attrs.max_thread_dimensions: expected the "
        r"block limits along x, y and z, e\.g\. \"\[1024, 1024, 64\]\"",
    ):
        System.from_text(CPU + GPU + f'attrs = {{ max_thread_dimensions = "{text}" }}\n')
