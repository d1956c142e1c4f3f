"""The system description: which devices exist, their memories, and the links between them.

A TOML file lists the devices (type, virtual id, target, which DeviceAPI
runs them, memory scopes with capacities, optional DeviceAPI attributes), the scopes
that are one memory area seen from two devices, and the links copies travel over:

```toml
[[device]]
type = "cuda"
id = 0
target = { kind = "cuda", arch = "sm_80" }     # a TVM config table, or a string: kind, tag or JSON
api = "simulated"                              # a DeviceAPI name (the runtime checks it)
scopes = { global = "16 GiB", shared = "48 KiB", host = "32 GiB" }
attrs = { multi_processor_count = 108 }        # optional: overrides DeviceAPI.get_attr values
peak_gflops = 19500                            # optional, for the cost model (cost.py);
memory_bandwidth = "1555 GB/s"                 #   defaults by target tag, else by type
launch_latency = "5 us"

[[same_memory]]
scopes = ["cpu:0/global", "cuda:0/host"]

[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"
```

More than one machine (devices with `api = "ray"`, each a Ray actor: `runtime/ray_device.py`):
`[[node]]` entries name the machines and say how Ray finds each (a Ray custom `resource` its
raylet was started with, or its `address`, the IP Ray knows it by; neither: anywhere), a
device's `node` says where it lives (default: the first node), and `[[node_link]]` entries are
the network between nodes:

```toml
[[node]]
name = "n1"
resource = "n1"                                # `ray start --resources='{"n1": 1}'`
[[device]]
type = "cuda"
id = 1
target = "nvidia/nvidia-a100"
api = "ray"                                    # a Ray actor ...
actor_api = "simulated"                        # ... running this DeviceAPI inside
node = "n1"
scopes = { global = "40 GiB" }
[[node_link]]
between = ["n0", "n1"]
bandwidth = "12.5 GB/s"
latency = "20 us"
```

Each node's host memory is its `cpu` device of lowest id (a node with devices needs one);
the host device is on the first node it is declared on and runs in this process (not
`ray`); a device on another node than the host's needs `api = "ray"`. `actor_api` (only
with `api = "ray"`; default `cpu` for a cpu device, else `simulated`) is the DeviceAPI the
actor runs. A description without `[[node]]` is one process, as before.

Beyond those keys: an optional top-level `host = "cpu:0"` naming the device host code runs
on (default: the `cpu` device with the lowest id), and `[[target_kind]]` entries that
register user target kinds before the devices are read:

```toml
[[target_kind]]
name = "dsp"                                   # required
device_type = "dsp"                            # default: the name
attrs = { vector_width = ["int", 128], model = ["str"] }   # [type] or [type, default]
keys = ["dsp"]
host_capable = false
```

Every device declares a `global` scope. Sizes are strings with a unit (B, KB, MB, GB, TB,
KiB, MiB, GiB, TiB), bandwidths likewise (B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s),
latencies (ns, us, ms, s); a bare number is an error, never guessed (`units.py`). An
`api` is any name here: which DeviceAPIs exist is the runtime's to say, and
`Runtime.from_system` rejects a name none is registered under.

`same_memory` entries are the generators of an equivalence relation: two scope
references are one memory area when a chain of entries connects them.

Every problem raises `SystemDescriptionError` naming the file, the entry and the key:
`sys.toml: device[1]: unknown key 'scops' (valid: type, id, target, api, scopes, attrs)`.

The file holds one concept and reads best whole: the validated `System` and the reader
(`_Reader`) that checks each entry and builds it, which `System.load` and
`System.from_text` call.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.ir import Operation

from ..diagnostics import (
    DevplanError,
    LocatedError,
    describe_value,
    diagnostic_at,
    location_of,
)
from ..dialects.device import DEVICE_ATTR_KINDS as DEVICE_ATTR_VALUE_KINDS
from ..dialects.memory_scopes import DEFAULT_SCOPE, HOST_SCOPE, KERNEL_PRIVATE_SCOPES
from ..dialects.target import Target, TargetAttr, register_target_kind
from ..dialects.target_kinds import TargetError
from ..dialects.vdev import SYSTEM_ATTR
from ..dialects.virtual_device import DeviceAttr, VirtualDeviceError, ir_text
from .cost import CostModel, LinkCost, Network, Throughput, default_throughput
from .units import parse_bandwidth, parse_latency, parse_size


class SystemDescriptionError(DevplanError):
    """A bad system description; the message names the file, the entry and the key."""


class ModuleSystemError(SystemDescriptionError, LocatedError):
    """A bad `vdev.system` found when its module is verified: placed at the module, and
    reported as verification failures are (`--verify-diagnostics`, `--split-input-file`)."""


# --- the description -----------------------------------------------------------------------

DEVICE_ATTR_KINDS: tuple[str, ...] = tuple(DEVICE_ATTR_VALUE_KINDS)
"""TVM's `DeviceAttrKind` in snake case, in TVM's order (`DeviceAPI.get_attr` names): the
names `device.attr` accepts, so IR, system descriptions and the runtime share one list."""


def _compute_version(arch: object) -> str | None:
    """CUDA compute version from an `sm_XY[a]` arch: `"sm_80"` -> `"8.0"`."""
    match = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", arch) if isinstance(arch, str) else None
    return f"{match.group(1)}.{match.group(2)}" if match else None


CUDA_THREAD_DIMENSIONS: Final = (1024, 1024, 64)
"""The largest block along x, y and z on every CUDA GPU (compute capability 2.0 on)."""


def _thread_dimensions(device_type: str, target: TargetAttr) -> str | None:
    """TVM's `max_thread_dimensions` text, `"[1024, 1024, 64]"`, or None when unknown."""
    given = [target.get_attr(f"max_block_size_{axis}") for axis in "xyz"]
    if all(isinstance(size, int) for size in given):
        dims = cast(list[int], given)
    elif device_type == "cuda":
        dims = list(CUDA_THREAD_DIMENSIONS)
    else:
        return None
    return f"[{dims[0]}, {dims[1]}, {dims[2]}]"


