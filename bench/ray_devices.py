"""Ray devices against in-process ones (issue 24): launches, 64 MiB copies, two examples.

    .venv/bin/python bench/ray_devices.py

Starts a local two-raylet Ray cluster (`ray.cluster_utils.Cluster`: a head with resource
`n0`, a second raylet with `n1`), runs `examples/two_nodes.toml` on it, and stops every Ray
process at the end. Every ratio compares timings taken in this one run (best of a few
repetitions). Not a test: nothing here asserts a time.

1. Per-launch overhead: a host loop of `device.launch`es of a 1-thread kernel through
   `devplan.execute`, minus the loop without launches, per launch, on cuda:0 (ray, an
   actor on n0) against cuda:0 of the default system (simulated, in this process).
   A launch on a ray device submits its actor call and does not wait for it; the run
   ends by copying the result to the host, which waits for every launch, so the figure
   is the cost per launch with the driver's submitting overlapping the actor's running.
2. 64 MiB copies: host -> cuda:0 (ray) and cuda:0 -> cuda:1 (actor to actor, across the
   two raylets' object stores) against host -> cuda:0 of the default system, and the same
   bytes passed between two plain actors on n0 and n1 by Ray alone (the floor).
3. examples/mlp.mlir (layer 1 on cuda:0 of n0, layer 2 on cuda:1 of n1) and
   examples/transformer.mlir (attention on cuda:0, the MLP block on cuda:1) on two nodes:
   wall time and modelled time against the default system (no network).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _shared import LAUNCH_LOOP, best

import devplan
from devplan.runtime.executor import random_inputs
from devplan.runtime.ray_cluster import shutdown_actors
from devplan.runtime.runtime import Runtime
from devplan.system.description import System
from devplan.system.devices import Device

LAUNCHES = 200
COPY_BYTES = 64 << 20
STORE = 400 << 20


def per_launch(system: System) -> float:
    module = devplan.parse(LAUNCH_LOOP)

    def run(launch: bool) -> float:
        return best(lambda: devplan.execute(module, [LAUNCHES, launch], system=system), 3)

    return (run(True) - run(False)) / LAUNCHES


def copies(system: System, pairs: list[tuple[str, str]]) -> list[float]:
    """Seconds per 64 MiB copy for each (src, dst) pair: "host" or a device name."""
    runtime = Runtime.from_system(system)
    host = np.ones(COPY_BYTES // 4, np.float32)
    buffers: dict[str, Any] = {"host": host}
    for name in {n for pair in pairs for n in pair if n != "host"}:
        device = Device.parse(name)
        buffers[name] = runtime.api(name).alloc_data_space(
            device, host.shape, host.dtype, label=name
        )
    def copy(src: str, dst: str) -> None:
        runtime.copy(buffers[src], buffers[dst])
        runtime.synchronize()  # a copy into an actor does not wait for it; this does

    copy("host", pairs[0][1])  # warm
    times = [best(lambda s=s, d=d: copy(s, d), 3) for s, d in pairs]
    for name, buffer in buffers.items():
        if name != "host":
            runtime.api(name).free_data_space(buffer.device, buffer)
    runtime.teardown()
    return times


def raw_ray_transfer(ray: Any) -> float:
    """Seconds per 64 MiB array passed from an actor on n0 to one on n1 with Ray alone
    (no devplan): the floor for an actor-to-actor device copy across the two raylets."""

    class Holder:
        def __init__(self) -> None:
            self.data = np.ones(COPY_BYTES // 4, np.float32)

        def give(self) -> Any:
            return self.data

        def take(self, data: Any) -> int:
            return int(data.nbytes)

    remote = ray.remote(num_cpus=0)(Holder)
    source = remote.options(resources={"n0": 0.001}).remote()
    sink = remote.options(resources={"n1": 0.001}).remote()
    ray.get(sink.take.remote(source.give.remote()))  # start both, warm
    seconds = best(lambda: ray.get(sink.take.remote(source.give.remote())), 3)
    for actor in (source, sink):
        ray.kill(actor)
    return seconds


def example(path: str, system: System) -> tuple[float, float]:
    """Wall seconds (warm: actors started, kernels compiled) and modelled seconds."""
    inputs = random_inputs(devplan.parse(path), seed=0)
    devplan.execute(devplan.parse(path), inputs, system=system)  # compile, start actors
    module = devplan.parse(path)
    wall = best(lambda: devplan.execute(module, inputs, system=system), 3)
    return wall, devplan.execute(module, inputs, system=system).report.model_seconds


def main() -> None:
    import ray
    from ray.cluster_utils import Cluster

    started = time.perf_counter()
    head = {"num_cpus": 1, "resources": {"n0": 1}, "object_store_memory": STORE}
    cluster = Cluster(initialize_head=True, head_node_args={**head, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, resources={"n1": 1}, object_store_memory=STORE)
        ray.init(address=cluster.address, log_to_driver=False)
        print(f"two-raylet cluster started in {time.perf_counter() - started:.1f} s")
        two_nodes, local = System.load("examples/two_nodes.toml"), System.default()

        ray_launch, local_launch = per_launch(two_nodes), per_launch(local)
        print(
            f"1. per launch: ray {ray_launch * 1e6:.0f} us, in-process simulated "
            f"{local_launch * 1e6:.0f} us ({ray_launch / local_launch:.0f}x)"
        )
        h2d, d2d = copies(two_nodes, [("host", "cuda:0"), ("cuda:0", "cuda:1")])
        (local_h2d,) = copies(local, [("host", "cuda:0")])
        raw = raw_ray_transfer(ray)
        mib = COPY_BYTES / 2**20
        print(
            f"2. 64 MiB copies: host->cuda:0 ray {mib / 1024 / h2d:.2f} GiB/s "
            f"({h2d * 1e3:.1f} ms), cuda:0(n0)->cuda:1(n1) actor to actor "
            f"{mib / 1024 / d2d:.2f} GiB/s ({d2d * 1e3:.1f} ms), in-process host->cuda:0 "
            f"{mib / 1024 / local_h2d:.2f} GiB/s ({local_h2d * 1e3:.1f} ms); "
            f"ray/in-process time {h2d / local_h2d:.0f}x; Ray alone, an array from an actor "
            f"on n0 to one on n1: {mib / 1024 / raw:.2f} GiB/s ({raw * 1e3:.1f} ms)"
        )
        for path in ("examples/mlp.mlir", "examples/transformer.mlir"):
            ray_wall, ray_model = example(path, two_nodes)
            local_wall, local_model = example(path, local)
            print(
                f"3. {path}: two nodes wall {ray_wall * 1e3:.1f} ms, modelled "
                f"{ray_model * 1e6:.1f} us; in-process wall {local_wall * 1e3:.1f} ms, "
                f"modelled {local_model * 1e6:.1f} us"
            )
    finally:
        shutdown_actors()
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
