"""A device's identity (`system/devices.py`): "type:id" text and back."""

from __future__ import annotations

import pytest

from devplan.system.devices import Device, DeviceNameError


def test_device_prints_as_type_colon_id() -> None:
    assert str(Device("cuda", 1)) == "cuda:1"
    assert Device.parse("cuda:1") == Device("cuda", 1)
    assert Device.parse("cpu") == Device("cpu", 0)


def test_device_parse_rejects_malformed_text() -> None:
    with pytest.raises(DeviceNameError, match=r"malformed device 'cuda:x': expected 'type:id'"):
        Device.parse("cuda:x")