@dataclass(frozen=True)
class DeviceSpec:
    """One `[[device]]` entry: a device the program may run on."""

    type: str
    """Device type (`"cpu"`, `"cuda"`, a user kind's own)."""
    id: int
    """Virtual id; `name` is `"type:id"`."""
    target: TargetAttr
    """How code for it is compiled; `target.device_type == type`."""
    api: str
    """Which DeviceAPI runs it (`"cpu"`, `"simulated"`, `"cuda"`, ...): a name the runtime
    looks up when it is built, and rejects there when no DeviceAPI has it."""
    scopes: dict[str, int]
    """Capacity in bytes per memory scope; always has `global`."""
    attr_overrides: dict[str, object] = field(default_factory=dict[str, object])
    """The entry's `attrs` table (wins over values derived from the target)."""
    peak_gflops: float | None = None
    """The entry's `peak_gflops` (None: the default of its tag or type, `cost.py`)."""
    memory_bandwidth: float | None = None
    """The entry's `memory_bandwidth` in bytes per second (None: the default)."""
    launch_latency: float | None = None
    """The entry's `launch_latency` in seconds (None: the default)."""
    node: str | None = None
    """The `[[node]]` it lives on (None: the system has no nodes, one process)."""
    actor_api: str | None = None
    """With `api = "ray"`: the DeviceAPI its actor runs inside (`cpu`, `simulated`, `cuda`)."""

    @property
    def throughput(self) -> Throughput:
        """The cost model's view of this device: the entry's keys over the defaults."""
        base = default_throughput(self.type, self.target.tag)
        return Throughput(
            self.peak_gflops * 1e9 if self.peak_gflops is not None else base.peak_flops,
            self.memory_bandwidth if self.memory_bandwidth is not None else base.memory_bandwidth,
            self.launch_latency if self.launch_latency is not None else base.launch_latency,
        )

    @property
    def name(self) -> str:
        """`"cuda:0"`."""
        return f"{self.type}:{self.id}"

    @property
    def attrs(self) -> dict[str, object]:
        """`DeviceAPI.get_attr` values by `DeviceAttrKind` name; absent = unknown.

        From the target: max_threads_per_block (or max_num_threads), warp_size
        (thread_warp_size), max_shared_memory_per_block (else the `shared` scope's
        capacity), compute_version (from `arch`, `"sm_80"` -> `"8.0"`), gcn_arch (rocm
        `mcpu`), max_registers_per_block, l2_cache_size_bytes, device_name (the tag, else
        the kind), max_thread_dimensions (a vulkan target's `max_block_size_x/y/z`;
        CUDA's limits for a `cuda` device); from the entry: exist, total_global_memory
        (the `global` capacity); then the entry's `attrs` table overrides.
        """
        target = self.target
        derived: dict[str, object | None] = {
            "exist": True,
            "max_threads_per_block": target.get_attr("max_threads_per_block")
            or target.get_attr("max_num_threads"),
            "warp_size": target.get_attr("thread_warp_size"),
            "max_shared_memory_per_block": target.get_attr("max_shared_memory_per_block")
            or self.scopes.get("shared"),
            "compute_version": _compute_version(target.get_attr("arch")),
            "device_name": target.tag or target.kind_name,
            "max_registers_per_block": target.get_attr("registers_per_block"),
            "gcn_arch": target.get_attr("mcpu") if target.kind_name == "rocm" else None,
            "l2_cache_size_bytes": target.get_attr("l2_cache_size_bytes"),
            "total_global_memory": self.scopes[DEFAULT_SCOPE],
            "max_thread_dimensions": _thread_dimensions(self.type, target),
        }
        attrs = {k: v for k, v in derived.items() if v is not None}
        attrs.update(self.attr_overrides)
        return {k: attrs[k] for k in DEVICE_ATTR_KINDS if k in attrs}

    def virtual_device(self, scope: str = DEFAULT_SCOPE) -> DeviceAttr:
        """The fully constrained `#vdev.device` for this device and `scope`."""
        return DeviceAttr.make(self.type, self.id, self.target, scope)


@dataclass(frozen=True)
class LinkSpec:
    """One `[[link]]`: copies between devices `a` and `b` (either direction)."""

    a: str
    """Device name, `"cpu:0"`."""
    b: str
    """Device name, `"cuda:0"`."""
    bandwidth: float
    """Bytes per second."""
    latency: float
    """Seconds per copy."""

    def transfer_time(self, nbytes: int) -> float:
        """Cost-model seconds for copying `nbytes` over this link."""
        return self.latency + nbytes / self.bandwidth


@dataclass(frozen=True)
class NodeSpec:
    """One `[[node]]`: a machine of a Ray cluster, and how Ray finds it."""

    name: str
    address: str | None = None
    """The node's IP address as Ray knows it (`ray.nodes()`' `NodeManagerAddress`)."""
    resource: str | None = None
    """A Ray custom resource only that node's raylet has."""


ScopeRef = tuple[str, str]
"""`("cuda:0", "host")`: a memory scope of one device."""


