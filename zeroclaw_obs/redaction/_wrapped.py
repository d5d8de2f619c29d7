"""Wrapped secrets: a long token broken over lines at a fixed width is read whole.

A terminal, a mail client or a log shipper folds a long line at a fixed width, so a token
(`sk-proj-…`, `ghp_…`, a JWT) lands in pieces, none of which may match its format on its own.
`WrappedTokenRule` finds a line ending in a run of token characters followed by lines made of
token characters only (or by one line that starts with such a run and goes on after a space:
a log line wrapped mid-token), and reads them as one block when the widths say it was wrapped: every
full line has the first line's width and the last is not longer. It joins the block, scans it
with the same chain, one level deeper, and keeps the inner matches that cross a line break
and end where a line ends, mapped back to the text (the marker then covers the line breaks
too). Inner matches within one line are left to the plain scan.

Risky part: a list of ids, hashes or tokens, one per line, also has lines of one width. A
joined match must therefore consume every line it reaches (a token ends where its line
ends): two tokens on two lines read as one run stop inside the second line and are refused,
and hex digests or UUIDs joined match no rule. With only two lines there is no width to
compare, so the second must look like a piece of a generated token (digits and letters).
"""

from __future__ import annotations

from ._joined import JoinedPiecesRule, scan_joined
from ._scanner import Candidate, View, compile_pattern

__all__ = ["WrappedTokenRule"]

_TOKEN = "A-Za-z0-9+/=_.~-"


class WrappedTokenRule(JoinedPiecesRule):
    """Finds secrets in tokens wrapped over lines; candidates carry the inner rules' ids."""

    rule_id = "wrapped_token"
    description = "secrets in tokens wrapped over lines at a fixed width, under their own ids"
    trigger = rf"[{_TOKEN}]\r?\n[{_TOKEN}]"
    """Minimal on purpose: counted runs here multiply the gate's states on dense text. A line
    may end in any token character (`…KEY-` then the rest), as the pattern's run does."""

    def __init__(self, priority: int) -> None:
        super().__init__(priority)
        # Whole lines of token characters, then possibly one line that starts with the
        # token's rest and goes on after a space (a log line wrapped mid-token:
        # `…TOKEN=dop_v1_05d8` then `e5a7…c01 request_id=…`).
        self._regex = compile_pattern(
            rf"(?m)[{_TOKEN}]{{8,}}(?:(?:\r?\n[{_TOKEN}]{{4,}}$)+(?:\r?\n[{_TOKEN}]{{8,}}[ \t])?"
            rf"|\r?\n[{_TOKEN}]{{8,}}[ \t])"
        )

    def find(self, view: View) -> list[Candidate]:
        """Inner candidates that cross a line break of a wrapped block."""
        if view.depth >= 1:
            return []
        text, found = view.text, []
        for spans in view.matches(self._regex):
            start, end = spans[0]
            if text[end - 1] in " \t":
                end -= 1  # the rest of a wrapped line: the block ends with the token's run
            line_start = text.rfind("\n", 0, start) + 1
            lines = _block(text, line_start, start, end)
            if lines is None:
                continue
            breaks, inner = scan_joined(view, lines)  # joined offsets where each line ends
            for s, e, priority, rule_id in inner:
                if s >= breaks[0] or e not in breaks[1:]:
                    continue  # within the first line (the plain scan has it), or ends mid-line
                k = breaks.index(e)
                found.append((line_start + s, lines[k][1], priority, rule_id))
        return found


def _block(text: str, start: int, run: int, end: int) -> list[tuple[int, int]] | None:
    """The lines of a wrapped block in `text[start:end]` (first line from its start), or None.

    Full lines share one width: the first line's (a wrapped line), or with three lines or
    more the second's when the token run ending the first line (from `run`) is not shorter
    (a token cut into chunks); the last line is not longer. A two-line
    block's second line must mix digits and letters.
    """
    lines, at = [], start
    while at <= end:
        stop = text.find("\n", at, end)
        stop = end if stop < 0 else stop
        lines.append((at, stop - 1 if stop > at and text[stop - 1] == "\r" else stop))
        at = stop + 1
    width = lines[0][1] - lines[0][0]
    run = max(run, text.rfind("=", run, lines[0][1]) + 1)  # the token: past a `KEY=`
    if len(lines) > 2 and lines[1][1] - lines[1][0] == lines[0][1] - run:
        width = lines[0][1] - run  # chunks of the token, all of one width
    kept = [lines[0]]
    for a, b in lines[1:]:
        if b - a > width or "=" in text[a:b].rstrip("="):
            break  # longer, or an assignment (`GITHUB_SHA=…`): not a piece of the token
        kept.append((a, b))
        if b - a < width:
            break
    if len(kept) < 2:
        return None
    if len(kept) == 2:
        tail = text[kept[1][0] : kept[1][1]]
        if not (any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail)):
            return None
    return kept
