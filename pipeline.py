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
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from .diagnostics import DevplanError

PassFactories = dict[str, Callable[[], type[ModulePass]]]

COMPILED_PROGRAMS_ATTRIBUTE = "_devplan_programs"
"""Where a module keeps the programs the executor compiled from it (per kernel backend);
`devplan.apply` drops them, since the passes it runs change the module."""


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


def _option_error(error: ValueError, pass_spec: ArgSpec) -> str:
    """xDSL's `Incompatible types: given ('x',), expected <class 'bool'>`, said plainly."""
    match = re.fullmatch(r"Incompatible types: given \((.*?),?\), expected (.*)", str(error))
    if match is None:
        return str(error)
    expected = re.sub(r"<class '(\w+)'>", r"\1", match.group(2))
    given = match.group(1)
    for option, value in pass_spec.parameters.items():
        if repr(tuple(value)).removesuffix(",)").removesuffix(")") == f"({given}":
            return f"option '{option}' expects {expected}, got {given}"
    return f"an option expects {expected}, got {given}"