class System:
    """A loaded, validated system description; it does not change once read."""

    def __init__(
        self,
        name: str,
        devices: Iterable[DeviceSpec],
        links: Iterable[LinkSpec],
        same_memory: Iterable[Iterable[ScopeRef]],
        host: str,
        nodes: Iterable[NodeSpec] = (),
        node_links: Iterable[LinkSpec] = (),
    ):
        self.name = name
        """Where it came from: a path, `<default system>`, or the name given."""
        self.devices = tuple(devices)
        self.links = tuple(links)
        self._by_name = {d.name: d for d in devices}
        self.host = self._by_name[host]
        """The device host code runs on."""
        self.nodes = tuple(nodes)
        """The `[[node]]` entries (none: every device in this process)."""
        self.node_links = tuple(node_links)
        """The `[[node_link]]` entries: `a` and `b` are node names."""
        self._area = _equivalence_classes(
            [(d.name, s) for d in devices for s in d.scopes], same_memory
        )

    # --- construction ------------------------------------------------------------------

    @staticmethod
    def load(path: str | Path) -> System:
        """Read and validate the TOML file at `path`."""
        if not isinstance(path, str | Path):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SystemDescriptionError(
                f"error: System.load: path must be a str or Path, got {describe_value(path)}"
            )
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise SystemDescriptionError(
                f"error: cannot read system description '{path}': {reason}"
            ) from None
        return System.from_text(text, str(path))

    @staticmethod
    def from_text(toml_text: str, name: str = "<system>") -> System:
        """Validate a system description given as TOML text; `name` prefixes errors."""
        for parameter, value in (("toml_text", toml_text), ("name", name)):
            if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise SystemDescriptionError(
                    f"error: System.from_text: {parameter} must be a str, "
                    f"got {describe_value(value)}"
                )
        try:
            table = tomllib.loads(toml_text)
        except tomllib.TOMLDecodeError as e:
            raise SystemDescriptionError(f"{name}: invalid TOML: {e}") from None
        except RecursionError:  # tomllib reads nested arrays and tables recursively
            raise SystemDescriptionError(
                f"{name}: invalid TOML: arrays or tables nested too deeply"
            ) from None
        return _Reader(name).system(table)

    @staticmethod
    def default() -> System:
        """One CPU and two simulated A100-like GPUs (`DEFAULT_SYSTEM_TOML`); one instance per
        process (a System does not change once read)."""
        return _default_system()

    @staticmethod
    def from_module(module: ModuleOp) -> System | None:
        """The module's own system (`vdev.system`), or None when it has none.

        The attribute holds TOML text, or — when it is one line ending in `.toml` — a
        path, relative to the directory of the file the module was parsed from. Errors
        are placed at the module.
        """
        value = module.attributes.get(SYSTEM_ATTR)
        if not isinstance(value, StringAttr):
            return None
        text = value.data
        try:
            if _names_a_file(text):
                path = Path(text.strip())
                loc = location_of(module)
                if not path.is_absolute() and isinstance(loc, FileLineColLoc):
                    path = Path(loc.filename.data).parent / path
                return System.load(path)
            if text.strip() and not any(c in text for c in "\n=["):
                # One line that cannot be TOML: most likely a path with another ending.
                raise SystemDescriptionError(
                    f"{SYSTEM_ATTR}: '{text}' is neither TOML text nor the path of a system "
                    "description (a path ends in .toml)"
                )
            return System.from_text(text, SYSTEM_ATTR)
        except SystemDescriptionError as e:
            raise SystemDescriptionError(
                diagnostic_at(module, str(e).removeprefix("error: "))
            ) from None

    @staticmethod
    def resolve(system: System | str | Path | None) -> System:
        """`None` -> the default system, a path -> `load(path)`, a System -> itself."""
        if system is None:
            return System.default()
        if isinstance(system, System):
            return system
        if not isinstance(system, str | Path):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SystemDescriptionError(
                "error: system must be None, a System or the path of a TOML file, "
                f"got {describe_value(system)}"
            )
        return System.load(system)

    # --- queries -----------------------------------------------------------------------

    def cost_model(self) -> CostModel:
        """The one cost model (`cost.py`) of this system: its links and devices."""
        links = [LinkCost(k.a, k.b, k.bandwidth, k.latency) for k in self.links]
        devices = {spec.name: spec.throughput for spec in self.devices}
        if not self.nodes:
            return CostModel(links, host=self.host.name, devices=devices)
        network = Network(
            nodes={d.name: d.node for d in self.devices if d.node is not None},
            node_hosts=self.node_hosts(),
            links=[LinkCost(k.a, k.b, k.bandwidth, k.latency) for k in self.node_links],
        )
        return CostModel(links, host=self.host.name, devices=devices, network=network)

    def node_hosts(self) -> dict[str, str]:
        """Each node's host memory, by node name: its `cpu` device of lowest id."""
        hosts: dict[str, str] = {}
        for spec in sorted(self.devices, key=lambda d: d.id):
            if spec.type == "cpu" and spec.node is not None:
                hosts.setdefault(spec.node, spec.name)
        return hosts

    def node_of(self, device_name: str) -> NodeSpec | None:
        """The node `device_name` lives on (None in a system without nodes)."""
        node = self.device_named(device_name).node
        return next((n for n in self.nodes if n.name == node), None)

    def device_named(self, name: str) -> DeviceSpec:
        """The device called `name` (`"cuda:0"`); DevplanError naming the known ones."""
        device = self._by_name.get(name)
        if device is None:
            raise DevplanError(
                f"error: no device '{name}' in system {self.name} "
                f"(devices: {', '.join(self._by_name)})"
            )
        return device

    def device(self, type: str, id: int) -> DeviceSpec:
        """The device `type:id`; DevplanError naming the known devices when absent."""
        return self.device_named(f"{type}:{id}")

    def device_for(self, device: DeviceAttr) -> DeviceSpec:
        """The device a `#vdev.device` names (type and id must be constrained)."""
        if device.type_name is None or device.device_id is None:
            raise DevplanError(
                f"error: {device} does not name one device: it needs a device type and an id"
            )
        return self.device(device.type_name, device.device_id)

    def link_between(self, a: str, b: str) -> LinkSpec | None:
        """The link between devices `a` and `b` (either order), or None."""
        for link in self.links:
            if {link.a, link.b} == {a, b}:
                return link
        return None

    def _scope_ref(self, device_name: str, scope: str | None) -> ScopeRef:
        device = self.device_named(device_name)
        scope = scope or DEFAULT_SCOPE
        if scope not in device.scopes:
            raise DevplanError(
                f"error: device {device_name} has no memory scope '{scope}' in system "
                f"{self.name} (declared: {', '.join(device.scopes)})"
            )
        return (device_name, scope)

    def memory_area(self, device_name: str, scope: str | None) -> frozenset[ScopeRef]:
        """Every scope reference that is the same memory as `device_name/scope`."""
        return self._area[self._scope_ref(device_name, scope)]

    def same_memory(self, a: ScopeRef, b: ScopeRef) -> bool:
        """Whether two scope references (`("cuda:0", "host")`) are one memory area."""
        return self._scope_ref(*b) in self.memory_area(*a)

    def host_visible(self, device_name: str, scope: str | None) -> bool:
        """Whether host code may touch memory in `device_name/scope` without a copy:
        any scope of a `cpu` device, any `host` scope, and anything that is one memory
        area with one of those; never memory of a Ray actor (`api = "ray"`)."""
        return any(
            (self._by_name[name].type == "cpu" or s == HOST_SCOPE)
            and self._by_name[name].api != "ray"
            for name, s in self.memory_area(device_name, scope)
        )

    def kernel_reachable(
        self, launch_device_name: str, memory_device_name: str, scope: str | None
    ) -> bool:
        """Whether memory in `memory_device_name/scope` may be an argument of a kernel
        launched on `launch_device_name`.

        Never for kernel-private scopes (`shared`, `local`); always for the launch
        device's own other scopes; for a `cpu` launch device in this process (not `ray`),
        whatever is host-visible;
        otherwise when the memory is one memory area with a non-private scope of the
        launch device.
        """
        launch = self.device_named(launch_device_name)
        area = self.memory_area(memory_device_name, scope)
        if (scope or DEFAULT_SCOPE) in KERNEL_PRIVATE_SCOPES:
            return False
        if memory_device_name == launch.name or (
            launch.type == "cpu"
            and launch.api != "ray"
            and self.host_visible(memory_device_name, scope)
        ):
            return True
        return any(name == launch.name and s not in KERNEL_PRIVATE_SCOPES for name, s in area)

    def __repr__(self) -> str:
        return f"System({self.name!r}, devices=[{', '.join(self._by_name)}])"


