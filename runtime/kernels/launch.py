"""A compiled kernel and the checks of its launches.

`CompiledKernel` holds what a backend compiled (`compile.compile_kernel` makes it);
calling it checks the grid (`MAX_GRID`), the block and the arguments against the kernel's
parameters, then runs the backend's launcher. Launches that repeat the last one's grid,
block and argument objects skip the checks.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, MemRefType

from ...diagnostics import DevplanError
from ..numpy_semantics import bf16_value
from .common import Kernel, dtype_of, int_width, is_float
from .watchdog import StoppedError

ArgValue = np.ndarray[Any, Any] | int | float | bool

_NEVER = object()
"""Stands for the grid and block of a kernel not launched yet."""


class CompiledKernel:
    """A kernel compiled for one backend; call it to launch.

    `kernel(grid=(gx, gy, gz), block=(bx, by, bz), args=[...])` runs every thread of the
    grid over `args`: NumPy arrays for memref parameters (written in place; their dtype
    and rank must match the parameter, and static sizes must agree), Python ints,
    floats and bools for scalars. A launch given the very grid and block tuples and
    argument objects of the launch before skips these checks, which that one passed
    (an array whose `dtype` or `shape` attribute was assigned since is not noticed).
    """

    def __init__(self, kernel: Kernel, backend: str, run: Callable[..., None], source: str) -> None:
        self.kernel = kernel
        self.backend = backend
        self.source = source
        """The generated Python source (for debugging)."""
        self._run = run
        self._types = kernel.func.param_types
        self._fast = [_fast_check(t) for t in self._types]
        self._last: tuple[Any, Any, tuple[Any, ...], Any, Any, Any] = (_NEVER, _NEVER, (), 0, 0, [])
        """The last launch's grid, block and arguments as given (the objects), then as
        checked: one tuple, replaced whole, so threads launching at once each see a
        consistent one."""

    @property
    def name(self) -> str:
        return self.kernel.name

    def __call__(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[ArgValue],
    ) -> None:
        if self.backend == "numba":
            self.launch(grid, block, args)
            return
        with np.errstate(all="ignore"):  # IEEE results (inf, nan) are values, not warnings
            self.launch(grid, block, args)

    def launch(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[ArgValue],
    ) -> None:
        """Launch as `self(grid, block, args)` does, with the same checks, but in NumPy's
        current error state: for callers that run under `np.errstate(all="ignore")`
        already (the executor), to whom entering it again per launch would cost about
        as much as launching a small kernel."""
        last = self._last
        if (
            grid is last[0]
            and block is last[1]
            and len(args) == len(last[2])
            and all(map(operator.is_, args, last[2]))
        ):
            # The launch before took these very tuples and arguments: they passed.
            self._run(last[3], last[4], last[5])
            return
        g = _dims("grid", self.name, grid)
        if g[0] > MAX_GRID[0] or g[1] > MAX_GRID[1] or g[2] > MAX_GRID[2]:
            raise DevplanError(
                f"error: launching kernel @{self.name}: grid {g}: {grid_beyond_limit(g)}"
            )
        b = _dims("block", self.name, block)
        values = self._args(args)
        if 0 in g or 0 in b:
            return
        if type(grid) is tuple and type(block) is tuple:  # (a list may change in place)
            self._last = (grid, block, tuple(args), g, b, list(values))
        self._run(g, b, values)

    def forget_last_launch(self) -> None:
        """Drop the arguments of the last launch (the next launch is checked again)."""
        self._last = (_NEVER, _NEVER, (), 0, 0, [])

    @property
    def run_unchecked(self) -> Callable[[tuple[int, int, int], tuple[int, int, int], Any], None]:
        """`launch` without its checks, for a caller that repeats a launch `launch`
        accepted (the same grid and block, every size at least 1, and the same argument
        arrays): the executor's launch sites. Faults in the kernel are still reported."""
        return self._run

    def _args(self, args: Sequence[ArgValue]) -> Sequence[Any]:
        # Fast path: arrays of the exact dtype and rank with no static sizes to compare
        # (the common case) pass unchanged; anything else goes through `_check_args`.
        if len(args) == len(self._fast):
            for arg, fast in zip(args, self._fast, strict=True):
                if fast is None or type(arg) is not np.ndarray:
                    break
                dtype = arg.dtype
                if (dtype is not fast[0] and dtype != fast[0]) or arg.ndim != fast[1]:
                    break  # (identity first: comparing dtypes costs about a microsecond)
            else:
                return args
        return _check_args(self.kernel, args, on_gpu=self.backend == "numba-cuda")


class KernelCall:
    """One launch of a compiled kernel: called with the arguments as the kernel sees them
    (views of device memory), it runs `kernel` over `grid` and `block`, a fault placed by
    `located`. The executor hands one to `DeviceAPI.launch`; a DeviceAPI whose kernels run
    in another process (`ray_device.py`) sends its kernel's IR, grid and block there
    instead of calling it."""

    __slots__ = ("block", "grid", "kernel", "located")

    def __init__(
        self,
        kernel: CompiledKernel,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        located: Callable[[DevplanError], DevplanError],
    ) -> None:
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.located = located

    def __call__(self, views: list[Any]) -> None:
        try:
            # The run holds np.errstate(all="ignore") until its teardown, the last
            # moment a kernel can run, so the kernel need not enter it again.
            self.kernel.launch(self.grid, self.block, views)
        except StoppedError:
            raise  # not a fault of its own: the scheduler reports the one that was
        except DevplanError as e:
            raise self.located(e) from None


