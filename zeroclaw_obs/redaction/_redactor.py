"""The one `Redactor` every outward surface uses: its configuration and its two chains.

The text chain, run by `redact_text` on every string:
1. `JsonTextReader` — a JSON document with a sensitive key over a container is redacted as
   data (first, because it then runs the rest of the chain on each of its strings);
2. `fold` — the shadow copy that rules match on (invisible characters gone, look-alike
   letters folded), with offsets back to the text;
3. `Scanner.scan` — the RE2 gate, then the rules in `rule_ids` order, then overlap resolution;
4. `_splice` — each resolved span of the *original* text becomes `[REDACTED:<rule_id>]`.
The value chain, run by `redact_value`, is `ValueWalker`: key-aware masking, and the text
chain on every string.

Everything is compiled in `__init__`/`from_config`; a call is one gate lookup and, only for
text that trips the gate, the rules it tripped.

Risky parts:
- Hot path: every tool call's arguments and result, every span attribute and log record.
- A replacement never holds any part of the secret, and reports carry counts, never text.
- `redact_value` never mutates its input: raw arguments are still needed by the tool call
  and the receipt.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

import re2

from ._concat import StringConcatRule
from ._cookies import CookieHeaderRule
from ._encoded import EncodedSecretRule, PercentEncodedRule
from ._keys import DEFAULT_SENSITIVE_KEYS, SensitiveKeys, key_value_specs
from ._manifests import KubernetesSecretRule
from ._normalize import Folded, fold, fold_key, has_continuation, utf8_safe
from ._pii import pii_specs
from ._providers import provider_specs
from ._rules import (
    context_specs,
    credential_file_specs,
    generic_spec,
    prose_specs,
    sql_specs,
    token_specs,
)
from ._scanner import (
    Candidate,
    HeadValueRule,
    PatternRule,
    Rule,
    Scanner,
    Spec,
    compile_pattern,
)
from ._structured import (
    MAX_DEPTH,
    MAX_DEPTH_RULE_ID,
    SENSITIVE_KEY_RULE_ID,
    JsonTextReader,
    ValueWalker,
    marker,
)
from ._tables import PhoneColumnRule
from ._wrapped import WrappedTokenRule

__all__ = ["DEFAULT_RULE_IDS", "RULES", "RedactionConfigError", "Redactor"]

_RULE_ID = compile_pattern(r"[a-z][a-z0-9_]{0,63}")
# Exactly one receipt or one marker (linear: a bounded, anchored pattern on Python `re`).
_WHOLE_PROTECTED = re.compile(
    r"zc-receipt-[0-9]{1,20}-[A-Za-z0-9_-]{43}|\[REDACTED:[a-z0-9_]{1,64}\]"
)
_MAX_PASSES = 4
"""Rescans of a redacted text at most (`Redactor._until_stable`); one is almost always enough."""
_APART = frozenset("\t\r\n\f\v\0\"'`,;&|<>[]{}!")
"""Characters that keep a replaced span apart from its neighbours: no rule reads a run of
token characters across them, so a marker there changes no other rule's decision."""
_PHONE_RUN = frozenset(" ()")
"""Apart unless a digit-like run goes on past them: a phone number's run crosses them."""
_PHONE_CHARS = frozenset("0123456789 ().-+")
_GENERIC_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_=.~-")
"""The characters of `generic_secret`'s value run, which crosses `=`."""
_ESCAPED = frozenset("nrt\"'")
"""What a backslash escapes in JSON (and shell) text to write a separator of `_APART`."""
_JOIN = "\n\0\n"
"""Joins a structure's strings for one scan; no rule matches across it (see `_texts`)."""


class RedactionConfigError(ValueError):
    """Raised by `Redactor.from_config` when a rule, allowlist entry or key is invalid.

    A plain `ValueError` subclass so this package stays a leaf that imports nothing of ours;
    `config.py` turns it into a `ConfigError` naming the file.
    """


