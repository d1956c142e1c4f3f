"""#vdev.device, the virtual device: TVM's VirtualDevice Join/Default (reference §b),
constructors, canonical form and memref memory spaces."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import Float32Type, MemRefType, StringAttr
from xdsl.utils.exceptions import VerifyException

import devplan
from devplan.dialects.target import Target
from devplan.dialects.virtual_device import (
    UNCONSTRAINED,
    DeviceAttr,
    MemorySpaceError,
    VirtualDevice,
    VirtualDeviceError,
    default,
    join,
    memory_space_of,
    memory_space_problem,
)

CUDA = Target.parse("cuda")
LLVM = Target.parse("llvm")
make = DeviceAttr.make


def parse_attr(text: str) -> DeviceAttr:
    module = devplan.parse(f'"test.op"() {{d = {text}}} : () -> ()')
    op = next(iter(module.ops))
    attr = op.attributes["d"]
    assert isinstance(attr, DeviceAttr)
    return attr


# --- reference §b.2: Join (virtual_device_test.cc Join_Defined / Join_Undefined) ----------


def test_join_id_with_target_and_scope() -> None:
    lhs = make("cuda", 3)
    rhs = make("cuda", None, CUDA, "global")
    assert join(lhs, rhs) == make("cuda", 3, CUDA, "global")


def test_join_is_the_same_swapped() -> None:
    lhs = make("cuda", None, CUDA, "global")
    rhs = make("cuda", 3)
    assert join(lhs, rhs) == make("cuda", 3, CUDA, "global")


def test_join_type_only_with_id_and_target() -> None:
    assert join(make("cuda"), make("cuda", 2, CUDA)) == make("cuda", 2, CUDA)


def test_join_unconstrained_with_device_is_the_device() -> None:
    rhs = make("cuda", 3, CUDA, "global")
    assert join(UNCONSTRAINED, rhs) == rhs


def test_join_conflicting_types_is_none() -> None:
    assert join(make("cuda"), make("cpu")) is None


def test_join_conflicting_ids_is_none() -> None:
    assert join(make("cuda", 3), make("cuda", 4)) is None


def test_join_two_separately_built_equal_targets_joins() -> None:
    # TVM compares targets by identity and fails here (Join_Undefined case 3); devplan
    # compares them by value on purpose.
    lhs = make("cuda", 3, Target.parse("cuda"))
    rhs = make("cuda", 3, Target.from_config({"kind": "cuda"}))
    assert join(lhs, rhs) == lhs


def test_join_different_targets_of_one_type_is_none() -> None:
    sm80 = Target.from_config({"kind": "cuda", "arch": "sm_80"})
    sm70 = Target.from_config({"kind": "cuda", "arch": "sm_70"})
    assert join(make("cuda", 0, sm80), make("cuda", 0, sm70)) is None


def test_join_conflicting_scopes_is_none() -> None:
    assert join(make(scope="local"), make(scope="global")) is None


def test_join_header_example_fills_id_and_scope() -> None:
    # virtual_device.h:
    # Join((CPU,-1,"llvm",""), (Invalid,3,null,"global")) => (CPU,3,"llvm","global")
    assert join(make("cpu", None, LLVM), make(None, 3, None, "global")) == make(
        "cpu", 3, LLVM, "global"
    )


def test_join_follows_the_code_not_the_headers_second_example() -> None:
    # The header claims null here; the code (and devplan) joins the unconstrained scope.
    assert join(make("cpu", None, LLVM), make(None, 3, None, "local")) == make(
        "cpu", 3, LLVM, "local"
    )


def test_join_of_a_device_with_itself_is_itself() -> None:
    device = make("cuda", 1, CUDA, "shared")
    assert join(device, device) is not None
    assert join(device, device) == device


def test_join_target_against_other_device_type_is_none() -> None:
    assert join(make(None, 0, None, None), make("cpu")) == make("cpu", 0)
    assert join(make("cuda", 0), make("cpu", None, LLVM)) is None


# --- reference §b.3: Default --------------------------------------------------------------


def test_default_header_example_keeps_target_and_scope_fills_id() -> None:
    # Default((CPU,-1,"llvm","local"), (CPU,3,null,"global")) => (CPU,3,"llvm","local")
    lhs = make("cpu", None, LLVM, "local")
    rhs = make("cpu", 3, None, "global")
    assert default(lhs, rhs) == make("cpu", 3, LLVM, "local")


def test_default_takes_target_of_the_same_device_type() -> None:
    # virtual_device_test.cc Default: (CUDA,-1,null,"global") default (CUDA,3,cuda,"local")
    lhs = make("cuda", None, None, "global")
    rhs = make("cuda", 3, CUDA, "local")
    assert default(lhs, rhs) == make("cuda", 3, CUDA, "global")


def test_default_never_takes_a_target_of_another_device_type() -> None:
    assert default(make("cpu"), make("cuda", 0, CUDA, "global")) == make("cpu", 0, None, "global")


def test_default_of_unconstrained_is_the_default() -> None:
    rhs = make("cuda", 3, CUDA, "global")
    assert default(UNCONSTRAINED, rhs) == rhs


def test_default_of_a_device_with_itself_is_itself() -> None:
    device = make("cpu", 0, LLVM)
    assert default(device, device) == device


def test_methods_match_the_functions() -> None:
    a, b = make("cuda"), make(None, 1)
    assert a.join(b) == join(a, b)
    assert a.default(b) == default(a, b)


# --- constructors, accessors and canonical form -----------------------------------------


def test_make_derives_the_device_type_from_the_target() -> None:
    device = make(device_id=0, target=CUDA)
    assert device.type_name == "cuda"
    assert device == make("cuda", 0, CUDA)


def test_make_accepts_a_target_string() -> None:
    assert make("cuda", 0, "cuda").target_value == CUDA


def test_make_with_disagreeing_type_and_target_names_both() -> None:
    with pytest.raises(VirtualDeviceError) as info:
        make("cpu", None, CUDA)
    message = str(info.value)
    assert "device type 'cpu' does not match the device type 'cuda' of target" in message
    assert '#target.target<"cuda"' in message


def test_make_rejects_negative_id_and_bad_names() -> None:
    with pytest.raises(VirtualDeviceError, match="invalid virtual id -1"):
        make("cuda", -1)
    with pytest.raises(VirtualDeviceError, match="invalid device type 'cu:da'"):
        make("cu:da")
    with pytest.raises(VirtualDeviceError, match="invalid memory scope ''"):
        make(scope="")


def test_accessors_give_python_values() -> None:
    device = make("cuda", 2, CUDA, "shared")
    assert (device.type_name, device.device_id, device.target_value, device.scope) == (
        "cuda",
        2,
        CUDA,
        "shared",
    )
    assert (UNCONSTRAINED.type_name, UNCONSTRAINED.device_id) == (None, None)
    assert (UNCONSTRAINED.target_value, UNCONSTRAINED.scope) == (None, None)


def test_virtual_device_is_the_attribute_class() -> None:
    assert VirtualDevice is DeviceAttr
    assert devplan.VirtualDevice is DeviceAttr


def test_fully_constrained_needs_target_id_and_scope() -> None:
    assert make("cuda", 0, CUDA, "global").is_fully_constrained
    assert not make("cuda", 0, CUDA).is_fully_constrained
    assert not make("cuda", 0, None, "global").is_fully_constrained
    assert not make("cuda", None, CUDA, "global").is_fully_constrained


def test_fully_unconstrained_only_when_every_field_is_open() -> None:
    assert UNCONSTRAINED.is_fully_unconstrained
    assert make().is_fully_unconstrained
    assert not make(scope="global").is_fully_unconstrained


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cuda", make("cuda")),
        ("cuda:0", make("cuda", 0)),
        ("cuda:0/global", make("cuda", 0, None, "global")),
        ("cpu/host", make("cpu", None, None, "host")),
        ("?/shared", make(None, None, None, "shared")),
        ("?:1", make(None, 1)),
        ("opencl:2/global.texture", make("opencl", 2, None, "global.texture")),
    ],
)
def test_from_string_reads_type_id_and_scope_and_round_trips(
    text: str, expected: DeviceAttr
) -> None:
    assert DeviceAttr.from_string(text) == expected
    assert DeviceAttr.from_string(expected.to_string()) == expected


@pytest.mark.parametrize("text", ["", "cuda:x", "cuda:-1", "cuda:0:1", "cuda:0/", ":0"])
def test_from_string_rejects_malformed_text(text: str) -> None:
    with pytest.raises(VirtualDeviceError) as info:
        DeviceAttr.from_string(text)
    assert str(info.value).startswith(f"invalid device string '{text}': expected TYPE[:ID][/SCOPE]")


def test_from_string_error_shows_the_form() -> None:
    with pytest.raises(VirtualDeviceError) as info:
        DeviceAttr.from_string("cuda:x")
    assert str(info.value) == (
        "invalid device string 'cuda:x': expected TYPE[:ID][/SCOPE], "
        "e.g. 'cuda', 'cuda:0' or 'cuda:0/global'"
    )


def test_parsing_a_target_without_type_stores_the_derived_type() -> None:
    device = parse_attr('#vdev.device<?, 0, #target.target<"cuda">>')
    assert device == make("cuda", 0, CUDA)
    assert str(device) == '#vdev.device<"cuda", 0, #target.target<"cuda">>'


def test_printing_omits_trailing_unconstrained_fields() -> None:
    assert str(make("cuda", 0)) == '#vdev.device<"cuda", 0>'
    assert str(make("cpu", None, None, "global")) == '#vdev.device<"cpu", ?, ?, "global">'
    assert str(UNCONSTRAINED) == "#vdev.device<?>"


def test_equal_devices_are_equal_attributes_and_hash_alike() -> None:
    a = parse_attr('#vdev.device<"cuda", 0, #target.target<"cuda">, "global">')
    b = make("cuda", 0, Target.from_config({"kind": "cuda"}), "global")
    assert a == b
    assert hash(a) == hash(b)


def test_parsing_disagreeing_type_and_target_is_a_located_error() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        parse_attr('#vdev.device<"cpu", 0, #target.target<"cuda">>')
    first = str(info.value).splitlines()[0]
    assert first.startswith("<string>:1:31: error: device type 'cpu' does not match")
    assert "'cuda' of target" in first


# --- memory spaces -------------------------------------------------------------------------


def test_memory_space_of_a_device_memref() -> None:
    space = make("cuda", 0, None, "global")
    memref = MemRefType(Float32Type(), [16], memory_space=space)
    assert memory_space_of(memref) == space


def test_memory_space_of_a_plain_memref_is_host_memory() -> None:
    assert memory_space_of(MemRefType(Float32Type(), [16])) is None


def test_memory_space_that_is_not_a_device_is_an_error() -> None:
    memref = MemRefType(Float32Type(), [16], memory_space=StringAttr("gpu"))
    with pytest.raises(VirtualDeviceError, match=r"is not a #vdev\.device"):
        memory_space_of(memref)


def test_memory_space_error_inside_an_op_verifier_is_located_at_the_op() -> None:
    # MemorySpaceError is a VerifyException, so verify_located places it at the op.
    memref = MemRefType(Float32Type(), [16], memory_space=StringAttr("gpu"))
    with pytest.raises(MemorySpaceError) as info:
        memory_space_of(memref)
    assert isinstance(info.value, VerifyException)
    source = '%d = device.alloc() : memref<4xf32, "gpu">\n'
    with pytest.raises(devplan.DevplanError) as located:
        devplan.parse(source)
    assert str(located.value).splitlines()[0] == (
        '<string>:1:1: error: \'device.alloc\' memory space "gpu" of memref<4xf32, "gpu"> '
        "is not a #vdev.device; a memref lives in host memory (no memory space) or on a "
        'device (a #vdev.device memory space such as #vdev.device<"cuda", 0>)'
    )


def test_memory_space_problem_is_none_for_host_and_device_memory() -> None:
    assert memory_space_problem(MemRefType(Float32Type(), [16])) is None
    device = MemRefType(Float32Type(), [16], memory_space=make("cuda", 0))
    assert memory_space_problem(device) is None


def test_memory_space_parses_and_prints() -> None:
    text = 'memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>'
    module = devplan.parse(f'%m = "test.op"() : () -> {text}')
    result_type = next(iter(module.ops)).results[0].type
    assert isinstance(result_type, MemRefType)
    assert str(result_type) == text
    assert memory_space_of(result_type) == make("cuda", 0, None, "global")  # pyright: ignore[reportUnknownArgumentType]


# --- VirtualDevice(device_type, virtual_device_id, target, memory_scope), as TVM's ------


def test_virtual_device_takes_tvm_positional_arguments() -> None:
    assert VirtualDevice("cuda", 0) == make("cuda", 0)
    assert VirtualDevice("cuda", 1, "cuda -arch=sm_80", "global") == make(
        "cuda", 1, Target("cuda -arch=sm_80"), "global"
    )


def test_virtual_device_takes_tvm_keywords() -> None:
    device = VirtualDevice(
        device_type="cuda", virtual_device_id=2, target=CUDA, memory_scope="shared"
    )
    assert device == make("cuda", 2, CUDA, "shared")


def test_virtual_device_type_may_be_a_dldevicetype_code() -> None:
    assert VirtualDevice(2, 0) == make("cuda", 0)
    assert VirtualDevice(1) == make("cpu")


def test_virtual_device_target_may_be_anything_target_takes() -> None:
    assert VirtualDevice(target={"kind": "llvm"}) == make("cpu", None, LLVM)


def test_tvm_unconstrained_markers_leave_fields_unconstrained() -> None:
    assert VirtualDevice(-1, -1, None, "") == UNCONSTRAINED
    assert VirtualDevice() == UNCONSTRAINED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("cuda", 1 << 63), "invalid virtual id 9223372036854775808: it does not fit in 64 bits"),
        (("cuda", -2), "invalid virtual id -2: expected 0 or more"),
        ((3,), r"device_type 3 is not a DLDeviceType code; known codes: 1 \(cpu\), 2 \(cuda\)"),
        ((1.5,), "device_type must be a device type name such as 'cuda', .* got float 1.5"),
        (("cuda", "0"), "virtual_device_id must be an integer 0 or more, .* got str '0'"),
        (("cuda", True), "virtual_device_id must be .* got bool True"),
        (("cuda", 0, 5), "target must be a Target, anything Target\\(...\\) takes, .* got int 5"),
        (("cuda", 0, None, 5), "memory_scope must be a memory scope name .* got int 5"),
    ],
)
def test_virtual_device_of_a_wrong_argument_names_it(
    args: tuple[object, ...], message: str
) -> None:
    with pytest.raises(VirtualDeviceError, match=f"^VirtualDevice: {message}"):
        VirtualDevice(*args)  # type: ignore[arg-type]


def test_virtual_device_with_a_target_of_another_type_names_both() -> None:
    with pytest.raises(VirtualDeviceError, match="device type 'cpu' does not match"):
        VirtualDevice("cpu", 0, CUDA)


def test_a_virtual_id_beyond_int64_in_ir_is_a_located_error() -> None:
    with pytest.raises(
        devplan.DevplanError,
        match=r"^<string>:1:\d+: error: invalid virtual id "
        r"99999999999999999999: it does not fit in 64 bits",
    ):
        parse_attr('#vdev.device<"cuda", 99999999999999999999>')


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: join(make("cuda"), 5), "^join: b must be a VirtualDevice, got int 5$"),
        (lambda: join(None, make("cuda")), "^join: a must be a VirtualDevice, got NoneType None$"),
        (lambda: default(make("cuda"), None), "^default: b must be a VirtualDevice, got NoneType"),
        (lambda: make("cuda").join(5), "^VirtualDevice.join: other must be a VirtualDevice"),
        (lambda: make("cuda").default("cpu"), "^VirtualDevice.default: other must be a Virtual"),
    ],
)
def test_join_and_default_of_a_non_device_name_the_argument(call: object, message: str) -> None:
    with pytest.raises(VirtualDeviceError, match=message):
        call()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5,), "type_name must be a device type name such as 'cuda' or None, got int 5"),
        (("cuda", "0"), r"device_id must be a virtual id \(an integer\) or None, got str '0'"),
        (("cuda", 0, 5), "target must be a Target or a target string or None, got int 5"),
        (("cuda", 0, None, 5), "scope must be a memory scope name such as 'global' or None"),
    ],
)
def test_make_of_a_wrong_type_names_the_parameter(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(VirtualDeviceError, match=f"^VirtualDevice.make: {message}"):
        make(*args)  # type: ignore[arg-type]
