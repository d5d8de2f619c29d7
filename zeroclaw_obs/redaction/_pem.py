"""Private key blocks (`BEGIN … END`): their one pattern, and a finder that gives its matches
without paying for its automaton on every block.

The pattern (`block_pattern`) is `begin(?:BODY*?end|OPEN*)`: the body up to the first `end`
the body can reach, or, with no such `end`, the base64 lines of an unclosed block. `BODY`
admits `Name: value` header lines (`Proc-Type: 4,ENCRYPTED`) anywhere, so RE2's DFA must
follow, at every letter of a base64 line, a header name that may have started at any of the
last 31 letters: a set of live counters that differs at almost every byte. Each new set is a
new DFA state, so a block the redactor has not seen cost ~0.5 ms (a warm automaton ~30 µs).

`PemBlockRule` finds the same matches in cheap pieces, and runs the whole pattern only where
the pieces cannot decide:
1. `begin`, searched on its own: every match starts with it, and the whole pattern always
   matches where `begin` does (`OPEN*` may be empty), so it is the leftmost start. Where
   `begin` ends is fixed (its runs stop at the dashes that close it).
2. the first `end` at or after the body (`end` alone, searched once and remembered while
   later blocks start before it, which keeps many unclosed `begin` lines linear);
3. no `end` at all: the first branch cannot match, so the match is `OPEN*` read greedily.
   In `OPEN*` a header alternative never wins (its first letter is taken by the base64
   alternative, listed first, and nothing after `OPEN*` can fail), so `OPEN_READ` (the same
   alternatives without it) ends where `OPEN*` ends.
4. an `end` at `k`: if the body up to `k` is in `SIMPLE_BODY` (base64, whitespace, escapes,
   header lines that start a line), some path of `BODY*` reaches `k`. No body token can
   straddle `k` (`end` starts with dashes then a space-separated run, so no header name
   through `k` reaches a colon; an escape ends before a dash) unless a header value runs
   into it, i.e. unless a colon sits on `k`'s line in the body. Without one, every path of
   `BODY*?end` stops at `k`, where `end` is first tried, and `end`'s own length is fixed:
   the match is `begin` to the end of that `end`.
Anything else (a blocker before `k`, a header value on `k`'s line) runs the whole pattern
anchored at `begin`: the same matches as before, at the old price, for rare texts.

Risky part: the argument above is what makes the two equal; `test_pem.py` checks it against
the whole pattern on generated PEM-like texts (headers, escapes, truncation, second blocks).
"""

from __future__ import annotations

from collections.abc import Iterator

from ._patterns import PatternRule
from ._scanner import Spec, View, compile_pattern

try:
    from re2 import _Anchor

    _ANCHOR_START, _ANCHOR_BOTH = _Anchor.ANCHOR_START, _Anchor.ANCHOR_BOTH
except ImportError:  # pragma: no cover - google-re2 without its private anchors
    _ANCHOR_START = _ANCHOR_BOTH = None

__all__ = ["BODY", "OPEN", "PemBlockRule", "block_pattern"]

_HEADER = r"[A-Za-z][A-Za-z0-9-]{0,30}:[^\r\n\\]*"
BODY = rf"(?:[A-Za-z0-9+/=\s]|\\+[nrt/]|{_HEADER})"
"""A closed block's body: base64 and whitespace, JSON escapes, `Name: value` header lines."""
_SPACED = r"|[ \t]+[A-Za-z0-9+/]{16}|[ \t]+[A-Za-z0-9+/]{2,15}={1,2}"
OPEN = rf"(?:[A-Za-z0-9+/=\r\n]|\\+[nrt/]|{_HEADER}{_SPACED})"
"""An unclosed block (a truncated key) is redacted through its base64 lines only. A space
goes on only before a long base64 chunk (a key whose line breaks became spaces) or a padded
last one, so the prose after a cut-off key survives."""
OPEN_READ = rf"(?:[A-Za-z0-9+/=\r\n]|\\+[nrt/]{_SPACED})*"
"""Where `OPEN*` ends, read greedily: its header alternative never wins (see the module)."""
SIMPLE_BODY = rf"(?:[A-Za-z0-9+/=\s]|\\+[nrt/]|(?:\n|\\+[nrt]){_HEADER})*"
"""Bodies that `BODY*` reads, with header lines only after a line break: one live header
name at a time, so a DFA with few states."""


def block_pattern(begin: str, end: str) -> str:
    """The whole pattern of a block between `begin` and `end` (see the module)."""
    return rf"{begin}(?:{BODY}*?{end}|{OPEN}*)"


class PemBlockRule(PatternRule):
    """`PatternRule` for a `block_pattern`, finding its matches in pieces (see the module)."""

    __slots__ = ("_begin", "_end", "_open", "_simple")

    def __init__(self, spec: Spec, priority: int) -> None:
        super().__init__(spec, priority)
        begin, end = spec.blocks or ("", "")
        self._begin = compile_pattern(begin)
        self._end = compile_pattern(end)
        self._open = compile_pattern(OPEN_READ)
        self._simple = compile_pattern(SIMPLE_BODY)

    def _matches(self, view: View) -> Iterator[list[tuple[int, int]]]:
        if _ANCHOR_BOTH is None:
            yield from view.matches(self._regex)
            return
        data, to_char = view.data, view.to_chars()
        pos, size = 0, len(data)
        searched, closing = -1, (-1, -1)  # the first `end` at or after `searched`
        while pos <= size:
            opening = view.search(self._begin, pos)
            if opening is None:
                return
            start, body = opening[0]
            if searched < 0 or 0 <= closing[0] < body:
                found = view.search(self._end, body)
                searched, closing = body, (-1, -1) if found is None else found[0]
            stop = self._stop(data, start, body, closing)
            yield [(to_char(start), to_char(stop))]
            pos = stop if stop > pos else pos + 1

    def _stop(self, data: bytes, start: int, body: int, closing: tuple[int, int]) -> int:
        """Where the match that starts at `start` (its body at `body`) ends, in bytes."""
        at, after = closing
        if at < 0:
            return int(self._open._regexp.Match(_ANCHOR_START, data, body, len(data))[0][1])
        if self._simple._regexp.Match(_ANCHOR_BOTH, data, body, at)[0][0] >= 0:
            line = max(data.rfind(b, body, at) for b in (b"\n", b"\r", b"\\"))
            if data.find(b":", max(line + 1, body), at) < 0:
                return after
        return int(self._regex._regexp.Match(_ANCHOR_START, data, start, len(data))[0][1])
