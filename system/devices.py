"""A device's identity: its type name and id (TVM's `DLDevice`), as "cuda:0" prints it.

The system description, the cost model and the runtime all name devices this way; the
runtime's DeviceAPIs serve one `Device` each.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import DevplanError


class DeviceNameError(DevplanError, ValueError):
    """Text that does not name a device as "type:id"."""


@dataclass(frozen=True, order=True)
class Device:
    """TVM's `DLDevice`: a device type name and an id; prints as "cuda:0"."""

    type: str
    id: int = 0

    def __str__(self) -> str:
        return f"{self.type}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> Device:
        """ "cuda:0" → Device("cuda", 0); "cuda" → Device("cuda", 0)."""
        kind, _, index = text.partition(":")
        if not kind or (index and not index.isdigit()):
            raise DeviceNameError(f"malformed device '{text}': expected 'type:id' such as 'cuda:0'")
        return cls(kind, int(index) if index else 0)


__all__ = ["Device", "DeviceNameError"]
