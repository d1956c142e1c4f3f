"""`devplan.tools.console`: what both tools share. A tool run as the program freezes its
objects before it exits, so that Python's finalization does not scan them all for
cycles; a tool called with an argument list (a test, an embedding) leaves the collector
as it was."""

from __future__ import annotations

import gc

from devplan.tools.console import exit_without_collecting


def test_only_a_tool_run_as_the_program_freezes_its_objects_for_exit() -> None:
    assert gc.get_freeze_count() == 0
    exit_without_collecting(["examples/mlp.mlir"])
    assert gc.get_freeze_count() == 0
    try:
        exit_without_collecting(None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
