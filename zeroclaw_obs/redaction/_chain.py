"""The chain: which rules run, in which order, and what an operator may add to it.

The order of the chain is the behaviour (see `build_chain`): the most specific rule that fits
names a secret. This module builds it for a configuration, lists the rule ids a report can
hold (`DEFAULT_RULE_IDS`, `RULES`), and validates an operator's additions (`extra_specs`,
`check_allow_values`, `compile_allow_patterns`), raising `RedactionConfigError`.

Risky part: an operator's configuration can hold secrets (a rule written around a real key),
so no error message here repeats a pattern, an id or a value; RE2's own complaint is cut to
its kind (`reason`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import re2

from ._concat import StringConcatRule
from ._cookies import CookieHeaderRule
from ._encoded import EncodedSecretRule, PercentEncodedRule
from ._keys import DEFAULT_SENSITIVE_KEYS, SensitiveKeys, key_value_specs
from ._manifests import KubernetesSecretRule
from ._patterns import HeadValueRule, PatternRule
from ._pem import PemBlockRule
from ._pii import pii_specs
from ._prose import prose_specs
from ._providers import provider_specs
from ._rules import context_specs, credential_file_specs, generic_spec, sql_specs
from ._scanner import Rule, Spec, compile_pattern
from ._structured import MAX_DEPTH, MAX_DEPTH_RULE_ID, SENSITIVE_KEY_RULE_ID
from ._tables import PiiColumnRule, SecretColumnRule
from ._tokens import token_specs
from ._wrapped import WrappedTokenRule

__all__ = [
    "DEFAULT_RULE_IDS",
    "FORMATS",
    "RULES",
    "RedactionConfigError",
    "build_chain",
    "check_allow_values",
    "compile_allow_patterns",
    "extra_specs",
    "reason",
    "reported_ids",
]

_RULE_ID = compile_pattern(r"[a-z][a-z0-9_]{0,63}")


class RedactionConfigError(ValueError):
    """Raised by `Redactor.from_config` when a rule, allowlist entry or key is invalid.

    A plain `ValueError` subclass so this package stays a leaf that imports nothing of ours;
    `config.py` turns it into a `ConfigError` naming the file.
    """


def build_chain(sensitive: SensitiveKeys, extra: Sequence[Spec], *, pii: bool) -> list[Rule]:
    """The text rules in chain order; a rule's index is its priority (lower wins a tie).

    The order is the behaviour, most specific first, so the name on a marker is the most
    informative one that fits:
    1. provider token formats (`token_specs`, then `provider_specs`: the long tail of
       prefixed tokens and webhook URLs): a known prefix or shape names itself;
    2. the operator's extra rules: they know their own formats best after the providers;
    3. context rules (`bearer`, `basic_auth`, `url_credentials`, `sql_password`,
       `credential_file`, `kubernetes_secret`, cookie headers): a secret known by the scheme,
       URL, statement or file syntax around it;
    4. `key_value`: any value after a sensitive key, whatever it looks like, or in a table
       column a sensitive key names;
    5. `generic_secret`, then `prose_secret`: a random-looking token after a credential
       word, a credential-shaped value after `my password is`; the last resort among
       secrets because they judge by shape alone;
    6. encodings and joins (`encoded_secret`, URL-encoded text, tokens wrapped over lines,
       string literals joined by code, these three under the inner rules' ids): they rescan
       decoded or joined text with this same chain, so they come after the plain rules;
    7. personal data (`pii_specs`, then phone and SSN columns of tables), last: a value that is both
       (a password that is an e-mail address) is reported as the secret.
    """
    rules: list[Rule] = []
    formats = [*token_specs(), *provider_specs(), *extra]
    for spec in [*formats, *context_specs(), *sql_specs(), *credential_file_specs()]:
        rules.append((PemBlockRule if spec.blocks else PatternRule)(spec, len(rules)))
    rules.append(KubernetesSecretRule(len(rules)))
    rules.append(CookieHeaderRule(len(rules)))
    for spec in key_value_specs(sensitive):
        rules.append((HeadValueRule if spec.values else PatternRule)(spec, len(rules)))
    rules.append(SecretColumnRule(len(rules), sensitive))
    rules.append(PatternRule(generic_spec(), len(rules)))
    for spec in prose_specs():
        rules.append(PatternRule(spec, len(rules)))
    rules.append(EncodedSecretRule(len(rules)))
    rules.append(PercentEncodedRule(len(rules)))
    rules.append(WrappedTokenRule(len(rules)))
    rules.append(StringConcatRule(len(rules)))
    if pii:
        rules.extend(PatternRule(spec, len(rules) + i) for i, spec in enumerate(pii_specs()))
        rules.append(PiiColumnRule(len(rules)))
    return rules


def reported_ids(rules: Sequence[Rule]) -> tuple[str, ...]:
    """The ids a report can hold, in chain order, without repeats."""
    return tuple(dict.fromkeys(rule.rule_id for rule in rules if rule.reports))


def _describe(rules: Sequence[Rule]) -> dict[str, str]:
    described = {rule.rule_id: rule.description for rule in reversed(rules) if rule.reports}
    described = {rule_id: described[rule_id] for rule_id in reported_ids(rules)}
    described["key_value"] = (
        "values after sensitive keys in text: key=value, key: value, JSON, headers, "
        "--flags, -pPASSWORD, name/value pairs, XML elements"
    )
    described[SENSITIVE_KEY_RULE_ID] = (
        "values under a sensitive key in structured data (password, token, api_key, …)"
    )
    described[MAX_DEPTH_RULE_ID] = f"containers nested deeper than {MAX_DEPTH} levels"
    return described


FORMATS = len(token_specs()) + len(provider_specs())
"""How many rules of the chain know a secret by its own format, before the operator's."""

_DEFAULT_CHAIN = build_chain(SensitiveKeys(DEFAULT_SENSITIVE_KEYS), (), pii=True)

DEFAULT_RULE_IDS: tuple[str, ...] = reported_ids(_DEFAULT_CHAIN)
"""Every default text rule id, in chain order (the personal-data ones only with `pii`)."""

RULES: Mapping[str, str] = _describe(_DEFAULT_CHAIN)
"""A one-line description of every rule id a report can hold, for docs and the scanner."""

del _DEFAULT_CHAIN


def extra_specs(extra_rules: Mapping[str, str]) -> list[Spec]:
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
                f"{reason(exc)}"
            ) from exc
        if regex.fullmatch("") is not None:
            raise RedactionConfigError(f"{where}: pattern matches empty text")
        secret = regex.groupindex.get("secret", 0)
        specs.append(Spec(rule_id, "operator rule", pattern, pattern, secret=(secret,)))
    return specs


def check_allow_values(allow: Sequence[str]) -> frozenset[str]:
    for i, value in enumerate(allow):
        if not isinstance(value, str) or not value.strip():
            raise RedactionConfigError(f"allow.{i}: must be a non-blank string")
    return frozenset(allow)


def compile_allow_patterns(patterns: Sequence[str]) -> tuple[Any, ...]:
    compiled = []
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            raise RedactionConfigError(f"allow_patterns.{i}: must be a non-blank string")
        try:
            compiled.append(compile_pattern(pattern))
        except re2.error as exc:
            raise RedactionConfigError(
                f"allow_patterns.{i}: invalid regex (RE2 syntax): {reason(exc)}"
            ) from exc
    return tuple(compiled)


def reason(exc: Exception) -> str:
    """RE2's complaint without the pattern piece it quotes (`missing ): (unclosed` → `missing )`).

    RE2 ends its messages with the offending part of the pattern after `: `; a pattern may
    hold a secret (an operator's rule written around a real key), so only the kind is kept.
    """
    reason = exc.args[0] if exc.args else ""
    text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    kind = text.partition(": ")[0].strip()
    return kind if kind and kind.isprintable() and len(kind) <= 60 else "not valid RE2"
