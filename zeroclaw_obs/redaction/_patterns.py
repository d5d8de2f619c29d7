"""Rules made of RE2 patterns: `PatternRule` (one pattern, its groups, a check) and
`HeadValueRule` (a short head with groups, then a group-free value).

Most of the chain is data (`Spec`s in `_tokens.py`, `_providers.py`, `_rules.py`, `_keys.py`,
`_pii.py`); these two classes run it. Why two kinds, and why group 0 for long matches, is
explained in `_scanner.py`: capture groups cost RE2 its DFA over the whole match.

Risky part: a refused match must not swallow a secret after it. A prefix-identified token's
boundary is part of its pattern (`Spec.lead`), and `HeadValueRule` searches on after the
value (or, for `LOOK_INSIDE`, after the head, once per value), which keeps each linear.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._normalize import utf8_safe
from ._scanner import LEAD, LOOK_INSIDE, Candidate, Hit, Spec, View, compile_pattern

__all__ = ["HeadValueRule", "PatternRule"]

_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


class PatternRule:
    """A rule made of one RE2 pattern, the groups that hold the secret, and a check."""

    __slots__ = ("_bare", "_check", "_key", "_lead", "_not_after", "_regex", "_secret")
    __slots__ += ("description",)
    __slots__ += ("pii", "priority", "rule_id", "trigger")
    reports = True

    def __init__(self, spec: Spec, priority: int) -> None:
        self.rule_id = spec.rule_id
        self.description = spec.description
        self.trigger = spec.trigger
        self.pii = spec.pii
        self.priority = priority
        self._regex = compile_pattern(spec.pattern)
        self._secret = spec.secret
        self._key = spec.key
        self._check = spec.check
        self._not_after = frozenset(spec.not_after)
        self._lead = spec.lead
        self._bare = compile_pattern(spec.pattern[len(LEAD) :]) if spec.lead else None

    def find(self, view: View) -> list[Candidate]:
        """Candidates for every match whose check accepts it."""
        found: list[Candidate] = []
        text, check, key_groups, claimed = view.text, self._check, self._key, view.claimed
        for spans in self._matches(view):
            for group in self._secret:
                start, end = spans[group]
                if start >= 0:
                    break
            else:
                continue
            if self._lead and start < end and text[start] not in _ALNUM:
                start = self._skip_lead(text, start, end)
            if start == end or (start and text[start - 1] in self._not_after):
                continue
            if (start, end) in claimed:
                continue  # an earlier rule owns exactly this span and would win anyway
            if check is not None:
                key = None
                for group in key_groups:
                    if spans[group][0] >= 0:
                        key = text[spans[group][0] : spans[group][1]]
                        break
                span = check(Hit(text, start, end, spans[0][0], spans[0][1], key))
                if span is None or span is LOOK_INSIDE:
                    continue
                start, end = span
            found.append((start, end, self.priority, self.rule_id))
            claimed.add((start, end))
        return found

    def _matches(self, view: View) -> Iterator[list[tuple[int, int]]]:
        """Every match of the rule's pattern in `view` (`View.matches`)."""
        return view.matches(self._regex)

    def _skip_lead(self, text: str, start: int, end: int) -> int:
        """Where the token starts in a match that starts with its boundary (`LEAD`).

        One character, or two for a JSON escape: `\\nghp_…` is an escaped newline and a
        token, but `\\npm_…` is a backslash and an npm token; the token (with no boundary)
        must match the rest whole, which only one of the two readings does.
        """
        if text[start] == "\\" and text[start + 1 : start + 2] in ("n", "r", "t"):
            rest = utf8_safe(text[start + 1 : end])
            if self._bare is None or self._bare.fullmatch(rest) is None:
                return start + 2
        return start + 1


class HeadValueRule(PatternRule):
    """A rule matched in two phases: a short head with groups, then a group-free value.

    For values that can be long (a quoted PEM under `"private_key":`): capture groups over a
    long match cost RE2 its DFA, so only the head (`key`, separator, opening quote) has
    groups, and the value's extent is a second, anchored, group-free match. The search goes
    on after the value, as `finditer` would after a whole match.
    """

    __slots__ = ("_opening", "_values")

    def __init__(self, spec: Spec, priority: int) -> None:
        super().__init__(spec, priority)
        self._opening = spec.secret[0]
        self._values = {kind: compile_pattern(p) for kind, p in (spec.values or {}).items()}

    def find(self, view: View) -> list[Candidate]:
        """Candidates for every head whose value the check accepts."""
        found: list[Candidate] = []
        text, data, check, claimed = view.text, view.data, self._check, view.claimed
        to_char = view.to_chars()
        pos = inside = 0  # `inside`: the end of a value being read inside (`LOOK_INSIDE`)
        while (spans := view.search(self._regex, pos)) is not None:
            head_start, head_end = spans[0]
            opening = data[spans[self._opening][0] : spans[self._opening][1]]
            kind = "\\" if opening.startswith(b"\\") else opening.decode()
            end = view.match_end(self._values[kind], head_end)
            pos = max(end, head_end)  # a head is never empty, so this always moves on
            if end <= head_end:
                continue
            match_start = to_char(head_start)
            key = None
            for group in self._key:
                if spans[group][0] >= 0:
                    key = text[to_char(spans[group][0]) : to_char(spans[group][1])]
                    break
            start, stop = to_char(head_end), to_char(end)
            if (start, stop) in claimed:
                continue
            if check is not None:
                span = check(Hit(text, start, stop, match_start, stop, key))
                if span is LOOK_INSIDE:
                    if head_end >= inside:
                        pos, inside = head_end, end
                    continue
                if span is None:
                    continue
                if span[1] > stop:  # the check took more (a YAML block): search on after it
                    pos = end + len(text[stop : span[1]].encode())
                start, stop = span
            found.append((start, stop, self.priority, self.rule_id))
            claimed.add((start, stop))
        return found
