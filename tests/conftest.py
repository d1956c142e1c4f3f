"""Fixtures several test files share.

pytest runs with `--import-mode=importlib`, so test files cannot import a helper module;
what they share is offered here as fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pytest

from devplan.system.description import System

HOST_TOML = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "1 GiB" }
"""
"""The host of every `simulated_system`: cpu:0, an llvm target, 1 GiB of global memory."""

Link = tuple[str, str, str, str]
"""Two device names, a bandwidth and a latency: `("cpu:0", "cuda:0", "10 GB/s", "1 us")`."""


def _device_toml(name: str, scopes: Mapping[str, str]) -> str:
    type_name, device_id = name.split(":")
    listed = ", ".join(f'{scope} = "{size}"' for scope, size in scopes.items())
    return (
        f'\n[[device]]\ntype = "{type_name}"\nid = {device_id}\n'
        f'target = {{ kind = "{type_name}" }}\napi = "simulated"\nscopes = {{ {listed} }}\n'
    )


def _link_toml(link: Link) -> str:
    a, b, bandwidth, latency = link
    return (
        f'\n[[link]]\nbetween = ["{a}", "{b}"]\nbandwidth = "{bandwidth}"\nlatency = "{latency}"\n'
    )


def simulated_system_toml(
    devices: Mapping[str, Mapping[str, str]], links: Sequence[Link] | None = None
) -> str:
    """The TOML of the `cpu:0` host (`HOST_TOML`) plus one simulated device per entry
    of `devices` (`"cuda:0"` -> its scopes and sizes; the target kind is the device
    type) and `links`; without `links`, each device is linked to the host at
    10 GB/s and 1 us."""
    if links is None:
        links = [("cpu:0", name, "10 GB/s", "1 us") for name in devices]
    return (
        HOST_TOML
        + "".join(_device_toml(name, scopes) for name, scopes in devices.items())
        + "".join(_link_toml(link) for link in links)
    )


@pytest.fixture(scope="session")
def simulated_system() -> Callable[..., System]:
    """`simulated_system(devices, links=None)`: a `System` of the cpu:0 host and
    simulated devices, e.g. `simulated_system({"cuda:0": {"global": "1 KiB"}})`
    (see `simulated_system_toml` for the arguments)."""

    def build(
        devices: Mapping[str, Mapping[str, str]], links: Sequence[Link] | None = None
    ) -> System:
        return System.from_text(simulated_system_toml(devices, links), "simulated.toml")

    return build
