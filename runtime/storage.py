"""Device memory held in NumPy arrays: aligned zeroed blocks, and a cache of freed ones.

The DeviceAPIs that keep their bytes in host memory (`cpu`, `simulated`, a user's) hold
each buffer's bytes as a uint8 array whose data address meets the buffer's alignment.
Large freed blocks are kept for the next allocation of their size (`STORAGE_CACHE`): that
saves the OS mapping fresh pages, which costs as much as a copy.
"""

from __future__ import annotations

import sys
import threading

import numpy as np


def aligned_bytes(nbytes: int, alignment: int) -> np.ndarray:
    """A zeroed uint8 array of `nbytes` whose data address is a multiple of `alignment`."""
    raw = np.zeros(nbytes + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset : offset + nbytes]


class StorageCache:
    """Large blocks of freed device storage, kept for the next allocation of their size.

    Fresh memory is not free: the OS maps and zeroes each page on first touch, which
    for a 64 MiB buffer costs as much as copying it. Runs that allocate the same large
    buffers again (every `execute` of a program) reuse the blocks instead. A block is
    kept only when nothing but the freed buffer's storage refers to its memory (no view
    of it survives), so no one can see the next user's data; the next user sees zeros
    all the same (`DeviceAPI` zeroes a reused block before anything reads it).
    Shared by all DeviceAPIs that hold bytes in NumPy arrays; bounded by `capacity`.
    """

    min_bytes = 1 << 20
    """Smaller blocks are left to the allocator (their pages are few)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        self._blocks: dict[tuple[int, int], list[np.ndarray]] = {}
        self._lock = threading.Lock()

    def take(self, nbytes: int, alignment: int) -> np.ndarray | None:
        """A kept block of exactly `nbytes` with `alignment` (its old bytes), or None."""
        if nbytes < self.min_bytes:
            return None
        with self._lock:
            blocks = self._blocks.get((nbytes, alignment))
            if not blocks:
                return None
            self.held -= nbytes
            return blocks.pop()

    def keep(self, storage: np.ndarray, alignment: int) -> None:
        """Keep `storage` (made by `aligned_bytes`) unless a view of it is still alive.

        Call as `keep(dict.pop(key), ...)`, holding no other reference to `storage`.
        """
        nbytes = storage.nbytes
        if nbytes < self.min_bytes or nbytes > self.capacity:
            return
        raw = storage.base
        # Expected references: to `storage`, this argument and getrefcount's; to `raw`,
        # `storage.base`, the local `raw` and getrefcount's. Any view made of the storage
        # holds another reference to `raw` (a NumPy view's base is the owner of the
        # memory). More references, or fewer (another interpreter), and it is not kept.
        if sys.getrefcount(storage) != 2 or sys.getrefcount(raw) != 3:
            return
        with self._lock:
            self._blocks.setdefault((nbytes, alignment), []).append(storage)
            self.held += nbytes
            while self.held > self.capacity:  # drop the oldest blocks of any size
                key = next(k for k, v in self._blocks.items() if v)
                self.held -= self._blocks[key].pop(0).nbytes

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
            self.held = 0


STORAGE_CACHE = StorageCache(capacity=512 << 20)
"""The process's cache of freed device storage (see `StorageCache`)."""


__all__ = ["STORAGE_CACHE", "StorageCache", "aligned_bytes"]
