"""`devplan.tools.console`: what both tools share. A tool run as the program collects
garbage less often and freezes its objects before it exits, so that Python's finalization
does not scan them all for cycles; a tool called with an argument list (a test, an
embedding) leaves the collector as it was."""

from __future__ import annotations

import gc
from collections.abc import Sequence

from devplan.tools.console import run_tool


def test_only_a_tool_run_as_the_program_tunes_the_collector() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    def tool_main(argv: Sequence[str] | None) -> int:
        seen.append(gc.get_threshold())
        return 3

    assert gc.get_freeze_count() == 0
    assert run_tool(tool_main, ["examples/mlp.mlir"]) == 3
    assert seen == [before]
    assert gc.get_freeze_count() == 0
    try:
        assert run_tool(tool_main, None) == 3
        assert seen[1][0] > before[0]  # the young generation waits longer while it runs
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == before
    finally:
        gc.unfreeze()
