"""`Runtime`: one DeviceAPI per device of a system, sharing streams and a cost model.

`Runtime.from_system(system)` builds, for each `[[device]]`, the DeviceAPI registered
under its `api` name (in `registry.device_apis()`, or the registry it is given; a name
no DeviceAPI is registered under is a `SystemDescriptionError` naming the entry) with
the device's scopes (capacities), attributes, host-visible scopes and the runtime's
`Scheduler`; the system's links and devices become the `CostModel` (`system/cost.py`).
The executor then works with devices through:

```python
rt = Runtime.from_system(System.default())
gpu = rt.api("cuda:0")
a = gpu.alloc_data_space(Device("cuda", 0), (n,), "float32", label="%a @ f.mlir:3:8")
rt.copy(host_array, a)                                  # blocking
t = rt.copy(a, out, stream=gpu.create_stream(...))      # async: a Token
rt.wait(t)
gpu.launch(Device("cuda", 0), kernel, [a, n], name="@kernels::@add", seconds=...)
leaks = rt.teardown(); report = rt.report()
```

Copies between devices with no link are staged through the host when both have a
link to it, and are an error (`NoLinkError`) otherwise — see `cost.CostModel`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence

from ..system.description import System, SystemDescriptionError
from ..system.devices import Device, DeviceNameError
from . import compile_clock
from .device_api import Buffer, DeviceAPI, Memory, copy_performer
from .errors import DeviceError
from .registry import DeviceAPIRegistry, device_apis
from .report import Report
from .scheduler import Scheduler
from .streams import Stream, Token


class _RuntimePlan:
    """What building a runtime for one system derives from the system: the same for every
    run of it, so derived once (a program runs many times on one system)."""

    def __init__(self, system: System) -> None:
        self.host = Device(system.host.type, system.host.id)
        self.cost_model = system.cost_model()
        """Shared by the runtimes of the system (it caches routes, and holds no state)."""
        self.devices = [
            (
                spec.api,
                Device(spec.type, spec.id),
                dict(spec.scopes),
                spec.attrs,
                [s for s in spec.scopes if system.host_visible(spec.name, s)],
                (
                    {"actor_api": spec.actor_api, "node": system.node_of(spec.name)}
                    if spec.actor_api is not None
                    else {}
                ),
            )
            for spec in system.devices
        ]
        """Per device: its api, Device, scopes, attributes, host-visible scopes, and what a
        `ray` device's factory is given besides (its `actor_api` and node)."""


def _check_api_names(system: System, registry: DeviceAPIRegistry) -> None:
    """Every device of `system` names a DeviceAPI of `registry` (the system reader takes
    any name: which APIs exist is the runtime's to say)."""
    for i, spec in enumerate(system.devices):
        if spec.api not in registry:
            raise SystemDescriptionError(
                f"{system.name}: device[{i}]: api: unknown DeviceAPI {spec.api!r} "
                f"(valid: {', '.join(registry.names())})"
            )


_plans: weakref.WeakKeyDictionary[System, _RuntimePlan] = weakref.WeakKeyDictionary()


