"""TVM's workspace pool (`src/runtime/workspace_pool.cc`): page-rounded reuse of temporaries.

Sizes are rounded up to 4 KiB pages (a request of 0 bytes takes one page). The pool
keeps the pages no one uses in a free list sorted by size, and the pages in use in
allocation order. An allocation

* with no free page allocates a new one;
* with exactly one free page reuses it when it is big enough, else returns it to the
  device and allocates one of the new size in its place;
* with several free pages takes the smallest that fits, else returns the largest to
  the device and allocates one of the new size in its place.

A free takes the most recently allocated page on the fast path, else searches; the
page goes back into the free list. Pages go back to the device only when the pool is
released (the DeviceAPI's teardown), so workspace memory counts towards a scope's
use from the first allocation until then. The pool suits few, stack-ordered,
repeating allocations — what an operator's temporaries look like.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .errors import DeviceError

PAGE_SIZE = 4 << 10
"""TVM's `kWorkspacePageSize`."""


def page_rounded(nbytes: int) -> int:
    """`nbytes` rounded up to whole pages; at least one page."""
    pages = max(1, -(-nbytes // PAGE_SIZE))
    return pages * PAGE_SIZE


@dataclass(eq=False)
class Page:
    """A block of device memory the pool owns."""

    size: int
    storage: np.ndarray
    user: object | None = field(default=None, repr=False)
    """The buffer on it (a DeviceAPI's handle, compared by identity); None while free."""


class WorkspacePool:
    """One device's workspace pool; `allocate`/`release` reach the device's memory."""

    def __init__(
        self,
        allocate: Callable[[int, str], np.ndarray],
        release: Callable[[int], None],
    ) -> None:
        self._allocate = allocate
        self._release = release
        self.free_list: list[Page] = []
        """Pages not in use, sorted by size (smallest first)."""
        self.allocated: list[Page] = []
        """Pages in use, in allocation order."""
        self.device_allocations = 0
        """How many times the pool took memory from the device."""

    @property
    def held_bytes(self) -> int:
        return sum(p.size for p in (*self.free_list, *self.allocated))

    def alloc(self, nbytes: int, label: str) -> Page:
        size = page_rounded(nbytes)
        if not self.free_list:
            page = self._new_page(size, label)
        elif len(self.free_list) == 1:
            page = self.free_list.pop()
            if page.size < size:
                page = self._resize(page, size, label)
        elif self.free_list[-1].size >= size:
            index = next(i for i, p in enumerate(self.free_list) if p.size >= size)
            page = self.free_list.pop(index)
        else:
            page = self._resize(self.free_list.pop(), size, label)
        self.allocated.append(page)
        return page

    def bind(self, page: Page, buffer: object) -> None:
        page.user = buffer

    def free(self, buffer: object) -> None:
        index = next(
            (i for i in range(len(self.allocated) - 1, -1, -1) if self.allocated[i].user is buffer),
            None,
        )
        if index is None:
            raise DeviceError(
                f"free_workspace of {buffer}: trying to free something the workspace pool "
                "has not allocated"
            )
        page = self.allocated.pop(index)
        page.user = None
        # Insert after pages of equal size, as TVM's insertion does.
        position = next(
            (i for i, p in enumerate(self.free_list) if p.size > page.size), len(self.free_list)
        )
        self.free_list.insert(position, page)

    def release_all(self) -> None:
        """Return every page to the device (TVM: when the pool's thread exits)."""
        for page in (*self.free_list, *self.allocated):
            self._release(page.size)
        self.free_list.clear()
        self.allocated.clear()

    def _new_page(self, size: int, label: str) -> Page:
        storage = self._allocate(size, label)
        self.device_allocations += 1
        return Page(size, storage)

    def _resize(self, page: Page, size: int, label: str) -> Page:
        # TVM frees the old page before allocating the bigger one, so both never coexist.
        self._release(page.size)
        return self._new_page(size, label)
