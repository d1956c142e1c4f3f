"""devplan: targets, virtual devices, device planning and a multi-device executor on xDSL.

The embedding API (its names are pinned: tools and users rely on them):

```python
import devplan
ctx = devplan.context()
module = devplan.parse("func.func @f() { func.return }")
devplan.apply(module, "canonicalize")
```
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError

from .diagnostics import (
    DevplanError,
    LocatingParser,
    check_argument,
    collect_remarks,
    register_source,
    verify_located,
    with_deep_stack,
)
from .dialects.target import Target
from .dialects.target_kinds import TargetError
from .dialects.virtual_device import VirtualDevice
from .passes.pipeline import build_pipeline, verified_by_itself
from .system.module_verifiers import MODULE_VERIFIERS

if TYPE_CHECKING:
    from .execution import execute

    __version__: str
    """pyproject.toml's version of the installed package (read on first use)."""


def context() -> Context:
    """An xDSL `Context` with every xDSL and devplan dialect registered (lazily), and
    devplan's versions of upstream dialects (`upstream.DIALECTS`: tensor comparisons and
    casts, MLIR's gpu syntax, ...) in place of xDSL's.

    The dialects come from xDSL's and devplan's own lists, not from the `xdsl.universe`
    entry points of every installed distribution (as plain xdsl-opt finds them): that
    scan (`importlib.metadata`) costs every process start-up time, so another plugin's
    dialects are not in this context."""
    from xdsl.dialects import get_all_dialects

    from .universe import DIALECTS as DEVPLAN_DIALECTS
    from .upstream import DIALECTS as UPSTREAM_DIALECTS

    ctx = Context()
    factories = {**get_all_dialects(), **DEVPLAN_DIALECTS, **UPSTREAM_DIALECTS}
    for name, factory in factories.items():
        ctx.register_dialect(name, factory)
    return ctx


_IR_PUNCTUATION = frozenset('{}()%@="<>')
"""Characters every op's text has and file names rarely have."""


def _looks_like_a_path(source: str) -> bool:
    """Whether `source` is meant as a file name rather than IR text: one line that ends
    in `.mlir` or contains a path separator, and none of IR's punctuation."""
    text = source.strip()
    return (
        bool(text)
        and "\n" not in text
        and (text.endswith(".mlir") or "/" in text or os.sep in text)
        and _IR_PUNCTUATION.isdisjoint(text)
    )


@with_deep_stack
def parse(source: str | Path, ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse MLIR text, or the file at a `Path`, into a `builtin.module`.

    A string that names an existing `.mlir` file is read as that file; one that looks
    like a path (one line ending in `.mlir` or with a `/`, and no IR punctuation) but
    names no file raises `DevplanError` "no such file". Every op gets
    its `loc("file":line:col)`. Bad input (and a `source` that is neither a str nor a
    Path) raises `DevplanError` whose text is one located diagnostic; a file that
    cannot be read raises the `OSError` (e.g. `FileNotFoundError`) naming it.
    """
    check_argument("devplan.parse", "source", source, (str, Path), "MLIR text (str) or a Path")
    check_argument("devplan.parse", "ctx", ctx, (Context, type(None)), "an xdsl Context or None")
    check_argument("devplan.parse", "verify", verify, bool, "True or False")
    if isinstance(source, str) and _looks_like_a_path(source) and not Path(source).exists():
        raise DevplanError(f"error: devplan.parse: no such file: {source}")
    if (
        isinstance(source, Path)
        or _looks_like_a_path(source)
        or ("\n" not in source and source.endswith(".mlir") and Path(source).is_file())
    ):
        name = str(source)
        try:
            text = Path(source).read_text()
        except UnicodeDecodeError as e:
            raise DevplanError(
                f"error: {source}: the input is not UTF-8 text "
                f"(byte {e.start} is {e.object[e.start]:#04x})"
            ) from None
    else:
        name, text = "<string>", str(source)
    register_source(name, text)
    try:
        module = LocatingParser(ctx or context(), text, name).parse_module()
    except ParseError as e:
        raise DevplanError(str(e)) from None
    if verify:
        verify_located(module, MODULE_VERIFIERS)
    return module


@with_deep_stack
def apply(
    module: ModuleOp,
    pipeline: str,
    ctx: Context | None = None,
    remarks: list[str] | None = None,
) -> ModuleOp:
    """Run an xdsl-opt pipeline (`"pass-a,pass-b{opt=1}"`) on `module` in place.

    The passes' remarks (`explain`, `stats`) are appended to `remarks` in the order the
    passes emit them, each a whole message (`file:line:col: remark: ...`); without a
    list they go where the caller's sink sends them (stderr unless it is inside
    `diagnostics.collect_remarks`). A `module` that is not a `builtin.module` (e.g.
    text: `parse` it first) or a `pipeline` that is not a string raises `DevplanError`
    naming the parameter.
    """
    check_argument(
        "devplan.apply", "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)"
    )
    check_argument(
        "devplan.apply", "pipeline", pipeline, str, 'a pass pipeline string, e.g. "canonicalize"'
    )
    check_argument("devplan.apply", "ctx", ctx, (Context, type(None)), "an xdsl Context or None")
    check_argument("devplan.apply", "remarks", remarks, (list, type(None)), "a list or None")
    parsed = build_pipeline(pipeline, Universe.get_multiverse().all_passes)
    from .execution import forget_programs

    forget_programs(module)  # what was compiled from it is stale now
    if remarks is None:
        parsed.apply(ctx or context(), module)
    else:
        with collect_remarks(remarks):
            parsed.apply(ctx or context(), module)
    if not (parsed.passes and verified_by_itself(parsed.passes[-1])):
        verify_located(module, MODULE_VERIFIERS)
    return module


def __getattr__(name: str) -> object:
    # `devplan.execute` is `devplan.execution.execute` itself, imported on first use:
    # that keeps `import devplan` light (no runtime, NumPy kernels or numba).
    if name == "execute":
        from .execution import execute

        return execute
    if name == "__version__":
        # The version is pyproject.toml's, as installed; read on first use, since
        # importlib.metadata costs `import devplan` time that few callers need.
        from importlib.metadata import version

        return version("devplan")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DevplanError",
    "Target",
    "TargetError",
    "VirtualDevice",
    "__version__",
    "apply",
    "context",
    "execute",
    "parse",
]
