"""The on-disk kernel cache: a second process loads compiled kernels instead of compiling."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels import kernel_cache
from devplan.runtime.kernels.compile import compile_kernel

SCALE = """
kernel.func @scale(%x: memref<?xf64>, %k: f64) {
  %i = kernel.thread_id x
  %v = memref.load %x[%i] : memref<?xf64>
  %w = arith.mulf %v, %k : f64
  memref.store %w, %x[%i] : memref<?xf64>
  kernel.return
}
"""

RUN_ONCE = f"""
import json, sys
import numpy as np
import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.kernels.numba_source import NumbaSource
generated = []
original = NumbaSource.generate
NumbaSource.generate = lambda self: generated.append(1) or original(self)
module = devplan.parse('kernel.module @k target #target.target<"cuda"> {{' + {SCALE!r} + '}}')
func = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
x = np.arange(4.0)
compile_kernel(func, "numba")((1, 1, 1), (4, 1, 1), [x, 2.0])
assert x.tolist() == [0.0, 2.0, 4.0, 6.0]
blocks = next(m for n, m in sys.modules.items() if n.startswith("devplan_kernel_")).blocks_fast
print(json.dumps({{"hits": sum(blocks.stats.cache_hits.values()),
                  "misses": sum(blocks.stats.cache_misses.values()),
                  "generated": len(generated)}}))
"""


def run_in_new_process(cache: Path) -> dict[str, int]:
    env = dict(os.environ, DEVPLAN_CACHE_DIR=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", RUN_ONCE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_a_second_process_loads_the_kernel_compiled_by_the_first(tmp_path: Path) -> None:
    first = run_in_new_process(tmp_path)
    assert first == {"hits": 0, "misses": 1, "generated": 1}
    assert list(tmp_path.glob("k*.py"))
    second = run_in_new_process(tmp_path)
    assert second == {"hits": 1, "misses": 0, "generated": 0}  # found by the kernel's IR


def test_cache_dir_follows_devplan_cache_dir_and_clear_empties_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEVPLAN_CACHE_DIR", str(tmp_path / "cache"))
    assert kernel_cache.cache_dir() == tmp_path / "cache"
    path = kernel_cache.module_path("x = 1\n", "test")
    assert path is not None
    assert path.parent == tmp_path / "cache"
    assert path.read_text() == "x = 1\n"
    kernel_cache.clear()
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("DEVPLAN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache.cache_dir() == tmp_path / "xdg" / "devplan" / "kernels"


def test_an_unwritable_cache_dir_compiles_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DEVPLAN_CACHE_DIR", str(blocker / "cache"))
    assert kernel_cache.module_path("x = 1\n", "test") is None
    module = devplan.parse('kernel.module @k target #target.target<"cuda"> {' + SCALE + "}")
    func = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    x = np.arange(3.0)
    compile_kernel(func, "numba")((1, 1, 1), (3, 1, 1), [x, 3.0])
    assert x.tolist() == [0.0, 3.0, 6.0]


def test_a_cached_module_is_loaded_from_its_byte_code_not_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEVPLAN_CACHE_DIR", str(tmp_path))
    text = "VALUE = 6 * 7\n"
    namespace = kernel_cache.load_module(text, "test")
    assert namespace is not None
    assert namespace["VALUE"] == 42
    (code_file,) = tmp_path.glob("k*.code")
    assert code_file.read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    # As a new process would: the module is not imported yet, and compiling is an error.
    name = namespace["__name__"]
    monkeypatch.delitem(sys.modules, name)

    def no_compile(*args: object) -> None:
        raise AssertionError("the cached module was compiled again")

    monkeypatch.setattr(kernel_cache, "compile", no_compile, raising=False)
    again = kernel_cache.load_module(text, "test")
    assert again is not None
    assert again["VALUE"] == 42
    assert again["__file__"] == str(code_file.with_suffix(".py"))


def test_a_damaged_byte_code_file_is_replaced_by_compiling_the_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEVPLAN_CACHE_DIR", str(tmp_path))
    text = "VALUE = 'kept'\n"
    namespace = kernel_cache.load_module(text, "test")
    assert namespace is not None
    (code_file,) = tmp_path.glob("k*.code")
    code_file.write_bytes(importlib.util.MAGIC_NUMBER + b"\x00garbage")
    monkeypatch.delitem(sys.modules, namespace["__name__"])
    again = kernel_cache.load_module(text, "test")
    assert again is not None
    assert again["VALUE"] == "kept"
    assert code_file.read_bytes() != importlib.util.MAGIC_NUMBER + b"\x00garbage"


FAULT_ONCE = f"""
import numpy as np
import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import compile_kernel
module = devplan.parse('kernel.module @k target #target.target<"cuda"> {{' + {SCALE!r} + '}}')
func = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
try:
    compile_kernel(func, "numba")((1, 1, 1), (5, 1, 1), [np.arange(4.0), 2.0])
except KernelError as e:
    print(e)
"""


def test_a_kernel_loaded_by_a_second_process_reports_the_fault_the_first_reported(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, DEVPLAN_CACHE_DIR=str(tmp_path))
    command = [sys.executable, "-c", FAULT_ONCE]
    first, second = (
        subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    )
    assert "out-of-bounds load" in first
    assert "thread (4, 0, 0)" in first
    assert second == first
