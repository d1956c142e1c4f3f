"""`--verify-diagnostics`' matching (diagnostics/expected.py), without a tool."""

from __future__ import annotations

from devplan.diagnostics.expected import (
    check_diagnostics,
    expected_diagnostics,
    produced_diagnostics,
)

SOURCE = """// expected-error@+1 {{bad}}
op1
op2 // expected-warning {{careful}}
// expected-note@below {{see}}
// expected-remark@below {{said}}
op3
// expected-error@-5 {{also}}
// expected-remark@above {{twice}}
"""


def test_designators_point_at_their_lines() -> None:
    expected, problems = expected_diagnostics("f.mlir", SOURCE, line_offset=10)
    assert problems == []
    assert [(e.kind, e.text, e.target) for e in expected] == [
        ("error", "bad", 12),
        ("warning", "careful", 13),
        ("note", "see", 16),
        ("remark", "said", 16),
        ("error", "also", 12),
        ("remark", "twice", 16),
    ]


def test_absolute_line_and_unsupported_forms() -> None:
    expected, problems = expected_diagnostics(
        "f.mlir", "// expected-error@7 {{x}}\n// expected-error-re {{x}}\n// expected-error x\n"
    )
    assert [e.target for e in expected] == [7]
    assert "(regular expressions) is not supported" in problems[0]
    assert "malformed annotation 'expected-error x'" in problems[1]


def test_an_error_with_its_note_is_two_diagnostics() -> None:
    produced = produced_diagnostics(
        "f.mlir:2:3: error: bad thing\n  op\n  ^\nf.mlir:1:1: note: see here\nop\n^"
    )
    assert [(d.kind, d.line, d.message) for d in produced] == [
        ("error", 2, "bad thing"),
        ("note", 1, "see here"),
    ]


def test_all_met_is_no_failure_and_each_expectation_matches_once() -> None:
    expected, _ = expected_diagnostics("f.mlir", "// expected-error@+1 {{bad}}\nop\n")
    twice = produced_diagnostics("f.mlir:2:1: error: bad one") * 2
    failures = check_diagnostics("f.mlir", expected, twice)
    assert len(failures) == 1
    assert failures[0].startswith("f.mlir:2:1: error: unexpected error: bad one")


def test_missing_unexpected_and_wrong_kind_each_say_so() -> None:
    expected, _ = expected_diagnostics(
        "f.mlir", "// expected-error@+1 {{bad}}\nop\n// expected-warning@+1 {{w}}\nop\n"
    )
    produced = produced_diagnostics("f.mlir:4:1: remark: w here") + produced_diagnostics(
        "error: no place"
    )
    failures = check_diagnostics("f.mlir", expected, produced)
    assert failures[0].startswith(
        "f.mlir:4:1: error: 'remark' diagnostic emitted when expecting a 'warning'"
    )
    assert failures[1] == "error: unexpected error: no place"
    assert failures[2].startswith(
        'f.mlir:1:4: error: expected error "bad" at line 2 was not produced'
    )