def _chain(sensitive: SensitiveKeys, extra: Sequence[Spec], *, pii: bool) -> list[Rule]:
    """The text rules in chain order; a rule's index is its priority (lower wins a tie).

    The order is the behaviour, most specific first, so the name on a marker is the most
    informative one that fits:
    1. provider token formats (`token_specs`, then `provider_specs`: the long tail of
       prefixed tokens and webhook URLs): a known prefix or shape names itself;
    2. the operator's extra rules: they know their own formats best after the providers;
    3. context rules (`bearer`, `basic_auth`, `url_credentials`, `sql_password`,
       `credential_file`, `kubernetes_secret`, cookie headers): a secret known by the scheme,
       URL, statement or file syntax around it;
    4. `key_value`: any value after a sensitive key, whatever it looks like;
    5. `generic_secret`, then `prose_secret`: a random-looking token after a credential
       word, a credential-shaped value after `my password is`; the last resort among
       secrets because they judge by shape alone;
    6. encodings (`encoded_secret`, then URL-encoded text under the inner rules' ids): they
       rescan decoded text with this same chain, so they come after the plain rules;
    7. personal data (`pii_specs`), last: a value that is both (a password that is an e-mail
       address) is reported as the secret.
    """
    rules: list[Rule] = []
    formats = [*token_specs(), *provider_specs(), *extra]
    for spec in [*formats, *context_specs(), *sql_specs(), *credential_file_specs()]:
        rules.append(PatternRule(spec, len(rules)))
    rules.append(KubernetesSecretRule(len(rules)))
    rules.append(CookieHeaderRule(len(rules)))
    for spec in key_value_specs(sensitive):
        rules.append((HeadValueRule if spec.values else PatternRule)(spec, len(rules)))
    rules.append(PatternRule(generic_spec(), len(rules)))
    for spec in prose_specs():
        rules.append(PatternRule(spec, len(rules)))
    rules.append(EncodedSecretRule(len(rules)))
    rules.append(PercentEncodedRule(len(rules)))
    rules.append(WrappedTokenRule(len(rules)))
    rules.append(StringConcatRule(len(rules)))
    if pii:
        rules.extend(PatternRule(spec, len(rules) + i) for i, spec in enumerate(pii_specs()))
        rules.append(PhoneColumnRule(len(rules)))
    return rules


def _reported(rules: Sequence[Rule]) -> tuple[str, ...]:
    """The ids a report can hold, in chain order, without repeats."""
    return tuple(dict.fromkeys(rule.rule_id for rule in rules if rule.reports))


def _describe(rules: Sequence[Rule]) -> dict[str, str]:
    described = {rule.rule_id: rule.description for rule in reversed(rules) if rule.reports}
    described = {rule_id: described[rule_id] for rule_id in _reported(rules)}
    described["key_value"] = (
        "values after sensitive keys in text: key=value, key: value, JSON, headers, "
        "--flags, -pPASSWORD, name/value pairs, XML elements"
    )
    described[SENSITIVE_KEY_RULE_ID] = (
        "values under a sensitive key in structured data (password, token, api_key, …)"
    )
    described[MAX_DEPTH_RULE_ID] = f"containers nested deeper than {MAX_DEPTH} levels"
    return described


_FORMATS = len(token_specs()) + len(provider_specs())
"""How many rules of the chain know a secret by its own format, before the operator's."""

_DEFAULT_CHAIN = _chain(SensitiveKeys(DEFAULT_SENSITIVE_KEYS), (), pii=True)

DEFAULT_RULE_IDS: tuple[str, ...] = _reported(_DEFAULT_CHAIN)
"""Every default text rule id, in chain order (the personal-data ones only with `pii`)."""

RULES: Mapping[str, str] = _describe(_DEFAULT_CHAIN)
"""A one-line description of every rule id a report can hold, for docs and the scanner."""

del _DEFAULT_CHAIN


