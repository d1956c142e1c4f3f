"""An MLIR lexer whose string literals take time linear in their length."""

from __future__ import annotations

import re

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken


class LinearStringLexer(MLIRLexer):
    """xDSL's lexer with string literals lexed in time linear in their length.

    xDSL 0.74 matches a string literal with a regular expression that nests `+` inside
    `*`; on a literal with no closing quote (a truncated file, a newline or a bad escape
    inside it) the regex engine tries every way of splitting the text, exponential in
    its length (a 150-byte unclosed literal takes minutes). The possessive quantifiers
    here never give back what they matched, and a literal that does not close is
    reported at the place it stops.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
    _string_body_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+')

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        content = self.input.content
        body = self._string_body_regex.match(content, start_pos)
        assert body is not None  # the opening quote always matches
        stop = body.end()
        if stop >= len(content) or content[stop:] == "\\":
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "string literal is not closed before the end of the input",
            )
        if content[stop] == "\\":
            raise ParseError(
                Span(stop, stop + 1, self.input),
                "invalid escape sequence in string literal"
                ' (valid: \\n, \\t, \\\\, \\" and two hex digits)',
            )
        if content[stop] != '"':
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "string literal is not closed before the end of the line",
            )
        return super()._lex_string_literal(start_pos)
