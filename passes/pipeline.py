"""Pass pipelines in xdsl-opt syntax (`"pass-a,pass-b{opt=1}"`) with clear errors.

xDSL reports a misspelt pass or option as a `ValueError` listing Python names; devplan
checks a pipeline first and says which pass, which option, and what would be valid.
MLIR's anchored form, `builtin.module(pass-a,pass-b{opt=1})`, is the same pipeline:
devplan's passes are all module passes, so an op anchor nested inside it (`func.func(...)`)
is an error rather than something run on the wrong op. Each pass runs inside
`diagnostics.progress`, so a pass that runs longer than a second is announced where the
caller sends progress.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextlib import ExitStack

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from ..diagnostics import DevplanError
from ..diagnostics.progress import progress

PassFactories = dict[str, Callable[[], type[ModulePass]]]


def _suggestion(word: str, choices: list[str]) -> str:
    import difflib  # here, not at the top: only a misspelt name pays for it

    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def verified_by_itself(ran: ModulePass | None) -> bool:
    """Whether pass `ran` verified the IR it produced (a pass class saying
    `verifies_result = True`, as `default-pipeline` does), so that a driver verifying
    after every pass may skip it: verifying a lowered program costs about as much as
    lowering it."""
    return bool(getattr(ran, "verifies_result", False))


def pass_options(pass_class: type[ModulePass]) -> list[str]:
    """The options of a pass as written on the command line (`max-iterations`)."""
    return [
        f.name.replace("_", "-")
        for f in dataclasses.fields(pass_class)
        if f.init and f.name != "name"
    ]


def pass_option_fields(pass_class: type[ModulePass]) -> list[tuple[str, str, str]]:
    """Each option of a pass as (name on the command line, type, default as written in a
    pipeline: `true`, `"text"`, `none` for unset)."""
    fields: list[tuple[str, str, str]] = []
    for f in dataclasses.fields(pass_class):
        if not f.init or f.name == "name":
            continue
        if f.default is not dataclasses.MISSING:
            default: object = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        type_ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        fields.append((f.name.replace("_", "-"), type_, _pipeline_text(default)))
    return fields


def _pipeline_text(value: object) -> str:
    if value is dataclasses.MISSING:
        return "(required)"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return ",".join(_pipeline_text(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return str(value)


def build_pipeline(
    spec: str, passes: PassFactories, callback: PassPipelineCallbackType | None = None
) -> PassPipeline:
    """The pipeline `spec` names; a `DevplanError` naming the bad pass or option."""
    spec = unanchored(spec)
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
                "`devplan-opt --list-passes` lists every pass"
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
    return ProgressPipeline(tuple(built), callback)


def unanchored(spec: str) -> str:
    """The xdsl-opt form of a pipeline: MLIR's `builtin.module(a,b{x=1})` unwrapped, any
    other text as it is; a `DevplanError` for an anchor devplan cannot run."""
    text = spec.strip()
    match = re.match(r"([\w.$-]+)\s*\(", text)
    if match is None:
        return spec
    anchor = match.group(1)
    if anchor != "builtin.module":
        raise DevplanError(
            f"error: pass pipeline anchored on '{anchor}': devplan runs module passes "
            "only; write 'builtin.module(...)' or the passes alone"
        )
    inner, rest = _up_to_closing_paren(text, match.end())
    if rest.strip():
        raise DevplanError(
            f"error: unexpected '{rest.strip()}' after 'builtin.module(...)' in the pass pipeline"
        )
    nested = re.search(r"([\w.$-]+)\s*\(", _outside_quotes(inner))
    if nested is not None:
        raise DevplanError(
            f"error: pass pipeline nests '{nested.group(1)}(...)' in 'builtin.module': "
            "devplan runs module passes only; list the passes directly inside it"
        )
    return inner


def _outside_quotes(text: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)


def _up_to_closing_paren(text: str, start: int) -> tuple[str, str]:
    """The text from `start` to the `)` that closes the `(` before it, and what follows."""
    depth, quoted = 1, False
    for i in range(start, len(text)):
        c = text[i]
        if c == '"' and text[i - 1] != "\\":
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
            if depth == 0:
                return text[start:i], text[i + 1 :]
    raise DevplanError("error: 'builtin.module(' in the pass pipeline has no closing ')'")


@dataclasses.dataclass(frozen=True)
class ProgressPipeline(PassPipeline):
    """A `PassPipeline` that runs each pass inside `progress("running pass '<name>'")`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with ExitStack() as running:

            def call(
                previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
            ) -> None:
                running.close()  # the previous pass has ended
                if self.callback is not None:
                    self.callback(previous, module, following)
                if following is not None:
                    running.enter_context(progress(f"running pass '{following.name}'"))

            PassPipeline(self.passes, call).apply(ctx, op)


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
