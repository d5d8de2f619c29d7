"""Secrets split over string literals that code joins: `"xoxb-123" "456-…"`, `"npm_ab" + \\`.

Code wraps a long literal by writing it in pieces the compiler joins: adjacent literals
(Python, C, Go with `+`), `+` or `.` (PHP) or `..` (Lua) or `&` (VB) between them, often one
piece per line, sometimes with a `\\` line continuation. No piece may match a token format
on its own. `StringConcatRule` finds two or more quoted literals joined that way, scans the
joined contents with the same chain (one level deeper), and keeps the inner matches that
cross from one piece into the next and end where a piece ends: each piece's part of the match
is then replaced under the inner rule's id, so the code keeps its quotes and its shape.

Risky part: quotes pair up ambiguously in text that is not code. A match must cross a piece
boundary and end exactly at a piece's end (a token ends where its literal ends), so prose with
quoted words (`"yes" "no"`) joins into nothing any rule takes.
"""

from __future__ import annotations

from ._joined import JoinedPiecesRule, scan_joined
from ._normalize import utf8_safe
from ._scanner import Candidate, View, compile_pattern

__all__ = ["StringConcatRule"]

_LITERAL = r"(?:\"[^\"\\\r\n]*\"|'[^'\\\r\n]*')"
_JOINER = r"(?:[ \t]*(?:\+|\.\.?|&)[ \t]*(?:\\?\r?\n[ \t]*)?|[ \t]*\\?\r?\n[ \t]*|[ \t]+)"
"""What stands between two pieces: one operator, a line break, or both, or spaces; never
nothing (`""` is an empty string, `'O''Brien'` an escaped quote)."""


class StringConcatRule(JoinedPiecesRule):
    """Finds secrets in string literals joined by code; candidates carry the inner rules' ids."""

    rule_id = "string_concat"
    description = "secrets split over string literals that code joins, under their own ids"
    trigger = rf"[\"']{_JOINER}[\"']"
    """Minimal on purpose: counted runs here multiply the gate's states on dense text."""

    def __init__(self, priority: int) -> None:
        super().__init__(priority)
        self._regex = compile_pattern(rf"{_LITERAL}(?:{_JOINER}{_LITERAL})+")
        self._piece = compile_pattern(_LITERAL)

    def find(self, view: View) -> list[Candidate]:
        """Each piece's part of every inner match that crosses from one piece to the next."""
        if view.depth >= 1:
            return []
        text, found = view.text, []
        for spans in view.matches(self._regex):
            start, end = spans[0]
            pieces = _pieces(self._piece, text, start, end)
            if len(pieces) < 2:
                continue
            ends, inner = scan_joined(view, pieces)  # joined offsets where each piece ends
            for s, e, priority, rule_id in inner:
                first = next(k for k, stop in enumerate(ends) if s < stop)
                if e not in ends or ends.index(e) <= first:
                    continue  # within one piece (the plain scan has it), or ends mid-piece
                found.extend(
                    (a, b, priority, rule_id) for a, b in _parts(pieces, ends, s, e, first)
                )
        return found


def _pieces(regex: object, text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The content spans (quotes left out) of the literals in `text[start:end]`."""
    out = []
    # On the slice: RE2's wrapper encodes a whole `str` at every call (see `_encoded._unwrap`).
    for found in regex.finditer(utf8_safe(text[start:end])):  # type: ignore[attr-defined]
        a, b = found.span()
        if b - a > 2:
            out.append((start + a + 1, start + b - 1))
    return out


def _parts(
    pieces: list[tuple[int, int]], ends: list[int], s: int, e: int, first: int
) -> list[tuple[int, int]]:
    """The text spans, one per piece, of the joined span `[s, e)` (starting in `first`)."""
    parts = []
    last = ends.index(e)
    for k in range(first, last + 1):
        a, b = pieces[k]
        begin = ends[k - 1] if k else 0
        lo = a + max(0, s - begin)
        hi = b - max(0, ends[k] - e)
        if lo < hi:
            parts.append((lo, hi))
    return parts
