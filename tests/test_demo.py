"""`make demo` runs examples/demo.py: it must keep working and agree with NumPy."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

DEMO = Path(__file__).parents[1] / "examples" / "demo.py"


def test_demo_runs_classifies_outlines_and_matches_numpy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo = runpy.run_path(str(DEMO))
    assert demo["main"]() == 0
    out = capsys.readouterr().out
    assert "@main           multi-device" in out
    assert "device.target = #target.target<\"cuda\", host = #target.target<\"llvm\">>" in out
    assert out.count("matches NumPy") == 4
    # @main and 8 device programs (4 per GPU, as dependences allow), 4 of them listed.
    assert "  ... and 5 more device programs" in out
    assert re.search(r"^cuda:0<->cuda:1 +2 ", out, re.MULTILINE)
    trace = json.loads((tmp_path / "build" / "demo_trace.json").read_text())
    assert trace["traceEvents"]
