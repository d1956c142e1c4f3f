"""Pass pipelines in xdsl-opt syntax (`"pass-a,pass-b{opt=1}"`) with clear errors.

xDSL reports a misspelt pass or option as a `ValueError` listing Python names; devplan
checks a pipeline first and says which pass, which option, and what would be valid.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from ..diagnostics import DevplanError

PassFactories = dict[str, Callable[[], type[ModulePass]]]


def _suggestion(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def pass_options(pass_class: type[ModulePass]) -> list[str]:
    """The options of a pass as written on the command line (`max-iterations`)."""
    return [
        f.name.replace("_", "-")
        for f in dataclasses.fields(pass_class)
        if f.init and f.name != "name"
    ]


def build_pipeline(
    spec: str, passes: PassFactories, callback: PassPipelineCallbackType | None = None
) -> PassPipeline:
    """The pipeline `spec` names; a `DevplanError` naming the bad pass or option."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        raise DevplanError(f"error: {e}") from None
    _check_no_option_twice(spec)
    built: list[ModulePass] = []
    for pass_spec in specs:
        factory = passes.get(pass_spec.name)
        if factory is None:
            raise DevplanError(
                f"error: unknown pass '{pass_spec.name}'"
                f"{_suggestion(pass_spec.name, sorted(passes))}; "
                "`devplan-opt --help` lists every pass"
            )
        pass_class = factory()
        options = pass_options(pass_class)
        for given in pass_spec.parameters:
            if given.replace("_", "-") not in options:
                listed = ", ".join(options) if options else "none"
                raise DevplanError(
                    f"error: pass '{pass_spec.name}' has no option '{given}'"
                    f"{_suggestion(given.replace('_', '-'), options)}; its options: {listed}"
                )
        try:
            built.append(pass_class.from_pass_spec(pass_spec))
        except ValueError as e:
            raise DevplanError(
                f"error: pass '{pass_spec.name}': {_option_error(e, pass_spec)}"
            ) from None
    return PassPipeline(tuple(built), callback)


def _check_no_option_twice(spec: str) -> None:
    """A `DevplanError` when a pass of the (well-formed) `spec` is given an option twice:
    xDSL keeps one of them (`stats=true stats=false` ran with stats off) and drops the
    other without a word. `dynamic-size` and `dynamic_size` are one option."""
    lexer = PipelineLexer(spec)
    pass_name, inside = "", False
    options: set[str] = set()
    previous = SpecTokenKind.EOF
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is SpecTokenKind.L_BRACE:
            options, inside = set[str](), True
        elif token.kind is SpecTokenKind.R_BRACE:
            inside = False
        elif token.kind is SpecTokenKind.IDENT and not inside:
            pass_name = token.span.text
        elif token.kind is SpecTokenKind.IDENT and previous in (
            SpecTokenKind.L_BRACE,
            SpecTokenKind.SPACE,
        ):
            option = token.span.text.replace("_", "-")
            if option in options:
                raise DevplanError(
                    f"error: pass '{pass_name}' is given option '{option}' twice; "
                    "give each option once"
                )
            options.add(option)
        previous = token.kind


def _option_error(error: ValueError, pass_spec: ArgSpec) -> str:
    """xDSL's `Incompatible types: given ('x',), expected <class 'bool'>`, said plainly."""
    match = re.fullmatch(r"Incompatible types: given \((.*?),?\), expected (.*)", str(error))
    if match is None:
        return str(error)
    expected = re.sub(r"<class '(\w+)'>", r"\1", match.group(2))
    given = match.group(1)
    got = given or "no value"  # `{stats}`: a name without `=value`
    for option, value in pass_spec.parameters.items():
        if repr(tuple(value)).removesuffix(",)").removesuffix(")") == f"({given}":
            return f"option '{option}' expects {expected}, got {got}"
    return f"an option expects {expected}, got {got}"
