"""What several test files share: the repository's paths and simulated systems.

pytest puts `tests/` on the import path (`pythonpath` in pyproject.toml), so a test
imports these as `from support import EXAMPLES`.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository (the `devplan` package's top level)."""

TESTS = ROOT / "tests"
EXAMPLES = ROOT / "examples"
