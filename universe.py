"""devplan's xDSL universe: every devplan dialect and pass, for plain `xdsl-opt`.

Registered under the `xdsl.universe` entry-point group in `pyproject.toml`. Values
are zero-argument factories so that tool start-up imports nothing heavy; the passes
come from `passes/registry.py`.

Errors under plain xdsl-opt. xdsl-opt 0.74 re-raises every exception a pass raises
(`DiagnosticException` included, unless `--verify-diagnostics`), so Python prints a
traceback before the message. A universe has no hook into that loop; what it can do is
run code when xdsl-opt loads one of its dialects or passes. That is where
`print_errors_as_diagnostics` installs a `sys.excepthook` that prints a devplan error
escaping xdsl-opt's main loop as its message alone (exit status 1, as for any uncaught
exception). A devplan error is a `DevplanError`, or a `DiagnosticException` or
`ParseError` raised by devplan's code (a devplan op's verifier: xDSL's text then shows the
module with the op marked; a devplan attribute's parser: the place in the input, as
xdsl-opt prints it under `--parsing-diagnostics`). Every other exception, and any error
raised outside xdsl-opt (a Python program calling devplan), goes to the hook that was
there before. What xDSL would need to do the rest is docs/upstream.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from xdsl.ir import Dialect
from xdsl.universe import Universe

from .passes.registry import PASSES

_T = TypeVar("_T")

_XDSL_OPT_LOOP = "xdsl_opt_main.py"
"""The file of xDSL's `xDSLOptMain.run`, the loop a pass's exception escapes through."""

_installed: list[bool] = []


_PACKAGE = __name__.rpartition(".")[0]
"""`devplan`: frames of its modules are devplan's code (by module name, not by path: the
development virtual environment lives inside the package's directory)."""


def _frames(traceback: TracebackType | None) -> list[tuple[str, str]]:
    """(file, module name) of each frame, outermost first."""
    frames: list[tuple[str, str]] = []
    while traceback is not None:
        frame = traceback.tb_frame
        frames.append((frame.f_code.co_filename, str(frame.f_globals.get("__name__", ""))))
        traceback = traceback.tb_next
    return frames


def _is_devplan_error_in_xdsl_opt(error: BaseException, traceback: TracebackType | None) -> bool:
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from .diagnostics import DevplanError

    frames = _frames(traceback)
    if not any(os.path.basename(file) == _XDSL_OPT_LOOP for file, _ in frames):
        return False
    if isinstance(error, DevplanError):
        return True
    ours = any(module.startswith(_PACKAGE + ".") for _, module in frames)
    return isinstance(error, DiagnosticException | ParseError) and ours


def print_errors_as_diagnostics() -> None:
    """Make a devplan error that escapes xdsl-opt print as its diagnostic, without a
    traceback (once per process; see the module docstring)."""
    if _installed:
        return
    _installed.append(True)
    previous = sys.excepthook

    def hook(
        kind: type[BaseException], error: BaseException, traceback: TracebackType | None
    ) -> None:
        if _is_devplan_error_in_xdsl_opt(error, traceback):
            # xDSL's verifier puts the module, with the failing op marked, in a note.
            from xdsl.utils.exceptions import ParseError

            from .diagnostics import DevplanError

            notes: list[object] = getattr(error, "__notes__", [])
            placed = isinstance(error, DevplanError | ParseError)
            text = str(error) if placed else f"error: {error}"
            print("\n".join([text, *map(str, notes)]), file=sys.stderr)
            return
        previous(kind, error, traceback)

    sys.excepthook = hook


def _loading(factory: Callable[[], _T]) -> Callable[[], _T]:
    """`factory`, installing `print_errors_as_diagnostics` when it is first called."""

    def load() -> _T:
        print_errors_as_diagnostics()
        return factory()

    return load


def _target() -> Dialect:
    from .dialects.target import TargetDialect

    return TargetDialect


def _vdev() -> Dialect:
    from .dialects.vdev import Vdev

    return Vdev


def _device() -> Dialect:
    from .dialects.device import Device

    return Device


def _kernel() -> Dialect:
    from .dialects.kernel import Kernel

    return Kernel


def _async() -> Dialect:
    from .upstream.async_ import Async

    return Async


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "target": _target,
    "vdev": _vdev,
    "device": _device,
    "kernel": _kernel,
    "async": _async,
}
"""Dialect name -> factory."""


UNIVERSE = Universe(
    all_dialects={name: _loading(factory) for name, factory in DIALECTS.items()},
    all_passes={name: _loading(factory) for name, factory in PASSES.items()},
)
