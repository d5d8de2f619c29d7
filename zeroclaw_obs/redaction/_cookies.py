"""Cookies: each cookie's value is a secret, its name and the attributes around it are not.

A `Cookie:` header carries `name=value` pairs separated by `;`; a session cookie's value is a
bearer credential, but `theme=dark` or `lang=en` beside it is a preference. A `Set-Cookie:`
header carries one pair, then attributes (`Path=/; Secure; HttpOnly; SameSite=Lax`) that
describe it. So the value of each pair is replaced on its own and everything else stays:
`Cookie: sid=[REDACTED:key_value]; theme=dark`. The same reading serves text
(`CookieHeaderRule`) and structured values (`redact_cookie_text`, for a cookie header stored
under a key such as `http.request.header.cookie`).

Risky part: a value kept as a preference is never seen again by this rule. Only short
words, small numbers and booleans are kept (`dark`, `en-US`, `1`, `true`); a session id is
long and mixes letters and digits.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._normalize import fold_key
from ._scanner import Candidate, View, compile_pattern
from ._validators import is_placeholder

__all__ = ["CookieHeaderRule", "cookie_value_spans", "is_cookie_key"]

_END = frozenset("\r\n\"'\\")
"""Where a header's value ends in text: the line, or the string holding it (JSON)."""
_NOT_IN_VALUE = frozenset(' \t",\\')
_PREFERENCE_WORDS = frozenset({"true", "false", "yes", "no", "on", "off"})
_ANALYTICS_NAMES = frozenset(
    {"_ga", "_gid", "_gat", "_gcl_au", "_fbp", "_fbc", "_uetsid", "_uetvid"}
)
_ANALYTICS_PREFIXES = ("_ga_", "_gat_", "_hjsessionuser_", "ajs_anonymous_id")
"""Analytics cookies (Google Analytics `_ga=GA1.1.<random>.<epoch>`, Meta `_fbp=fb.1.…`,
Microsoft UET, Hotjar, Segment's anonymous id): a client id for counting visits, set by
script and readable by every page; no server accepts it as a login."""


def _is_analytics(name: str) -> bool:
    name = name.strip().lower()
    return name in _ANALYTICS_NAMES or name.startswith(_ANALYTICS_PREFIXES)


def is_cookie_key(key: str) -> bool:
    """Whether a key names a cookie header (`Cookie`, `Set-Cookie`, `…header.cookie`)."""
    return fold_key(key).endswith("cookie")


def _is_preference(value: str) -> bool:
    """A cookie value that holds a choice or a count, not a credential (`dark`, `en-US`, `1`,
    `true`, `3600`)."""
    if value.lower() in _PREFERENCE_WORDS or (value.isdigit() and len(value) <= 6):
        return True
    return len(value) <= 12 and value.replace("-", "").replace("_", "").isalpha()


def cookie_value_spans(
    text: str, start: int, end: int, *, set_cookie: bool, pairs_only: bool = False
) -> Iterator[tuple[int, int]]:
    """The spans of cookie values to replace in the header value `text[start:end]`.

    Every pair of a `Cookie:` value, only the first of a `Set-Cookie:` value (the rest are
    its attributes), except analytics cookies (`_ga`, `_fbp`: client ids, see
    `_ANALYTICS_NAMES`). A piece without `=` is a value on its own, unless `pairs_only`
    (`curl -b` takes a file name too). Quotes around a value stay.
    """
    first = True
    at = start
    while at < end:
        stop = text.find(";", at, end)
        stop = end if stop < 0 else stop
        if first or not set_cookie:
            eq = text.find("=", at, stop)
            if eq < 0 and pairs_only:
                break  # `curl -b cookies.txt`: a cookie jar's file name, not a value
            if eq >= 0 and _is_analytics(text[at:eq]):
                first = False
                at = stop + 1
                continue
            value_start = at if eq < 0 else eq + 1
            span = _value_span(text, value_start, stop)
            if span is not None:
                yield span
        first = False
        at = stop + 1


def _value_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A cookie value: from its first character to the first that no value holds (RFC 6265:
    whitespace, `"`, `,`, `\\`), quotes around it left out."""
    while start < end and text[start] in ' \t"':
        start += 1
    stop = start
    while stop < end and text[stop] not in _NOT_IN_VALUE:
        stop += 1
    end = stop
    value = text[start:end]
    if not value or "\0" in value or _is_preference(value) or is_placeholder(value):
        return None
    return start, end


class CookieHeaderRule:
    """Replaces each cookie's value in `Cookie:` and `Set-Cookie:` headers (`key_value`).

    Sits with the context rules, before the `key_value` assignment rules, which would take a
    header's first pair as a label and an assignment.
    """

    rule_id = "key_value"
    reports = True
    description = (
        "cookie values in Cookie: and Set-Cookie: headers and curl -b/--cookie "
        "(names, attributes and analytics client ids kept)"
    )
    trigger = r"(?i:cookie)\\*[\"']?[ \t]*:|[ \t]-b[ \t]|--cookie[ \t=]"
    pii = False

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self._head = compile_pattern(
            r"(?i)([A-Za-z0-9_.\-]*cookie)(?:\\*[\"'])?[ \t]*:[ \t]*(?:\\*[\"'])?"
            r"|[ \t](-b|--cookie)(?:[ \t]+|=)[\"']?"
        )

    def find(self, view: View) -> list[Candidate]:
        """Candidates for the values of every cookie header in the view."""
        text, found = view.text, []
        size, done = len(text), 0
        for spans in view.matches(self._head):
            if spans[0][0] < done:
                continue  # inside a header value already read (keeps this linear)
            start = end = spans[0][1]
            while end < size and text[end] not in _END:
                end += 1
            curl = spans[1][0] < 0
            if curl:  # `curl -b 'a=b; c=d'` or `-b a=b`: the argument ends at a space too
                quoted = text[start - 1] in "\"'"
                end = start
                while end < size and text[end] not in _END and (quoted or text[end] not in " \t"):
                    end += 1
            key = "cookie" if curl else text[spans[1][0] : spans[1][1]]
            set_cookie = fold_key(key).endswith("set_cookie")
            done = end
            spans_of = cookie_value_spans(text, start, end, set_cookie=set_cookie, pairs_only=curl)
            for s, e in spans_of:
                found.append((s, e, self.priority, self.rule_id))
        return found
