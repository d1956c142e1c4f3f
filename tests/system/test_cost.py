"""The one cost model (runtime/cost.py): device throughput, roofline kernels, routed copies."""

from __future__ import annotations

import pytest

from devplan.system.cost import (
    DEFAULT_THROUGHPUT_BY_TAG,
    DEFAULT_THROUGHPUT_BY_TYPE,
    CostModel,
    LinkCost,
    NoLinkError,
    Throughput,
)
from devplan.system.description import System, SystemDescriptionError

CPU = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "1 GiB" }
"""

GPU = """
[[device]]
type = "cuda"
id = {id}
target = { kind = "cuda", arch = "sm_80" }
api = "simulated"
scopes = { global = "16 GiB" }
"""


def _gpu(device_id: int, extra: str = "") -> str:
    return GPU.replace("{id}", str(device_id)) + extra


def test_roofline_is_launch_latency_plus_the_slower_roof() -> None:
    device = Throughput(peak_flops=1e12, memory_bandwidth=1e11, launch_latency=5e-6)
    assert device.seconds(2e12, 1e9) == pytest.approx(5e-6 + 2.0)  # compute bound
    assert device.seconds(1e6, 1e11) == pytest.approx(5e-6 + 1.0)  # memory bound


def test_system_keys_override_the_defaults_of_the_type() -> None:
    extra = 'peak_gflops = 500\nmemory_bandwidth = "100 GB/s"\nlaunch_latency = "2 us"\n'
    system = System.from_text(CPU + _gpu(0, extra))
    assert system.device_named("cuda:0").throughput == Throughput(500e9, 100e9, 2e-6)
    assert system.device_named("cpu:0").throughput == DEFAULT_THROUGHPUT_BY_TYPE["cpu"]


def test_built_in_tags_have_their_own_defaults() -> None:
    a100 = System.default().device_named("cuda:0")
    assert a100.throughput == DEFAULT_THROUGHPUT_BY_TAG["nvidia/nvidia-a100"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("peak_gflops = -1\n", "peak_gflops: expected a positive number such as 19500, got -1"),
        ('peak_gflops = "fast"\n', "peak_gflops: expected a positive number"),
        # TOML's nan and inf were accepted: the report's kernel times read "nan us".
        ("peak_gflops = nan\n", "peak_gflops: expected a positive number such as 19500, got nan"),
        ("peak_gflops = inf\n", "peak_gflops: expected a positive number such as 19500, got inf"),
        ('memory_bandwidth = "lots"\n', "memory_bandwidth: bad bandwidth"),
        ("launch_latency = 5\n", "launch_latency: "),
    ],
)
def test_bad_throughput_keys_name_the_entry_and_key(extra: str, message: str) -> None:
    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(CPU + _gpu(0, extra), "sys.toml")
    assert str(info.value).startswith(f"sys.toml: device[1]: {message}")


def test_copies_without_a_direct_link_are_routed_through_the_host() -> None:
    model = CostModel(
        [LinkCost("cpu:0", "cuda:0", 1e9, 1e-5), LinkCost("cpu:0", "cuda:1", 2e9, 2e-5)]
    )
    assert model.copy_seconds("cuda:0", "cuda:0", 10**9) == 0.0
    assert model.copy_seconds("cpu:0", "cuda:0", 10**9) == pytest.approx(1e-5 + 1.0)
    assert model.copy_seconds("cuda:0", "cuda:1", 10**9) == pytest.approx(1e-5 + 1.0 + 2e-5 + 0.5)
    with pytest.raises(NoLinkError, match="no link between them"):
        CostModel([LinkCost("cpu:0", "cuda:0", 1e9, 0.0)]).copy_seconds("cuda:0", "cuda:7", 1)


def test_system_cost_model_has_its_links_and_devices() -> None:
    link = '[[link]]\nbetween = ["cpu:0", "cuda:0"]\nbandwidth = "1 GB/s"\nlatency = "1 ms"\n'
    model = System.from_text(CPU + _gpu(0, "peak_gflops = 1000\n") + link).cost_model()
    assert model.copy_seconds("cuda:0", "cpu:0", 10**6) == pytest.approx(1e-3 + 1e-3)
    assert model.throughput("cuda:0").peak_flops == 1e12
