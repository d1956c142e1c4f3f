"""Nodes in the system description: `[[node]]`, a device's `node` and `actor_api`,
`[[node_link]]`; their checks, and what the one cost model makes of them (copies between
nodes staged through each node's host, a launch on another node paying the actor call),
which `plan-devices{strategy=cost}` then avoids."""

from __future__ import annotations

import json
import re

import pytest
from support import EXAMPLES

import devplan
from devplan.system.description import System, SystemDescriptionError

TWO_NODES = (EXAMPLES / "two_nodes.toml").read_text()


def test_a_copy_between_nodes_goes_device_host_network_host_device() -> None:
    system = System.from_text(TWO_NODES, "two_nodes.toml")
    model = system.cost_model()
    hops = model.route("cuda:0", "cuda:1")
    assert [(h.src, h.dst, h.link.name if h.link else None) for h in hops] == [
        ("cuda:0", "cpu:0", "cpu:0<->cuda:0"),
        ("cpu:0", "cpu:1", "n0<->n1"),
        ("cpu:1", "cuda:1", "cpu:1<->cuda:1"),
    ]
    nbytes = 1 << 20
    pcie, network = 10e-6 + nbytes / 24e9, 20e-6 + nbytes / 12.5e9
    assert model.copy_seconds("cuda:0", "cuda:1", nbytes) == pytest.approx(
        2 * pcie + network, rel=1e-12
    )
    assert model.copy_seconds("cpu:0", "cuda:1", nbytes) == pytest.approx(network + pcie, rel=1e-12)
    # Within the host's node nothing changes; a launch on n1 pays the actor call.
    assert model.copy_seconds("cpu:0", "cuda:0", nbytes) == pytest.approx(pcie, rel=1e-12)
    near = model.kernel_seconds("cuda:0", 1e6, 1e6)
    assert model.kernel_seconds("cuda:1", 1e6, 1e6) == pytest.approx(near + 20e-6, rel=1e-12)
    assert system.node_of("cuda:1") == system.nodes[1]
    assert not system.host_visible("cpu:1", "global")  # an actor's memory


def _edit(old: str, new: str) -> str:
    assert old in TWO_NODES
    return TWO_NODES.replace(old, new, 1)


def _without_cpu_1() -> str:
    text = re.sub(r'\[\[device\]\]\ntype = "cpu"\nid = 1\n(.+\n)+?\n', "", TWO_NODES)
    return re.sub(r'\[\[link\]\]\nbetween = \["cpu:1", "cuda:1"\]\n(.+\n)+?\n', "", text)


