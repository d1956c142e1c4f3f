"""Fixtures several test files share, and the suite's rules on threads and skips.

pytest runs with `--import-mode=importlib`, so test files cannot import a helper module;
what they share is offered here as fixtures.

* Numba gets two threads at least (`NUMBA_NUM_THREADS`, read when Numba is first
  imported), so that the tests of blocks run in parallel run on a one-core machine too.
* A skipped test fails, unless its file is in `LEGITIMATE_SKIPS` (a skip hides what the
  test checks: a runner without threads, a test file that moved); the legitimate skips
  are listed with their reason at the end of the run.
* `DEVPLAN_TEST_PROFILE=FILE` appends one JSON line a test to FILE: its CPU seconds (the
  process's and its waited-for children's), and each kernel compile block it ran
  (`compile_clock.compiles()`, wall seconds); and one line a process when collection
  ends, with the CPU spent until then (imports and collection).
"""

from __future__ import annotations

import json
import os
import resource

if int(os.environ.get("NUMBA_NUM_THREADS") or 0) < 2 and (os.cpu_count() or 1) < 2:
    os.environ["NUMBA_NUM_THREADS"] = "2"

from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path

import pytest

from devplan.runtime import compile_clock
from devplan.system.description import System

LEGITIMATE_SKIPS = {
    "runtime/kernels/test_cuda_backend_ptx.py": "it needs NVIDIA's NVVM and NVRTC compilers",
}
"""The test files (relative to tests/) that may skip, and why."""

_TESTS = Path(__file__).resolve().parent


def _skip_allowed(path: Path) -> bool:
    try:
        return path.resolve().relative_to(_TESTS).as_posix() in LEGITIMATE_SKIPS
    except ValueError:
        return False


def _fail_a_skip(report: pytest.TestReport | pytest.CollectReport, path: Path) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and not _skip_allowed(path):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (
            f"{report.nodeid} was skipped ({reason}): a skip hides what the test checks, so "
            f"it fails; only the files of LEGITIMATE_SKIPS in tests/conftest.py may skip"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _fail_a_skip(report, item.path)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _fail_a_skip(report, collector.path)
    return report


_PROFILE = os.environ.get("DEVPLAN_TEST_PROFILE")


def _cpu_seconds() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _profile(line: dict[str, object]) -> None:
    if _PROFILE:
        with open(_PROFILE, "a", encoding="utf-8") as sink:
            sink.write(json.dumps({"pid": os.getpid(), **line}) + "\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    own, children = _cpu_seconds()
    _profile({"collected": len(session.items), "cpu": own, "children_cpu": children})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    if not _PROFILE:
        return (yield)
    blocks = len(compile_clock.compiles())
    own, children = _cpu_seconds()
    result = yield
    own_after, children_after = _cpu_seconds()
    compiled = compile_clock.compiles()[blocks:]
    _profile(
        {
            "test": item.nodeid,
            "cpu": own_after - own,
            "children_cpu": children_after - children,
            "compiles": compiled,
        }
    )
    return result


LONGEST_FIRST = (
    "test_differential_fuzz.py",
    "runtime/kernels/test_cuda_backend.py",
    "runtime/kernels/test_loop_structure.py",
    "runtime/test_op_semantics.py",
    "runtime/kernels/test_backend_agreement.py",
    "passes/lower_to_device/test_generic_kernel.py",
    "test_examples.py",
    "test_packaging.py",
)
"""Files whose tests run longest (tens of seconds each, cold), run first: `make test`'s
workers steal the short tests left at the end, so no worker finishes one long test alone
while the other idles (the order otherwise cost ~1.5 minutes of a cold 2-core run)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        try:
            path = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:
            return len(LONGEST_FIRST)
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file keeps its order, files their relative order


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Each file's legitimate skips, with their reason, whatever the `-r` option."""
    reasons: dict[str, list[str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
        reasons.setdefault(str(report.nodeid).split("::")[0], []).append(reason)
    for name, found in sorted(reasons.items()):
        for reason in sorted(set(found)):
            count = found.count(reason)
            terminalreporter.write_line(f"skipped {count} in {name}: {reason}")


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
