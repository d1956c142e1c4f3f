"""Diagnostics: user errors placed in the source, remarks, and where entry points run.

Every user error is a `DevplanError` (or xDSL's `ParseError` and `DiagnosticException`,
whose text is in the same form), so tools print `str(error)` and exit 1. The package
imports nothing of devplan: every other layer builds on it.

- `errors`: `DevplanError`, `LocatedError` and messages placed at an op (`error_at`);
- `arguments`: checks of what a caller passes to the Python API;
- `lexer`, `parser`: `LocatingParser`, which gives every parsed op its location;
- `verification`: `verify_located`, op by op, then the module verifiers the caller passes;
- `remarks`: the one sink of remarks (`emit_remark`, `collect_remarks`);
- `progress`: a line for work that runs longer than a second (`progress`, `progress_to`);
- `expected`: mlir-opt's `expected-error` annotations, checked by `--verify-diagnostics`;
- `deep_stack`: `with_deep_stack`, the big-stack workers entry points run on.
"""

from __future__ import annotations

from .arguments import check_argument, describe_value
from .deep_stack import RECURSION_LIMIT, with_deep_stack
from .errors import (
    DevplanError,
    LocatedError,
    diagnostic_at,
    error_at,
    format_diagnostic,
    location_of,
    op_text,
    register_source,
    registered_source,
)
from .parser import LocatedParseError, LocatingParser, explicit_location, format_parse_error
from .remarks import RemarkSink, collect_remarks, emit_remark, remarks_to
from .verification import ModuleVerifier, verify_located

__all__ = [
    "RECURSION_LIMIT",
    "DevplanError",
    "LocatedError",
    "LocatedParseError",
    "LocatingParser",
    "ModuleVerifier",
    "RemarkSink",
    "check_argument",
    "collect_remarks",
    "describe_value",
    "diagnostic_at",
    "emit_remark",
    "error_at",
    "explicit_location",
    "format_diagnostic",
    "format_parse_error",
    "location_of",
    "op_text",
    "register_source",
    "registered_source",
    "remarks_to",
    "verify_located",
    "with_deep_stack",
]
