"""Memory held in NumPy arrays: aligned zeroed blocks, and caches of freed ones.

The DeviceAPIs that keep their bytes in host memory (`cpu`, `simulated`, a user's) hold
each buffer's bytes as a uint8 array whose data address meets the buffer's alignment.
Large freed blocks are kept for the next allocation of their size (`STORAGE_CACHE`): that
saves the OS mapping fresh pages, which costs as much as a copy. Host memory that the
executor allocates (`memref.alloc`) has no free to hook: `host_zeros` gives arrays whose
memory goes back to a cache of its own (`HOST_BLOCKS`) when the last array viewing it dies.
"""

from __future__ import annotations

import math
import sys
import threading
from collections import deque
from contextlib import suppress
from typing import Any

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


class HostBlocks:
    """Large blocks of host memory whose arrays died, kept for the next array of their size.

    A program allocates its intermediate arrays again in every run, and the C allocator
    gives a large freed block back to the OS, which maps and zeroes each page again on
    first touch: for a run of a few 1024x1024 kernels that took longer than the kernels
    (1,500 page faults, tens of ms on 2 loaded cores). An array of `zeros` views a block
    through an owner object that NumPy keeps as the base of the array (and the array as
    the base of its views); when the last of them dies, so does the owner, and its block
    comes back here. No lock: `deque.append` and `pop` are atomic, and an owner may die in
    any thread at any time (in a garbage collection inside `zeros`). Bounded by
    `capacity` bytes.
    """

    min_bytes = StorageCache.min_bytes
    alignment = 64

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        """Bytes of the blocks kept (approximate while threads give and take at once)."""
        self._blocks: dict[int, deque[np.ndarray]] = {}
        self.reused = 0
        """Arrays made on a kept block (for tests and measurements)."""

    def zeros(
        self, shape: tuple[int, ...], dtype: np.dtype[Any], zeroed: bool = True
    ) -> np.ndarray[Any, Any]:
        """A zeroed C-contiguous array of `shape` and `dtype`, on a kept block if there is
        one of its size (a MemoryError when there is none and the allocator has none).
        With `zeroed=False` a kept block keeps its old bytes: for an array whose every
        element is written before anything reads it."""
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < self.min_bytes:
            return np.zeros(shape, dtype)
        block = self._take(nbytes)
        if block is None:
            block = aligned_bytes(nbytes, self.alignment)
        else:
            if zeroed:
                block.fill(0)
            self.reused += 1
        return np.asarray(_Owner(self, block, shape, dtype))

    def _take(self, nbytes: int) -> np.ndarray | None:
        blocks = self._blocks.get(nbytes)
        try:
            block = blocks.pop() if blocks is not None else None
        except IndexError:  # another thread took the last one
            return None
        if block is not None:
            self.held -= nbytes
        return block

    def give(self, block: np.ndarray) -> None:
        """Keep `block` (no array views it any more) unless that exceeds the capacity."""
        nbytes = block.nbytes
        if self.held + nbytes > self.capacity:
            return
        self._blocks.setdefault(nbytes, deque()).append(block)
        self.held += nbytes

    def clear(self) -> None:
        self._blocks.clear()
        self.held = 0


class _Owner:
    """The base of the arrays viewing one block of `HostBlocks` (NumPy's base of an array
    made from `__array_interface__` is the object that gave it): it gives the block back
    when it dies."""

    __slots__ = ("__array_interface__", "block", "blocks")

    def __init__(
        self, blocks: HostBlocks, block: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> None:
        self.blocks = blocks
        self.block = block
        self.__array_interface__ = {
            "data": (block.ctypes.data, False),
            "shape": shape,
            "typestr": dtype.str,
            "version": 3,
        }

    def __del__(self) -> None:
        with suppress(Exception):  # (at interpreter exit the cache may be gone)
            self.blocks.give(self.block)


HOST_BLOCKS = HostBlocks(capacity=512 << 20)
"""The process's cache of host blocks of dead arrays (see `HostBlocks`)."""


def host_zeros(
    shape: tuple[int, ...], dtype: np.dtype[Any], zeroed: bool = True
) -> np.ndarray[Any, Any]:
    """A zeroed host array whose memory is reused once it and its views die (`HostBlocks`);
    with `zeroed=False`, one whose contents are unspecified (see `HostBlocks.zeros`)."""
    return HOST_BLOCKS.zeros(shape, dtype, zeroed)


__all__ = [
    "HOST_BLOCKS",
    "STORAGE_CACHE",
    "HostBlocks",
    "StorageCache",
    "aligned_bytes",
    "host_zeros",
]
