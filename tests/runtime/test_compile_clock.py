"""The compile clock keeps each compiling block's time apart, by what it compiled."""

from __future__ import annotations

import time

from devplan.runtime import compile_clock
from devplan.runtime.compile_clock import compiles, compiling


def test_each_compiling_block_is_listed_with_what_it_compiled_and_its_time() -> None:
    before, total = len(compiles()), compile_clock.seconds()
    with compiling("compiling kernel @outer (numba)"):
        with compiling("compiling kernel @inner (numba)"):
            time.sleep(0.02)
        time.sleep(0.01)
    (inner, inner_s), (outer, outer_s) = compiles()[before:]
    assert (inner, outer) == ("compiling kernel @inner (numba)", "compiling kernel @outer (numba)")
    assert 0.02 <= inner_s < outer_s
    assert outer_s >= 0.03
    assert compile_clock.seconds() - total >= inner_s + outer_s  # a nested block counts twice
