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

from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError

from .diagnostics import (
    DevplanError,
    LocatingParser,
    register_source,
    verify_located,
)
from .dialects.target import Target, TargetError
from .dialects.vdev import VirtualDevice  # importing it registers the vdev module verifier
from .pipeline import build_pipeline

if TYPE_CHECKING:
    from .runtime.executor import execute

__version__ = "0.1.0"


def context() -> Context:
    """An xDSL `Context` with every xDSL and devplan dialect registered (lazily); `gpu`
    and `memref` read MLIR's custom syntax of the gpu ops and `memref.cast`
    (`dialects/gpu_assembly.py`)."""
    from .dialects.gpu_assembly import DIALECT_OVERRIDES

    ctx = Context()
    factories = {**Universe.get_multiverse().all_dialects, **DIALECT_OVERRIDES}
    for name, factory in factories.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse(source: str | Path, ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse MLIR text, or the file at a `Path`, into a `builtin.module`.

    A string that names an existing `.mlir` file is read as that file. Every op gets
    its `loc("file":line:col)`. Bad input raises `DevplanError` whose text is one
    located diagnostic.
    """
    if isinstance(source, Path) or (
        "\n" not in source and source.endswith(".mlir") and Path(source).is_file()
    ):
        name = str(source)
        text = Path(source).read_text()
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


def apply(module: ModuleOp, pipeline: str, ctx: Context | None = None) -> ModuleOp:
    """Run an xdsl-opt pipeline (`"pass-a,pass-b{opt=1}"`) on `module` in place."""
    parsed = build_pipeline(pipeline, Universe.get_multiverse().all_passes)
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
