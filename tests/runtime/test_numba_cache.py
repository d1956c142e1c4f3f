"""The shared Numba cache: entries saved at once by several processes all stay right, and a
corrupt or foreign entry is compiled again, never used."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from devplan.runtime import numba_cache
from devplan.runtime.numba_cache import _KeyedCacheFile  # pyright: ignore[reportPrivateUsage]

STAMP = (1.0, 100)
"""A source stamp (modification time, size), as Numba keeps for the function's file."""


def cache_file(directory: Path) -> _KeyedCacheFile:
    return _KeyedCacheFile(str(directory), "module.f-3.py311", STAMP)


def test_two_saves_at_once_keep_both_entries(tmp_path: Path) -> None:
    """Two processes (two cache files on one directory) write their data, then both update
    the index: each key still loads its own data."""
    first, second = cache_file(tmp_path), cache_file(tmp_path)
    both_written = threading.Barrier(2)
    for cache in (first, second):
        save_data = cache._save_data  # pyright: ignore[reportPrivateUsage]

        def wait_after(name: str, data: object, save_data: Any = save_data) -> None:
            save_data(name, data)
            both_written.wait(timeout=10)

        cache._save_data = wait_after  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    threads = [
        threading.Thread(target=first.save, args=(("f32",), "code for f32")),
        threading.Thread(target=second.save, args=(("f64",), "code for f64")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fresh = cache_file(tmp_path)
    assert fresh.load(("f32",)) == "code for f32"
    assert fresh.load(("f64",)) == "code for f64"


def test_an_entry_holding_another_keys_code_is_a_miss(tmp_path: Path) -> None:
    cache = cache_file(tmp_path)
    cache.save(("f32",), "code for f32")
    cache.save(("f64",), "code for f64")
    names = {p.name for p in tmp_path.glob("*.nbc")}
    assert len(names) == 2
    f32, f64 = (cache._keyed_name(k) for k in (("f32",), ("f64",)))  # pyright: ignore[reportPrivateUsage]
    (tmp_path / f64).write_bytes((tmp_path / f32).read_bytes())
    assert cache.load(("f64",)) is None
    assert cache.load(("f32",)) == "code for f32"


def test_a_truncated_entry_or_index_is_a_miss(tmp_path: Path) -> None:
    cache = cache_file(tmp_path)
    cache.save(("f32",), "code for f32")
    data = tmp_path / cache._keyed_name(("f32",))  # pyright: ignore[reportPrivateUsage]
    data.write_bytes(data.read_bytes()[:5])
    assert cache.load(("f32",)) is None
    cache.save(("f32",), "code for f32")
    assert cache.load(("f32",)) == "code for f32"
    index = next(tmp_path.glob("*.nbi"))
    index.write_bytes(index.read_bytes()[:7])
    assert cache.load(("f32",)) is None


WORKER = """
import sys, time
import numpy as np
from devplan.runtime import semantics
start, order = float(sys.argv[1]), sys.argv[2].split(",")
while time.time() < start:
    pass
for dtype in order:
    x = np.linspace(-3, 3, 7).astype(dtype)
    semantics.scalar("math.sinh")(x[1])
    semantics.ufunc("math.sinh")(x)
"""


def test_processes_compiling_at_once_into_one_cache_all_load_right_code(tmp_path: Path) -> None:
    """Four processes compile the scalar and the vectorised form of one semantics function
    (which share a cache index) for f32 and f64 in different orders, at once, into one
    empty cache; a fifth loads them and gets, bit for bit, what a process without a cache
    computes."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    orders = ["float32,float64", "float64,float32"] * 2
    start = f"{time.time() + 3:.3f}"
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, start, order], env=_env(env))
        for order in orders
    ]
    assert [w.wait(timeout=300) for w in workers] == [0, 0, 0, 0]
    check = textwrap.dedent("""
        import numpy as np
        from devplan.runtime import semantics
        for dtype in ("float32", "float64"):
            x = np.linspace(-3, 3, 7).astype(dtype)
            scalar = np.asarray(semantics.scalar("math.sinh")(x[1]), dtype)
            print(dtype, scalar.view(f"u{x.itemsize}").tolist(),
                  semantics.ufunc("math.sinh")(x).view(f"u{x.itemsize}").tolist())
    """)
    cached = subprocess.run(
        [sys.executable, "-c", check], env=_env(env), capture_output=True, text=True, check=True
    )
    fresh = subprocess.run(
        [sys.executable, "-c", check],
        env=_env({"NUMBA_DISABLE_CACHE": "1", "NUMBA_CACHE_DIR": str(tmp_path / "unused")}),
        capture_output=True,
        text=True,
        check=True,
    )
    assert cached.stdout == fresh.stdout
    assert cached.stdout.count("\n") == 2


def _env(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **extra}


def test_without_numba_cache_dir_the_cache_is_kept_out_of_the_source_tree(tmp_path: Path) -> None:
    """With `NUMBA_CACHE_DIR` unset, the compiled semantics functions are cached under
    devplan's cache directory, and nothing is written beside devplan's source files (Numba
    alone would write into `runtime/__pycache__`)."""
    source = Path(numba_cache.__file__).parent / "__pycache__"
    before = sorted(source.glob("*.nb?")) if source.exists() else []
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["DEVPLAN_CACHE_DIR"] = str(tmp_path)
    run = "from devplan.runtime import semantics; semantics.scalar('math.cosh')(0.5)"
    subprocess.run([sys.executable, "-c", run], env=env, check=True)
    cached = [p.name for p in (tmp_path / "numba").rglob("*.nbi")]
    assert any(name.startswith("semantics.def_math_cosh") for name in cached), cached
    after = sorted(source.glob("*.nb?")) if source.exists() else []
    assert after == before


def _wrapped(x: Any, width: Any) -> Any:
    return (x + (1 << width)) % (1 << width)


def _at_three_widths(wrapped: Any) -> Any:
    """A compiled function calling `wrapped` with three constant widths."""
    import numba  # pyright: ignore[reportMissingTypeStubs]

    def three_widths(x: Any) -> Any:
        return wrapped(x, 8), wrapped(x, 16), wrapped(x, 32)

    return numba.njit(three_widths)  # pyright: ignore[reportUnknownMemberType]


def test_a_by_type_function_is_compiled_once_for_all_constants_at_its_call_sites() -> None:
    """Called from compiled code with constant widths (typed as their literal values), a
    `by_type` function compiles one specialisation for int64, where Numba's dispatcher
    compiles one per constant (kernels calling `semantics`' definitions paid seconds for
    them); the results are those of each call."""
    for by_type, compiled in ((True, 1), (False, 3)):
        wrapped: Any = numba_cache.njit(cache=False, by_type=by_type)(_wrapped)
        assert _at_three_widths(wrapped)(-1) == (255, 65535, 2**32 - 1)
        assert len(wrapped.overloads) == compiled, by_type
