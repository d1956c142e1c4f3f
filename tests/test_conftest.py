"""The suite's rule on skips (tests/conftest.py), checked on a small suite of its own: a
skip fails unless its file is one of `LEGITIMATE_SKIPS`, and a legitimate skip is named,
with its reason, in the summary."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

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
    flags = ["-q", "-p", "no:xdist", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *flags, "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 failed, 1 skipped, 1 error" in out, out
    assert "test_threads.py::test_needs_something_absent was skipped (Skipped: one thread" in out
    assert "test_moved.py was skipped (" in out
    assert (
        "skipped 1 in runtime/kernels/test_cuda_backend_ptx.py: Skipped: NVVM is not installed"
        in out
    ), out
