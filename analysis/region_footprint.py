"""Region footprints: which devices each function works on, and so which functions are
device programs (the Target RFC's rule), what classify-regions marks and
outline-device-regions splits.

A *device program* is host code for one device with its host: it may allocate and
free that device's memory, query `device.attr`, compute sizes and launch parameters
with scalar `arith`/`scf`, launch that device's kernels, copy between scopes of that
device and call other device programs for the same device. It may not read or write
memory of another device, the host's included.

Algorithm
=========

Phase 1 — footprint of each op (`op_footprint`). An op's *footprint* is the set of
devices it works on and whether the host works on host memory. Device keys are
(device type, virtual id); memory with no memory space, or in a space of the module's
host device (`vdev.host_device`, default `cpu:0`), is host memory.
  * `device.alloc/free/alloc_workspace/free_workspace`: the buffer's device (host
    memory: the host works on host memory).
  * `device.copy/copy_async`: both ends (a copy from or to host memory is host work).
  * `device.launch`: the launch's device, and the owner of every memref argument.
  * `memref.load/store/alloc/alloca/dealloc/copy` and any other op that is not known
    to be neutral and has a memref operand or result: the host works on that memory;
    when the memory belongs to a device, that device too (a host read of device
    memory needs both, so it is never a device program).
  * `func.call`: the callee's summary (phase 2); a call to a declaration, whose body
    is unknown, is host work.
  * Everything else — scalar ops, `device.attr`, `device.wait`, region ops themselves
    (their nested ops count on their own), `memref.dim`, views — is neutral.

Phase 2 — summaries, interprocedurally. A function's summary is the join of the
footprints of all ops in its body (nested regions included). Footprints form a
finite lattice (sets of devices × host bit, ordered by inclusion) whose image under
`region_class` is host < device(d) < mixed(d) < multi-device. Functions are visited
callees first (post-order of the call graph) and the rounds repeat until no summary
changes, which handles recursion: the join is monotone and the lattice finite.

Phase 3 — classes and targets. No device: "host". Two or more devices:
"multi-device". One device plus host memory: "mixed". One device only: "device".
The target of a device program for device d is, in order: the target written on a
`#vdev.device` of d in the function or its device-program callees, the module's
`vdev.targets` entry for d's type, the target of the `kernel.module` of its launches,
the target of the module's kernel.modules for d's type when they agree, and the
registered kind named like d's type (`cuda`, `rocm`, a user's `dsp`); else an error.
Its host is the module host device's target (default `llvm`) unless the target
already names one, and none when d is the host device itself.

Invariants: the analysis does not change IR; classes only depend on the IR, not on
visit order. Not handled: indirect calls (`func.call_indirect`) and unknown ops with
memref operands are treated as host work (never wrongly "device"); an unconstrained
virtual id (`#vdev.device<"cuda">`) is the same device as any concrete id of its
type in the same function; memory whose device type is unconstrained counts as host
memory (`buffer_ownership.py` says who owns memory).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.hints import isa

from ..diagnostics import error_at
from ..dialects import device as dev
from ..dialects.kernel import KernelModuleOp, lookup_kernel
from ..dialects.target import TargetAttr
from ..dialects.target_kinds import TargetError
from ..dialects.virtual_device import DeviceAttr, memory_space_of
from .buffer_ownership import BufferOwnership, DeviceKey, device_name

CLASSES = ("host", "device", "mixed", "multi-device")
"""The region classes, in lattice order."""


def _add_device(devices: frozenset[DeviceKey], key: DeviceKey) -> frozenset[DeviceKey]:
    """`devices ∪ {key}`, where an unconstrained id is absorbed by a concrete one."""
    kind, ident = key
    if ident is None and any(k[0] == kind for k in devices):
        return devices
    if ident is not None and (kind, None) in devices:
        devices = devices - {(kind, None)}
    return devices | {key}


@dataclass(frozen=True)
class Footprint:
    """What code touches: the devices it works on and whether it works on host memory.

    The lattice element of the analysis; `join` is its least upper bound.
    """

    devices: frozenset[DeviceKey] = frozenset()
    host_memory: bool = False

    def join(self, other: Footprint) -> Footprint:
        devices = self.devices
        for key in sorted(other.devices, key=lambda k: (k[0], k[1] is None, k[1] or 0)):
            devices = _add_device(devices, key)
        return Footprint(devices, self.host_memory or other.host_memory)

    @property
    def region_class(self) -> str:
        if not self.devices:
            return "host"
        if len(self.devices) > 1:
            return "multi-device"
        return "mixed" if self.host_memory else "device"

    @property
    def device(self) -> DeviceKey | None:
        """The single device of a device or mixed footprint."""
        return next(iter(self.devices)) if len(self.devices) == 1 else None

    def describe(self) -> str:
        parts = [device_name(k) for k in sorted(self.devices, key=device_name)]
        if self.host_memory:
            parts.append("host memory")
        return " and ".join(parts) if parts else "nothing"


NEUTRAL = Footprint()

NEUTRAL_MEMREF_OPS = frozenset(
    {
        "func.return",
        "scf.yield",
        "scf.condition",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.execute_region",
        "scf.index_switch",
        "memref.dim",
        "memref.rank",
        "memref.cast",
        "memref.subview",
        "memref.reinterpret_cast",
        "memref.expand_shape",
        "memref.collapse_shape",
        "memref.extract_strided_metadata",
        "device.view",
    }
)
"""Ops that pass memrefs along, compute on their shape or make a view without touching
their data (region ops' nested ops count on their own)."""

_ACCESS_VERBS = {
    "memref.load": "reads",
    "memref.store": "writes",
    "memref.alloc": "allocates",
    "memref.alloca": "allocates",
    "memref.dealloc": "frees",
    "memref.copy": "copies",
}


@dataclass(frozen=True)
class Step:
    """One op's contribution to its function's footprint, with the reason in words."""

    op: Operation
    footprint: Footprint
    reason: str


class RegionAnalysis:
    """Footprints and classes of every function in a module (phases 1–3).

    Read-only: build it, then ask `summary`, `region_class`, `steps`, `target_of`.
    """

    def __init__(self, module: ModuleOp):
        self.module = module
        self.ownership = BufferOwnership(module)
        self.host_device = self.ownership.host_device
        self.host_key = self.ownership.host_key
        self.functions: dict[str, func.FuncOp] = {
            f.sym_name.data: f for f in module.body.ops if isinstance(f, func.FuncOp)
        }
        self.summaries: dict[str, Footprint] = {name: NEUTRAL for name in self.functions}
        # Per function, read once: a chain of device programs asks each for its callees
        # and its devices again for every caller above it.
        self._callees: dict[str, list[str]] = {}
        self._devices: dict[func.FuncOp, list[tuple[DeviceAttr, Operation]]] = {}
        self._solve()

    # ---- phase 1 ------------------------------------------------------------------

    def _touch(self, memref: Attribute) -> Footprint:
        """The footprint of the host (or a device op) touching memory of this type."""
        key = self.ownership.owner(memref)
        return Footprint(host_memory=True) if key is None else Footprint(frozenset({key}))

    def _where(self, memref: Attribute) -> str:
        key = self.ownership.owner(memref)
        return "host memory" if key is None else f"memory of {device_name(key)}"

    def op_step(self, op: Operation) -> Step | None:
        """The footprint an op contributes by itself (nested ops not included)."""
        name = f"'{op.name}'"
        if isinstance(op, dev.AllocOp | dev.AllocWorkspaceOp):
            t = op.result.type
            return Step(op, self._touch(t), f"{name} allocates {self._where(t)}")
        if isinstance(op, dev.FreeOp | dev.FreeWorkspaceOp):
            t = op.buffer.type
            return Step(op, self._touch(t), f"{name} frees {self._where(t)}")
        if isinstance(op, dev.CopyOp | dev.CopyAsyncOp):
            s, d = op.source.type, op.destination.type
            fp = self._touch(s).join(self._touch(d))
            return Step(op, fp, f"{name} copies from {self._where(s)} to {self._where(d)}")
        if isinstance(op, dev.LaunchOp):
            return self._launch_step(op)
        if isinstance(op, func.CallOp):
            return self._call_step(op)
        if isinstance(op, dev.AttrOp | dev.WaitOp) or op.name in NEUTRAL_MEMREF_OPS:
            return None
        if op.name == "func.call_indirect":
            return Step(op, Footprint(host_memory=True), f"{name} calls an unknown function")
        memrefs = _memref_types(_values(op))
        if not memrefs:
            return None
        fp = NEUTRAL
        for t in memrefs:
            fp = fp.join(self._touch(t)).join(Footprint(host_memory=True))
        verb = _ACCESS_VERBS.get(op.name, "uses")
        device_memory = [t for t in memrefs if self.ownership.owner(t) is not None]
        where = "host memory"
        if device_memory:
            where = f"{self._where(device_memory[0])} on the host"
        return Step(op, fp, f"{name} {verb} {where}")

    def _launch_step(self, op: dev.LaunchOp) -> Step:
        device = op.device
        key: DeviceKey = (device.type_name or "?", device.device_id)
        fp = Footprint(frozenset({key}))
        reason = f"'device.launch' launches {op.kernel} on {device_name(key)}"
        own = None if key == self.host_key else key  # a host-device kernel owns host memory
        for arg in _memref_types(op.args):
            if self.ownership.owner(arg) != own:
                fp = fp.join(self._touch(arg))
                reason += f" with an argument in {self._where(arg)}"
        return Step(op, fp, reason)

    def _call_step(self, op: func.CallOp) -> Step | None:
        callee = op.callee.root_reference.data
        target = self.functions.get(callee)
        if target is None or target.is_declaration:
            return Step(
                op,
                Footprint(host_memory=True),
                f"'func.call' calls @{callee}, whose body is unknown (counted as host work)",
            )
        summary = self.summaries[callee]
        if summary == NEUTRAL:
            return None
        cls = summary.region_class
        if cls == "device":
            what = f"a device program for {summary.describe()}"
        elif cls == "host":
            what = "host code working on host memory"
        else:
            what = f"{cls} ({summary.describe()})"
        return Step(op, summary, f"'func.call' calls @{callee}, which is {what}")

    def steps(self, function: func.FuncOp) -> Iterator[Step]:
        """Each op's contribution in program order (nested ops after their parent)."""
        for op in function.body.walk():
            step = self.op_step(op)
            if step is not None and step.footprint != NEUTRAL:
                yield step

    # ---- phase 2 ------------------------------------------------------------------

    def _solve(self) -> None:
        order = self._callees_first()
        changed = True
        while changed:
            changed = False
            for name in order:
                summary = NEUTRAL
                for step in self.steps(self.functions[name]):
                    summary = summary.join(step.footprint)
                if summary != self.summaries[name]:
                    self.summaries[name] = summary
                    changed = True

    def _callees_first(self) -> list[str]:
        order: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            seen.add(name)
            for callee in self.callees(name):
                if callee not in seen:
                    visit(callee)
            order.append(name)

        for name in self.functions:
            if name not in seen:
                visit(name)
        return order

    def callees(self, name: str) -> list[str]:
        """Functions of this module that `name` calls, in program order."""
        found = self._callees.get(name)
        if found is None:
            found = self._callees[name] = []
            for op in self.functions[name].body.walk():
                if isinstance(op, func.CallOp):
                    callee = op.callee.root_reference.data
                    if callee in self.functions and callee not in found:
                        found.append(callee)
        return found

    # ---- phase 3 ------------------------------------------------------------------

    def summary(self, function: func.FuncOp) -> Footprint:
        return self.summaries[function.sym_name.data]

    def region_class(self, function: func.FuncOp) -> str:
        return self.summary(function).region_class

    def deciding_step(self, function: func.FuncOp) -> Step | None:
        """The first op after which the body's prefix has the function's final class."""
        final = self.region_class(function)
        if final == "host":
            return None
        prefix = NEUTRAL
        for step in self.steps(function):
            before = prefix
            prefix = prefix.join(step.footprint)
            if prefix.region_class == final:
                return _with_context(step, before)
        return None

    def target_of(self, function: func.FuncOp) -> TargetAttr:
        """The target of a device program (phase 3); a located error when unknown."""
        key = self.summary(function).device
        assert key is not None, "only device programs have a target"
        target = self._written_target(function, key)
        if target is None:
            target = self._module_target(key[0])
        if target is None:
            target = self._kernel_target(function, key)
        if target is None:
            target = self._default_target(key[0])
        if target is None:
            raise error_at(
                function,
                f"cannot tell the target of device program @{function.sym_name.data} "
                f"for {device_name(key)}: write it on the device "
                f'(#vdev.device<"{key[0]}", {key[1] if key[1] is not None else "?"}, '
                f"#target.target<...>>), list it in the module's vdev.targets, or "
                f"launch kernels of a kernel.module with a target",
            )
        if key == self.host_key or target.host_target is not None:
            return target
        host = self.host_device.target_value or TargetAttr.from_config({"kind": "llvm"})
        return target.with_host(host.without_host())

    def _device_programs(self, function: func.FuncOp) -> list[func.FuncOp]:
        """`function` and the device programs it calls, transitively."""
        found = [function]
        seen = {function}
        index = 0
        while index < len(found):
            for callee in self.callees(found[index].sym_name.data):
                f = self.functions[callee]
                if f not in seen and self.region_class(f) == "device":
                    found.append(f)
                    seen.add(f)
            index += 1
        return found

    def _named_devices(self, function: func.FuncOp) -> list[tuple[DeviceAttr, Operation]]:
        """Every `#vdev.device` with a target that `function`'s ops name, with the op."""
        found = self._devices.get(function)
        if found is None:
            found = self._devices[function] = [
                (device, op)
                for op in function.body.walk()
                for device in _device_attrs(op)
                if device.target_value is not None
            ]
        return found

    def _written_target(self, function: func.FuncOp, key: DeviceKey) -> TargetAttr | None:
        seen: dict[TargetAttr, Operation] = {}
        for f in self._device_programs(function):
            for device, op in self._named_devices(f):
                if device.type_name == key[0] and device.device_id in (None, key[1]):
                    assert device.target_value is not None
                    seen.setdefault(device.target_value, op)
        if len(seen) > 1:
            (first, _), (second, op) = list(seen.items())[:2]
            raise error_at(
                op,
                f"device program @{function.sym_name.data} names two targets for "
                f"{device_name(key)}: {first} and {second}",
            )
        return next(iter(seen), None)

    def _module_target(self, device_type: str) -> TargetAttr | None:
        targets = self.module.attributes.get("vdev.targets")
        if not isa(targets, ArrayAttr[Attribute]):
            return None
        for target in targets.data:
            if isinstance(target, TargetAttr) and target.device_type == device_type:
                return target
        return None

    def _default_target(self, device_type: str) -> TargetAttr | None:
        """The one target of this device type's kernel.modules, else the kind named
        like the device type (`cuda`, `rocm`, a user's `dsp`) when it is registered."""
        found = {
            op.target
            for op in self.module.walk()
            if isinstance(op, KernelModuleOp) and op.target.device_type == device_type
        }
        if len(found) == 1:
            return found.pop()
        if found:
            return None
        try:
            target = TargetAttr.from_config({"kind": device_type})
        except TargetError:
            return None
        return target if target.device_type == device_type else None

    def _kernel_target(self, function: func.FuncOp, key: DeviceKey) -> TargetAttr | None:
        for f in self._device_programs(function):
            for op in f.body.walk():
                if isinstance(op, dev.LaunchOp):
                    kernel = lookup_kernel(op, op.kernel)
                    module = kernel.parent_op() if kernel is not None else None
                    if isinstance(module, KernelModuleOp):
                        return module.target
        return None


def _with_context(step: Step, before: Footprint) -> Step:
    """The deciding step, its reason extended by what came before it."""
    if before == NEUTRAL:
        return step
    return Step(step.op, step.footprint, f"{step.reason}, beside work on {before.describe()}")


def _values(op: Operation) -> Iterable[SSAValue]:
    yield from op.operands
    yield from op.results


def _memref_types(values: Iterable[SSAValue]) -> list[MemRefType[Attribute]]:
    # isinstance, not isa(..., MemRefType[Attribute]): this runs for every operand of
    # every op, and the generic check would be most of the pass's time on long call chains.
    types: list[Attribute] = [v.type for v in values]
    return [cast(MemRefType[Attribute], t) for t in types if isinstance(t, MemRefType)]


def _device_attrs(op: Operation) -> Iterator[DeviceAttr]:
    """Every `#vdev.device` an op names: its launch device and its memrefs' spaces."""
    if isinstance(op, dev.LaunchOp):
        yield op.device
    for memref in _memref_types(_values(op)):
        space = memory_space_of(memref)
        if space is not None:
            yield space
