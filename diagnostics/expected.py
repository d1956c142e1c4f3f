"""`--verify-diagnostics` as mlir-opt does it: expected diagnostics written in the input.

A comment `// expected-error@+1 {{text}}` says that an error whose message contains
`text` is reported at the line below. The designator after `@` says which line: none
(this line), `+N` / `-N` (relative), `N` (that line of the file), `above` / `below` (the
nearest line above or below that holds no `expected-` annotation). The kinds are
`expected-error`, `expected-warning`, `expected-remark` and `expected-note` (a note
attached to an error is a diagnostic of its own, as in MLIR). Each expectation matches
one diagnostic. Checking yields the failures, each a located message:

- `expected error "text" at line N was not produced` (at the annotation);
- `unexpected error: message` (at the diagnostic);
- `'remark' diagnostic emitted when expecting a 'error'` (MLIR's words, at the diagnostic).

MLIR's `expected-error-re` (regular expressions) is not supported: it is reported as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import format_diagnostic

_ANNOTATION = re.compile(
    r"expected-(?P<kind>error|warning|remark|note)(?P<re>-re)?"
    r"(?:@(?P<where>[+-]\d+|above|below|\d+))?\s*\{\{(?P<text>.*)\}\}\s*$"
)
_MENTION = re.compile(r"expected-(error|warning|remark|note)\b")
_HEADER = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|remark|note): (?P<msg>.*)$"
)
_UNLOCATED = re.compile(r"^(?:<unknown>: )?(?P<kind>error|warning|remark|note): (?P<msg>.*)$")


@dataclass
class Expected:
    """One `expected-<kind>` annotation: at `line` (of the file), the diagnostic it expects
    at `target`."""

    kind: str
    text: str
    line: int
    col: int
    target: int
    matched: bool = False


@dataclass(frozen=True)
class Produced:
    """One diagnostic a run reported: `line` 0 when it has no place in the input."""

    kind: str
    message: str
    file: str
    line: int
    col: int


def expected_diagnostics(
    filename: str, text: str, line_offset: int = 0
) -> tuple[list[Expected], list[str]]:
    """The annotations in `text` (a chunk starting after line `line_offset` of
    `filename`), and the messages for annotations that cannot be checked."""
    lines = text.split("\n")
    mentions = [_MENTION.search(line) is not None for line in lines]
    found: list[Expected] = []
    problems: list[str] = []
    for index, line in enumerate(lines):
        mention = _MENTION.search(line)
        if mention is None:
            continue
        number, col = line_offset + index + 1, mention.start() + 1
        match = _ANNOTATION.search(line, mention.start())
        if match is None or match.group("re"):
            kind = mention.group(1)
            if match is not None:
                what = f"'expected-{kind}-re' (regular expressions) is not supported"
            else:
                what = f"malformed annotation '{line[mention.start() :].strip()}'"
            problems.append(
                format_diagnostic(
                    filename,
                    number,
                    col,
                    f"{what}: write 'expected-{kind}@+1 {{{{text}}}}' (@+N, @-N, @N, "
                    "@above, @below or none for this line) with text the message contains",
                )
            )
            continue
        target = _target(match.group("where"), index, mentions)
        if target is None:
            problems.append(
                format_diagnostic(
                    filename, number, col, f"no line without an annotation is {match['where']}"
                )
            )
            continue
        where = match.group("where") or ""
        absolute = where.isdigit()
        found.append(
            Expected(
                match.group("kind"),
                match.group("text"),
                number,
                col,
                int(where) if absolute else line_offset + target + 1,
            )
        )
    return found, problems


def _target(where: str | None, index: int, mentions: list[bool]) -> int | None:
    """The 0-based line of the chunk an annotation on line `index` points at."""
    if where is None or where.isdigit():
        return index
    if where in ("above", "below"):
        step = -1 if where == "above" else 1
        i = index + step
        while 0 <= i < len(mentions) and mentions[i]:
            i += step
        return i if 0 <= i < len(mentions) else None
    return index + int(where)


def produced_diagnostics(text: str) -> list[Produced]:
    """The diagnostics in a message a run printed (an error with its notes, a remark):
    every `file:line:col: kind: message` line; quoted source and caret lines are skipped.
    A message with no such line is one unlocated diagnostic."""
    found = [
        Produced(m["kind"], m["msg"], m["file"], int(m["line"]), int(m["col"]))
        for m in map(_HEADER.match, text.split("\n"))
        if m is not None
    ]
    if found:
        return found
    first = text.split("\n", 1)[0]
    unlocated = _UNLOCATED.match(first)
    if unlocated is None:
        return [Produced("error", text, "", 0, 0)]
    return [Produced(unlocated["kind"], unlocated["msg"], "", 0, 0)]


def check_diagnostics(
    filename: str, expected: list[Expected], produced: list[Produced]
) -> list[str]:
    """The failures of `--verify-diagnostics` for one chunk: each produced diagnostic must
    match an expectation at its line (same file, kind, and `text` within its message),
    and each expectation must be matched."""
    failures: list[str] = []
    for diagnostic in produced:
        candidates = [
            e
            for e in expected
            if not e.matched
            and diagnostic.file == filename
            and e.target == diagnostic.line
            and e.text in diagnostic.message
        ]
        same_kind = [e for e in candidates if e.kind == diagnostic.kind]
        if same_kind:
            same_kind[0].matched = True
            continue
        if candidates:
            candidates[0].matched = True
            message = (
                f"'{diagnostic.kind}' diagnostic emitted when expecting a '{candidates[0].kind}'"
            )
        else:
            message = f"unexpected {diagnostic.kind}: {diagnostic.message}"
        if diagnostic.line == 0:
            failures.append(f"error: {message}")
        else:
            failures.append(
                format_diagnostic(diagnostic.file, diagnostic.line, diagnostic.col, message)
            )
    for e in expected:
        if not e.matched:
            failures.append(
                format_diagnostic(
                    filename,
                    e.line,
                    e.col,
                    f'expected {e.kind} "{e.text}" at line {e.target} was not produced',
                )
            )
    return failures
