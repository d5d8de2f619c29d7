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
(`HeadValueRule`).

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
4. resolve — overlapping candidates are settled (see `resolve`).

Risky parts: `re2.Set` uses only the DFA and would report nothing if the DFA ran out of
memory (it does not give up when merely slow, as a single regexp may); its triggers are kept
small so the automaton stays far inside its memory budget (64 MiB here). The ASCII fast
path calls the compiled program directly (`_regexp.Match`), which google-re2 does not
document; `_FAST` falls back to the public `finditer` when that attribute is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import re2

from ._normalize import utf8_safe

__all__ = [
    "LOOK_INSIDE",
    "Candidate",
    "Check",
    "HeadValueRule",
    "Hit",
    "PatternRule",
    "Rule",
    "Scanner",
    "Spec",
    "View",
    "compile_pattern",
    "resolve",
]

Candidate = tuple[int, int, int, str]
"""`(start, end, priority, rule_id)` in offsets of the scanned text; lower priority wins."""

_MARKER_OR_RECEIPT = r"\[REDACTED:[a-z0-9_]{1,64}\]|zc-receipt-[0-9]{1,20}-[A-Za-z0-9_-]{43}"
_MARKER_TRIGGER = r"\[REDACTED:|zc-receipt-"
LEAD = r"(?:^|[^A-Za-z0-9]|\\[nrt])"
"""What may come right before a token (`Spec.lead`): the text's start, any character but a
letter or digit, or a JSON escape (`\\n`, `\\r`, `\\t`), so `"…\\nghp_…"` holds a token."""
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_CLUSTER_LIMIT = 64
"""More mutually overlapping candidates than this are merged whole (keeps resolve linear)."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 64 << 20
    options.log_errors = False
    return options


_OPTIONS = _options()
_GATE_OPTIONS = _options()
_GATE_OPTIONS.max_mem = 256 << 20
"""The gate's automaton holds every rule's trigger at once: on secret-dense text it visits
far more states than any one rule, and a budget it outgrows makes RE2 flush and rebuild its
state cache over and over (measured: 2–3× slower on a dense mix at 64 MiB). RE2 allocates
states as it meets them, so the budget is a ceiling, not what a clean payload costs."""


def compile_pattern(pattern: str) -> Any:
    """Compile `pattern` with RE2 and the options every rule uses.

    Raises:
        re2.error: the pattern is not valid RE2 syntax (lookaround, backreferences…).
    """
    return re2.compile(pattern, _OPTIONS)


_FAST = hasattr(re2, "_Anchor") and hasattr(compile_pattern("a"), "_regexp")
_UNANCHORED = re2._Anchor.UNANCHORED if _FAST else None
_ANCHOR_START = re2._Anchor.ANCHOR_START if _FAST else None


class Hit(NamedTuple):
    """One match of a rule, as its check sees it (offsets into `text`)."""

    text: str
    start: int
    end: int
    match_start: int
    match_end: int
    key: str | None


Check = Callable[[Hit], "tuple[int, int] | None"]
"""Accepts a hit (returning the span to replace, possibly trimmed or extended) or refuses it
(None, or `LOOK_INSIDE`)."""

LOOK_INSIDE = (-1, -1)
"""What a check returns to refuse a value whose inside the rule should read on its own: a
`HeadValueRule` then searches on from the end of the head, not after the value (a credential
document under a sensitive key names its own secrets). Once per value: a head found inside
it that answers the same is refused, which keeps the search linear."""


@dataclass(frozen=True, slots=True)
class Spec:
    """A text rule as data: what it finds, how it is triggered, how a match is checked."""

    rule_id: str
    description: str
    pattern: str
    trigger: str
    """A pattern that matches wherever `pattern` does (a necessary condition, cheap for a DFA)."""
    secret: tuple[int, ...] = (1,)
    """Groups that hold the secret; the first one that took part in the match is replaced."""
    key: tuple[int, ...] = ()
    """Groups holding a key name; the first that took part is passed to `check` as `Hit.key`."""
    check: Check | None = None
    pii: bool = False
    not_after: str = ""
    """Characters that must not come right before the secret (a token starts a run)."""
    lead: bool = False
    """`pattern` starts with `LEAD`: the boundary it matches before the token is skipped."""
    values: Mapping[str, str] | None = None
    """Two-phase matching (see `HeadValueRule`): `pattern` is a head ending where the value
    starts, its group `secret[0]` holds the opening quote, and the value's extent is the
    match of `values[opening]` anchored there (`"\\"` stands for any escaped quote)."""


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
        for spans in view.matches(self._regex):
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


class Scanner:
    """Runs a chain of rules over a text and returns the resolved spans to replace.

    Built once per configuration; `scan` is safe to call from many threads (RE2 objects are
    thread-safe and the scanner holds no per-call state).
    """

    __slots__ = ("_allow", "_allow_patterns", "_clip", "_gate_match", "_protect")
    __slots__ += ("_alone", "_rules", "_set_rules")
    # Gating: most triggers share the one set; a rule marked `gated_alone` has a set of its
    # own (`_alone`): its trigger, a long counted run, multiplies the shared set's automaton
    # states on dense text (measured: 3–4× the whole set). A one-pattern set rather than a
    # regexp: on short clean records the call's fixed cost is most of the check.

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        allow: frozenset[str] = frozenset(),
        allow_patterns: Sequence[Any] = (),
        clip_below: int = 0,
    ) -> None:
        """Compile the gate over `rules` (in chain order).

        Args:
            clip_below: rules with a lower priority identify a secret by its own format (a
                token prefix, a PEM marker, an operator's rule): when one only partly
                overlaps an earlier claim, its parts outside the claim are still replaced
                (see `resolve`).
        """
        self._rules = tuple(rules)
        self._clip = clip_below
        self._allow = allow
        self._allow_patterns = tuple(allow_patterns)
        self._protect = compile_pattern(_MARKER_OR_RECEIPT)
        set_rules: list[int] = []
        alone: list[tuple[int, Callable[[bytes], list[int]]]] = []
        for index, rule in enumerate(self._rules):
            if getattr(rule, "gated_alone", False):
                alone.append((index, _set_match([rule.trigger])))
            else:
                set_rules.append(index)
        triggers = [self._rules[i].trigger for i in set_rules] + [_MARKER_TRIGGER]
        set_rules.append(len(self._rules))
        self._set_rules = tuple(set_rules)
        self._alone = tuple(alone)
        self._gate_match = _set_match(triggers)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in chain order."""
        return self._rules

    def quiet(self) -> Callable[[bytes], bool]:
        """A check that the gate stays shut on `data` (UTF-8): no rule can match there.

        Exactly the gate `scan` runs first, as one small closure, for a caller's fast path
        over text it knows needs no folding (`Redactor.redact_text` on plain ASCII).
        """
        gate = self._gate_match
        alone = tuple(match for _, match in self._alone)

        def quiet(data: bytes) -> bool:
            if gate(data):
                return False
            return not any(match(data) for match in alone)

        return quiet

    def scan(
        self, text: str, *, depth: int = 0, pii: bool = True, ungated: bool = False
    ) -> list[Candidate]:
        """The spans of `text` to replace, sorted and not overlapping.

        Args:
            text: the (folded) text to scan.
            depth: how many decodings deep this text is (encoded-secret rules stop at a limit).
            pii: run the personal-data rules.
            ungated: run every rule whatever the gate says: the reference the gate is
                tested against, never used on the hot path.

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
        else:  # the gate, inline: on clean text this is the whole scan (see the slots above)
            hits = self._gate_match(data)
            if hits:
                order = self._set_rules
                hits = [order[i] for i in hits]
            for index, match in self._alone:
                if match(data):
                    hits.append(index)
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


def resolve(found: list[Candidate], *, clip_below: int = 0) -> list[Candidate]:
    """Settle overlapping candidates into disjoint spans, in text order.

    Within a group of overlapping candidates, rules are taken in chain order (most specific
    first) and each claims its span unless it overlaps one already claimed. A candidate that
    strictly contains every claimed span it overlaps replaces them: a quoted password that
    holds a GitHub token is replaced whole, not just the token. A candidate of a rule that
    knows a secret by its own format (priority below `clip_below`) that only partly overlaps
    claimed spans keeps its parts outside them: an unclosed PEM body that ran into the `ghp`
    of a token on the next line must not leave the token's rest. Any other candidate that
    only partly overlaps is dropped: it judged by context, and its context is taken (an
    e-mail look-alike `pass@host.tld` inside `scheme://user:pass@host.tld` loses to
    `url_credentials`, and the host stays). Groups larger than
    `_CLUSTER_LIMIT` are merged into one span named by their most specific rule, which keeps
    this linear on adversarial input and still hides everything any rule wanted hidden.
    """
    if len(found) == 1:
        return found
    found.sort(key=lambda c: (c[0], -c[1], c[2]))
    resolved: list[Candidate] = []
    cluster: list[Candidate] = []
    cluster_end = -1
    for candidate in found:
        if candidate[0] >= cluster_end and cluster:
            resolved.extend(_settle(cluster, clip_below))
            cluster = []
        cluster.append(candidate)
        cluster_end = max(cluster_end, candidate[1]) if len(cluster) > 1 else candidate[1]
    resolved.extend(_settle(cluster, clip_below))
    return resolved


def _settle(cluster: list[Candidate], clip_below: int) -> list[Candidate]:
    if len(cluster) == 1:
        return cluster
    if len(cluster) > _CLUSTER_LIMIT:
        best = min(cluster, key=lambda c: c[2])
        return [(cluster[0][0], max(c[1] for c in cluster), best[2], best[3])]
    claimed: list[Candidate] = []
    for candidate in sorted(cluster, key=lambda c: (c[2], c[0])):
        start, end = candidate[0], candidate[1]
        overlapping = [c for c in claimed if c[0] < end and start < c[1]]
        if not overlapping:
            claimed.append(candidate)
        elif all(
            start <= c[0] and c[1] <= end and (start, end) != (c[0], c[1]) for c in overlapping
        ):
            claimed = [c for c in claimed if c not in overlapping]
            claimed.append(candidate)
        elif candidate[2] < clip_below:
            claimed.extend(_outside(candidate, overlapping))
    claimed.sort()
    return claimed


def _outside(candidate: Candidate, claimed: list[Candidate]) -> list[Candidate]:
    """The parts of `candidate` that no claimed span covers, under its own rule."""
    start, end, priority, rule_id = candidate
    parts: list[Candidate] = []
    for c in sorted(claimed):
        if start < c[0]:
            parts.append((start, min(c[0], end), priority, rule_id))
        start = max(start, c[1])
    if start < end:
        parts.append((start, end, priority, rule_id))
    return parts