def _equivalence_classes(
    refs: list[ScopeRef], groups: Iterable[Iterable[ScopeRef]]
) -> dict[ScopeRef, frozenset[ScopeRef]]:
    """The transitive closure of `groups` over `refs` (union-find)."""
    parent = {ref: ref for ref in refs}

    def find(ref: ScopeRef) -> ScopeRef:
        while parent[ref] != ref:
            parent[ref] = parent[parent[ref]]
            ref = parent[ref]
        return ref

    for group in groups:
        members = list(group)
        for other in members[1:]:
            parent[find(other)] = find(members[0])
    classes: dict[ScopeRef, set[ScopeRef]] = {}
    for ref in refs:
        classes.setdefault(find(ref), set()).add(ref)
    return {ref: frozenset(classes[find(ref)]) for ref in refs}


# --- reading -------------------------------------------------------------------------------

_MAY_BE_ZERO = ("exist", "available_global_memory", "api_version", "driver_version")
"""Integer device attributes for which 0 means something; the others are counts or
sizes and must be at least 1."""
_ATTRS_SIZING_SCOPES: Final = {
    "max_shared_memory_per_block": "shared",
    "total_global_memory": DEFAULT_SCOPE,
}
"""Device attributes that state the capacity of a scope."""
_TOP_KEYS = ("device", "same_memory", "link", "host", "target_kind", "node", "node_link")
_NODE_KEYS = ("name", "address", "resource")
_ACTOR_APIS = ("cpu", "simulated", "cuda")
"""What a `ray` device's actor may run inside (`actor_api`)."""
_TARGET_KIND_KEYS = ("name", "device_type", "attrs", "keys", "host_capable")
_DEVICE_KEYS = (
    "type",
    "id",
    "target",
    "api",
    "scopes",
    "attrs",
    "peak_gflops",
    "memory_bandwidth",
    "launch_latency",
    "node",
    "actor_api",
)
_DEVICE_REQUIRED = ("type", "id", "target", "api", "scopes")
_SAME_MEMORY_KEYS = ("scopes",)
_LINK_KEYS = ("between", "bandwidth", "latency")


