"""devplan: targets, virtual devices, device planning and a multi-device executor on xDSL.

The embedding API (names pinned by DESIGN §6):

```python
import devplan
ctx = devplan.context()
module = devplan.parse("func.func @f() { func.return }")
devplan.apply(module, "canonicalize")
```
"""

from __future__ import annotations

import importlib
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
    register_source,
    verify_located,
    with_deep_stack,
)
from .dialects.target import Target
from .dialects.target_kinds import TargetError
from .dialects.virtual_device import VirtualDevice
from .passes.pipeline import COMPILED_PROGRAMS_ATTRIBUTE, build_pipeline

# Loading the vdev dialect registers its module verifier (placement attributes).
importlib.import_module(f"{__name__}.dialects.vdev")
# Loading the system module registers the verifier of `vdev.system` (the system must load).
importlib.import_module(f"{__name__}.system.description")

if TYPE_CHECKING:
    from .runtime.executor import execute

__version__ = "0.1.0"


def context() -> Context:
    """An xDSL `Context` with every xDSL and devplan dialect registered (lazily); `gpu`
    and `memref` read MLIR's custom syntax of the gpu ops and `memref.cast`
    (`upstream/gpu.py`)."""
    from .upstream.gpu import DIALECT_OVERRIDES

    ctx = Context()
    factories = {**Universe.get_multiverse().all_dialects, **DIALECT_OVERRIDES}
    for name, factory in factories.items():
        ctx.register_dialect(name, factory)
    return ctx


@with_deep_stack
def parse(source: str | Path, ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse MLIR text, or the file at a `Path`, into a `builtin.module`.

    A string that names an existing `.mlir` file is read as that file. Every op gets
    its `loc("file":line:col)`. Bad input (and a `source` that is neither a str nor a
    Path) raises `DevplanError` whose text is one located diagnostic; a file that
    cannot be read raises the `OSError` (e.g. `FileNotFoundError`) naming it.
    """
    check_argument("devplan.parse", "source", source, (str, Path), "MLIR text (str) or a Path")
    check_argument("devplan.parse", "ctx", ctx, (Context, type(None)), "an xdsl Context or None")
    check_argument("devplan.parse", "verify", verify, bool, "True or False")
    if isinstance(source, Path) or (
        "\n" not in source and source.endswith(".mlir") and Path(source).is_file()
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
        verify_located(module)
    return module


@with_deep_stack
def apply(module: ModuleOp, pipeline: str, ctx: Context | None = None) -> ModuleOp:
    """Run an xdsl-opt pipeline (`"pass-a,pass-b{opt=1}"`) on `module` in place.

    A `module` that is not a `builtin.module` (e.g. text: `parse` it first) or a
    `pipeline` that is not a string raises `DevplanError` naming the parameter.
    """
    check_argument(
        "devplan.apply", "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)"
    )
    check_argument(
        "devplan.apply", "pipeline", pipeline, str, 'a pass pipeline string, e.g. "canonicalize"'
    )
    check_argument("devplan.apply", "ctx", ctx, (Context, type(None)), "an xdsl Context or None")
    parsed = build_pipeline(pipeline, Universe.get_multiverse().all_passes)
    vars(module).pop(COMPILED_PROGRAMS_ATTRIBUTE, None)  # what was compiled is stale now
    parsed.apply(ctx or context(), module)
    verify_located(module)
    return module


def __getattr__(name: str) -> object:
    # `devplan.execute` is `devplan.runtime.executor.execute` itself, imported on first
    # use: that keeps `import devplan` light (no runtime, NumPy kernels or numba).
    if name == "execute":
        from .runtime.executor import execute

        return execute
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
