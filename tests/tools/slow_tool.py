"""devplan-opt or devplan-run with one more pass, `test-sleep{seconds=N}`, that runs long:
tests of progress lines and Ctrl-C run `python slow_tool.py opt|run ARGS...`."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

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


if __name__ == "__main__":
    PASSES["test-sleep"] = lambda: SleepPass
    from devplan.tools import opt, run

    tool = opt if sys.argv[1] == "opt" else run
    sys.exit(tool.main(sys.argv[2:]))
