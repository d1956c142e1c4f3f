"""`make demo` runs examples/demo.py: it must keep working and agree with NumPy (level 2)
and with the oracle (level 1: the MLP, the transformer block and the CNN, and the MLP
under both placement strategies)."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

DEMO = Path(__file__).parents[1] / "examples" / "demo.py"


def test_demo_plans_lowers_runs_compares_strategies_then_classifies_outlines_and_matches_numpy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo = runpy.run_path(str(DEMO))
    assert demo["main"]() == 0
    out = capsys.readouterr().out
    # Level 1: the MLP's layers where the hints put them, two planned copies, the oracle.
    assert re.search(r"^  cpu:0 +%e2 %r$", out, re.MULTILINE)
    assert re.search(r"^  cuda:0 +%x %w1 .*%xw .*%h$", out, re.MULTILINE)
    assert re.search(r"^  cuda:1 +%w2 .*%y$", out, re.MULTILINE)
    assert re.search(r"^  %h +cuda:0 +-> cpu:0 +16.0 KiB$", out, re.MULTILINE)
    assert re.search(r"^  %r +cpu:0 +-> cuda:1 +16.0 KiB$", out, re.MULTILINE)
    assert "@main (multi-device)" in out
    assert "launches 1 on cpu:0, 3 on cuda:0, 2 on cuda:1" in out
    assert "result float32[32x10]: matches the oracle" in out
    # The models: the transformer's residuals on the CPU, attention on cuda:0, the MLP on
    # cuda:1; the CNN's features on cuda:0 and its classifier on the CPU.
    assert re.search(r"^  cpu:0 +%h %out$", out, re.MULTILINE)
    assert re.search(r"^  cuda:0 +%x .*%ln1 .*%q %k %v ", out, re.MULTILINE)
    assert re.search(r"^  cuda:1 +%g2 .*%ln2 .*%up %gelu ", out, re.MULTILINE)
    assert "launches 2 on cpu:0, 17 on cuda:0, 8 on cuda:1" in out  # k^T a copy kernel
    assert "result float32[16x32]: matches the oracle" in out
    assert re.search(r"^  cpu:0 +%wfc %e5 %z5 %scores$", out, re.MULTILINE)
    assert re.search(r"^  %features cuda:0 +-> cpu:0 +64 B$", out, re.MULTILINE)
    assert "result float32[1x10]: matches the oracle" in out
    assert out.count("leaked buffers: none") == 3
    # Strategies: the cost strategy moves the first layer off the CPU, for less modelled
    # time, and the executor's report gives each run the time the planner modelled.
    assert "modelled by the planner 1.990 ms; the executor's report 1.990 ms" in out
    assert "modelled by the planner 1.345 ms; the executor's report 1.345 ms" in out
    assert re.search(r"^  cuda:1 +%w1 %b1 %w2 %e1 %a1 %m1 ", out, re.MULTILINE)
    assert out.count("result matches the oracle") == 2
    # Data parallelism: each GPU gets its half of the batch, not the batch.
    assert re.search(r"^  %top +cpu:0 +-> cuda:0 +1.0 KiB$", out, re.MULTILINE)
    assert re.search(r"^  %bottom +cpu:0 +-> cuda:1 +1.0 KiB$", out, re.MULTILINE)
    assert re.search(r"^  %y1 +cuda:1 +-> cpu:0 +512 B$", out, re.MULTILINE)
    assert "result float32[8x32] of both halves: matches the oracle" in out
    assert "@main           multi-device" in out
    assert 'device.target = #target.target<"cuda", host = #target.target<"llvm">>' in out
    assert out.count("matches NumPy") == 4
    # @main and 8 device programs (4 per GPU, as dependences allow), 4 of them listed.
    assert "  ... and 5 more device programs" in out
    assert re.search(r"^cuda:0<->cuda:1 +2 ", out, re.MULTILINE)
    trace = json.loads((tmp_path / "build" / "demo_trace.json").read_text())
    assert trace["traceEvents"]
