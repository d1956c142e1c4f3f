"""devplan's one cost model: how long a kernel takes on a device and a copy over a link.

The executor's report (`Report.model_seconds`, per-device kernel time, per-link busy
time) and `plan-devices{strategy=cost}`'s objective both ask the `CostModel` below;
nothing else in devplan estimates time.

Kernels (roofline). A launch that does `flops` arithmetic operations and moves `bytes`
to and from device memory takes

    launch_latency + max(flops / peak_flops, bytes / memory_bandwidth)

on a device with that `Throughput`. Each device's throughput comes from its system
description entry (`peak_gflops = 19500`, `memory_bandwidth = "1555 GB/s"`,
`launch_latency = "5 us"`), else from the defaults for its target tag
(`DEFAULT_THROUGHPUT_BY_TAG`), else for its device type (`DEFAULT_THROUGHPUT_BY_TYPE`),
else `FALLBACK_THROUGHPUT`.

What a kernel does (`Work`) is counted on the level-1 op it computes, from its iteration
space, body and maps (`analysis/op_work.py`); this module holds only the arithmetic.
`lower-to-device` records this work on each launch it makes (`device.work =
array<i64: flops, bytes>`, static shapes only), so the executor charges the lowered
kernel exactly what the planner modelled for the op. A launch without it (hand-written
level-2 code, dynamic shapes) is counted from its kernel body (`kernel_work`): per
thread, one flop per `arith`/`math` op on non-index values and the element bytes of
each `memref.load`/`store`, loops counted once.

Copies. A copy of `bytes` from device `a` to device `b` crosses the system's direct
`[[link]]` between them (`latency + bytes / bandwidth`); two devices without a direct
link are routed through the host (two hops, their times added); a copy within a device
is free; no route is a `NoLinkError`.

Nodes (a system of several machines, `Network`). A copy between devices on two different
nodes goes device -> the source node's host -> network -> the destination node's host ->
device: up to four hops, the network one over the `[[node_link]]` between the nodes
(named `n0<->n1` in the report); a device that is its node's host skips its leg. Every
kernel launch on a device away from the host's node also pays the node link's latency
once (the actor call that starts it). Two devices of one node without a direct link are
staged through that node's host. Copies and launches within the host's node cost what
they cost without nodes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from ..diagnostics import DevplanError
from .devices import Device


@dataclass(frozen=True)
class Throughput:
    """What a device computes per second (the roofline's two roofs and a launch cost)."""

    peak_flops: float
    """Arithmetic operations per second."""
    memory_bandwidth: float
    """Bytes per second to and from the device's memory."""
    launch_latency: float
    """Seconds per kernel launch."""

    def seconds(self, flops: float, nbytes: float) -> float:
        """Modelled time of one launch doing `flops` and moving `nbytes`."""
        return self.launch_latency + max(flops / self.peak_flops, nbytes / self.memory_bandwidth)


DEFAULT_THROUGHPUT_BY_TYPE: dict[str, Throughput] = {
    "cpu": Throughput(peak_flops=100e9, memory_bandwidth=50e9, launch_latency=1e-6),
    "cuda": Throughput(peak_flops=10e12, memory_bandwidth=900e9, launch_latency=5e-6),
    "rocm": Throughput(peak_flops=10e12, memory_bandwidth=900e9, launch_latency=5e-6),
}
"""Defaults by device type for devices whose tag is not listed."""

DEFAULT_THROUGHPUT_BY_TAG: dict[str, Throughput] = {
    "nvidia/nvidia-a100": Throughput(19.5e12, 1555e9, 5e-6),
    "nvidia/nvidia-v100": Throughput(15.7e12, 900e9, 5e-6),
    "nvidia/nvidia-t4": Throughput(8.1e12, 320e9, 5e-6),
    "nvidia/geforce-rtx-3090": Throughput(35.6e12, 936e9, 5e-6),
}
"""Defaults of built-in target tags (FP32 peak and memory bandwidth of the part)."""

FALLBACK_THROUGHPUT = Throughput(peak_flops=1e12, memory_bandwidth=100e9, launch_latency=5e-6)
"""A device of a type and tag with no default (a user kind)."""


def default_throughput(device_type: str, tag: str | None = None) -> Throughput:
    """The built-in throughput of a device of `device_type` with target tag `tag`."""
    if tag is not None and tag in DEFAULT_THROUGHPUT_BY_TAG:
        return DEFAULT_THROUGHPUT_BY_TAG[tag]
    return DEFAULT_THROUGHPUT_BY_TYPE.get(device_type, FALLBACK_THROUGHPUT)


class NoLinkError(DevplanError):
    """A copy between two devices that the system connects by no link."""


@dataclass(frozen=True)
class LinkCost:
    """A bidirectional link between two devices (names like "cuda:0")."""

    a: str
    b: str
    bandwidth: float
    """Bytes per second, each direction."""
    latency: float
    """Seconds per transfer."""

    @property
    def name(self) -> str:
        return f"{self.a}<->{self.b}"

    def seconds(self, nbytes: float) -> float:
        return self.latency + nbytes / self.bandwidth


@dataclass(frozen=True)
class Hop:
    """One leg of a copy: from one device to another over `link` (None: within a device)."""

    src: str
    dst: str
    link: LinkCost | None

    def seconds(self, nbytes: float) -> float:
        return 0.0 if self.link is None else self.link.seconds(nbytes)


@dataclass(frozen=True)
class Network:
    """The machines of a system: each device's node, each node's host memory (a cpu
    device's name), the links between nodes (`LinkCost` with node names)."""

    nodes: Mapping[str, str]
    node_hosts: Mapping[str, str]
    links: Sequence[LinkCost]

    def link(self, a: str, b: str) -> LinkCost | None:
        return next((k for k in self.links if {k.a, k.b} == {a, b}), None)


class CostModel:
    """Kernel and copy times of one system (see the module docstring)."""

    def __init__(
        self,
        links: Iterable[LinkCost] = (),
        host: str = "cpu:0",
        devices: Mapping[str, Throughput] | None = None,
        network: Network | None = None,
    ) -> None:
        self.host = host
        self.network = network
        self._call_latency: dict[str, float] = {}
        """Per device away from the host's node: the latency of an actor call to it."""
        if network is not None:
            home = network.nodes.get(host)
            for device, node in network.nodes.items():
                link = network.link(home, node) if home is not None and node != home else None
                if link is not None:
                    self._call_latency[device] = link.latency
        self.links: dict[frozenset[str], LinkCost] = {}
        self.devices: dict[str, Throughput] = dict(devices or {})
        self._connect_all = False
        self._routes: dict[tuple[Device, Device], tuple[Hop, ...]] = {}
        self._named_routes: dict[tuple[str, str], tuple[Hop, ...]] = {}
        for link in links:
            self.links[frozenset((link.a, link.b))] = link

    @classmethod
    def zero(cls) -> CostModel:
        """Every pair of devices connected, every copy free (for APIs used on their own)."""
        model = cls()
        model._connect_all = True
        return model

    def throughput(self, device: str) -> Throughput:
        """The throughput of the device named `device` (`"cuda:0"`)."""
        known = self.devices.get(device)
        return known if known is not None else default_throughput(device.split(":")[0])

    def kernel_seconds(self, device: str, flops: float, nbytes: float) -> float:
        """Modelled time of one launch on `device` doing `flops` and moving `nbytes` (and
        the actor call that starts it, on a device of another node)."""
        seconds = self.throughput(device).seconds(flops, nbytes)
        if self._call_latency:
            seconds += self._call_latency.get(device, 0.0)
        return seconds

    def copy_seconds(self, src: str, dst: str, nbytes: float) -> float:
        """Modelled time of copying `nbytes` from `src` to `dst` (its route's hops)."""
        if src == dst:
            return 0.0
        hops = self._named_routes.get((src, dst))
        if hops is None:
            hops = self._named_routes[(src, dst)] = tuple(self.route(src, dst))
        return sum(hop.seconds(nbytes) for hop in hops)

    def link_between(self, a: str, b: str) -> LinkCost | None:
        return self.links.get(frozenset((a, b)))

    def route_between(self, src: Device, dst: Device) -> tuple[Hop, ...]:
        """`route` between two devices, worked out once per pair."""
        hops = self._routes.get((src, dst))
        if hops is None:
            hops = self._routes[(src, dst)] = tuple(self.route(str(src), str(dst)))
        return hops

    def route(self, src: str, dst: str) -> list[Hop]:
        """The hops of a copy from `src` to `dst`: none apart from one on the same device."""
        if src == dst:
            return [Hop(src, dst, None)]
        host = self.host
        network = self.network
        if network is not None:
            a, b = network.nodes.get(src), network.nodes.get(dst)
            if a is not None and b is not None and a != b:
                return self._network_route(network, src, dst, a, b)
            if a is not None:
                host = network.node_hosts.get(a, host)  # staged through its node's host
        direct = self.link_between(src, dst)
        if direct is not None or self._connect_all:
            return [Hop(src, dst, direct)]
        to_host = self.link_between(src, host)
        from_host = self.link_between(host, dst)
        if src != host and dst != host and to_host and from_host:
            return [Hop(src, host, to_host), Hop(host, dst, from_host)]
        known = ", ".join(sorted(link.name for link in self.links.values())) or "none"
        raise NoLinkError(
            f"cannot copy from {src} to {dst}: the system has no link between them and no "
            f"route through the host {host} (links: {known}); add a [[link]] with "
            f'between = ["{src}", "{dst}"] to the system description'
        )

    def _network_route(self, network: Network, src: str, dst: str, a: str, b: str) -> list[Hop]:
        """device -> host of node `a` -> network -> host of node `b` -> device."""
        link = network.link(a, b)
        if link is None:
            known = ", ".join(k.name for k in network.links) or "none"
            raise NoLinkError(
                f"cannot copy from {src} (node {a}) to {dst} (node {b}): the system has no "
                f"[[node_link]] between nodes {a} and {b} (node links: {known}); add one with "
                f'between = ["{a}", "{b}"]'
            )
        src_host, dst_host = network.node_hosts[a], network.node_hosts[b]
        hops: list[Hop] = []
        if src != src_host:
            hops.extend(self._local_route(src, src_host))
        hops.append(Hop(src_host, dst_host, link))
        if dst != dst_host:
            hops.extend(self._local_route(dst_host, dst))
        return hops

    def _local_route(self, src: str, dst: str) -> list[Hop]:
        """A leg within one node: its direct link, else a `NoLinkError`."""
        direct = self.link_between(src, dst)
        if direct is None:
            raise NoLinkError(
                f"cannot copy from {src} to {dst}: a copy between nodes passes through each "
                "node's host memory (its cpu device of lowest id), and the system has no "
                f'link between them; add a [[link]] with between = ["{src}", "{dst}"]'
            )
        return [Hop(src, dst, direct)]


# --- what a kernel does -------------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """What one launch does: arithmetic operations and bytes moved."""

    flops: int
    nbytes: int


NO_WORK = Work(0, 0)

WORK_ATTR = "device.work"
"""The attribute `lower-to-device` puts on a launch: `array<i64: flops, bytes>`."""


def element_bytes(element: Attribute) -> int:
    """Bytes of one element (`f32` 4, `i1` 1, `index` 8)."""
    if isinstance(element, IndexType):
        return 8
    bits = getattr(element, "bitwidth", None)
    return max(1, (bits + 7) // 8) if isinstance(bits, int) else 8


def shaped(type: Attribute) -> tuple[Sequence[int], Attribute] | None:
    """The shape and element type of a tensor or memref type (None: not shaped)."""
    if isinstance(type, TensorType | MemRefType):
        typed = cast(TensorType[Attribute] | MemRefType[Attribute], type)
        return typed.get_shape(), typed.element_type
    return None


def static_shape(shape: Sequence[int], dynamic_size: int | None) -> list[int] | None:
    """`shape` with each dynamic dimension taken as `dynamic_size` (None: unknown)."""
    if dynamic_size is None:
        return None if DYNAMIC_INDEX in shape else list(shape)
    return [dynamic_size if dim == DYNAMIC_INDEX else dim for dim in shape]


def tensor_bytes(type: Attribute, dynamic_size: int | None = None) -> int | None:
    """Bytes of a tensor or memref value; None when a dimension is dynamic and no
    `dynamic_size` is assumed for it. Not a shaped type: 0."""
    info = shaped(type)
    if info is None:
        return 0
    shape = static_shape(info[0], dynamic_size)
    return None if shape is None else math.prod(shape) * element_bytes(info[1])


def kernel_work(body: Operation) -> tuple[int, int]:
    """Per thread (flops, bytes) of a level-2 kernel body, loops counted once: one flop
    per `arith`/`math` op on non-index values, the element bytes of each load/store."""
    flops = nbytes = 0
    for op in body.walk():
        name = op.name
        if name in ("memref.load", "memref.store"):
            ref = shaped(op.operands[1 if name == "memref.store" else 0].type)
            if ref is not None:
                nbytes += element_bytes(ref[1])
        elif (
            name.startswith(("arith.", "math."))
            and name != "arith.constant"
            and op.results
            and not isinstance(op.results[0].type, IndexType)
        ):
            flops += 1
    return flops, nbytes


__all__ = [
    "DEFAULT_THROUGHPUT_BY_TAG",
    "DEFAULT_THROUGHPUT_BY_TYPE",
    "FALLBACK_THROUGHPUT",
    "NO_WORK",
    "WORK_ATTR",
    "CostModel",
    "Hop",
    "LinkCost",
    "Network",
    "NoLinkError",
    "Throughput",
    "Work",
    "default_throughput",
    "element_bytes",
    "kernel_work",
    "tensor_bytes",
]