ANOTHER_LINK = '\n[[node_link]]\nbetween = ["n1", "n0"]\nbandwidth = "1 GB/s"\nlatency = "1 us"\n'
ONE_AREA = '\n[[same_memory]]\nscopes = ["cpu:0/global", "cpu:1/global"]\n'
NO_NODES = TWO_NODES.split("[[node]]")[0] + TWO_NODES.split('resource = "n1"\n')[1]
HOST_CPU = 'api = "cpu"\nnode = "n0"'
FAR_CPU = 'api = "ray"\nactor_api = "cpu"'
BAD = [
    (_edit('name = "n1"\nresource = "n1"', 'name = "n0"'), r"node\[1\]: name: duplicate node 'n0'"),
    (
        _edit('resource = "n1"', 'resource = "n1"\naddress = "10.0.0.2"'),
        r"node\[1\]: address and resource both given",
    ),
    (_edit('resource = "n1"', "resource = 3"), r"node\[1\]: resource: expected a non-empty"),
    (_edit('name = "n1"', 'nmae = "n1"'), r"node\[1\]: unknown key 'nmae'"),
    (
        _edit('node = "n1"', 'node = "n2"'),
        r"device\[2\]: node: unknown node 'n2' \(nodes: n0, n1\)",
    ),
    (
        _edit(FAR_CPU, 'api = "cpu"'),
        r"device\[2\]: node: cpu:1 is on node n1, not on the host's node n0: a device on "
        'another machine needs api = "ray"',
    ),
    (
        _edit(FAR_CPU, 'api = "ray"\nactor_api = "opencl"'),
        r"device\[2\]: actor_api: expected one of cpu, simulated, cuda",
    ),
    (
        _edit(HOST_CPU, 'api = "cpu"\nactor_api = "cpu"\nnode = "n0"'),
        r'device\[0\]: actor_api: only a device with api = "ray" runs an actor',
    ),
    (_edit(HOST_CPU, 'api = "ray"\nnode = "n0"'), r"device\[0\]: api: cpu:0 is the host device"),
    (_without_cpu_1(), r"device\[2\]: node: node n1 has no cpu device"),
    (
        _edit('between = ["n0", "n1"]', 'between = ["n0", "n9"]'),
        r"node_link\[0\]: between\[1\]: unknown node 'n9'",
    ),
    (
        _edit('between = ["n0", "n1"]', 'between = ["n1", "n1"]'),
        r"node_link\[0\]: between: a link joins two different nodes",
    ),
    (_edit('latency = "20 us"', "latency = 20"), r"node_link\[0\]: latency:"),
    (
        TWO_NODES + ANOTHER_LINK,
        r"node_link\[1\]: duplicate link between nodes n1 and n0 \(already node_link\[0\]\)",
    ),
    (
        TWO_NODES + ONE_AREA,
        r"same_memory\[0\]: scopes\[1\]: cpu:1/global is memory of a Ray actor",
    ),
    (NO_NODES, r"device\[0\]: node: unknown node 'n0' \(nodes: none: declare \[\[node\]\]"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_nodes_are_errors_naming_the_entry_and_key(text: str, message: str) -> None:
    with pytest.raises(SystemDescriptionError, match=f"^bad.toml: {message}"):
        System.from_text(text, "bad.toml")


def test_no_node_link_between_two_nodes_is_an_error_at_the_copy() -> None:
    model = System.from_text(TWO_NODES.split("[[node_link]]")[0]).cost_model()
    with pytest.raises(Exception, match=r"no \[\[node_link\]\] between nodes n0 and n1"):
        model.route("cuda:0", "cuda:1")


def _placed_devices(toml: str) -> set[str]:
    program = f"""builtin.module attributes {{vdev.system = {json.dumps(toml)}}} {{
    func.func @main(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {{
      %e = tensor.empty() : tensor<256x256xf32>
      %m = linalg.matmul ins(%x, %w : tensor<256x256xf32>, tensor<256x256xf32>)
          outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
      func.return %m : tensor<256x256xf32>
    }}}}"""
    module = devplan.parse(program)
    devplan.apply(module, "plan-devices{strategy=cost}")
    return {f"{t}:{i}" for t, i in re.findall(r'#vdev.device<"(\w+)", (\d)', str(module))}


def test_cost_planning_keeps_work_off_the_network() -> None:
    # Two equal GPUs, one on each node: the matmul goes to the one on the host's node,
    # whichever id it has, and no value to node n1 (cpu:1 included: with the network's
    # copies free, the values went to cpu:1 while the matmul stayed on cuda:0).
    assert _placed_devices(TWO_NODES) == {"cuda:0"}
    swapped = (
        TWO_NODES.replace('id = 0\ntarget = "nvidia', 'id = 9\ntarget = "nvidia')
        .replace('id = 1\ntarget = "nvidia', 'id = 0\ntarget = "nvidia')
        .replace('id = 9\ntarget = "nvidia', 'id = 1\ntarget = "nvidia')
        .replace('"cpu:0", "cuda:0"', '"cpu:0", "cuda:1"')
        .replace('"cpu:1", "cuda:1"', '"cpu:1", "cuda:0"')
    )
    assert _placed_devices(swapped) == {"cuda:1"}
