"""The Ray cluster that `ray` devices run on, and the pool of their actors (the driver's side).

`ray_device.py` is a device on a Ray actor; this module finds the cluster and makes the
actors. Ray is imported here (`ray_module`), and only when a ray device is built: a
system without one never loads it.

Connecting: when Ray is not running, the first ray device connects to `$RAY_ADDRESS` (a
clear error at once when nothing listens there), or starts a small local Ray, stopped
when the process exits.

Placing: a device's `node` of the system description is found by a Ray resource (the
actor asks for a sliver of it) or by the address of a raylet (the actor is pinned to that
node); a node the cluster lacks is an error naming it and how to start it.

The pool: actors outlive a run, one per device description in the process (`_POOL`),
reused by the next runtime (a new session on the actor, its compiled kernels kept); a lost
actor leaves the pool (`forget`), and `shutdown_actors()` ends them all. Actors are
created with `max_restarts=0` and `max_task_retries=0`: a restarted actor would have lost
the memory its buffers name, and a retried call would run out of submission order.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..system.description import NodeSpec
from ..system.devices import Device
from .errors import DeviceError
from .ray_actor import DeviceActor

DEFAULT_TIMEOUT = 120.0
"""Seconds any wait on an actor may take before its device is lost (`DEVPLAN_RAY_TIMEOUT`)."""


def ray_module() -> Any:
    """The `ray` package, or a clear error when it is not installed."""
    try:
        import ray
    except ImportError:
        raise DeviceError(
            'a device with api = "ray" needs Ray, which is not installed: '
            "pip install 'devplan[ray]'"
        ) from None
    return ray


def timeout_seconds() -> float:
    """The deadline of every wait on an actor: `DEVPLAN_RAY_TIMEOUT`, else `DEFAULT_TIMEOUT`."""
    text = os.environ.get("DEVPLAN_RAY_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise DeviceError(f"DEVPLAN_RAY_TIMEOUT must be a positive number of seconds, got {text!r}")
    return value


@dataclass
class PooledActor:
    """A live actor of the pool: its handle and the kernels sent to it."""

    handle: Any
    job: str
    sent: set[str] = field(default_factory=set[str])


_POOL: dict[tuple[object, ...], PooledActor] = {}


def _connect(ray: Any) -> None:
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS")
    if address:
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, ray.exceptions.RayError) as error:
            raise DeviceError(
                f"cannot connect to the Ray cluster at RAY_ADDRESS={address}: {error} (is "
                "its head running, `ray start --head`? a cluster with token authentication "
                "also needs RAY_AUTH_MODE=token here)"
            ) from None
        return
    ray.init(
        num_cpus=min(os.cpu_count() or 1, 4),
        object_store_memory=256 * 2**20,
        include_dashboard=False,
        log_to_driver=False,
    )
    atexit.register(ray.shutdown)


def _check_reachable(address: str) -> None:
    """A clear error at once when nothing listens at `RAY_ADDRESS` (`host:port`; other forms,
    such as `auto` or `ray://...`, are left to Ray): `ray.init` would retry for minutes."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DeviceError(
            f"cannot connect to the Ray cluster at RAY_ADDRESS={address}: {reason} (start "
            "its head with `ray start --head --port=PORT`)"
        ) from None


def _placement(ray: Any, device: Device, node: NodeSpec | None) -> dict[str, Any]:
    """The actor options that put it on `node`; a clear error when no node matches."""
    if node is None or (node.resource is None and node.address is None):
        return {}
    if node.resource is not None:
        if node.resource not in ray.cluster_resources():
            raise DeviceError(
                f"device {device}: no node of the Ray cluster has the resource "
                f"'{node.resource}' that node {node.name} is found by; start that node's "
                f"raylet with ray start --resources='{{\"{node.resource}\": 1}}'"
            )
        return {"resources": {node.resource: 0.001}}
    alive = [n for n in ray.nodes() if n.get("Alive")]
    for n in alive:
        if n.get("NodeManagerAddress") == node.address:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            return {"scheduling_strategy": NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)}
    known = ", ".join(sorted({str(n.get("NodeManagerAddress")) for n in alive}))
    raise DeviceError(
        f"device {device}: no node of the Ray cluster has address {node.address} "
        f"(node {node.name}); the cluster's nodes: {known}"
    )


def actor_for(
    device: Device,
    actor_api: str,
    node: NodeSpec | None,
    scopes: Mapping[str, int | None],
    attrs: Mapping[str, object],
    host_scopes: Iterable[str],
) -> PooledActor:
    """The pool's actor for this device description, made (on `node`) if there is none
    of this Ray job."""
    ray = ray_module()
    _connect(ray)
    job = ray.get_runtime_context().get_job_id()
    key = (
        str(device), actor_api, node,
        tuple(sorted(scopes.items())), repr(sorted(attrs.items())), tuple(sorted(host_scopes)),
    )  # fmt: skip
    found = _POOL.get(key)
    if found is not None and found.job == job:
        return found
    options: dict[str, Any] = {"num_cpus": 0, "max_restarts": 0, "max_task_retries": 0}
    options.update(_placement(ray, device, node))
    handle = (
        ray.remote(_StoreActor)
        .options(**options)
        .remote(actor_api, device, dict(scopes), dict(attrs), list(host_scopes))
    )
    actor = PooledActor(handle, job)
    _POOL[key] = actor
    return actor


def forget(actor: PooledActor) -> None:
    """Take a lost actor out of the pool and end it (the next runtime makes a new one)."""
    for key, pooled in list(_POOL.items()):
        if pooled is actor:
            del _POOL[key]
    with contextlib.suppress(Exception):  # already gone, or Ray is: nothing left to end
        ray_module().kill(actor.handle, no_restart=True)


def shutdown_actors() -> None:
    """End every device actor this process made (the next ray device makes new ones)."""
    ray = ray_module()
    for actor in _POOL.values():
        if ray.is_initialized():
            ray.kill(actor.handle, no_restart=True)
    _POOL.clear()


class _StoreActor(DeviceActor):
    """The actor class ray devices run: a `DeviceActor` that also hands a buffer's bytes to
    another actor through Ray's object store, so that the driver, which waits for the
    hand-over like for any call, gets a handle back and never the bytes."""

    def read_out(self, session: int, bid: int) -> list[Any]:
        """The buffer's bytes, put in the store: `[ObjectRef]` (a list, so that Ray does
        not resolve the ref where this call's result is passed on). This actor owns the
        bytes: if it dies before the destination takes them, they are gone with it."""
        return [ray_module().put(self.read(session, bid))]

    def write_in(self, session: int, bid: int, handed: list[Any]) -> None:
        """Write the bytes `read_out` of another actor put in the store."""
        self.write(session, bid, ray_module().get(handed[0]))


__all__ = [
    "DEFAULT_TIMEOUT",
    "PooledActor",
    "actor_for",
    "forget",
    "ray_module",
    "shutdown_actors",
    "timeout_seconds",
]
