"""Whether a redacted text needs another look: the idempotency machinery's shortcut.

`Redactor._until_stable` scans a redacted text again until nothing more matches, because a
rule's decision can hang on text another rule replaced. That rescan costs a whole pass, and
on secret-dense text it almost never finds anything: `apart` tells when it cannot, because
every replaced span sits between characters that end every run a rule reads.

Risky part: a wrong "apart" skips a rescan that would have found something, and redaction
would no longer be idempotent. Every shortcut here is conservative, and the property tests
(`test_properties.py`) and the per-family idempotency test check the whole.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

import re2

from ._normalize import utf8_safe

__all__ = ["apart"]

_APART = frozenset("\t\r\n\f\v\0\"'`,;&|<>[]{}!")
"""Characters that keep a replaced span apart from its neighbours: no rule reads a run of
token characters across them, so a marker there changes no other rule's decision."""
_PHONE_RUN = frozenset(" ()")
"""Apart unless a digit-like run goes on past them: a phone number's run crosses them."""
_PHONE_CHARS = frozenset("0123456789 ().-+")
_IBAN_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
"""Apart across one space unless this run goes on on both sides: an IBAN's run crosses
single spaces (`DE89 3704 …`), so one IBAN's run reads into the next and fails its check
until the neighbour is a marker."""
_GENERIC_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=.~-")
"""The characters of `generic_secret`'s value run, which crosses `=`."""
_ESCAPED = frozenset("nrt\"'")
"""What a backslash escapes in JSON (and shell) text to write a separator of `_APART`."""
_REACH = re2.compile(
    r"(?i)(ssn|social[ _-]?security)|(insert[ \t]+into)|(values)"
    r"|(set[ \t]+password[ \t]+for[ \t]*)"
)
"""Labels whose rule reads from the label to its value across whatever lies between, a
marker included (the scan blanks a marker to NUL characters, which a gap takes): a
replacement there can turn a value the first pass refused into a match, whatever sits on
the span's edges (`SSN <jwt> a 123456789`: the JWT's digits, then its length, kept the
number out of `us_ssn`'s gap). Groups: an SSN label, an `INSERT INTO`, a `VALUES`, and
`sql_password`'s `SET PASSWORD FOR`, whose user runs `[^=;\r\n]{1,120}` to its `=`."""
_GAPS = {1: (20, frozenset("0123456789\r\n"), "0123456789"), 4: (120, frozenset("=;\r\n"), "=")}
"""By `_REACH` group, a bounded gap after the label: its length, the characters that end
it, and those of them that start what the rule reads next (`us_ssn`'s `[^0-9\r\n]{0,20}`
then the number; `SET PASSWORD FOR`'s user, then `=`)."""
_TUPLE_SYNTAX = frozenset("()'\",;\\\r\n")
"""What the table rules read in an INSERT's value tuples (`_tables`: `_closing`, `_split`,
`_unquoted`): a replaced span holding one (`(555) 123-4567`) reshapes the tuple."""


def apart(shadow: str, spans: Sequence[tuple[int, ...]]) -> bool:
    """Whether every span of `shadow` (the text the rules matched) has a character of
    `_APART`, or the text's edge, on both sides: then replacing it cannot change what
    another rule decides, and the rescan of `Redactor._until_stable` is not needed.

    Rules read their context through runs of token characters (a greedy run into a
    neighbour, a check of the character after a match); a whitespace, quote or delimiter
    ends every such run, and so does a JSON escape of one (`\\n`, `\\"`: `LEAD`). A span in
    the gap after a label of `_REACH` is never apart: that gap runs across a marker.
    """
    size = len(shadow)
    for span in spans:
        start, end = span[0], span[1]
        if start > 0 and not _apart_before(shadow, start):
            return False
        if end < size and not _apart_after(shadow, end):
            return False
    return not _reached(shadow, spans)