class _Reader:
    """Validates the parsed TOML tables of one description, naming `file: entry: key`."""

    def __init__(self, name: str):
        self.name = name

    def error(self, where: str, message: str) -> SystemDescriptionError:
        return SystemDescriptionError(
            f"{self.name}: {where}: {message}" if where else f"{self.name}: {message}"
        )

    def entries(self, table: dict[str, Any], key: str) -> list[dict[str, Any]]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):  # pyright: ignore[reportUnknownVariableType]
            raise self.error("", f"'{key}' must be an array of tables ([[{key}]] entries)")
        return cast(list[dict[str, Any]], value)

    def check_keys(
        self, where: str, entry: dict[str, Any], valid: tuple[str, ...], required: tuple[str, ...]
    ) -> None:
        for key in entry:
            if key not in valid:
                raise self.error(where, f"unknown key '{key}' (valid: {', '.join(valid)})")
        for key in required:
            if key not in entry:
                raise self.error(where, f"missing key '{key}'")

    def system(self, table: dict[str, Any]) -> System:
        for key in table:
            if key not in _TOP_KEYS:
                raise self.error(
                    "", f"unknown top-level key '{key}' (valid: {', '.join(_TOP_KEYS)})"
                )
        for i, entry in enumerate(self.entries(table, "target_kind")):
            self.target_kind(f"target_kind[{i}]", entry)
        nodes = self.nodes(table)
        devices: list[DeviceSpec] = []
        first_entry: dict[str, str] = {}
        for i, entry in enumerate(self.entries(table, "device")):
            device = self.device(f"device[{i}]", entry, [n.name for n in nodes])
            if device.name in first_entry:
                raise self.error(
                    f"device[{i}]",
                    f"duplicate device {device.name} (already {first_entry[device.name]})",
                )
            first_entry[device.name] = f"device[{i}]"
            devices.append(device)
        if not devices:
            raise self.error("", "no devices: add at least one [[device]] entry")
        by_name = {d.name: d for d in devices}
        same_memory = [
            self.same_memory(f"same_memory[{i}]", entry, by_name)
            for i, entry in enumerate(self.entries(table, "same_memory"))
        ]
        for i, group in enumerate(same_memory):
            self.one_capacity(f"same_memory[{i}]", group, by_name)
        links: list[LinkSpec] = []
        for i, entry in enumerate(self.entries(table, "link")):
            link = self.link(f"link[{i}]", entry, by_name)
            for j, earlier in enumerate(links):
                if {earlier.a, earlier.b} == {link.a, link.b}:
                    raise self.error(
                        f"link[{i}]",
                        f"duplicate link between {link.a} and {link.b} (already link[{j}])",
                    )
            links.append(link)
        host = self.host(table, devices)
        node_links = self.node_links(table, nodes)
        if nodes:
            self.check_nodes(devices, host)
        return System(self.name, devices, links, same_memory, host, nodes, node_links)

    def nodes(self, table: dict[str, Any]) -> list[NodeSpec]:
        nodes: list[NodeSpec] = []
        for i, entry in enumerate(self.entries(table, "node")):
            node = self.node(f"node[{i}]", entry)
            for j, earlier in enumerate(nodes):
                if earlier.name == node.name:
                    raise self.error(
                        f"node[{i}]", f"name: duplicate node '{node.name}' (already node[{j}])"
                    )
            nodes.append(node)
        return nodes

    def node_links(self, table: dict[str, Any], nodes: list[NodeSpec]) -> list[LinkSpec]:
        node_links: list[LinkSpec] = []
        for i, entry in enumerate(self.entries(table, "node_link")):
            link = self.node_link(f"node_link[{i}]", entry, [n.name for n in nodes])
            for j, earlier in enumerate(node_links):
                if {earlier.a, earlier.b} == {link.a, link.b}:
                    raise self.error(
                        f"node_link[{i}]",
                        f"duplicate link between nodes {link.a} and {link.b} "
                        f"(already node_link[{j}])",
                    )
            node_links.append(link)
        return node_links

    def node(self, where: str, entry: dict[str, Any]) -> NodeSpec:
        self.check_keys(where, entry, _NODE_KEYS, ("name",))
        name = entry["name"]
        if not isinstance(name, str) or not name:
            raise self.error(where, f'name: expected a node name such as "n1", got {name!r}')
        found: dict[str, str] = {}
        for key in ("address", "resource"):
            value = entry.get(key)
            if value is not None and (not isinstance(value, str) or not value):
                raise self.error(where, f"{key}: expected a non-empty string, got {value!r}")
            if value is not None:
                found[key] = value
        if len(found) > 1:
            raise self.error(
                where, "address and resource both given: Ray finds a node by one of them"
            )
        return NodeSpec(name, found.get("address"), found.get("resource"))

    def node_link(self, where: str, entry: dict[str, Any], nodes: list[str]) -> LinkSpec:
        self.check_keys(where, entry, _LINK_KEYS, _LINK_KEYS)
        between = entry["between"]
        if (
            not isinstance(between, list)
            or len(between) != 2  # pyright: ignore[reportUnknownArgumentType]
            or not all(isinstance(n, str) for n in between)  # pyright: ignore[reportUnknownVariableType]
        ):
            raise self.error(
                where, f'between: expected two node names, e.g. ["n0", "n1"], got {between!r}'
            )
        a, b = cast(list[str], between)
        for i, name in enumerate((a, b)):
            if name not in nodes:
                known = ", ".join(nodes) or "none: declare [[node]] entries"
                raise self.error(where, f"between[{i}]: unknown node '{name}' (nodes: {known})")
        if a == b:
            raise self.error(where, f"between: a link joins two different nodes, got {a} twice")
        try:
            bandwidth = parse_bandwidth(entry["bandwidth"])
        except ValueError as e:
            raise self.error(where, f"bandwidth: {e}") from None
        try:
            latency = parse_latency(entry["latency"])
        except ValueError as e:
            raise self.error(where, f"latency: {e}") from None
        return LinkSpec(a, b, bandwidth, latency)

    def check_nodes(self, devices: list[DeviceSpec], host: str) -> None:
        """The host runs here (not `ray`); devices away from the host's node are `ray`
        devices; every node with devices has a cpu device (its host memory)."""
        index = {d.name: i for i, d in enumerate(devices)}
        by_name = {d.name: d for d in devices}
        host_spec = by_name[host]
        if host_spec.api == "ray":
            raise self.error(
                f"device[{index[host]}]",
                f"api: {host} is the host device, which runs in this process: it cannot be "
                'api = "ray" (give it api = "cpu")',
            )
        with_cpu = {d.node for d in devices if d.type == "cpu"}
        for i, spec in enumerate(devices):
            if spec.node != host_spec.node and spec.api != "ray":
                raise self.error(
                    f"device[{i}]",
                    f"node: {spec.name} is on node {spec.node}, not on the host's node "
                    f'{host_spec.node}: a device on another machine needs api = "ray"',
                )
            if spec.node not in with_cpu:
                raise self.error(
                    f"device[{i}]",
                    f"node: node {spec.node} has no cpu device: declare its cpu device (the "
                    f"node's host memory, which copies to other nodes pass through) with a "
                    f"[[link]] to {spec.name}",
                )

    def host(self, table: dict[str, Any], devices: list[DeviceSpec]) -> str:
        cpus = sorted((d for d in devices if d.type == "cpu"), key=lambda d: d.id)
        if "host" not in table:
            if not cpus:
                raise self.error("", 'no host device: declare a [[device]] with type = "cpu"')
            return cpus[0].name
        name = table["host"]
        names = [d.name for d in devices]
        if name not in names:
            raise self.error("host", f"unknown device {name!r} (devices: {', '.join(names)})")
        if not any(d.name == name for d in cpus):
            raise self.error("host", f"device {name} is not a cpu device; host code runs on a cpu")
        return cast(str, name)

    def target_kind(self, where: str, entry: dict[str, Any]) -> None:
        """Registers a user target kind (`register_target_kind`; the same definition
        again is a no-op, so a description can be loaded twice)."""
        self.check_keys(where, entry, _TARGET_KIND_KEYS, ("name",))
        name = entry["name"]
        if not isinstance(name, str):
            raise self.error(where, f'name: expected a string such as "dsp", got {name!r}')
        table = entry.get("attrs", {})
        if not isinstance(table, dict):
            raise self.error(where, f"attrs: expected a table, got {table!r}")
        attrs: dict[str, tuple[object, object]] = {}
        for attr, spec in cast(dict[str, object], table).items():
            if not isinstance(spec, list) or len(spec) not in (1, 2):  # pyright: ignore[reportUnknownArgumentType]
                raise self.error(
                    where,
                    f'attrs.{attr}: expected [type] or [type, default], e.g. ["int", 128], '
                    f"got {spec!r}",
                )
            items = cast(list[object], spec)
            attrs[attr] = (items[0], items[1] if len(items) == 2 else None)
        keys = entry.get("keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):  # pyright: ignore[reportUnknownVariableType]
            raise self.error(where, f"keys: expected a list of strings, got {keys!r}")
        host_capable = entry.get("host_capable", False)
        if not isinstance(host_capable, bool):
            raise self.error(where, f"host_capable: expected true or false, got {host_capable!r}")
        try:
            register_target_kind(
                name,
                str(entry.get("device_type", name)),
                attrs,
                cast(list[str], keys),
                host_capable,
            )
        except TargetError as e:
            raise self.error(where, str(e)) from None

    def device(self, where: str, entry: dict[str, Any], nodes: list[str]) -> DeviceSpec:
        self.check_keys(where, entry, _DEVICE_KEYS, _DEVICE_REQUIRED)
        type_name, device_id = entry["type"], entry["id"]
        if not isinstance(type_name, str):
            raise self.error(where, f'type: expected a string such as "cuda", got {type_name!r}')
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise self.error(where, f"id: expected an integer 0 or more, got {device_id!r}")
        try:
            DeviceAttr.make(type_name, device_id)
        except VirtualDeviceError as e:
            raise self.error(where, f"type: {e}") from None
        target = self.target(where, entry["target"])
        if target.device_type != type_name:
            raise self.error(
                where,
                f"target: {ir_text(target)} has device type '{target.device_type}' "
                f'but type = "{type_name}"',
            )
        api = entry["api"]
        if not isinstance(api, str) or not api:
            raise self.error(
                where, f'api: expected a DeviceAPI name such as "simulated", got {api!r}'
            )
        spec = DeviceSpec(
            type_name,
            device_id,
            target,
            api,
            self.scopes(where, entry["scopes"]),
            self.attrs(where, entry.get("attrs", {})),
            *self.throughput(where, entry),
            *self.placement(where, entry, api, type_name, nodes),
        )
        self.attrs_agree_with_scopes(where, spec)
        return spec

    def placement(
        self, where: str, entry: dict[str, Any], api: str, type_name: str, nodes: list[str]
    ) -> tuple[str | None, str | None]:
        """The device's `node` (default: the first node) and `actor_api`."""
        node = entry.get("node")
        if node is not None:
            if not isinstance(node, str):
                raise self.error(where, f'node: expected a node name such as "n1", got {node!r}')
            if node not in nodes:
                known = ", ".join(nodes) if nodes else "none: declare [[node]] entries"
                raise self.error(where, f"node: unknown node '{node}' (nodes: {known})")
        elif nodes:
            node = nodes[0]
        actor_api = entry.get("actor_api")
        if actor_api is not None and api != "ray":
            raise self.error(
                where, f'actor_api: only a device with api = "ray" runs an actor (api = "{api}")'
            )
        if api == "ray":
            if actor_api is None:
                actor_api = "cpu" if type_name == "cpu" else "simulated"
            if actor_api not in _ACTOR_APIS:
                raise self.error(
                    where,
                    f"actor_api: expected one of {', '.join(_ACTOR_APIS)}, got {actor_api!r}",
                )
        return node, actor_api

    def attrs_agree_with_scopes(self, where: str, spec: DeviceSpec) -> None:
        """An attribute that states a scope's size (from `attrs` or the target) must be
        that scope's capacity: the runtime checks launches against the one and
        allocations against the other."""
        attrs = spec.attrs
        for key, scope in _ATTRS_SIZING_SCOPES.items():
            value, capacity = attrs.get(key), spec.scopes.get(scope)
            if value is None or capacity is None or value == capacity:
                continue
            source = (
                f"attrs.{key} = {value}"
                if key in spec.attr_overrides
                else f"target {ir_text(spec.target)} has {key} = {value}"
            )
            raise self.error(
                where,
                f"{source}, but scopes.{scope} is {capacity} bytes; they are one memory "
                f"size: make them equal",
            )

    def throughput(
        self, where: str, entry: dict[str, Any]
    ) -> tuple[float | None, float | None, float | None]:
        peak = entry.get("peak_gflops")
        if peak is not None and (
            not isinstance(peak, int | float)
            or isinstance(peak, bool)
            or not 0 < peak < math.inf  # TOML spells nan and inf too
        ):
            raise self.error(
                where, f"peak_gflops: expected a positive number such as 19500, got {peak!r}"
            )
        bandwidth = latency = None
        if "memory_bandwidth" in entry:
            try:
                bandwidth = parse_bandwidth(entry["memory_bandwidth"])
            except ValueError as e:
                raise self.error(where, f"memory_bandwidth: {e}") from None
        if "launch_latency" in entry:
            try:
                latency = parse_latency(entry["launch_latency"])
            except ValueError as e:
                raise self.error(where, f"launch_latency: {e}") from None
        return (float(peak) if peak is not None else None), bandwidth, latency

    def target(self, where: str, value: object) -> TargetAttr:
        try:
            if isinstance(value, dict):
                return Target.from_config(cast(dict[str, Any], value))
            if isinstance(value, str):
                return Target.parse(value)
        except TargetError as e:
            raise self.error(where, f"target: {e}") from None
        raise self.error(
            where,
            f'target: expected a table such as {{ kind = "cuda" }} or a kind or tag name, '
            f"got {value!r}",
        )

    def scopes(self, where: str, value: object) -> dict[str, int]:
        if not isinstance(value, dict):
            raise self.error(
                where, f'scopes: expected a table such as {{ global = "16 GiB" }}, got {value!r}'
            )
        scopes: dict[str, int] = {}
        for scope, size in cast(dict[str, object], value).items():
            try:
                DeviceAttr.make(scope=scope)
                scopes[scope] = parse_size(size)
            except (ValueError, VirtualDeviceError) as e:
                raise self.error(where, f"scopes.{scope}: {e}") from None
        if DEFAULT_SCOPE not in scopes:
            raise self.error(
                where, f"scopes: every device needs a '{DEFAULT_SCOPE}' scope (its main memory)"
            )
        return scopes

    def attrs(self, where: str, value: object) -> dict[str, object]:
        if not isinstance(value, dict):
            raise self.error(where, f"attrs: expected a table, got {value!r}")
        attrs = cast(dict[str, object], value)
        for key, item in attrs.items():
            if key not in DEVICE_ATTR_KINDS:
                raise self.error(
                    where,
                    f"attrs: unknown device attribute '{key}' "
                    f"(valid: {', '.join(DEVICE_ATTR_KINDS)})",
                )
            if not isinstance(item, int | float | str):
                raise self.error(
                    where, f"attrs.{key}: expected a number, string or boolean, got {item!r}"
                )
            # An integer attribute the runtime uses (max_threads_per_block bounds every
            # launch) must be one: a float would be truncated, a string ignored.
            if DEVICE_ATTR_VALUE_KINDS[key] == "int":
                if not isinstance(item, int) or isinstance(item, bool):
                    raise self.error(where, f"attrs.{key}: expected an integer, got {item!r}")
                least = 0 if key in _MAY_BE_ZERO else 1
                if item < least:
                    raise self.error(
                        where, f"attrs.{key}: expected an integer {least} or more, got {item}"
                    )
            elif not isinstance(item, str):  # get_attr gives an override back unchanged
                raise self.error(where, f"attrs.{key}: expected a string, got {item!r}")
            elif key == "max_thread_dimensions" and not re.fullmatch(
                r"\[\s*[1-9]\d*\s*,\s*[1-9]\d*\s*,\s*[1-9]\d*\s*\]", item
            ):
                raise self.error(
                    where,
                    f"attrs.{key}: expected the block limits along x, y and z, e.g. "
                    f'"[1024, 1024, 64]", got {item!r}',
                )
        return dict(attrs)

    def scope_ref(self, where: str, value: object, devices: dict[str, DeviceSpec]) -> ScopeRef:
        if not isinstance(value, str) or value.count("/") != 1:
            raise self.error(
                where, f'expected a scope reference such as "cuda:0/host", got {value!r}'
            )
        name, scope = value.split("/")
        device = devices.get(name)
        if device is None:
            raise self.error(where, f"unknown device '{name}' (devices: {', '.join(devices)})")
        if scope not in device.scopes:
            raise self.error(
                where,
                f"device {name} has no scope '{scope}' (declared: {', '.join(device.scopes)})",
            )
        if scope in KERNEL_PRIVATE_SCOPES:
            raise self.error(
                where,
                f"scope '{scope}' is private to a kernel's threads; it cannot be one memory "
                "area with another scope",
            )
        return (name, scope)

    def same_memory(
        self, where: str, entry: dict[str, Any], devices: dict[str, DeviceSpec]
    ) -> list[ScopeRef]:
        self.check_keys(where, entry, _SAME_MEMORY_KEYS, _SAME_MEMORY_KEYS)
        refs = entry["scopes"]
        if not isinstance(refs, list) or len(refs) < 2:  # pyright: ignore[reportUnknownArgumentType]
            raise self.error(
                where,
                "scopes: expected two or more scope references, "
                'e.g. ["cpu:0/global", "cuda:0/host"]',
            )
        group = [
            self.scope_ref(f"{where}: scopes[{i}]", ref, devices)
            for i, ref in enumerate(cast(list[object], refs))
        ]
        for i, (name, scope) in enumerate(group):
            if devices[name].api == "ray":
                raise self.error(
                    f"{where}: scopes[{i}]",
                    f'{name}/{scope} is memory of a Ray actor (api = "ray"), in another '
                    "process: it is one memory area with no other device's memory",
                )
        return group

    def one_capacity(
        self, where: str, group: list[ScopeRef], devices: dict[str, DeviceSpec]
    ) -> None:
        """Scopes that are one memory area have one capacity."""
        sizes = {f"{name}/{scope}": devices[name].scopes[scope] for name, scope in group}
        if len(set(sizes.values())) > 1:
            listed = ", ".join(f"{ref} = {size} bytes" for ref, size in sizes.items())
            raise self.error(
                where,
                f"scopes: {listed}: scopes that are one memory area must declare the same capacity",
            )

    def link(self, where: str, entry: dict[str, Any], devices: dict[str, DeviceSpec]) -> LinkSpec:
        self.check_keys(where, entry, _LINK_KEYS, _LINK_KEYS)
        between = entry["between"]
        if (
            not isinstance(between, list)
            or len(between) != 2  # pyright: ignore[reportUnknownArgumentType]
            or not all(isinstance(n, str) for n in between)  # pyright: ignore[reportUnknownVariableType]
        ):
            raise self.error(
                where,
                f'between: expected two device names, e.g. ["cpu:0", "cuda:0"], got {between!r}',
            )
        a, b = cast(list[str], between)
        for i, name in enumerate((a, b)):
            if name not in devices:
                raise self.error(
                    where, f"between[{i}]: unknown device '{name}' (devices: {', '.join(devices)})"
                )
        if a == b:
            raise self.error(where, f"between: a link joins two different devices, got {a} twice")
        try:
            bandwidth = parse_bandwidth(entry["bandwidth"])
        except ValueError as e:
            raise self.error(where, f"bandwidth: {e}") from None
        try:
            latency = parse_latency(entry["latency"])
        except ValueError as e:
            raise self.error(where, f"latency: {e}") from None
        return LinkSpec(a, b, bandwidth, latency)


def verify_system_attribute(module: Operation) -> None:
    """The module verifier of `vdev.system`: the system it gives, as TOML text or as the
    path of a file (relative to the IR file), must load; a file that is missing or
    invalid is an error placed at the module, as invalid text is."""
    if isinstance(module, ModuleOp):
        try:
            System.from_module(module)
        except SystemDescriptionError as e:
            raise ModuleSystemError(str(e)) from None


def _names_a_file(text: str) -> bool:
    """Whether a `vdev.system` value is a path (one line ending in `.toml`)."""
    return "\n" not in text and text.strip().endswith(".toml")


DEFAULT_SYSTEM_TOML = """\
# devplan's default system: one CPU and two simulated A100-like GPUs.

[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "32 GiB" }

[[device]]
type = "cuda"
id = 0
target = "nvidia/nvidia-a100"
api = "simulated"
scopes = { global = "40 GiB", shared = "48 KiB", local = "512 KiB", host = "32 GiB" }

[[device]]
type = "cuda"
id = 1
target = "nvidia/nvidia-a100"
api = "simulated"
scopes = { global = "40 GiB", shared = "48 KiB", local = "512 KiB", host = "32 GiB" }

# A GPU's host scope is pinned host memory: the CPU's own memory, seen from the GPU.
[[same_memory]]
scopes = ["cpu:0/global", "cuda:0/host"]

[[same_memory]]
scopes = ["cpu:0/global", "cuda:1/host"]

[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"

[[link]]
between = ["cpu:0", "cuda:1"]
bandwidth = "24 GB/s"
latency = "10 us"

[[link]]
between = ["cuda:0", "cuda:1"]
bandwidth = "300 GB/s"
latency = "5 us"
"""
"""The embedded default system description (a valid file to copy and edit)."""


__all__ = [
    "DEFAULT_SYSTEM_TOML",
    "DEVICE_ATTR_KINDS",
    "DeviceSpec",
    "LinkSpec",
    "ModuleSystemError",
    "NodeSpec",
    "ScopeRef",
    "System",
    "SystemDescriptionError",
]


@functools.cache
def _default_system() -> System:
    return System.from_text(DEFAULT_SYSTEM_TOML, "<default system>")
