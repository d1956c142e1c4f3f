"""The suite's rule on skips (tests/conftest.py), checked on a small suite of its own: a
skip fails unless its file is one of `LEGITIMATE_SKIPS`, and a legitimate skip is named,
with its reason, in the summary; and `DEVPLAN_TEST_PROFILE`'s lines, on the same run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

BUSY = """import time

def test_busy() -> None:
    began = time.process_time()
    while time.process_time() - began < 0.2:
        pass
"""

SKIPPING = """import pytest

def test_needs_something_absent() -> None:
    pytest.skip("{reason}")
"""


def test_only_a_legitimate_skip_skips_and_the_summary_says_why(tmp_path: Path) -> None:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    ptx = tmp_path / "runtime" / "kernels" / "test_cuda_backend_ptx.py"
    ptx.parent.mkdir(parents=True)
    ptx.write_text(SKIPPING.format(reason="NVVM is not installed"))
    # a test that skips on a runner without something, and a file whose import moved
    (tmp_path / "test_threads.py").write_text(SKIPPING.format(reason="one thread only"))
    moved = tmp_path / "test_moved.py"
    moved.write_text('import pytest\n\npytest.importorskip("no_such_module_moved")\n')
    (tmp_path / "test_busy.py").write_text(BUSY)
    profile = tmp_path / "profile.jsonl"
    flags = ["-q", "-p", "no:xdist", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *flags, "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**os.environ, "DEVPLAN_TEST_PROFILE": str(profile)},
    )
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 failed, 1 passed, 1 skipped, 1 error" in out, out
    assert "test_threads.py::test_needs_something_absent was skipped (Skipped: one thread" in out
    assert "test_moved.py was skipped (" in out
    assert (
        "skipped 1 in runtime/kernels/test_cuda_backend_ptx.py: Skipped: NVVM is not installed"
        in out
    ), out
    lines = [json.loads(line) for line in profile.read_text().splitlines()]
    (collected,) = [line for line in lines if "collected" in line]
    assert collected["collected"] == 3
    assert collected["cpu"] > 0
    tests = {line["test"]: line for line in lines if "test" in line}
    assert sorted(tests) == [
        "runtime/kernels/test_cuda_backend_ptx.py::test_needs_something_absent",
        "test_busy.py::test_busy",
        "test_threads.py::test_needs_something_absent",
    ]
    busy = tests["test_busy.py::test_busy"]
    assert 0.2 <= busy["cpu"] < 5, busy
    assert busy["compiles"] == [], busy
