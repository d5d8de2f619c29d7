"""The one `Redactor` every outward surface uses: text rules plus key-aware masking of values.

This module owns how rules are applied: the prefilter that lets clean text cost a few
character and substring scans (see `Rule`), the substitution itself, the allowlist, the
per-rule counts, and the recursive walk over JSON-like values that masks whatever sits under a
sensitive key. The rules themselves, and their order, live in `_rules.py`.

Risky parts:
- This is on the hot path of every tool call (span attributes, logs, events, history). All
  compilation happens in `__init__`/`from_config`; a call only scans and substitutes.
- A replacement never contains any part of the secret, and reports carry counts, never text.
- `redact_value` builds new containers and never mutates its input, because the raw arguments
  are still needed by the tool call and the receipt.
- The sensitive-key cache and the plan cache (which rules to run for which gate characters)
  are plain dicts shared by threads; a lost race only recomputes the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._rules import (
    DEFAULT_RULE_IDS,
    DEFAULT_SENSITIVE_KEYS,
    SENSITIVE_KEY_RULE_ID,
    Rule,
    context_rules,
    is_sensitive_key,
    marker,
    normalise_key,
    token_rules,
)

__all__ = ["MAX_DEPTH", "Redactor"]

MAX_DEPTH = 64
"""Containers nested deeper than this are replaced by `[REDACTED:max_depth]` (no recursion bomb)."""

_RULE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
_MARKER = re.compile(r"\[REDACTED:[a-z][a-z0-9_]{0,63}\]")
_KEY_CACHE_LIMIT = 4096
_SENSITIVE_MARKER = marker(SENSITIVE_KEY_RULE_ID)
_DEPTH_MARKER = marker("max_depth")


class RedactionConfigError(ValueError):
    """Raised by `Redactor.from_config` when a rule, allowlist entry or key is invalid.

    A plain `ValueError` subclass so this package stays a leaf that imports nothing of ours;
    `config.py` turns it into a `ConfigError` naming the file.
    """


class Redactor:
    """Replaces secrets and PII in text and JSON-like values by `[REDACTED:<rule_id>]`.

    `Redactor()` runs the default rules; `Redactor.from_config` adds rules, an allowlist and
    sensitive key names. An instance is immutable after construction apart from an internal
    cache, and is safe to share between tasks and threads: build one per runtime and hand the
    same instance to every surface.
    """

    __slots__ = ("_allow", "_gates", "_key_cache", "_plans", "_rules", "_sensitive")

    _allow: frozenset[str]
    _gates: tuple[tuple[int, str], ...]
    _key_cache: dict[str, bool]
    _plans: dict[int, tuple[Rule, ...]]
    _rules: tuple[Rule, ...]
    _sensitive: frozenset[str]

    def __init__(self) -> None:
        """Compile the default rules: every token format, context rules and `email`."""
        self._configure(rules=(), allow=(), sensitive=DEFAULT_SENSITIVE_KEYS, pii=True)

    @classmethod
    def from_config(
        cls,
        *,
        extra_rules: dict[str, str] | None = None,
        allow: list[str] | None = None,
        extra_sensitive_keys: list[str] | None = None,
        pii: bool = True,
    ) -> Redactor:
        """Build a redactor with the default rules plus an operator's additions.

        Args:
            extra_rules: rule id (snake_case) → regular expression. The whole match is replaced,
                or only the group named `secret` when the pattern has one. Extra rules run
                after the token-format rules and before the context rules (see `_rules.py`).
            allow: exact strings that are never redacted, such as a documented example key or
                a support address. A match whose secret part equals one is left as is.
            extra_sensitive_keys: more key names whose values are masked whole; they are
                normalised like the defaults (`X-Tenant-Key` → `x_tenant_key`).
            pii: include the `email` rule.

        Returns:
            A new `Redactor`.

        Raises:
            RedactionConfigError: a rule id is not snake_case or clashes with a default rule,
                a pattern does not compile or matches the empty string, or a sensitive key is blank.
                The message names the rule id or key.
        """
        compiled: list[Rule] = []
        reserved = {*DEFAULT_RULE_IDS, SENSITIVE_KEY_RULE_ID, "max_depth"}
        for rule_id, pattern in (extra_rules or {}).items():
            if not _RULE_ID.fullmatch(rule_id):
                raise RedactionConfigError(f"redaction rule {rule_id!r}: id must be snake_case")
            if rule_id in reserved:
                raise RedactionConfigError(
                    f"redaction rule {rule_id!r}: id is already a default rule"
                )
            try:
                regex = re.compile(pattern)
            except (re.error, TypeError) as exc:
                raise RedactionConfigError(
                    f"redaction rule {rule_id!r}: invalid regex: {exc}"
                ) from exc
            if regex.fullmatch("") is not None:
                raise RedactionConfigError(
                    f"redaction rule {rule_id!r}: pattern matches empty text"
                )
            compiled.append(Rule(rule_id, regex))
        names = set(DEFAULT_SENSITIVE_KEYS)
        for key in extra_sensitive_keys or ():
            normalised = normalise_key(key).strip("_")
            if not normalised:
                raise RedactionConfigError(f"redaction sensitive key {key!r}: must not be blank")
            names.add(normalised)
        redactor = cls.__new__(cls)
        redactor._configure(
            rules=tuple(compiled), allow=tuple(allow or ()), sensitive=frozenset(names), pii=pii
        )
        return redactor

    def _configure(
        self,
        *,
        rules: tuple[Rule, ...],
        allow: tuple[str, ...],
        sensitive: frozenset[str],
        pii: bool,
    ) -> None:
        self._rules = (*token_rules(), *rules, *context_rules(sensitive, pii=pii))
        gate_chars = dict.fromkeys(gate for rule in self._rules for gate in rule.gates)
        self._gates = tuple((1 << bit, gate) for bit, gate in enumerate(gate_chars))
        self._plans = {}
        self._allow = frozenset(allow)
        self._sensitive = sensitive
        self._key_cache = {}

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """The ids of the text rules this redactor runs, in order, without repeats."""
        return tuple(dict.fromkeys(rule.rule_id for rule in self._rules))

    def redact_text(self, s: str) -> str:
        """Replace every secret in `s` by its marker.

        Args:
            s: any text; markers already in it are left alone, so redacting twice is a no-op.

        Returns:
            The redacted text (`s` itself when nothing matched).
        """
        return self._redact(s, None)

    def redact_text_report(self, s: str) -> tuple[str, dict[str, int]]:
        """Redact `s` and count the replacements per rule id.

        Args:
            s: any text.

        Returns:
            The redacted text and `{rule_id: count}` for rules that replaced something. The
            report never holds matched text.
        """
        counts: dict[str, int] = {}
        return self._redact(s, counts), counts

    def redact_value(self, v: Any) -> Any:
        """Redact a JSON-like value: every string, and whole values under sensitive keys.

        Dicts, lists and tuples are rebuilt (as plain `dict`, `list`, `tuple`) and strings,
        including dict keys, pass through `redact_text`. Under a sensitive key
        (see `DEFAULT_SENSITIVE_KEYS`: `password`, `api_key`, `authorization`, … matched as
        whole words, so `max_tokens` or `secret_name` are not sensitive) every scalar at any
        depth below it is replaced by `[REDACTED:sensitive_key]`, except `None`, booleans and
        empty strings, which reveal nothing. Elsewhere, objects other than strings and
        containers (numbers, bytes, models) are returned as they are: dump models to JSON-like
        data first. The input is never mutated.

        Args:
            v: a value such as tool arguments or a parsed tool result.

        Returns:
            A redacted copy of `v` with the same shape.
        """
        return self._walk(v, None, 0, False)

    def redact_value_report(self, v: Any) -> tuple[Any, dict[str, int]]:
        """`redact_value`, plus counts per rule id over the whole structure.

        Args:
            v: a value such as tool arguments or a parsed tool result.

        Returns:
            The redacted copy and `{rule_id: count}`; values masked because of their key are
            counted under `sensitive_key`.
        """
        counts: dict[str, int] = {}
        return self._walk(v, counts, 0, False), counts

    def is_sensitive_key(self, key: str) -> bool:
        """Whether a value under `key` is masked whole by `redact_value`.

        Args:
            key: a dict key as the caller wrote it (`apiKey`, `X-Api-Key`, `db_password`).

        Returns:
            True if its normalised form is a sensitive name or ends with `_` and one.
        """
        hit = self._key_cache.get(key)
        if hit is None:
            hit = is_sensitive_key(key, self._sensitive)
            if len(self._key_cache) < _KEY_CACHE_LIMIT:
                self._key_cache[key] = hit
        return hit

    def _redact(self, text: str, counts: dict[str, int] | None) -> str:
        # The gates of every rule are checked once, up front: most text lacks most of them
        # (`@`, `J`, `_`…), and the rules left to run are looked up by which gates are present.
        present = 0
        for bit, gate in self._gates:
            if gate in text:
                present |= bit
        plan = self._plans.get(present)
        if plan is None:
            plan = self._plan(present)
        lowered: str | None = None
        for rule in plan:
            if not rule.anchors:
                matches = list(rule.pattern.finditer(text))
            elif rule.lowercase:
                if lowered is None:
                    lowered = text.lower()
                # lower() lengthens a few characters (`İ`); offsets then stop lining up with
                # the text, so such text gets the plain full scan.
                if len(lowered) == len(text):
                    matches = _anchored(rule, text, lowered)
                else:
                    matches = list(rule.pattern.finditer(text))
            else:
                matches = _anchored(rule, text, text)
            if not matches:
                continue
            text, found = self._splice(rule, text, matches)
            if found:
                lowered = None
                if counts is not None:
                    counts[rule.rule_id] = counts.get(rule.rule_id, 0) + found
        return text

    def _plan(self, present: int) -> tuple[Rule, ...]:
        """The rules to run on text that holds exactly the gate characters in `present`.

        Gates are read from the text before any substitution. That is sound because a
        substitution only removes text and adds markers, and no rule matches inside a marker.
        """
        bits = {gate: bit for bit, gate in self._gates}
        plan = tuple(
            rule
            for rule in self._rules
            if not rule.gates or any(bits[gate] & present for gate in rule.gates)
        )
        self._plans[present] = plan
        return plan

    def _splice(self, rule: Rule, text: str, matches: list[re.Match[str]]) -> tuple[str, int]:
        """Replace the secret part of each match (in order, not overlapping) by the marker."""
        pieces: list[str] = []
        last = 0
        group = rule.group
        allow = self._allow
        for match in matches:
            if allow and match.group(group) in allow:
                continue
            start, end = match.span(group)
            pieces.append(text[last:start])
            pieces.append(rule.label)
            last = end
        if not pieces:
            return text, 0
        pieces.append(text[last:])
        return "".join(pieces), len(pieces) // 2

    def _mask(self, v: Any, counts: dict[str, int] | None) -> Any:
        """Replace one scalar found under a sensitive key; only what reveals nothing stays."""
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, str):
            if not v or v in self._allow or _MARKER.fullmatch(v):
                return v
        elif isinstance(v, bytes | bytearray) and not v:
            return v
        if counts is not None:
            counts[SENSITIVE_KEY_RULE_ID] = counts.get(SENSITIVE_KEY_RULE_ID, 0) + 1
        return _SENSITIVE_MARKER

    def _walk(self, v: Any, counts: dict[str, int] | None, depth: int, masked: bool) -> Any:
        if isinstance(v, str):
            return self._mask(v, counts) if masked else self._redact(v, counts)
        is_mapping = isinstance(v, dict) or (
            not isinstance(v, list | tuple) and isinstance(v, Mapping)
        )
        if not is_mapping and not isinstance(v, list | tuple):
            return self._mask(v, counts) if masked else v
        if depth >= MAX_DEPTH:
            if counts is not None:
                counts["max_depth"] = counts.get("max_depth", 0) + 1
            return _DEPTH_MARKER
        depth += 1
        if is_mapping:
            out: dict[Any, Any] = {}
            for key, item in v.items():
                if isinstance(key, str):
                    hide = masked or self.is_sensitive_key(key)
                    key = self._redact(key, counts)
                else:
                    hide = masked
                out[key] = self._walk(item, counts, depth, hide)
            return out
        items = [self._walk(item, counts, depth, masked) for item in v]
        return items if isinstance(v, list) else tuple(items)


def _anchored(rule: Rule, text: str, haystack: str) -> list[re.Match[str]]:
    """The matches of `rule` in `text`, trying the pattern only at its anchors' occurrences.

    Gives the same matches as `finditer` (leftmost first, not overlapping) because every match
    starts at an anchor or, with `rule.run_before`, where the run of characters before one starts.
    """
    positions: list[int] = []
    for anchor in rule.anchors:
        at = haystack.find(anchor)
        while at != -1:
            positions.append(at)
            at = haystack.find(anchor, at + 1)
    if not positions:
        return []
    if len(rule.anchors) > 1:
        positions.sort()
    matches: list[re.Match[str]] = []
    end = 0
    match_at = rule.pattern.match
    if rule.run_before is None:
        for at in positions:
            if at >= end and (found := match_at(text, at)) is not None:
                matches.append(found)
                end = found.end()
        return matches
    chars, longest = rule.run_before
    for at in positions:
        if at < end:
            continue
        start, stop = at, max(end, at - longest)
        while start > stop and text[start - 1] in chars:
            start -= 1
        if (found := match_at(text, start)) is not None:
            matches.append(found)
            end = found.end()
    return matches