def _fast_check(type_: Any) -> tuple[np.dtype[Any], int] | None:
    """(dtype, rank) of a memref parameter whose sizes are all dynamic, else None."""
    if not isinstance(type_, MemRefType):
        return None
    shape = type_.get_shape()
    dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if dtype is None or any(s >= 0 for s in shape):
        return None
    return dtype, len(shape)


MAX_GRID = (2**31 - 1, 65535, 65535)
"""The largest grid a launch may have along x, y and z (CUDA's limits, for every device
and backend: beyond them a launch is an error rather than an endless emulation, and block
ids fit in 31 bits, which `ranges.separating_axes` relies on)."""


def grid_beyond_limit(grid: tuple[int, int, int]) -> str:
    """What exceeds `MAX_GRID` in `grid` (which does): `70000 blocks along y, more than
    the limit of 65535`."""
    axis, size, most = next(a for a in zip("xyz", grid, MAX_GRID, strict=True) if a[1] > a[2])
    return f"{size} blocks along {axis}, more than the limit of {most}"


def _dims(what: str, name: str, dims: Sequence[object]) -> tuple[int, int, int]:
    if len(dims) == 3:
        x, y, z = dims
        if type(x) is int and type(y) is int and type(z) is int and min(x, y, z) >= 0:
            return x, y, z  # the common case, checked cheaply
    if len(dims) != 3 or not all(
        isinstance(d, int | np.integer) and int(cast(Any, d)) >= 0 for d in dims
    ):
        raise DevplanError(
            f"error: launching kernel @{name}: {what} must be three non-negative integers "
            f"(x, y, z), got {tuple(dims)!r}"
        )
    x, y, z = (int(cast(Any, d)) for d in dims)
    return x, y, z


def _check_args(kernel: Kernel, args: Sequence[ArgValue], on_gpu: bool = False) -> list[Any]:
    types = kernel.func.param_types
    where = f"launching kernel @{kernel.name}"
    if len(args) != len(types):
        raise DevplanError(f"error: {where}: expected {len(types)} arguments, got {len(args)}")
    values: list[Any] = []
    for i, (arg, type_) in enumerate(zip(args, types, strict=True)):
        what = f"argument {i} (%{kernel.params[i].name_hint or i})"
        if isinstance(type_, MemRefType):
            values.append(_check_array(where, what, arg, type_, on_gpu))  # pyright: ignore[reportUnknownArgumentType]
        else:
            values.append(_check_scalar(where, what, arg, type_))
    return values


def _check_array(
    where: str, what: str, arg: object, type_: MemRefType, on_gpu: bool
) -> np.ndarray[Any, Any]:
    dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if not isinstance(arg, np.ndarray) and not (on_gpu and is_device_array(arg)):
        kind = "a NumPy or numba.cuda device array" if on_gpu else "a NumPy array"
        raise DevplanError(f"error: {where}: {what} must be {kind} for {type_}")
    array = cast(np.ndarray[Any, Any], arg)
    shape = type_.get_shape()
    static_ok = all(s < 0 or s == n for s, n in zip(shape, array.shape, strict=False))
    if array.dtype != dtype or array.ndim != len(shape) or not static_ok:
        raise DevplanError(
            f"error: {where}: {what} is an array of {array.dtype} with shape {array.shape}; "
            f"the parameter is {type_}"
        )
    return array


def is_device_array(arg: object) -> bool:
    """Whether `arg` is a `numba.cuda` device array (or the CUDA simulator's stand-in for
    one, which has no CUDA array interface), which only the `numba-cuda` backend runs on."""
    return callable(getattr(arg, "copy_to_host", None))


def _check_scalar(where: str, what: str, arg: object, type_: Any) -> Any:
    width = int_width(type_)
    dtype = dtype_of(type_)
    if width == 1:
        if isinstance(arg, bool | np.bool_):
            return bool(cast(Any, arg))
    elif width is not None:
        if isinstance(arg, int | np.integer) and not isinstance(arg, bool):
            value = int(cast(Any, arg))
            if -(1 << (width - 1)) <= value < (1 << (width - 1)):
                return value
            raise DevplanError(f"error: {where}: {what} = {value} does not fit in {type_}")
    elif (
        is_float(type_)
        and dtype is not None
        and isinstance(arg, int | float | np.floating | np.integer)
        and not isinstance(arg, bool)
    ):
        if isinstance(type_, BFloat16Type):
            # A bf16 value is an f32 in kernels; dtype_of is its memory's uint16 bit
            # pattern, and uint16(1.5) would be 1.
            return bf16_value(arg)
        return dtype.type(arg)
    raise DevplanError(f"error: {where}: {what} must be a scalar of type {type_}, got {arg!r}")
