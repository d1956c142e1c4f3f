"""The on-disk cache of compiled kernels, so that a second process does not compile them.

The Numba backend writes each kernel's generated module to a file named by the SHA-256 of
the kernel's IR and of the versions that decide its machine code (this backend's source,
Numba, NumPy, Python); Numba caches the compiled functions of that file beside it
(`__pycache__`, keyed by the file and the argument types). A process that runs the same
kernel again imports the same file and loads the machine code instead of compiling it,
without generating the module's source again.
The file's Python byte code is kept beside it (`k....code`): a process does not compile
the generated source again either, even where Python writes no `.pyc` files.

Where: `$DEVPLAN_CACHE_DIR` when set, else `$XDG_CACHE_HOME/devplan/kernels`, else
`~/.cache/devplan/kernels`. Clearing it is always safe: delete the directory, or call
`clear()` (`python -c "from devplan.runtime.kernels import kernel_cache; kernel_cache.clear()"`).
When the directory cannot be created or written, kernels are compiled in memory as if
there were no cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import platform
import shutil
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np

from ..cache_location import cache_dir

__all__ = ["cache_dir", "clear", "load_module", "module_path"]


def _versions() -> str:
    numba_version: str = numba.__version__  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
    return f"numba {numba_version}, numpy {np.__version__}, {sys.version}, {platform.machine()}"


def module_path(
    text: str | Callable[[], str], backend_version: str, key: str | None = None
) -> Path | None:
    """The file holding `text` in the cache (written when missing); None when the cache
    directory cannot be written. The file is named by `key` (by default the text itself):
    with a key that determines the text, such as the kernel's IR, `text` may be a function
    that makes it, called only when the file is missing."""
    if key is None:
        assert isinstance(text, str)
        key = text
    digest = hashlib.sha256(f"{backend_version}\n{_versions()}\n{key}".encode()).hexdigest()
    directory = cache_dir()
    path = directory / f"k{digest[:40]}.py"
    if path.exists():
        return path
    written = text if isinstance(text, str) else text()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{path.name}.{os.getpid()}.tmp"
        partial.write_text(written)
        partial.replace(path)  # atomic: another process sees the whole file or none
    except OSError:
        return None
    return path


def load_module(
    text: str | Callable[[], str], backend_version: str, key: str | None = None
) -> dict[str, Any] | None:
    """The namespace of the cached module holding `text` (written on first use; see
    `module_path` for `key`), imported under a name made from its file name
    (`devplan_kernel_k...`), as Numba's cache needs to find a cached function's module;
    None when the cache directory cannot be written.

    The module's byte code is cached beside it (`k....code`, keyed like the file and by
    Python's magic number), also where Python is told not to write byte code (as
    `PYTHONDONTWRITEBYTECODE` does): compiling the source of a large kernel costs more
    than loading its machine code.
    """
    path = module_path(text, backend_version, key)
    if path is None:
        return None
    name = f"devplan_kernel_{path.stem}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return vars(loaded)
    code = _code_of(path, text if isinstance(text, str) else None)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # Numba finds a cached function's module by name
    try:
        exec(code, vars(module))
    except BaseException:
        del sys.modules[name]
        raise
    return vars(module)


def _code_of(path: Path, text: str | None) -> types.CodeType:
    """The compiled code of the module file `path` holding `text` (None: read it from the
    file when needed), from its byte-code file when that was written by this Python (else
    compiled, and the byte-code file written)."""
    saved = path.with_suffix(".code")
    magic = importlib.util.MAGIC_NUMBER
    try:
        data = saved.read_bytes()
        if data.startswith(magic):
            code = marshal.loads(data[len(magic) :])
            if isinstance(code, types.CodeType):
                return code
    except (OSError, ValueError, EOFError, TypeError):
        pass  # absent or unreadable: compiled below
    code = compile(path.read_text() if text is None else text, str(path), "exec")
    try:
        partial = saved.with_name(f".{saved.name}.{os.getpid()}.tmp")
        partial.write_bytes(magic + marshal.dumps(code))
        partial.replace(saved)
    except OSError:
        pass  # a read-only cache still serves its modules
    return code


def clear() -> None:
    """Delete every cached kernel (the cache directory and what it holds)."""
    shutil.rmtree(cache_dir(), ignore_errors=True)