def _reached(shadow: str, spans: Sequence[tuple[int, ...]]) -> bool:
    """Whether a span lies where a rule reads across it from a label of `_REACH`: in a
    bounded gap of `_GAPS` with what the rule reads next after it, in an INSERT's column
    list, or in its value tuples holding their syntax. One pass over the text for the
    labels, then one walk over the spans (both sorted)."""
    folded = shadow.casefold()  # a cheap look first: few texts hold a label at all
    if not ("ssn" in folded or "social" in folded or "insert" in folded or " for" in folded):
        return False
    try:
        labels = [(found.end(), found.lastindex) for found in _REACH.finditer(shadow)]
    except UnicodeEncodeError:  # lone surrogates: `?` in their place keeps the offsets
        labels = [(found.end(), found.lastindex) for found in _REACH.finditer(utf8_safe(shadow))]
    last = [-1] * 5  # by group: where the last such label before the span ends
    at = 0
    for span in spans:
        start, end = span[0], span[1]
        while at < len(labels) and labels[at][0] <= start:
            last[labels[at][1]] = labels[at][0]
            at += 1
        for group, gap in _GAPS.items():
            label = last[group]
            if label >= 0 and start - label <= gap[0] and _in_gap(shadow, label, span, *gap):
                return True
        insert, values = last[2], last[3]
        if insert >= 0 and (values < insert or _reshapes(shadow, start, end)):
            return True
    return False


def _reshapes(shadow: str, start: int, end: int) -> bool:
    """Whether a span in an INSERT's value tuples holds their syntax, unless it is a whole
    quoted value (`'(555) 123 4567'`), inside which only its own quote counts."""
    inside = shadow[start:end]
    quote = shadow[start - 1 : start]
    if quote in ("'", '"') and shadow[end : end + 1] == quote and quote not in inside:
        return False
    return any(c in _TUPLE_SYNTAX for c in inside)


def _in_gap(
    shadow: str, label: int, span: tuple[int, ...], size: int, ends: Set[str], opens: str
) -> bool:
    """Whether a span after a label (ending at `label`) can sit in its bounded gap (see
    `_GAPS`) with what the rule reads next after it: no end of the gap between the label
    and the span, and the first one after the span, within the gap's length, opens it."""
    start, end = span[0], span[1]
    if any(c in ends for c in shadow[label:start]):
        return False
    for c in shadow[end : end + size]:
        if c in ends:
            return c in opens
    return False


def _apart_before(text: str, start: int) -> bool:
    before = text[start - 1]
    if before in _APART:
        return True
    if before in _PHONE_RUN:
        if start < 2:
            return True
        left = text[start - 2]
        return left not in _PHONE_CHARS and not (
            before == " " and left in _IBAN_RUN and text[start] in _IBAN_RUN
        )
    if before == "=":
        # `password=…`: a run of `generic_secret` (20 characters at least) could only have
        # come from the left across the `=`; a short word there cannot make one.
        run, at = 0, start - 2
        while at >= 0 and text[at] in _GENERIC_RUN and run < 19:
            run += 1
            at -= 1
        return run < 19
    return _escaped_before(text, start)


def _apart_after(text: str, end: int) -> bool:
    after = text[end]
    if after in _APART or after == "=":  # a run from the left would have to cross the span
        return True
    if after in _PHONE_RUN:
        if end + 1 == len(text):
            return True
        right = text[end + 1]
        return right not in _PHONE_CHARS and not (
            after == " " and right in _IBAN_RUN and text[end - 1] in _IBAN_RUN
        )
    return _escape_at(text, end)


def _escape_at(text: str, at: int) -> bool:
    """Whether `text[at:]` starts with a JSON escape of a separator (`\\n`, `\\"`…)."""
    return text[at] == "\\" and text[at + 1 : at + 2] in _ESCAPED and text[at - 1] != "\\"


def _escaped_before(text: str, at: int) -> bool:
    """Whether `text[:at]` ends with a JSON escape of a separator, its backslash unescaped."""
    if at < 2 or text[at - 1] not in _ESCAPED or text[at - 2] != "\\":
        return False
    slashes, last = 0, at - 2
    while last >= 0 and text[last] == "\\":
        slashes += 1
        last -= 1
        if slashes > 16:
            return False  # a long run of backslashes: let the rescan decide (and stay linear)
    return slashes % 2 == 1
