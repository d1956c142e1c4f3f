"""What one run of elide-copies removed, and the least a placement must move."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ...analysis.memory_areas import MemoryAreas, byte_size
from ...dialects.placement import value_device
from ...dialects.vdev import DeviceCopyOp
from ...dialects.virtual_device import DeviceAttr
from .block_facts import CopyOps
from .decisions import Elide


@dataclass
class Statistics:
    """What one run removed."""

    before: int = 0
    after: int = 0
    iterations: int = 0
    removed: Counter[str] = field(default_factory=Counter[str])
    bytes: Counter[str] = field(default_factory=Counter[str])
    dynamic: Counter[str] = field(default_factory=Counter[str])
    rerouted: int = 0

    def record(self, decision: Elide) -> None:
        if not decision.removes:
            self.rerouted += 1
            return
        self.removed[decision.rule] += 1
        copied = (
            decision.copy.operands[-1]
            if isinstance(decision.copy, CopyOps)
            else decision.copy.results[0]
        )
        size = byte_size(copied.type)
        if size is None:
            self.dynamic[decision.rule] += 1
        else:
            self.bytes[decision.rule] += size

    def text(self) -> str:
        total = sum(self.removed.values())
        lines = [
            f"elide-copies: removed {total} of {self.before} copies "
            f"({sum(self.bytes.values())} bytes per execution) in {self.iterations} "
            f"iteration(s); {self.after} left"
        ]
        for rule, count in sorted(self.removed.items()):
            dynamic = f", {self.dynamic[rule]} of dynamic size" if self.dynamic[rule] else ""
            lines.append(f"  {rule}: {count} ({self.bytes[rule]} bytes{dynamic})")
        if self.rerouted:
            lines.append(f"  rerouted to a cheaper route: {self.rerouted}")
        return "\n".join(lines)


def _consumers(value: SSAValue) -> Iterator[DeviceAttr]:
    """Where `value`'s data is read by an op that is not a copy (through copies): the
    place of the value that op reads."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, DeviceCopyOp):
            yield from _consumers(user.result)
        elif (device := value_device(value)) is not None:
            yield device


def necessary_bytes(module: ModuleOp, areas: MemoryAreas, runs: dict[str, int]) -> int:
    """The lower bound of bytes a planned level-1 module must move:
    for each value (not a copy's, not a constant's: constants are cloned per device),
    its size times the number of memory areas other than its own where it is read,
    times `runs[f]`, how often its function `f` runs."""
    total = 0
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        values: list[SSAValue] = list(function.body.blocks[0].args)
        for op in function.walk():
            if not isinstance(op, DeviceCopyOp | arith.ConstantOp | func.FuncOp):
                values += op.results
        for value in values:
            own = value_device(value)
            size = byte_size(value.type)
            if own is None or size is None:
                continue
            elsewhere: list[DeviceAttr] = []
            for device in _consumers(value):
                if not any(areas.one_area(device, d) for d in (own, *elsewhere)):
                    elsewhere.append(device)
            total += size * len(elsewhere) * runs.get(function.sym_name.data, 0)
    return total
