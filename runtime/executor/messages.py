"""How the executor's run-time errors name places, buffers and causes.

An error raised by the runtime (a DeviceAPI, the scheduler) knows no IR; the step that
called it re-raises it placed at its op (`placed_at`), naming buffers by their SSA name
and the place they were made (`buffer_label`).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ...diagnostics import DevplanError, LocatedError, error_at, location_of
from ..errors import DeviceLostError, LocatedDeviceLostError


def reason(error: BaseException) -> str:
    """An error's message without a leading "error: " (it is re-placed at an op)."""
    return str(error).removeprefix("error: ")


def placed_at(op: Operation, error: DevplanError) -> LocatedError:
    """`error` from the runtime, placed at `op` (kept as is when it is already placed)."""
    if isinstance(error, LocatedError):
        return error
    placed = error_at(op, f"'{op.name}' {reason(error)}")
    if isinstance(error, DeviceLostError):
        return LocatedDeviceLostError(str(placed))  # callers may catch a lost device by kind
    return placed


def ssa_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a buffer"


def buffer_label(value: SSAValue, op: Operation) -> str:
    """How a buffer is named in messages: its SSA name and where it was made."""
    return f"{ssa_name(value)} at {place_of(op)}"


def place_of(op: Operation) -> str:
    """`file:line:col` of `op`, for run-time messages."""
    loc = location_of(op)
    return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}" if loc else "<unknown>"
