"""Remarks: what a pass says about its decisions (`explain`, `stats`), beside its errors.

A pass hands each remark to `emit_remark`; where it goes is the caller's choice, held in
a context variable. By default a remark is printed to stderr, which is where
`devplan-opt` shows it; a Python caller collects remarks as strings instead:

```python
with collect_remarks() as remarks:
    devplan.apply(module, "elide-copies{stats=true}")
```

or `devplan.apply(module, pipeline, remarks=list)`. Entry points wrapped by
`with_deep_stack` see the caller's sink, although they run on another thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar

RemarkSink = Callable[[str], None]
"""Where a remark's text goes."""


def print_remark(text: str) -> None:
    """The default sink: the remark on its own line(s) of stderr."""
    print(text, file=sys.stderr)


_sink: ContextVar[RemarkSink] = ContextVar("devplan_remark_sink", default=print_remark)


def emit_remark(text: str) -> None:
    """Send one remark (a whole message, e.g. `file:line:col: remark: ...`) to the sink."""
    _sink.get()(text)


@contextmanager
def remarks_to(sink: RemarkSink) -> Generator[None]:
    """Within the block, remarks emitted in this context go to `sink`."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


@contextmanager
def collect_remarks(into: list[str] | None = None) -> Generator[list[str]]:
    """Within the block, remarks are appended to `into` (a new list when None), in the
    order they are emitted, instead of being printed; the block gets the list."""
    remarks: list[str] = [] if into is None else into
    with remarks_to(remarks.append):
        yield remarks
