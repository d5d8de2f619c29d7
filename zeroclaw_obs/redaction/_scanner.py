"""The scanner: one RE2 gate, then each triggered rule, then one resolution of overlaps.

Why RE2 (google-re2): every pattern here runs on text an LLM or a tool produced, which is to
say on adversarial text. A backtracking engine (Python `re`, PCRE) can take exponential or
quadratic time on a crafted input, and a prefilter in front of it only makes the common case
fast, not the worst one. RE2 compiles to automata and runs in time linear in the input for
every pattern, with no exceptions to remember, it reports match offsets and capture groups
(which Hyperscan does not by default), and it ships as a wheel for every platform we run on.
The price is no lookaround, no backreferences and no possessive quantifiers: a pattern finds
candidates with capture groups, and a check in Python (`_validators.py`) refines each one.

Speed needs care too: RE2 finds where a match starts and ends with its DFA, but capture
groups need a slower engine over the whole match. Rules whose matches can be long (PEM
blocks, base64, tokens) therefore replace the whole match (group 0) and check the character
before it in Python (`Spec.not_after`) instead of consuming it in a group; and rules whose
secret follows a key (`key_value`) match a short head with groups, then the value without
(`HeadValueRule`). Those two rule kinds live in `_patterns.py`.

Linearity also needs care *across* matches: `finditer` restarts the search after each match,
so a pattern whose automaton reads far beyond where its match ends (an unbounded `.*?END`
that finds no END) would be quadratic over many matches. Patterns here end where their last
greedy run ends, or are bounded.

How a text is scanned (`Scanner.scan`):
1. gate — one `re2.Set` holds a cheap trigger per rule (a literal prefix, a keyword before a
   separator, a digit shape). One DFA pass over the text says which rules can match at all;
   clean text stops here, after a single call into RE2.
2. find — each triggered rule, in chain order, runs its own pattern and its check, giving
   candidates `(start, end, priority, rule_id)`; priority is the rule's place in the chain.
   A span an earlier rule already found is not checked again (`View.claimed`).
3. filter — existing markers `[REDACTED:…]` and receipts `zc-receipt-…` are blanked out
   before the rules run (so the words in a marker are no rule's context), candidates that
   touch them are dropped, and so are candidates whose text is allowlisted: redacting twice
   changes nothing.
4. resolve — overlapping candidates are settled (see `_resolve.py`).

Risky parts: `re2.Set` uses only the DFA and would report nothing if the DFA ran out of
memory (it does not give up when merely slow, as a single regexp may); its triggers are kept
small so the automaton stays far inside its memory budget (64 MiB here). The ASCII fast
path calls the compiled program directly (`_regexp.Match`), which google-re2 does not
document; `_FAST` falls back to the public `finditer` when that attribute is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from typing import Any, Protocol

import re2

from ._normalize import utf8_safe
from ._resolve import Candidate, resolve
from ._spec import LEAD, LOOK_INSIDE, RECEIPT, Check, Hit, Spec

__all__ = [
    "LEAD",
    "LOOK_INSIDE",
    "Candidate",
    "Check",
    "Hit",
    "Rule",
    "Scanner",
    "Spec",
    "View",
    "compile_pattern",
    "resolve",
]

_MARKER_OR_RECEIPT = r"\[REDACTED:[a-z0-9_]{1,64}\]|" + RECEIPT
_MARKER_TRIGGER = r"\[REDACTED:|zc-receipt-"


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 64 << 20
    options.log_errors = False
    return options


_Gate = Callable[[bytes], list[int]]

_OPTIONS = _options()
_GATE_OPTIONS = _options()
_GATE_OPTIONS.max_mem = 256 << 20
"""The gate's automata hold many triggers at once: on secret-dense text they visit far more
states than any one rule, and a budget they outgrow makes RE2 flush and rebuild its state
cache over and over (measured: 2–3× slower on a dense mix at 64 MiB). RE2 allocates states
as it meets them, so the budget is a ceiling, not what a clean payload costs."""
_GATE_SET_SIZE = 5
"""Context triggers per gate set (see `_gate`)."""
_LONG = 256
"""Texts of at least this many bytes meet the gate's split sets, shorter ones the one set of
every trigger (see `_gate`). In the benchmark mixes clean log lines average ~110 bytes and
dense tool results ~1 KB."""


_PREFILTER_BELOW = 0.5
_TRIPPED_DECAY = 0.875
"""The prefilter of a long text (see `_gate`): while less than half of the recent long texts
(a moving average, weight 1/8 on the newest) tripped the gate, one search for any trigger
reads a long text first, and only a text it finds anything in meets the split sets."""


def compile_pattern(pattern: str) -> Any:
    """Compile `pattern` with RE2 and the options every rule uses.

    Raises:
        re2.error: the pattern is not valid RE2 syntax (lookaround, backreferences…).
    """
    return re2.compile(pattern, _OPTIONS)


_FAST = hasattr(re2, "_Anchor") and hasattr(compile_pattern("a"), "_regexp")
_UNANCHORED = re2._Anchor.UNANCHORED if _FAST else None
_ANCHOR_START = re2._Anchor.ANCHOR_START if _FAST else None


class View:
    """A text being scanned, in the forms the rules need, plus the scanner for inner scans."""

    __slots__ = ("ascii", "claimed", "data", "depth", "pii", "scanner", "text")

    def __init__(self, text: str, data: bytes, scanner: Scanner, depth: int, pii: bool) -> None:
        self.text = text
        self.data = data
        self.ascii = len(data) == len(text)
        self.scanner = scanner
        self.depth = depth
        self.pii = pii
        self.claimed: set[tuple[int, int]] = set()
        """Spans earlier (higher-priority) rules already found: later rules skip their checks."""

    def matches(self, regex: Any) -> Iterator[list[tuple[int, int]]]:
        """Every match of `regex`, left to right, as the spans of all its groups.

        Spans are character offsets into `text`; a group that did not take part is `(-1, -1)`.
        """
        if self.ascii and _FAST:
            match = regex._regexp.Match
            data, pos, end = self.data, 0, len(self.data)
            while pos <= end:
                spans = match(_UNANCHORED, data, pos, end)
                stop = spans[0][1]
                if stop < 0:
                    return
                yield spans
                pos = stop if stop > pos else pos + 1
            return
        if _FAST:
            yield from self._matches_utf8(regex)
            return
        groups = range(regex.groups + 1)
        for found in regex.finditer(self.text):
            yield [found.span(g) for g in groups]

    def _matches_utf8(self, regex: Any) -> Iterator[list[tuple[int, int]]]:
        """`matches` on non-ASCII text: RE2 on the UTF-8 bytes, offsets converted as we go.

        The public `finditer` on a `str` does the same conversion but builds a match object
        per hit; on a long text with many candidates that cost dominated the scan.
        """
        match = regex._regexp.Match
        data, pos, end = self.data, 0, len(self.data)
        to_char = self.to_chars()
        while pos <= end:
            spans = match(_UNANCHORED, data, pos, end)
            stop = spans[0][1]
            if stop < 0:
                return
            # Offsets of one match, in order, so the converter only moves forward.
            offsets = sorted({o for span in spans for o in span if o >= 0})
            chars = {offset: to_char(offset) for offset in offsets}
            yield [(chars[a], chars[b]) if a >= 0 else (-1, -1) for a, b in spans]
            if stop > pos:
                pos = stop
            else:  # an empty match: step over one whole character
                pos += 1
                while pos < end and data[pos] & 0xC0 == 0x80:
                    pos += 1

    def search(self, regex: Any, pos: int) -> list[tuple[int, int]] | None:
        """The first match of `regex` at or after byte `pos` of `data`, as byte spans."""
        if _FAST:
            spans = regex._regexp.Match(_UNANCHORED, self.data, pos, len(self.data))
            return None if spans[0][0] < 0 else spans
        found = regex.search(self.data, pos)
        return None if found is None else [found.span(g) for g in range(regex.groups + 1)]

    def match_end(self, regex: Any, pos: int) -> int:
        """The byte where a match of `regex` anchored at byte `pos` ends, or -1."""
        if _FAST:
            return int(regex._regexp.Match(_ANCHOR_START, self.data, pos, len(self.data))[0][1])
        found = regex.match(self.data, pos)
        return -1 if found is None else int(found.end())

    def to_chars(self) -> Callable[[int], int]:
        """A converter from byte offsets of `data` to character offsets of `text`.

        It decodes only the bytes between two calls (offsets fall on character boundaries),
        so a scan whose offsets mostly increase converts in linear time.
        """
        if self.ascii:
            return _same
        data, last = self.data, [0, 0]

        def convert(offset: int) -> int:
            if offset < last[0]:
                last[1] -= len(data[offset : last[0]].decode())
            else:
                last[1] += len(data[last[0] : offset].decode())
            last[0] = offset
            return last[1]

        return convert


def _same(offset: int) -> int:
    return offset


class Rule(Protocol):
    """A step of the chain: finds candidates in a view. `priority` is its place in the chain."""

    rule_id: str
    description: str
    trigger: str
    pii: bool
    priority: int
    reports: bool
    """Whether `rule_id` appears in reports (False for steps that report inner rules' ids)."""

    def find(self, view: View) -> list[Candidate]: ...


class Scanner:
    """Runs a chain of rules over a text and returns the resolved spans to replace.

    Built once per configuration; `scan` is safe to call from many threads (RE2 objects are
    thread-safe and the scanner holds no per-call state).
    """

    __slots__ = ("_allow", "_allow_patterns", "_clip", "_inner_gate", "_protect", "_rules")
    __slots__ += ("gate", "short_gate", "short_below")

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        allow: frozenset[str] = frozenset(),
        allow_patterns: Sequence[Any] = (),
        clip_below: int = 0,
        formats: int = 0,
    ) -> None:
        """Compile the gate over `rules` (in chain order): `gate(data)` lists the chain
        indices of the rules whose triggers `data` (UTF-8) holds, empty when no rule can
        match there (an attribute, not a method: clean text costs one call), and the marker
        entry (index `len(rules)`) when it holds a marker or a receipt. `short_gate` gives
        the same answer for `data` shorter than `short_below` bytes, and is RE2's own
        function: a caller that gates a short text through it spends no Python there. A
        caller that gates first hands the result to `scan`.

        Args:
            clip_below: rules with a lower priority identify a secret by its own format (a
                token prefix, a PEM marker, an operator's rule): when one only partly
                overlaps an earlier claim, its parts outside the claim are still replaced
                (see `resolve`).
            formats: the first `formats` rules are the built-in formats, whose triggers are
                literal prefixes (`ghp_`, `-----BEGIN`): they share one gate set, which
                they barely grow (see `_gate`). Any value gives the same answers; only the
                gate's speed depends on it.
        """
        self._rules = tuple(rules)
        self._clip = clip_below
        self._allow = allow
        self._allow_patterns = tuple(allow_patterns)
        self._protect = compile_pattern(_MARKER_OR_RECEIPT)
        triggers = {i: rule.trigger for i, rule in enumerate(self._rules)}
        triggers[len(self._rules)] = _MARKER_TRIGGER  # a literal too: it joins the formats
        self.gate, self._inner_gate, self.short_gate, self.short_below = _gate(
            triggers,
            literal={i for i in triggers if i < formats or i == len(self._rules)},
            alone={i for i, rule in enumerate(self._rules) if getattr(rule, "gated_alone", False)},
        )

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in chain order."""
        return self._rules

    def scan(
        self,
        text: str,
        *,
        depth: int = 0,
        pii: bool = True,
        ungated: bool = False,
        gated: Sequence[int] | None = None,
    ) -> list[Candidate]:
        """The spans of `text` to replace, sorted and not overlapping.

        Args:
            text: the (folded) text to scan.
            depth: how many decodings deep this text is (encoded-secret rules stop at a limit).
            pii: run the personal-data rules.
            ungated: run every rule whatever the gate says: the reference the gate is
                tested against, never used on the hot path.
            gated: what `gate` answered for this very text, when the caller already asked.

        Returns:
            Resolved candidates, in text order.
        """
        try:
            data = text.encode()
        except UnicodeEncodeError:
            # Lone surrogates (from JSON `\ud800`) cannot be encoded; `?` keeps the length.
            text = utf8_safe(text)
            data = text.encode()
        if ungated:
            hits: Sequence[int] = range(len(self._rules) + 1)
        elif gated is not None:
            hits = gated
        elif depth:  # decoded or joined text inside a secret-dense one: see `_gate`
            hits = self._inner_gate(data)
        else:  # on clean text this is the whole scan
            hits = self.gate(data)
        if not hits:
            return []
        rules = self._rules
        view = View(text, data, self, depth, pii)
        guarded: list[tuple[int, int]] = []
        if len(rules) in hits:
            guarded = [spans[0] for spans in view.matches(self._protect)]
            if guarded:
                view = _blank(view, guarded)
        found: list[Candidate] = []
        for index in sorted(hits):  # chain order, so `View.claimed` holds the earlier rules
            if index < len(rules):
                rule = rules[index]
                if pii or not rule.pii:
                    found.extend(rule.find(view))
        if not found:
            return []
        if guarded:
            found = [c for c in found if not _overlaps_any(c, guarded)]
        if self._allow or self._allow_patterns:
            found = [c for c in found if not self._allowed(text[c[0] : c[1]])]
        return resolve(found, clip_below=self._clip) if found else found

    def _allowed(self, value: str) -> bool:
        if value in self._allow:
            return True
        return any(p.fullmatch(value) is not None for p in self._allow_patterns)


def _first_match(regex: Any) -> Callable[[bytes], bool]:
    """Whether `regex` matches `data` anywhere: one DFA pass that stops at the first match
    (the compiled program directly when `_FAST`, else the public `search`)."""
    if _FAST:
        match = regex._regexp.Match

        def found(data: bytes) -> bool:
            return bool(match(_UNANCHORED, data, 0, len(data))[0][0] >= 0)

        return found
    return lambda data: regex.search(data) is not None


def _gate(
    triggers: Mapping[int, str], *, literal: Set[int], alone: Set[int]
) -> tuple[_Gate, _Gate, _Gate, int]:
    """The gate over `triggers` (chain index → trigger, indices 0 to n - 1): a function
    listing the indices of those that match `data`, in no particular order; the same gate
    that reads every text through the split sets, for inner scans; the one set of every
    trigger, the whole gate for a text shorter than the last value, `short_below`.

    Why not one `re2.Set` of every trigger for every text: a DFA's state is the set of places
    the text may have reached in *each* trigger at once, so context triggers (credential
    words followed by a separator run, digit shapes, character runs) multiply each other's
    states. On secret-dense text that one automaton met new states at almost every byte and
    built each (measured on ~1 KB dense records the redactor had not seen: ~180 µs a record
    in the gate, against ~12 µs on records it had seen). So for a long text (`_LONG`) the
    triggers go in several sets: the literal prefixes of the formats (`literal`), which
    barely grow an automaton, in one, and the other triggers in chain order,
    `_GATE_SET_SIZE` a set (~50 µs a record on the same unseen dense records).

    A short text, most of what the gate sees (log lines), is still read by the one set of
    every trigger: over a short text few states are new, and one call costs less than a
    pass per set (clean mix, steady state: ~0.8 µs a record, against ~1.3 µs for the split
    sets behind a leftmost-first any-trigger regexp).

    A trigger in `alone` (a long counted run, which multiplies any set's states, measured
    3–4× the whole set on dense text) has its own search in the split gate, a regexp that
    stops at its first match (a one-pattern set would read on to the end of the text). The
    one set for short texts holds it too: a call into RE2 costs ~0.5 µs whatever it reads,
    more than the one set's whole pass over a log line, and `encoded_secret`'s trigger, the
    one such trigger of the default chain, is anchored where a run starts, so it adds few
    states there (clean mix, unseen: ~2.0 → ~1.2 µs a clean line in the gate).

    Inner scans (`Scanner.scan` at a `depth`: text a rule decoded or joined) are short but
    as dense as their source, so they always meet the split sets (dense mix: ~25 µs in the
    one set, ~8 µs split, on ~67 bytes; on clean log lines the one set is ~3× faster).

    A long clean text still costs a pass per split set (~2.5 µs a KB each, nine sets in the
    default chain: ~20 µs for a tool call's 1 KB of unseen clean text). So while most recent
    long texts shut the gate (`_PREFILTER_BELOW`), a long text is first read by one search for
    any trigger (a leftmost-first alternation of them all, which stops at its first match:
    ~5 µs on that KB), and only a text it finds something in meets the split sets. On
    secret-dense text that search would build new states up to its first match (~25 µs an
    unseen dense record, half the split sets' cost again), so while most long texts trip the
    gate it is skipped. Either way the answer is the split sets'.

    Every split gives exactly the one set's answer: a set reports every pattern that
    matches anywhere in the text, whichever set holds it. The one set holds the triggers in
    index order, so its own answer is the gate's, with no Python in between: the clean line
    a caller gates through it (`Scanner.short_gate`) costs one call into RE2.
    """
    in_sets = [i for i in triggers if i not in alone]
    shared = [i for i in in_sets if i in literal]
    rest = [i for i in in_sets if i not in literal]
    groups = [shared] if shared else []
    groups += [rest[i : i + _GATE_SET_SIZE] for i in range(0, len(rest), _GATE_SET_SIZE)]
    whole = _set_match([triggers[i] for i in range(len(triggers))])  # index = chain index
    split = [(tuple(g), _set_match([triggers[i] for i in g])) for g in groups]
    searches = tuple((i, _first_match(compile_pattern(triggers[i]))) for i in alone)

    def split_gate(data: bytes) -> list[int]:
        hits = []
        for indices, match in split:
            found = match(data)
            if found:
                hits += [indices[i] for i in found]
        for index, search in searches:
            if search(data):
                hits.append(index)
        return hits

    anything = _first_match(
        re2.compile("|".join(f"(?:{triggers[i]})" for i in triggers), _GATE_OPTIONS)
    )
    tripped = [1.0]  # recent share of long texts that tripped the gate (see `_PREFILTER_BELOW`)

    def gate(data: bytes) -> list[int]:
        if len(data) < short_below:
            return whole(data)
        if tripped[0] < _PREFILTER_BELOW and not anything(data):
            tripped[0] *= _TRIPPED_DECAY
            return []
        hits = split_gate(data)
        tripped[0] = tripped[0] * _TRIPPED_DECAY + (1.0 - _TRIPPED_DECAY if hits else 0.0)
        return hits

    short_below = _LONG if len(split) > 1 else sys.maxsize
    return gate, split_gate, whole, short_below


def _set_match(triggers: Sequence[str]) -> Callable[[bytes], list[int]]:
    """A compiled `re2.Set` of `triggers`: its `Match` lists the indices that match `data`."""
    found = re2.Set.SearchSet(_GATE_OPTIONS)
    for trigger in triggers:
        found.Add(trigger)
    found.Compile()
    # The wrapper's `Match` only adds a type check; the hot path calls the set directly.
    inner = getattr(found, "_set", None)
    return inner.Match if inner is not None else found.Match  # type: ignore[no-any-return]


def _blank(view: View, guarded: list[tuple[int, int]]) -> View:
    """A view in which markers and receipts are blanked out (same length, NUL characters).

    The words inside a marker (`[REDACTED:url_credentials]`) must not serve as context for
    another rule on a second pass, or redaction would not be idempotent.
    """
    pieces, last = [], 0
    for start, end in guarded:
        pieces += [view.text[last:start], "\0" * (end - start)]
        last = end
    pieces.append(view.text[last:])
    text = "".join(pieces)
    return View(text, text.encode(), view.scanner, view.depth, view.pii)


def _overlaps_any(candidate: Candidate, spans: list[tuple[int, int]]) -> bool:
    start, end = candidate[0], candidate[1]
    # `spans` are sorted and disjoint: binary search for the first that ends after `start`.
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][1] <= start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(spans) and spans[lo][0] < end