class Runtime:
    """The DeviceAPIs of one run and what they share (streams, host clock, links)."""

    def __init__(self, apis: Iterable[DeviceAPI], scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.apis: dict[Device, DeviceAPI] = {}
        for api in apis:
            if api.scheduler is not scheduler:
                raise DeviceError(f"the DeviceAPI of {api.device} uses another scheduler")
            if api.device in self.apis:
                raise DeviceError(f"two DeviceAPIs for {api.device}")
            self.apis[api.device] = api
        if scheduler.host not in self.apis:
            raise DeviceError(f"no DeviceAPI for the host device {scheduler.host}")
        self.torn_down = False
        self._built: tuple[System, tuple[object, ...]] | None = None
        """The system and DeviceAPI factories `from_system` built it of (None: built
        otherwise, never renewed)."""
        self.kept: dict[object, object] = {}
        """What the executor keeps with the runtime for the next run, which renews it (the
        launch sites of its program); empty in a runtime built anew."""
        self._unread: weakref.ref[_RunReport] | None = None
        """The report of the last run (`final_report`), while its reader may still read it."""

    @classmethod
    def from_system(
        cls,
        system: System,
        registry: DeviceAPIRegistry | None = None,
        spare: Runtime | None = None,
    ) -> Runtime:
        """One DeviceAPI per device of `system`, its links as the cost model; each device's
        `api` is looked up in `registry` (by default `device_apis()`: the built-in APIs
        and those registered for the process, as they are now).

        `spare`, the runtime of an earlier run that was torn down, is renewed and returned
        instead when it can be (see `_renew`): a program that runs many times then builds
        its DeviceAPIs once. Otherwise it is left as it is."""
        registry = registry if registry is not None else device_apis()
        _check_api_names(system, registry)
        plan = _plans.get(system)
        if plan is None:
            plan = _plans[system] = _RuntimePlan(system)
        factories = tuple(registry.get(d[0]) for d in plan.devices)
        if spare is not None and spare._renew(system, factories):
            return spare
        scheduler = Scheduler(plan.cost_model, host=plan.host)
        apis: list[DeviceAPI] = []
        try:
            for (api_name, device, scopes, attrs, host_scopes, options), factory in zip(
                plan.devices, factories, strict=True
            ):
                api = factory(
                    device=device,
                    scopes=dict(scopes),
                    attrs=dict(attrs),
                    host_scopes=list(host_scopes),
                    scheduler=scheduler,
                    **options,
                )
                api.api_name = api_name
                apis.append(api)
        except BaseException:
            for built in apis:  # a ray device built before the failure ends its session
                built.abandon()
            raise
        runtime = cls(apis, scheduler)
        runtime._built = (system, factories)
        return runtime

    # -- devices ---------------------------------------------------------------------------

    @property
    def host(self) -> Device:
        """The device host code runs on."""
        return self.scheduler.host

    @property
    def devices(self) -> list[Device]:
        return list(self.apis)

    def api(self, device: Device | str) -> DeviceAPI:
        """The DeviceAPI of `device` ("cuda:0" or a `Device`)."""
        try:
            key = Device.parse(device) if isinstance(device, str) else device
        except DeviceNameError as e:
            raise DeviceError(str(e)) from None
        api = self.apis.get(key)
        if api is None:
            known = ", ".join(str(d) for d in self.apis)
            raise DeviceError(f"no device {key} in this runtime; devices: {known}")
        return api

    # -- copies and waiting ----------------------------------------------------------------

    def copy(
        self,
        src: Memory,
        dst: Memory,
        stream: Stream | None = None,
        *,
        wait_for: Sequence[Token] = (),
        label: str | None = None,
    ) -> Token:
        """Copy through the DeviceAPI TVM would use (the source's unless it is CPU memory).

        Without a stream the copy blocks; with one (of the performing device) it is queued.
        """
        src_dev = src.device if isinstance(src, Buffer) else self.host
        dst_dev = dst.device if isinstance(dst, Buffer) else self.host
        return self.api(copy_performer(src_dev, dst_dev)).copy_data_from_to(
            src, dst, stream, wait_for=wait_for, label=label
        )

    def wait(self, *tokens: Token) -> None:
        """`device.wait`: run the tokens and what they depend on; the host waits for them
        (on a `ray` device, for its actor's calls: every ray device's calls so far, a
        superset of the tokens' work)."""
        for token in tokens:
            self.scheduler.wait(token)
        self._wait_devices()

    def synchronize(self) -> None:
        """Finish everything queued on every stream; the host waits for every device."""
        self.scheduler.sync_all()
        self._wait_devices()

    def _wait_devices(self) -> None:
        for api in self.apis.values():
            api.wait_device()

    def pending_writes(self, memory: Memory) -> list[Token]:
        """Queued operations not yet run that write `memory`."""
        return self.scheduler.pending_writes(memory)

    def check_host_access(self, memory: Memory, *, write: bool = False) -> None:
        """Raise `PendingWriteError` if host code may not read (write) `memory` yet.

        For a buffer this also checks the host can see its memory at all
        (`HostAccessError` otherwise); call it before host code touches memory.
        """
        if isinstance(memory, Buffer):
            owner = memory.api
            assert owner is not None
            owner.host_view(memory, write=write)
        else:
            self.scheduler.check_host_access(memory, "a host array", write)

    # -- end of a run ------------------------------------------------------------------------

    def live_buffers(self) -> list[Buffer]:
        return [b for api in self.apis.values() for b in api.live_buffers()]

    def teardown(self) -> list[Buffer]:
        """Finish all streams and return workspace memory; the leaked buffers (each
        DeviceAPI's teardown waits for its device; a lost one reports none)."""
        self.scheduler.sync_all()
        leaks = [b for api in self.apis.values() for b in api.teardown()]
        self.torn_down = True
        return leaks

    def abandon(self) -> None:
        """After a fault: end the run's sessions on its ray devices (their actors free the
        run's memory) without running what is still queued."""
        for api in self.apis.values():
            api.abandon()
        self.torn_down = True

    def _renew(self, system: System, factories: tuple[object, ...]) -> bool:
        """Become the runtime `from_system(system)` would build of `factories`, on a new
        scheduler, when this one was built so, torn down without a fault, and each of its
        DeviceAPIs can renew (`DeviceAPI.can_renew`: nothing live, a class whose state is
        all the base class's). The report of its last run is gathered first, if anyone can
        still read it. False, and nothing changed, otherwise."""
        built = self._built
        if (
            built is None
            or built[0] is not system
            or built[1] != factories
            or not self.torn_down
            or not all(api.can_renew() for api in self.apis.values())  # none abandoned
        ):
            return False
        unread = self._unread() if self._unread is not None else None
        if unread is not None:
            unread()
        self._unread = None
        old = self.scheduler
        self.scheduler = Scheduler(old.cost_model, host=old.host)
        for api in self.apis.values():
            api.renew(self.scheduler)
        self.torn_down = False
        return True

    def report(self, wall_seconds: float | None = None) -> Report:
        """Statistics so far (see `Report`); wall time since the runtime was built by default."""
        return Report.collect(self.apis.values(), self.scheduler, wall_seconds)

    def final_report(self, wall_seconds: float) -> Callable[[], Report]:
        """After the teardown: the report of the run, gathered when first called (nothing
        changes the runtime's statistics any more; the compile clock is read now). A run
        whose caller never reads its report does not pay for it."""
        compiled = compile_clock.seconds() - self.scheduler.compiled
        report = _RunReport(list(self.apis.values()), self.scheduler, wall_seconds, compiled)
        self._unread = weakref.ref(report)
        return report


class _RunReport:
    """The report of a run, gathered when first called, then kept: before its runtime is
    renewed for another run (`Runtime._renew`), a report still referenced is gathered."""

    __slots__ = ("__weakref__", "_gather", "_report")

    def __init__(
        self, apis: list[DeviceAPI], scheduler: Scheduler, wall_seconds: float, compiled: float
    ) -> None:
        self._report: Report | None = None
        self._gather: Callable[[], Report] | None = lambda: Report.collect(
            apis, scheduler, wall_seconds, compiled
        )

    def __call__(self) -> Report:
        if self._report is None:
            assert self._gather is not None
            self._report = self._gather()
            self._gather = None
        return self._report