class Redactor:
    """Replaces secrets and personal data in text and JSON-like values by `[REDACTED:<rule_id>]`.

    `Redactor()` runs the default rules; `Redactor.from_config` adds rules, allowlists and
    sensitive key names, or turns personal data off. An instance is immutable after
    construction (apart from a bounded key cache) and safe to share between tasks and
    threads: build one per runtime and hand the same instance to every surface.
    """

    __slots__ = ("_json", "_keys", "_quiet", "_scanner", "_walker")

    def __init__(self) -> None:
        """Compile the default rules, personal data included."""
        self._configure(
            sensitive=SensitiveKeys(DEFAULT_SENSITIVE_KEYS),
            extra=(),
            allow=frozenset(),
            allow_patterns=(),
            pii=True,
        )

    @classmethod
    def from_config(
        cls,
        *,
        extra_rules: dict[str, str] | None = None,
        allow: list[str] | None = None,
        extra_sensitive_keys: list[str] | None = None,
        pii: bool = True,
        allow_patterns: list[str] | None = None,
    ) -> Redactor:
        """Build a redactor with the default rules plus an operator's additions.

        Args:
            extra_rules: rule id (snake_case) → RE2 pattern. The whole match is replaced, or
                only the group named `secret` when the pattern has one. Extra rules rank after
                the token formats and before the context and key rules.
            allow: exact strings that are never redacted (a documented example key, a
                support address). A match whose secret part equals one is left as is.
            extra_sensitive_keys: more key names whose values are masked; normalised like
                the defaults (`X-Tenant-Key` → `x_tenant_key`).
            pii: run the personal-data rules (email, card, IBAN, SSN, phone, IP).
            allow_patterns: RE2 patterns; a match whose secret part matches one in full is
                left as is.

        Returns:
            A new `Redactor`.

        Raises:
            RedactionConfigError: a rule id is not snake_case or is a default id, a pattern
                is not valid RE2 (lookaround and backreferences are not) or matches empty
                text, an allowlist entry is blank or not a string, or a sensitive key is
                blank. The message starts with the field path (`extra_rules.acme_token`,
                `allow_patterns.2`, `extra_rules entry 3` for an id that is itself wrong)
                and says the problem; it never repeats the offending text (a pattern, an
                id, a value), since a configuration can hold secrets.
        """
        if not isinstance(pii, bool):
            raise RedactionConfigError("pii: must be true or false")
        extra = _extra_specs(extra_rules or {})
        values = _allow_values(allow or [])
        patterns = _allow_patterns(allow_patterns or [])
        names = set(DEFAULT_SENSITIVE_KEYS)
        for i, key in enumerate(extra_sensitive_keys or []):
            folded = fold_key(key) if isinstance(key, str) else ""
            if not folded:
                raise RedactionConfigError(f"extra_sensitive_keys.{i}: must not be blank")
            names.add(folded)
        redactor = cls.__new__(cls)
        try:
            redactor._configure(
                sensitive=SensitiveKeys(names),
                extra=extra,
                allow=values,
                allow_patterns=patterns,
                pii=pii,
            )
        except re2.error as exc:  # a pattern RE2 parses but cannot combine into the gate
            raise RedactionConfigError(
                f"extra_rules: the patterns cannot be compiled together: {_reason(exc)}"
            ) from exc
        return redactor

    def _configure(
        self,
        *,
        sensitive: SensitiveKeys,
        extra: Sequence[Spec],
        allow: frozenset[str],
        allow_patterns: Sequence[Any],
        pii: bool,
    ) -> None:
        self._keys = sensitive
        self._scanner = Scanner(
            _chain(sensitive, extra, pii=pii),
            allow=allow,
            allow_patterns=allow_patterns,
            clip_below=_FORMATS + len(extra),  # the formats, as `_chain` orders them
        )

        def allowed(value: str) -> bool:
            if value in allow:
                return True
            value = utf8_safe(value)
            return any(p.fullmatch(value) is not None for p in allow_patterns)

        self._walker = ValueWalker(self._texts, sensitive, allowed=allowed, pii=pii)
        self._json = JsonTextReader(sensitive, self._walker)
        self._quiet = self._scanner.quiet()

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """The ids of the text rules this redactor runs, in chain order, without repeats."""
        return _reported(self._scanner.rules)

    def redact_text(self, s: str) -> str:
        """Replace every secret in `s` by its marker.

        Args:
            s: any text; markers already in it are left alone, so redacting twice is a no-op.

        Returns:
            The redacted text (`s` itself when nothing matched).
        """
        # The common case first, in one call: plain ASCII that is its own shadow (no line
        # continuation to fold, not a document the JSON step would read) and shuts the gate.
        if s.isascii() and "\\" not in s and s[:1] not in ("{", "[") and self._quiet(s.encode()):
            return s
        return self._text(s, None)

    def redact_text_report(self, s: str) -> tuple[str, dict[str, int]]:
        """Redact `s` and count the replacements per rule id.

        Returns:
            The redacted text and `{rule_id: count}` for rules that replaced something. The
            report never holds matched text.
        """
        counts: dict[str, int] = {}
        return self._text(s, counts), counts

    def redact_value(self, v: Any) -> Any:
        """Redact a JSON-like value: every string, and whole values under sensitive keys.

        Dicts (and other mappings), lists and tuples are rebuilt as `dict`, `list`, `tuple`;
        strings, dict keys included, go through the text chain, and a string holding JSON
        is redacted as JSON. Under a sensitive key (`password`, `api_key`, `authorization`,
        … matched as whole words at the end of the key, so `max_tokens` and `secret_name`
        are not sensitive) every scalar below is replaced by `[REDACTED:sensitive_key]`,
        except `None`, booleans, empty strings, markers and measurements (floats, integers
        of at most three digits: counts, durations, timestamps; see `is_measurement`). Other
        objects (floats, bytes, models) pass through: dump models to JSON-like data first. The
        input is never mutated.

        Returns:
            A redacted copy of `v` with the same shape.
        """
        return self._walker(v, None)

    def redact_value_report(self, v: Any) -> tuple[Any, dict[str, int]]:
        """`redact_value`, plus counts per rule id over the whole structure.

        Returns:
            The redacted copy and `{rule_id: count}`; values masked because of their key are
            counted under `sensitive_key`.
        """
        counts: dict[str, int] = {}
        return self._walker(v, counts), counts

    def is_sensitive_key(self, key: str) -> bool:
        """Whether a value under `key` is masked whole by `redact_value`.

        Args:
            key: a key as the caller wrote it (`apiKey`, `X-Api-Key`, `db_password`).
        """
        return key in self._keys

    def _texts(self, strings: list[str], counts: dict[str, int] | None) -> list[str]:
        """The text chain over many strings (a structure's keys and values) in one scan.

        The strings are joined with `_JOIN`, which no rule can match across (every pattern's
        runs stop at a newline or a NUL), so one gate call and one pass per triggered rule
        serve them all. Should a match straddle two strings anyway (an operator's rule with
        `.`-like classes), each string is redacted on its own instead.
        """
        out = list(strings)
        plain: list[int] = []
        for i, text in enumerate(strings):
            if text[:1] in ("{", "["):
                out[i] = self._text(text, counts)  # may be JSON: the structural step decides
            else:
                plain.append(i)
        if len(plain) <= 1:
            for i in plain:
                out[i] = self._text(strings[i], counts)
            return out
        joined = _JOIN.join(strings[i] for i in plain)
        folded = fold(joined)
        found = self._scanner.scan(folded.shadow)
        if not found:
            return out
        starts = list(accumulate((len(strings[i]) + len(_JOIN) for i in plain), initial=0))
        per_string: dict[int, list[Candidate]] = {}
        for start, end, priority, rule_id in found:
            start, end = folded.span(start, end)
            k = bisect_right(starts, start) - 1
            base = starts[k]
            if end > base + len(strings[plain[k]]):
                for i in plain:
                    out[i] = self._text(strings[i], counts)
                return out
            per_string.setdefault(k, []).append((start - base, end - base, priority, rule_id))
        for k, spans in per_string.items():
            text = strings[plain[k]]
            out[plain[k]] = self._until_stable(
                text,
                _splice(Folded(text, text, []), spans, counts),
                counts,
                settled=_apart(joined, [(s + starts[k], e + starts[k]) for s, e, _, _ in spans]),
            )
        return out

    def _text(self, text: str, counts: dict[str, int] | None) -> str:
        out, settled = self._text_once(text, counts)
        if settled or out is text:  # clean text, or replacements apart from their neighbours
            return out
        return self._until_stable(text, out, counts, settled=False)

    def _until_stable(
        self, text: str, out: str, counts: dict[str, int] | None, *, settled: bool
    ) -> str:
        """Scan a redacted text again until nothing more matches (a bounded fixpoint).

        Why a second look is needed at all: a rule's decision can hang on text another rule
        replaces. A greedy run that read into a neighbour's secret fails its exact length
        (`AIza…` followed by a PEM's dashes), a phone number that ran on into a token is
        refused, and once the neighbour is a marker both pass. Running the chain until it
        finds nothing is what makes `redact_text` idempotent for every input, not only for
        the cases we thought of. Clean text (the common case) costs nothing: `out is text`.

        `settled` skips the rescan when every replaced span sat apart from its neighbours
        (`_apart`): the rescan of a secret-dense text found nothing new in every case
        measured, and cost a third of its time.
        """
        passes = 0
        while not settled and out is not text and passes < _MAX_PASSES:
            text, (out, settled) = out, self._text_once(out, counts)
            passes += 1
        return out

    def _text_once(self, text: str, counts: dict[str, int] | None) -> tuple[str, bool]:
        """One pass of the text chain, and whether its replacements are settled (`_apart`)."""
        if not text:
            return text, True
        if text[0] in "z[" and _WHOLE_PROTECTED.fullmatch(text):
            # A receipt or a marker on its own is never changed (they are protected inside
            # any text too); telemetry carries many fresh ones, so skip the scan for them.
            return text, True
        if text[0] in "{[":
            structured = self._json(text, counts)
            if structured is not None:
                return structured, False
        if text.isascii() and not has_continuation(text):  # the common case: its own shadow
            found = self._scanner.scan(text)
            if not found:
                return text, True
            return _splice(Folded(text, text, []), found, counts), _apart(text, found)
        folded = fold(text)
        found = self._scanner.scan(folded.shadow)
        if not found:
            return text, True
        return _splice(folded, found, counts), _apart(folded.shadow, found)


