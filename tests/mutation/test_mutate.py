"""`make mutate`'s script: which mutants it leaves out as equivalent by construction."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "mutation"))

import mutate  # noqa: E402  (the script is not a package module)

SOURCE = '''from __future__ import annotations


def plain(a: int | None, *rest: str | bytes) -> list[int | None]:
    local: dict[str, int | None] = {}
    return [a if a | 1 else None]


@decorated
def read_by_its_decorator(op: A | B) -> None:
    class Inner:
        field: int | None = None


class Attribute:
    value: int | None
'''


def texts(path: Path) -> list[str]:
    """The source text of each span `unevaluated_annotations` finds in `path`."""
    lines = path.read_text().splitlines()
    found: list[str] = []
    for (line, column), (end_line, end_column) in mutate.unevaluated_annotations(path):
        assert line == end_line  # every annotation above is on one line
        found.append(lines[line - 1][column:end_column])
    return found


def test_only_annotations_python_never_evaluates_are_left_out(tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(SOURCE)
    # Parameters, results and locals of an undecorated function; not a decorated one's
    # parameters (the decorator may read them), nor class attributes, nor code (`a | 1`).
    assert sorted(texts(path)) == sorted(
        ["int | None", "str | bytes", "list[int | None]", "dict[str, int | None]"]
    )
    # Without postponed evaluation, only the locals' annotations are never evaluated.
    path.write_text(SOURCE.replace("from __future__ import annotations\n", ""))
    assert texts(path) == ["dict[str, int | None]"]
