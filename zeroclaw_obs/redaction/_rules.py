"""The redactor's default rules: the patterns, their order, and which key names are sensitive.

This module owns every regular expression the redactor runs by default and the list of key
names whose values are masked whole. `_redactor.py` only runs what is built here.

Rule order is behaviour. Rules run one after another over the text, each on the output of the
one before, in this order:

1. token formats, most specific first: `private_key_block`, `jwt`, `anthropic_key` (before
   `openai_key`, since `sk-ant-` also starts with `sk-`), `openai_key`, `stripe_key`,
   `github_token`, `slack_token`, `aws_access_key_id`, `google_api_key`;
2. the operator's extra rules (`Redactor.from_config(extra_rules=...)`);
3. context rules, which recognise a secret by what surrounds it: `url_credentials`, `bearer`,
   `key_value` (header values, command-line flags, then assignments), and last `email` (PII).

Running token formats first means `token=ghp_…` is reported as `github_token`, and a context
rule never cuts a token in two so that the token rule misses the rest of it.

Risky parts:
- These patterns run on every outward payload, with Python's backtracking `re`. Each is written
  to stay linear: no nested unbounded quantifiers, bounded repeats, boundaries by lookaround,
  possessive/atomic groups where the engine must not give text back. Keep it that way.
- A rule must never match its own or another rule's marker `[REDACTED:<rule_id>]`, or redaction
  stops being idempotent. Value patterns refuse to start at `[REDACTED:`.
- Look-alikes must survive: receipts (`zc-receipt-…`), UUIDs, git SHAs, hex digests, and prose
  such as "password reset page". Token rules demand a non-token character before the prefix for
  that reason, so a prefix inside a longer base64url run never matches.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_RULE_IDS",
    "DEFAULT_SENSITIVE_KEYS",
    "SENSITIVE_KEY_RULE_ID",
    "Rule",
    "context_rules",
    "is_sensitive_key",
    "marker",
    "normalise_key",
    "token_rules",
]

SENSITIVE_KEY_RULE_ID = "sensitive_key"
"""The rule id reported when a value is masked because of the key it sits under."""

DEFAULT_SENSITIVE_KEYS: frozenset[str] = frozenset(
    {
        *("password", "passwd", "pwd", "passphrase", "private_key", "credential", "credentials"),
        *("secret", "client_secret", "secret_key", "secret_access_key", "session"),
        *("token", "access_token", "refresh_token", "id_token", "auth_token", "session_token"),
        *("api_key", "apikey", "x_api_key", "authorization", "proxy_authorization"),
        *("cookie", "set_cookie"),
    }
)
"""Normalised key names (see `normalise_key`) whose values are masked whole."""

# Keys whose text value runs to the end of the line: an HTTP header value has spaces in it.
_HEADER_KEYS = frozenset({"authorization", "cookie"})

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_KEY_SEPARATORS = str.maketrans({"-": "_", " ": "_", ".": "_"})
_MAX_VALUE = 1024
_MAX_TOKEN = 4096
_BOUNDARY = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"
_MARKER_GUARD = r"(?!\[REDACTED:)"
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")


def marker(rule_id: str) -> str:
    """The replacement text for `rule_id`: `[REDACTED:<rule_id>]`."""
    return f"[REDACTED:{rule_id}]"


def normalise_key(key: str) -> str:
    """Spell a key the way `DEFAULT_SENSITIVE_KEYS` does: snake_case, lower case.

    `apiKey`, `API-Key`, `x-api-key` and `X_API_KEY` become `api_key`, `api_key`, `x_api_key`
    and `x_api_key`.
    """
    return _CAMEL_BOUNDARY.sub("_", key).lower().translate(_KEY_SEPARATORS)


def is_sensitive_key(key: str, names: frozenset[str]) -> bool:
    """Whether a value under `key` must be masked whole.

    The normalised key must equal a sensitive name, or end with `_` and a sensitive name
    (`db_password`, `github_token`). Whole words only, never a substring: `secret_name`,
    `token_count`, `max_tokens` and `input_tokens` are not sensitive.
    """
    parts = normalise_key(key).split("_")
    return any("_".join(parts[i:]) in names for i in range(len(parts)))


@dataclass(frozen=True, slots=True)
class Rule:
    """One text rule: a compiled pattern and the cheap checks that decide where to run it.

    The pattern's group `secret` (or the whole match when it has none) is what the marker
    replaces; whatever the match holds before it (a key, a scheme word, a quote) is kept.

    The prefilter is what makes clean text cheap. `gates` are single characters one of which
    the text must hold wherever the rule matches (in the match or in its lookahead); CPython
    finds a single character with `memchr`, so a rule whose gates are absent costs nanoseconds.
    `anchors` are substrings where every match starts (or, with `run_before`, that every match
    contains); the regex runs only at their occurrences instead of at every position of the
    text. A rule with no anchors scans the whole text.
    """

    rule_id: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...] = ()
    lowercase: bool = False
    """Look the anchors up in the lower-cased text (for case-insensitive patterns)."""
    gates: str = ""
    run_before: tuple[frozenset[str], int] | None = None
    """For a rule whose match contains its anchor rather than starting at it: the match starts
    where the run of these characters (at most this many) that ends at the anchor starts."""
    group: int | str = field(init=False)
    label: str = field(init=False)

    def __post_init__(self) -> None:
        group: int | str = "secret" if "secret" in self.pattern.groupindex else 0
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "label", marker(self.rule_id))


def _token(rule_id: str, pattern: str, *anchors: str, gates: str) -> Rule:
    return Rule(rule_id, re.compile(pattern), anchors=anchors, gates=gates)


@functools.cache
def token_rules() -> tuple[Rule, ...]:
    """The token-format rules, in the order they run (most specific first)."""
    t = _MAX_TOKEN
    return (
        # A truncated key (no END line) is masked to the end of the text: the body is secret.
        _token(
            "private_key_block",
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            "-----BEGIN",
            gates="G",
        ),
        _token(
            "jwt",
            rf"{_BOUNDARY}eyJ[A-Za-z0-9_-]{{8,{t}}}\.[A-Za-z0-9_-]{{8,{t}}}\.[A-Za-z0-9_-]{{0,{t}}}",
            "eyJ",
            gates="J",
        ),
        _token(
            "anthropic_key",
            rf"{_BOUNDARY}sk-ant-[A-Za-z0-9_-]{{20,300}}",
            "sk-ant-",
            gates="-",
        ),
        # Real keys are random: demanding a digit keeps `sk-learn-style-names` untouched.
        _token(
            "openai_key",
            rf"{_BOUNDARY}sk-(?=[A-Za-z_-]{{0,300}}+[0-9])[A-Za-z0-9_-]{{20,300}}",
            "sk-",
            gates="-",
        ),
        _token(
            "stripe_key",
            rf"{_BOUNDARY}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{10,247}}{_END}",
            "sk_",
            "rk_",
            gates="_",
        ),
        _token(
            "github_token",
            rf"{_BOUNDARY}(?:gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{22,255}})"
            rf"{_END}",
            "gh",
            "github_pat_",
            gates="_",
        ),
        _token(
            "slack_token",
            rf"{_BOUNDARY}xox[abposre]-[0-9]{{1,20}}-[A-Za-z0-9-]{{8,250}}",
            "xox",
            gates="-",
        ),
        _token(
            "aws_access_key_id",
            rf"{_BOUNDARY}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{_END}",
            "AKIA",
            "ASIA",
            "ABIA",
            "ACCA",
            gates="A",
        ),
        _token(
            "google_api_key",
            rf"{_BOUNDARY}AIza[A-Za-z0-9_-]{{35}}{_END}",
            "AIza",
            gates="z",
        ),
    )


def _distinct_names(names: frozenset[str]) -> list[str]:
    """`names` without those that end with another name on a `_` boundary.

    Text keys match with any prefix (`db_password=`), so `client_secret` is already found
    through `secret`, and a shorter alternation is a faster scan.
    """
    return sorted(
        name
        for name in names
        if not any(name != other and name.endswith("_" + other) for other in names)
    )


def _keyword_alternation(names: list[str]) -> str:
    """A case-insensitive alternation of key names; `_` in a name also matches `-` or nothing."""
    spelled = ["[_-]?".join(re.escape(part) for part in name.split("_")) for name in names]
    return "|".join(sorted(spelled, key=len, reverse=True))


def _keyword_anchors(names: list[str]) -> tuple[str, ...]:
    """Lower-case words where every spelling of every name starts, as few as possible.

    A name starts with its first word; first words that share their first four letters
    (`passwd`, `password`, `passphrase`) are looked up once, by that prefix.
    """
    by_prefix: dict[str, set[str]] = {}
    for name in names:
        word = name.split("_")[0]
        by_prefix.setdefault(word[:4], set()).add(word)
    words = {prefix if len(group) > 1 else group.pop() for prefix, group in by_prefix.items()}
    return tuple(sorted(w for w in words if not any(o != w and w.startswith(o) for o in words)))


def _value(unquoted: str, *, scheme: bool) -> tuple[str, str]:
    """The opening of a value (kept) and the value itself (`secret`), quoted or not.

    Returns a pair `(opening, secret)`: the opening is an optional quote (`"`, `'` or `\\"` of
    escaped JSON) and, for header values, an auth scheme word that is kept; the secret is the
    value up to its closing quote, or the `unquoted` pattern when there is no quote.
    """
    opening = r"""(?:(?P<q1>\\")|(?P<q2>")|(?P<q3>'))?"""
    if scheme:
        # Possessive: once a scheme word is read it is kept, so `Bearer [REDACTED:bearer]` is
        # refused by the guard instead of being re-read as a value that starts with "Bearer".
        opening += r"(?:(?:bearer|basic|token|digest|bot|negotiate)[ \t]++)?+"
    n = _MAX_VALUE
    secret = (
        rf"(?P<secret>(?(q1)[^\"\\\r\n]{{1,{n}}}"
        rf"|(?(q2)(?:[^\"\\\r\n]|\\.){{1,{n}}}"
        rf"|(?(q3)[^'\r\n]{{1,{n}}}|{unquoted}))))"
    )
    return opening, secret


@functools.lru_cache(maxsize=16)
def context_rules(sensitive: frozenset[str], *, pii: bool) -> tuple[Rule, ...]:
    """The context rules, in the order they run.

    Args:
        sensitive: normalised sensitive key names; `key_value` looks for these.
        pii: include the `email` rule.

    Returns:
        `url_credentials`, `bearer`, the three `key_value` rules (header values, command-line
        flags, assignments), then `email` if `pii`.
    """
    n = _MAX_VALUE
    header_names = _distinct_names(
        frozenset(name for name in sensitive if is_sensitive_key(name, _HEADER_KEYS))
    )
    other_names = _distinct_names(
        frozenset(name for name in sensitive if not is_sensitive_key(name, _HEADER_KEYS))
    )
    # A plain value stops at whitespace, quotes, separators of query strings and cookies, and
    # brackets; it never starts with `=`/`>` (`password == x`) and JSON literals are not secrets.
    plain = (
        r"(?![=>])(?!(?:null|true|false|none)(?![\w-]))"
        rf"[^\s\"'`,;&(){{}}\[\]<>\\]{{1,{n}}}"
    )
    to_eol = rf"[^\r\n\"'\\]{{1,{n}}}"
    closing_quote = r"""(?:\\?["'])?"""
    separator = r"[ \t]*+(?:=>|[:=])[ \t]*+"

    rules = [
        Rule(
            "url_credentials",
            re.compile(
                r"(?<=[A-Za-z0-9])://"
                r"(?P<secret>[^\s/?#@:\"'<>\[\]]{0,256}:[^\s/?#\"'<>]{1,256})(?=@)"
            ),
            anchors=("://",),
            gates="@",
        ),
        # The scheme word is kept. A lone word after it ("Bearer token", "Basic usage.") is
        # prose, not a token.
        Rule(
            "bearer",
            re.compile(
                rf"{_BOUNDARY}(?:[Bb]earer|BEARER|[Bb]asic|BASIC)[ \t]++"
                r"(?![A-Za-z]?[a-z]{0,64}+[.,]?(?![A-Za-z0-9._~+/=-]))"
                rf"(?P<secret>[A-Za-z0-9._~+/=-]{{8,{_MAX_TOKEN}}}+)"
            ),
            anchors=("bearer", "basic"),
            lowercase=True,
            gates=" \t",
        ),
    ]
    if header_names:
        opening, secret = _value(to_eol, scheme=True)
        rules.append(
            Rule(
                "key_value",
                re.compile(
                    rf"(?i)(?:{_keyword_alternation(header_names)}){closing_quote}"
                    rf"{separator}{opening}{_MARKER_GUARD}{secret}"
                ),
                anchors=_keyword_anchors(header_names),
                lowercase=True,
                gates=":=",
            )
        )
    if other_names:
        keywords = _keyword_alternation(other_names)
        opening, secret = _value(r"(?!-)" + plain, scheme=False)
        rules.append(
            Rule(
                "key_value",
                re.compile(
                    rf"(?i)(?<!-)--(?=[a-z0-9])[a-z0-9_-]{{0,40}}?(?:{keywords})[ \t]++{opening}"
                    rf"{_MARKER_GUARD}{secret}"
                ),
                anchors=("--",),
                gates="-",
            )
        )
        opening, secret = _value(plain, scheme=False)
        rules.append(
            Rule(
                "key_value",
                re.compile(
                    rf"(?i)(?:{keywords}){closing_quote}{separator}{opening}"
                    rf"{_MARKER_GUARD}{secret}"
                ),
                anchors=_keyword_anchors(other_names),
                lowercase=True,
                gates=":=",
            )
        )
    if pii:
        # The match starts where the run of local-part characters before an `@` starts; the
        # lookbehind makes a full scan (non-ASCII text) start only there too, so it stays linear.
        rules.append(
            Rule(
                "email",
                re.compile(
                    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}+@"
                    r"(?:[A-Za-z0-9-]{1,63}\.){1,8}+[A-Za-z]{2,24}(?![A-Za-z0-9-])"
                ),
                anchors=("@",),
                gates="@",
                run_before=(_EMAIL_LOCAL, 64),
            )
        )
    return tuple(rules)


DEFAULT_RULE_IDS: tuple[str, ...] = (
    "private_key_block",
    "jwt",
    "anthropic_key",
    "openai_key",
    "stripe_key",
    "github_token",
    "slack_token",
    "aws_access_key_id",
    "google_api_key",
    "url_credentials",
    "bearer",
    "key_value",
    "email",
)
"""Every default text rule id, in the order the rules run (`email` only with `pii`)."""
