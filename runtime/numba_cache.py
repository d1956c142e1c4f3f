"""Numba's on-disk cache, safe for any number of processes sharing one cache directory.

Numba saves a compiled function by reading the function's index file, taking the first
data-file number the index does not use, writing the data file and then the index, with no
lock. Two processes that compile two signatures of one function at once can both take the
same number: the index then maps one signature to the other signature's machine code, for
good (a shared `NUMBA_CACHE_DIR` under pytest-xdist served f32 code for an f64 call this
way). The functions devplan compiles use `SharedFunctionCache` instead of Numba's own:

* a data file is named by a hash of the entry's key (signature, target, byte code), never by
  a free number, and holds the key beside the code: an entry can only be overwritten by the
  same key's code, and a load checks the key before it trusts the file;
* the index is updated under an exclusive `flock`, so concurrent saves all keep their
  entries; data and index files are written whole (a temporary file, then a rename);
* an index or data file that cannot be read, or holds another key, is a cache miss: the
  function is compiled again and the entry rewritten, never used.

Its files carry a name of their own (`<function>-<line>.devplan.nbi`), so a Numba that
caches the same functions the usual way never reads them. They are kept where
`NUMBA_CACHE_DIR` says when it is set; otherwise those of functions in devplan's own source
files go under devplan's cache directory (`cache_location.py`), not into a `__pycache__`
folder beside the source as Numba would put them (an installed or checked-out package is
not a place to write to).

A function loaded from this cache is loaded without Numba's refresh of its target context
(which imports every lowering registry Numba has, an eighth of a warm devplan-run), unless
it is a ufunc's loop (`SharedFunctionCache.load_overload`).

`njit(...)` and `vectorize(signatures, ...)` are Numba's decorators with this cache.
`njit(by_type=True)` also compiles a function called from compiled code once per argument
*types*: Numba's own dispatcher compiles a callee again for every combination of constant
arguments at its call sites (a constant is typed as its literal value), so a kernel calling
`int_fault(op, flags, x, y, width)` at twelve sites compiled it twelve times, each with its
own callees, and a kernel's first compile spent seconds on them. LLVM inlines the callee
into the caller either way, where the constants fold as they did in the specialisations.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any, cast

import numba  # pyright: ignore[reportMissingTypeStubs]
from numba.core import config as numba_config  # pyright: ignore[reportMissingTypeStubs]
from numba.core import types  # pyright: ignore[reportMissingTypeStubs]
from numba.core.caching import (  # pyright: ignore[reportMissingTypeStubs]
    FunctionCache,
    IndexDataCacheFile,
)
from numba.core.registry import CPUDispatcher  # pyright: ignore[reportMissingTypeStubs]
from numba.core.runtime.nrt import rtsys  # pyright: ignore[reportMissingTypeStubs]
from numba.np.ufunc.ufuncbuilder import UFuncBuilder  # pyright: ignore[reportMissingTypeStubs]

from .cache_location import cache_dir

_FILE_TAG = "devplan"
"""Inserted in the cache files' names: these files hold (key, code) pairs, Numba's do not."""

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
"""devplan's source tree: its functions' caches are kept out of it."""


class _KeyedCacheFile(IndexDataCacheFile):  # pyright: ignore[reportUntypedBaseClass]
    """An index and data files whose names cannot be claimed by two keys (module docstring)."""

    def __init__(self, cache_path: str, filename_base: str, source_stamp: object) -> None:
        super().__init__(cache_path, f"{filename_base}.{_FILE_TAG}", source_stamp)  # pyright: ignore[reportUnknownMemberType]
        self._base = f"{filename_base}.{_FILE_TAG}"

    def _keyed_name(self, key: object) -> str:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        return f"{self._base}.{digest}.nbc"

    def save(self, key: object, data: object) -> None:
        name = self._keyed_name(key)
        self._save_data(name, (key, data))  # pyright: ignore[reportUnknownMemberType]
        with self._index_lock():
            overloads = self._load_index()
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)  # pyright: ignore[reportUnknownMemberType]

    def load(self, key: object) -> object:
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            stored: Any = self._load_data(name)  # pyright: ignore[reportUnknownMemberType]
        except Exception:  # a missing, truncated or foreign file: compile again
            return None
        if not (isinstance(stored, tuple) and len(cast(tuple[object, ...], stored)) == 2):
            return None
        stored_key, data = cast(tuple[object, object], stored)
        return data if stored_key == key else None

    def _load_index(self) -> dict[object, str]:
        try:
            overloads: object = super()._load_index()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        except Exception:  # a truncated or foreign index: as if empty
            return {}
        return cast(dict[object, str], overloads) if isinstance(overloads, dict) else {}

    @contextlib.contextmanager
    def _index_lock(self) -> Generator[None]:
        index_path: str = self._index_path  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
        with open(f"{index_path}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


class SharedFunctionCache(FunctionCache):  # pyright: ignore[reportUntypedBaseClass]
    """Numba's per-function cache with `_KeyedCacheFile` as its storage; `refresh`: load
    entries as Numba does, after refreshing the target context (see `load_overload`)."""

    def __init__(self, py_func: Callable[..., Any], refresh: bool = False) -> None:
        super().__init__(py_func)  # pyright: ignore[reportUnknownMemberType]
        self.refresh = refresh
        numba_cache = cast(Any, self)
        numba_cache._cache_path = _cache_path(
            Path(inspect.getfile(py_func)).resolve(), numba_cache._cache_path
        )
        self._cache_file = _KeyedCacheFile(
            cache_path=numba_cache._cache_path,
            filename_base=numba_cache._impl.filename_base,
            source_stamp=numba_cache._impl.locator.get_source_stamp(),
        )

    def load_overload(self, sig: object, target_context: Any) -> object:
        """The cached overload of `sig`, or None. Numba's refreshes `target_context` first,
        which imports and installs every lowering registry Numba has (about 90 ms of CPU,
        an eighth of a warm `devplan-run` on the numba backend); machine code loaded from a
        cache and called from Python needs none of them, only Numba's runtime (NRT)
        initialised, which the refresh also does and this does alone unless `refresh`.
        What needs the registries later refreshes the context itself: a compile
        (`compiler.compile_extra`) and the first lookup of a lowering that misses
        (`BaseContext.get_function`). A ufunc's loop wrappers, built from the loaded
        loops, look up constants without that fallback: `vectorize` loads with `refresh`."""
        if self.refresh:
            return super().load_overload(sig, target_context)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        rtsys.initialize(target_context)  # pyright: ignore[reportUnknownMemberType]
        numba_cache = cast(Any, self)
        with numba_cache._guard_against_spurious_io_errors():
            return numba_cache._load_overload(sig, target_context)
        return None  # the `with` swallowed an I/O error: a miss, as in Numba's


def _cache_path(source: Path, numba_choice: str) -> str:
    """The cache folder for a function defined in `source`: Numba's choice, unless that is
    by default (no `NUMBA_CACHE_DIR`) and `source` is one of devplan's files; then a folder of
    devplan's cache directory named after the source folder (Numba's choice again when that
    cannot be created)."""
    if numba_config.CACHE_DIR or not source.is_relative_to(_PACKAGE_DIR):  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
        return numba_choice
    folder = source.parent
    digest = hashlib.sha1(str(folder).encode()).hexdigest()
    path = cache_dir() / "numba" / f"{folder.name}_{digest}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return numba_choice
    return str(path)


class _ByTypeDispatcher(CPUDispatcher):  # pyright: ignore[reportUntypedBaseClass]
    """A dispatcher that compiled code calls through its arguments' types without their
    constant values (`njit(by_type=True)`, see the module docstring)."""

    def get_call_template(self, args: Any, kws: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        unliteral = cast(Callable[[Any], Any], types.unliteral)  # pyright: ignore[reportUnknownMemberType]
        named: dict[str, Any] = kws
        base: Any = super()
        return base.get_call_template(
            tuple(unliteral(a) for a in args), {k: unliteral(v) for k, v in named.items()}
        )


def njit(
    cache: bool = True, by_type: bool = False, **options: Any
) -> Callable[[Callable[..., Any]], Any]:
    """`numba.njit(**options)` whose compiled code is cached in `SharedFunctionCache`
    (`cache=False`: not cached, for functions whose source is in no file); `by_type`:
    compiled once per argument types when called from compiled code (module docstring)."""

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher: Any
        if by_type:
            targetoptions = {"nopython": True, **options}
            dispatcher = _ByTypeDispatcher(py_func=function, locals={}, targetoptions=targetoptions)
        else:
            dispatcher = numba.njit(**options)(function)  # pyright: ignore[reportUnknownMemberType]
        if cache:
            dispatcher._cache = SharedFunctionCache(function)
        return dispatcher

    return decorate


def vectorize(signatures: Sequence[str], **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """`numba.vectorize(signatures, **options)` (a NumPy ufunc with one loop a signature,
    for the CPU) whose loops are cached in `SharedFunctionCache`."""

    def decorate(function: Callable[..., Any]) -> Any:
        builder: Any = UFuncBuilder(function, cache=False, targetoptions=options)
        builder.nb_func.cache = SharedFunctionCache(function, refresh=True)
        for signature in signatures:
            builder.add(signature)
        return builder.build_ufunc()

    return decorate
