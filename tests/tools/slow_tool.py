"""devplan-opt or devplan-run with one more pass, `test-sleep{seconds=N}`, that runs long,
and optionally kernel compiles that each take N seconds more: tests of progress lines and
Ctrl-C run `python slow_tool.py opt|run [--compile-seconds N] ARGS...`."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from devplan.passes.registry import PASSES


@dataclass(frozen=True)
class SleepPass(ModulePass):
    """Sleeps, changing nothing."""

    name = "test-sleep"
    seconds: float = 3.0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        time.sleep(self.seconds)


def slow_compiles(seconds: float) -> None:
    """Every kernel backend's compiler sleeps `seconds` first."""
    from devplan.runtime.kernels import compile as kernels

    for name, compiler in list(kernels.COMPILERS.items()):

        def slowly(kernel: Any, what: str, compiler: Any = compiler) -> Any:
            time.sleep(seconds)
            return compiler(kernel, what)

        kernels.COMPILERS[name] = slowly


if __name__ == "__main__":
    PASSES["test-sleep"] = lambda: SleepPass
    from devplan.tools import opt, run

    tool = opt if sys.argv[1] == "opt" else run
    args = sys.argv[2:]
    if args[:1] == ["--compile-seconds"]:
        slow_compiles(float(args[1]))
        args = args[2:]
    sys.exit(tool.main(args))
