"""The run-time errors of devices, and how their messages name memory and operations.

Every error a DeviceAPI, a stream or the scheduler raises is a `DeviceError`; its text
names the device, the scope and the buffer or operation. Messages are formatted only when
an error is raised: operations carry a `Name` (text, or a function making it), so the
checks of a run that goes well cost no string formatting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from ..diagnostics import DevplanError, LocatedError

Name: TypeAlias = "str | Callable[[], str] | object"
"""How a memory or an operation is named in messages: a string, a function making one,
or an object whose `str()` is the name (a `Buffer`). Formatted only when an error is
raised, so submissions and host checks that pass do not pay for the text."""


def name_text(name: Name) -> str:
    """The text of a `Name` (see there)."""
    if isinstance(name, str):
        return name
    if callable(name):
        return str(name())
    return str(name)


class DeviceError(DevplanError):
    """A run-time error of a device: its text names the device, scope and buffer."""


class UseAfterFreeError(DeviceError):
    """A buffer used after it was freed."""


class DoubleFreeError(DeviceError):
    """A buffer freed twice."""


class WrongDeviceError(DeviceError):
    """A buffer or stream handed to the API of a device it does not belong to."""


class OutOfDeviceMemoryError(DeviceError):
    """An allocation beyond the capacity of a device's memory scope."""


class CopySizeError(DeviceError):
    """A copy between buffers whose byte sizes differ, or a non-contiguous host array."""


class HostAccessError(DeviceError):
    """The host touched memory only the device can see (or a kernel touched host memory)."""


class UnknownDeviceAPIError(DeviceError):
    """No DeviceAPI registered under a name."""


class DeviceLostError(DeviceError):
    """A device that stopped answering (a Ray actor that died or passed its deadline): its
    memory and pending work are gone; the message names the device and its node."""


class LocatedDeviceLostError(LocatedError, DeviceLostError):
    """A lost device as the executor reports it: placed at the op that needed the device."""


class StreamError(DeviceError):
    """A stream was used wrongly (freed, of another device, ...)."""


class RaceError(DeviceError):
    """Two unordered async operations touch one buffer and at least one writes it."""


class PendingWriteError(DeviceError):
    """The host touches memory that an async operation has not finished with."""


__all__ = [
    "CopySizeError",
    "DeviceError",
    "DeviceLostError",
    "DoubleFreeError",
    "HostAccessError",
    "LocatedDeviceLostError",
    "Name",
    "OutOfDeviceMemoryError",
    "PendingWriteError",
    "RaceError",
    "StreamError",
    "UnknownDeviceAPIError",
    "UseAfterFreeError",
    "WrongDeviceError",
    "name_text",
]
