"""Progress lines (diagnostics/progress.py): once, only after the delay, only to a sink."""

from __future__ import annotations

import threading
import time

from devplan.diagnostics.progress import progress, progress_to


def test_work_longer_than_the_delay_is_announced_once() -> None:
    lines: list[str] = []
    with progress_to(lines.append), progress("compiling @k for cuda:0", delay=0.05):
        time.sleep(0.3)
    assert lines == ["compiling @k for cuda:0"]


def test_short_work_is_not_announced() -> None:
    lines: list[str] = []
    with progress_to(lines.append):
        with progress("quick", delay=0.5):
            pass
        time.sleep(0.7)  # the timer was cancelled, not merely late
    assert lines == []


def test_without_a_sink_no_timer_is_started() -> None:
    before = threading.active_count()
    with progress("unheard", delay=0.0):
        assert threading.active_count() == before
