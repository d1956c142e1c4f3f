"""Where devplan keeps what it compiles: one directory, safe to delete at any time.

`$DEVPLAN_CACHE_DIR` when set, else `$XDG_CACHE_HOME/devplan/kernels`, else
`~/.cache/devplan/kernels`. The kernel cache keeps its generated modules there
(`kernels/kernel_cache.py`); Numba's cache of devplan's own compiled functions goes under
its `numba/` folder unless `NUMBA_CACHE_DIR` names another (`numba_cache.py`), so nothing
is ever written beside devplan's source files.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """devplan's cache directory (see the module docstring)."""
    configured = os.environ.get("DEVPLAN_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "devplan" / "kernels"
