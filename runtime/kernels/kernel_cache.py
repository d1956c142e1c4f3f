"""The on-disk cache of compiled kernels, so that a second process does not compile them.

The Numba backend writes each kernel's generated module to a file named by the SHA-256 of
its text and of the versions that decide its machine code (this backend's source, Numba,
NumPy, Python); Numba caches the compiled functions of that file beside it
(`__pycache__`, keyed by the file and the argument types). A process that runs the same
kernel again imports the same file and loads the machine code instead of compiling it.

Where: `$DEVPLAN_CACHE_DIR` when set, else `$XDG_CACHE_HOME/devplan/kernels`, else
`~/.cache/devplan/kernels`. Clearing it is always safe: delete the directory, or call
`clear()` (`python -c "from devplan.runtime.kernels import kernel_cache; kernel_cache.clear()"`).
When the directory cannot be created or written, kernels are compiled in memory as if
there were no cache.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
from pathlib import Path

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np


def cache_dir() -> Path:
    """The directory of the kernel cache (see the module docstring)."""
    configured = os.environ.get("DEVPLAN_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "devplan" / "kernels"


def _versions() -> str:
    numba_version: str = numba.__version__  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
    return f"numba {numba_version}, numpy {np.__version__}, {sys.version}, {platform.machine()}"


def module_path(text: str, backend_version: str) -> Path | None:
    """The file holding `text` in the cache (written when missing); None when the cache
    directory cannot be written."""
    key = hashlib.sha256(f"{backend_version}\n{_versions()}\n{text}".encode()).hexdigest()
    directory = cache_dir()
    path = directory / f"k{key[:40]}.py"
    if path.exists():
        return path
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{path.name}.{os.getpid()}.tmp"
        partial.write_text(text)
        partial.replace(path)  # atomic: another process sees the whole file or none
    except OSError:
        return None
    return path


def clear() -> None:
    """Delete every cached kernel (the cache directory and what it holds)."""
    shutil.rmtree(cache_dir(), ignore_errors=True)