def _apart(shadow: str, spans: Sequence[tuple[int, ...]]) -> bool:
    """Whether every span of `shadow` (the text the rules matched) has a character of
    `_APART`, or the text's edge, on both sides: then replacing it cannot change what
    another rule decides, and the rescan of `Redactor._until_stable` is not needed.

    Rules read their context through runs of token characters (a greedy run into a
    neighbour, a check of the character after a match); a whitespace, quote or delimiter
    ends every such run, and so does a JSON escape of one (`\\n`, `\\"`: `LEAD`).
    """
    size = len(shadow)
    for span in spans:
        start, end = span[0], span[1]
        if start > 0 and not _apart_before(shadow, start):
            return False
        if end < size and not _apart_after(shadow, end):
            return False
    return True


def _apart_before(text: str, start: int) -> bool:
    before = text[start - 1]
    if before in _APART:
        return True
    if before in _PHONE_RUN:
        return start < 2 or text[start - 2] not in _PHONE_CHARS
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
        return text[end + 1 : end + 2] not in _PHONE_CHARS or end + 1 == len(text)
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


def _splice(folded: Folded, found: list[Candidate], counts: dict[str, int] | None) -> str:
    """Replace each resolved span of the original text by its marker, counting per rule."""
    text = folded.text
    pieces: list[str] = []
    last = 0
    for start, end, _, rule_id in found:
        start, end = folded.span(start, end)
        pieces.append(text[last:start])
        pieces.append(marker(rule_id))
        last = end
        if counts is not None:
            counts[rule_id] = counts.get(rule_id, 0) + 1
    pieces.append(text[last:])
    return "".join(pieces)


