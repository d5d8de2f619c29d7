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
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import re2

from ._chain import (
    FORMATS,
    RedactionConfigError,
    build_chain,
    check_allow_values,
    compile_allow_patterns,
    extra_specs,
    reason,
    reported_ids,
)
from ._clean import KnownTexts
from ._keys import DEFAULT_SENSITIVE_KEYS, SensitiveKeys
from ._normalize import Folded, fold, fold_key, has_continuation, utf8_safe
from ._scanner import Candidate, Scanner, Spec
from ._settled import apart
from ._structured import JsonTextReader, ValueWalker, marker

__all__ = ["Redactor"]

# Exactly one receipt or one marker (linear: a bounded, anchored pattern on Python `re`).
_WHOLE_PROTECTED = re.compile(
    r"zc-receipt-[0-9]{1,20}-[A-Za-z0-9_-]{43}|\[REDACTED:[a-z0-9_]{1,64}\]"
)
_RECEIPT_PREFIX = "zc-receipt-"
_OUTPUT_ENTRIES = 16384
_OUTPUT_CHARS = 4 << 20
"""The memory of outputs (`Redactor.outputs`), per generation: a tool call adds its call id,
arguments JSON and result (~2 KB with 1 KB payloads), so two generations hold the texts of
the last ~4,000 calls — more than the export and log queues let telemetry fall behind the
turn — in at most 8 M characters, however long the process runs."""
_MAX_PASSES = 4
"""Rescans of a redacted text at most (`Redactor._until_stable`); one is almost always enough."""
_JOIN = "\n\0\n"
"""Joins a structure's strings for one scan; no rule matches across it (see `_texts`)."""


class Redactor:
    """Replaces secrets and personal data in text and JSON-like values by `[REDACTED:<rule_id>]`.

    `Redactor()` runs the default rules; `Redactor.from_config` adds rules, allowlists and
    sensitive key names, or turns personal data off. An instance is immutable after
    construction (apart from a bounded key cache and the bounded memory of its outputs) and
    safe to share between tasks and threads: build one per runtime and hand the same
    instance to every surface.

    It remembers the texts `redact_text` returned (`outputs`, bounded): redaction is
    idempotent, so such a text comes back unchanged without a scan, and the surfaces that
    redact again (the span export guard, the log chain) skip it through `CleanTextCache`.
    Only a text equal to an output is skipped; any other text, one holding an output
    included, is scanned in full.
    """

    __slots__ = ("_json", "_keys", "_outputs", "_scanner", "_walker")

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
        extra = extra_specs(extra_rules or {})
        values = check_allow_values(allow or [])
        patterns = compile_allow_patterns(allow_patterns or [])
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
                f"extra_rules: the patterns cannot be compiled together: {reason(exc)}"
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
        self._outputs = KnownTexts(max_entries=_OUTPUT_ENTRIES, max_chars=_OUTPUT_CHARS)
        self._scanner = Scanner(
            build_chain(sensitive, extra, pii=pii),
            allow=allow,
            allow_patterns=allow_patterns,
            clip_below=FORMATS + len(extra),  # the formats, as `build_chain` orders them
            formats=FORMATS,
        )

        def allowed(value: str) -> bool:
            if value in allow:
                return True
            value = utf8_safe(value)
            return any(p.fullmatch(value) is not None for p in allow_patterns)

        self._walker = ValueWalker(self._texts, sensitive, allowed=allowed, pii=pii)
        self._json = JsonTextReader(sensitive, self._walker)

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """The ids of the text rules this redactor runs, in chain order, without repeats."""
        return reported_ids(self._scanner.rules)

    @property
    def outputs(self) -> KnownTexts:
        """The texts this redactor returned or was told are built from its outputs (bounded,
        see `KnownTexts`): each is clean, since redacting it again changes nothing."""
        return self._outputs

    def is_output(self, s: str) -> bool:
        """Whether `s` is a remembered output (`redact_text(s)` would return it unchanged)."""
        return s in self._outputs

    def mark_clean(self, text: str) -> str:
        """Remember `text` as an output: the caller built it only from this redactor's
        outputs (e.g. the JSON of a `redact_value` result), so later surfaces skip its scan.

        Mark only text whose every string came out of this redactor, joined by syntax that
        carries no payload (JSON punctuation); never a cut or a mix with raw text.

        Returns:
            `text` itself.
        """
        self._outputs.add(text)
        return text

    def redact_text(self, s: str) -> str:
        """Replace every secret in `s` by its marker.

        Args:
            s: any text; markers already in it are left alone, so redacting twice is a no-op.

        Returns:
            The redacted text (`s` itself when nothing matched). It is remembered
            (`outputs`): asked again, it is returned without a scan.
        """
        outputs = self._outputs
        if s in outputs:
            return s
        if s.isascii() and "\\" not in s and s[:1] not in ("{", "["):
            # The common case first, in few calls: plain ASCII that is its own shadow
            # (nothing to fold) and no document the JSON step would read; most such text
            # shuts the gate. Otherwise exactly what `_text` does, gated once.
            if s.startswith(_RECEIPT_PREFIX) and _WHOLE_PROTECTED.fullmatch(s):
                return s  # a receipt on its own is never changed (fresh on every call)
            scanner, data = self._scanner, s.encode()
            if len(data) < scanner.short_below:
                hits = scanner.short_gate(data)  # RE2's own call: no Python in the gate
            else:
                hits = scanner.gate(data)
            if not hits:
                outputs.add(s)
                return s
            out, settled = self._plain_once(s, None, hits)
            if not settled and out is not s:
                out = self._until_stable(s, out, None, settled=False)
        else:
            out = self._text(s, None)
        outputs.add(out)
        return out

    def redact_text_report(self, s: str) -> tuple[str, dict[str, int]]:
        """Redact `s` and count the replacements per rule id.

        Returns:
            The redacted text (remembered, as by `redact_text`) and `{rule_id: count}` for
            rules that replaced something. The report never holds matched text.
        """
        if s in self._outputs:
            return s, {}  # an output: redacting it again replaces nothing
        counts: dict[str, int] = {}
        out = self._text(s, counts)
        self._outputs.add(out)
        return out, counts

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
                settled=apart(joined, [(s + starts[k], e + starts[k]) for s, e, _, _ in spans]),
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
        (`apart`): the rescan of a secret-dense text found nothing new in every case
        measured, and cost a third of its time.
        """
        passes = 0
        while not settled and out is not text and passes < _MAX_PASSES:
            text, (out, settled) = out, self._text_once(out, counts)
            passes += 1
        return out

    def _text_once(self, text: str, counts: dict[str, int] | None) -> tuple[str, bool]:
        """One pass of the text chain, and whether its replacements are settled (`apart`)."""
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
            return self._plain_once(text, counts)
        folded = fold(text)
        found = self._scanner.scan(folded.shadow)
        if not found:
            return text, True
        return _splice(folded, found, counts), apart(folded.shadow, found)

    def _plain_once(
        self, text: str, counts: dict[str, int] | None, gated: Sequence[int] | None = None
    ) -> tuple[str, bool]:
        """`_text_once` for ASCII text with nothing to fold: the text is its own shadow.

        Args:
            gated: the gate's answer for `text`, when the caller already asked.
        """
        found = self._scanner.scan(text, gated=gated)
        if not found:
            return text, True
        return _splice(Folded(text, text, []), found, counts), apart(text, found)


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