def _extra_specs(extra_rules: Mapping[str, str]) -> list[Spec]:
    """Validate and compile the operator's rules (RE2), each named by its id in errors."""
    if not isinstance(extra_rules, Mapping):
        raise RedactionConfigError("extra_rules: must map rule ids to patterns")
    reserved = {*RULES, "url_encoded"}
    specs = []
    for n, (rule_id, pattern) in enumerate(extra_rules.items(), start=1):
        # A wrong id is named by its place, never echoed: it may be anything, a secret too.
        if not isinstance(rule_id, str) or _RULE_ID.fullmatch(rule_id) is None:
            raise RedactionConfigError(
                f"extra_rules entry {n}: rule id must be snake_case (a-z, 0-9, _; 1-64 chars)"
            )
        if rule_id in reserved:
            raise RedactionConfigError(f"extra_rules entry {n}: rule id is already a default rule")
        where = f"extra_rules.{rule_id}"
        if not isinstance(pattern, str):
            raise RedactionConfigError(f"{where}: pattern must be a string")
        try:
            regex = compile_pattern(pattern)
        except re2.error as exc:
            raise RedactionConfigError(
                f"{where}: invalid regex (RE2 syntax: no lookaround or backreferences): "
                f"{_reason(exc)}"
            ) from exc
        if regex.fullmatch("") is not None:
            raise RedactionConfigError(f"{where}: pattern matches empty text")
        secret = regex.groupindex.get("secret", 0)
        specs.append(Spec(rule_id, "operator rule", pattern, pattern, secret=(secret,)))
    return specs


def _allow_values(allow: Sequence[str]) -> frozenset[str]:
    for i, value in enumerate(allow):
        if not isinstance(value, str) or not value.strip():
            raise RedactionConfigError(f"allow.{i}: must be a non-blank string")
    return frozenset(allow)


def _allow_patterns(patterns: Sequence[str]) -> tuple[Any, ...]:
    compiled = []
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            raise RedactionConfigError(f"allow_patterns.{i}: must be a non-blank string")
        try:
            compiled.append(compile_pattern(pattern))
        except re2.error as exc:
            raise RedactionConfigError(
                f"allow_patterns.{i}: invalid regex (RE2 syntax): {_reason(exc)}"
            ) from exc
    return tuple(compiled)


def _reason(exc: Exception) -> str:
    """RE2's complaint without the pattern piece it quotes (`missing ): (unclosed` → `missing )`).

    RE2 ends its messages with the offending part of the pattern after `: `; a pattern may
    hold a secret (an operator's rule written around a real key), so only the kind is kept.
    """
    reason = exc.args[0] if exc.args else ""
    text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    kind = text.partition(": ")[0].strip()
    return kind if kind and kind.isprintable() and len(kind) <= 60 else "not valid RE2"
