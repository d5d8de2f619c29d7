"""Checks that run in Python on what a pattern matched: checksums, shapes, entropy, decoding.

RE2 has no lookaround and no backreferences, and some facts are not regular at all (a Luhn
digit, an IBAN's mod-97, how random a string is). So a pattern finds *candidates* in linear
time, and a check here accepts, trims or refuses each one. Every check is linear in the length
of its candidate and never looks further than a few characters around it, so a scan stays
linear in the text however many candidates it finds.

Risky part: a check that refuses too much lets a secret through; one that accepts too much
destroys look-alikes (git SHAs, UUIDs, digests, receipts). Each refusal below names the
look-alike it protects.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from typing import Any

__all__ = [
    "card_span",
    "decode_base64_text",
    "iban_span",
    "is_basic_credential",
    "is_code_reference",
    "is_events_routing_key",
    "is_ipv4",
    "is_ipv6",
    "is_measurement",
    "is_phone",
    "is_placeholder",
    "is_public_value",
    "is_ssn",
    "is_uuid",
    "looks_random",
    "luhn_ok",
]

_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")


def is_uuid(s: str) -> bool:
    """Whether `s` is a UUID in its canonical 8-4-4-4-12 hex form (an id, never a secret)."""
    parts = s.split("-")
    return [8, 4, 4, 4, 12] == [len(p) for p in parts] and all(_HEX.issuperset(p) for p in parts)


def looks_random(s: str, *, min_len: int = 20) -> bool:
    """Whether `s` looks like a generated token rather than a word, path, id or number.

    Refuses: short strings; only digits (numeric ids, token counts) or a decimal number
    (`1.7963132104259708e+09`, a Prometheus timestamp); only letters (words,
    identifiers); UUIDs; strings mostly made of long lower-case words (paths, slugs, names);
    and strings of few distinct characters. Hex strings need 32+ characters (shorter hex is
    an id or a short SHA); others need digits and letters, and 13+ distinct characters
    unless they mix cases.
    """
    if len(s) < min_len:
        return False
    core = s.strip("=")
    if core.isdigit() or core.isalpha() or is_uuid(core) or _is_number(core):
        return False
    # Distinct characters stand in for entropy: 2**3.3 ≈ 10 symbols in use.
    chars = set(core)
    if _HEX.issuperset(chars):
        return len(core) >= 32 and len(chars) >= 8
    has_upper = core != core.lower()
    has_lower = core != core.upper()
    if not (chars & _DIGITS and (has_upper or has_lower)):
        return False
    if len(chars) < (10 if has_upper and has_lower else 13):
        return False
    return not _wordy(core)


def _is_number(s: str) -> bool:
    """Whether `s` is a decimal number (`1.7963132104259708e+09`: digits, a dot, an exponent)."""
    if len(s) > 64 or not s.isascii() or "_" in s:
        return False
    try:
        float(s)
    except ValueError:
        return False
    return True


_WORD_LETTERS = {c: "a" for c in range(ord("a"), ord("z") + 1)}
_NOT_WORD = dict.fromkeys(range(128), " ") | _WORD_LETTERS


def _wordy(s: str) -> bool:
    """Whether more than half of `s` is runs of 5+ lower-case letters (paths, slugs, prose)."""
    runs = s.translate(_NOT_WORD).split()
    return sum(len(run) for run in runs if len(run) >= 5) * 2 > len(s)


def luhn_ok(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# Issuer prefixes by network: Visa, Mastercard (51-55, 2221-2720), Amex, Diners, JCB,
# Discover / UnionPay / Maestro. Numbers starting otherwise (1…, 7…, 8…, 9…, 0…) are
# timestamps, order numbers and ids, never cards.
_CARD_PREFIXES = ("4", "51", "52", "53", "54", "55", "22", "23", "24", "25", "26", "27")
_CARD_PREFIXES += ("34", "37", "30", "36", "38", "39", "35", "6", "50", "56", "57", "58")
_CARD_GROUPS = {
    (4, 4, 4, 4),
    (4, 4, 4, 4, 3),
    (4, 6, 5),
    (4, 6, 4),
    (4, 4, 4, 1),
    (4, 4, 4, 2),
    (4, 4, 4, 3),
}
"""Card groupings: 16 in fours, 19, Amex 4-6-5, Diners 4-6-4, and 13, 14 (Diners as payment
forms group every number: in fours) and 15 digits in fours with a short last group."""


def card_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a payment card number in `text[start:end]`, or None.

    The candidate is 13–19 digits, bare or in the usual groups separated by one kind of
    separator. It must start with an issuer prefix, pass Luhn, not repeat one digit, and not
    run on into more digits. A trailing group is dropped when the number only checks out
    without it (`4111 1111 1111 1111 2024`).
    """
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        return None
    value = text[start:end]
    seps = {ch for ch in value if ch in " -"}
    if len(seps) > 1:
        return None
    groups = value.split(seps.pop()) if seps else [value]
    while groups:
        digits = "".join(groups)
        shape_ok = len(groups) == 1 or tuple(len(g) for g in groups) in _CARD_GROUPS
        if (
            shape_ok
            and 13 <= len(digits) <= 19
            and digits.startswith(_CARD_PREFIXES)
            and len(set(digits)) > 1
            and luhn_ok(digits)
        ):
            return start, start + len(groups[0]) + sum(len(g) + 1 for g in groups[1:])
        if len(groups) == 1:
            return None
        groups = groups[:-1]
    return None


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of an IBAN at the start of `text[start:end]`, or None.

    The country code fixes the length; the candidate is cut to that many characters (spaces
    between groups do not count), which drops a trailing word the pattern swallowed
    (`… 0130 00 EUR`). The mod-97 checksum must then equal 1.
    """
    if start > 0 and text[start - 1].isalnum():
        return None
    length = _IBAN_LENGTHS.get(text[start : start + 2])
    if length is None:
        return None
    chars: list[str] = []
    stop = start
    for i in range(start, end):
        if text[i] != " ":
            chars.append(text[i])
            if len(chars) == length:
                stop = i + 1
                break
    if len(chars) < length or (stop < len(text) and text[stop].isalnum()):
        return None
    value = "".join(chars)
    rotated = value[4:] + value[:4]
    number = "".join(str(int(ch, 36)) for ch in rotated)
    return (start, stop) if int(number) % 97 == 1 else None


def is_ssn(value: str) -> bool:
    """Whether `value` (`123-45-6789`, `123 45 6789` or 9 digits) is a valid-looking US SSN.

    Area 000, 666 and 900–999, group 00 and serial 0000 are never issued.
    """
    digits = "".join(ch for ch in value if ch in _DIGITS)
    if len(digits) != 9:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def is_ipv4(value: str) -> bool:
    """Whether `value` is a dotted-quad IPv4 address that identifies a host.

    Octets above 255 or with leading zeros are version numbers or OIDs, not addresses;
    `0.0.0.0`, `255.255.255.255` and loopback `127.x.x.x` identify no one and are kept.
    """
    parts = value.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if not part.isdigit() or len(part) > 3 or (len(part) > 1 and part[0] == "0"):
            return False
        if int(part) > 255:
            return False
    return parts[0] not in ("0", "127") and value != "255.255.255.255"


def is_ipv6(value: str) -> bool:
    """Whether `value` is an IPv6 address worth hiding.

    It needs a `::` or all eight groups (times such as `10:00:00` and MAC addresses have
    neither), at least three groups and a digit (`std::vector`, `a::b` are code), and must
    not be loopback or unspecified.
    """
    groups = value.split(":")
    if "::" not in value and len(groups) != 8:
        return False
    if sum(1 for g in groups if g) < 3 or not any(c in _DIGITS for c in value):
        return False
    try:
        address = ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


def is_phone(value: str, *, context: bool = False) -> bool:
    """Whether `value` is shaped like a phone number.

    International numbers (`+…`) have 8–15 digits; with separators, at least two groups and
    no group longer than 8 digits (a signed decimal such as `+3.14159265` is not a phone).
    North-American numbers have 10 digits (11 with a leading 1). With `context` (a `phone:` or
    `tel` label before it) 7–15 digits in any grouping are enough.
    """
    digits = "".join(ch for ch in value if ch in _DIGITS)
    if "((" in value or "))" in value or value.count("(") != value.count(")"):
        return False
    if context:
        return 7 <= len(digits) <= 15
    groups = [g for g in value.replace("(", " ").replace(")", " ").replace("+", " ").split() if g]
    flat = [p for g in groups for p in g.replace(".", " ").replace("-", " ").split()]
    if value.startswith("+"):
        if not 8 <= len(digits) <= 15:
            return False
        if len(flat) == 1:
            return True
        return all(len(p) <= 8 for p in flat) and not (value.count(".") == 1 and len(flat) == 2)
    return len(digits) == 10 or (len(digits) == 11 and digits[0] == "1")


_PLACEHOLDER_WORDS = frozenset(
    {
        *("null", "none", "nil", "undefined", "true", "false", "n/a", "na", "tbd", "todo"),
        *("redacted", "hidden", "masked", "removed", "omitted", "empty"),
        *("required", "optional", "string", "str", "value", "example", "placeholder"),
    }
)


_MASK_CHARS = frozenset("*xX•#.-_?…")


def is_placeholder(value: str) -> bool:
    """Whether a value under a sensitive key is clearly not a secret.

    JSON/YAML literals and descriptive words, mask characters (`****`, `xxxx`, `•••`), and
    references to where the secret lives: `${DB_PASSWORD}`, `$DB_PASSWORD`, `{{ vault_pw }}`,
    `<your-token>`, `%(password)s`, `%s`, and what another tool left in a secret's place
    (`[FILTERED]`, `[MASKED]`).
    """
    v = value.strip()
    if len(v) > 80:
        return False  # a reference or a mask is short; a long value is data
    if not v or v.lower() in _PLACEHOLDER_WORDS:
        return True
    if _MASK_CHARS.issuperset(v):
        return True
    if v.startswith(("${", "{{", "%(", "<")) and v.endswith(("}", "}}", ")s", ">")):
        return True
    if v in ("%s", "%r", "%d", "{}", "[]", "()"):
        return True
    if v[0] == "$" and len(v) > 1 and (v[1:].replace("_", "").isalnum() and v[1:].isupper()):
        return True
    if v[0] == "[" and v[-1] == "]" and len(v) <= 24 and _is_word(v[1:-1]):
        return True  # what another tool left in its place: `[FILTERED]`, `[MASKED]`
    return _is_instruction(v)


def _is_word(v: str) -> bool:
    return v.replace("_", "").replace("-", "").replace(" ", "").isalpha()


_INSTRUCTION_WORDS = frozenset({"your", "here", "replace", "insert", "placeholder", "redacted"})


def _is_instruction(v: str) -> bool:
    """`YOUR_API_KEY`, `your-token-here`, `REPLACE_WITH_TOKEN`: text telling the reader to
    supply a value. Letters and separators only; a value with a digit is data. A working
    default such as `changeme` is not one: it is a password on every system that kept it."""
    if not v.replace("_", "").replace("-", "").replace(" ", "").isalpha():
        return False
    words = v.lower().replace("-", "_").replace(" ", "_").split("_")
    return len(words) > 1 and not _INSTRUCTION_WORDS.isdisjoint(words)


_OBJECTS = frozenset(
    {
        *("os", "self", "cls", "this", "config", "conf", "cfg", "settings", "env", "environ"),
        *("process", "args", "opts", "options", "params", "ctx", "context", "secrets", "vars"),
        *("request", "req", "props", "inputs", "matrix", "steps", "app", "vault", "keyring"),
        *("getpass", "creds", "credentials", "auth", "client", "session", "st", "sys"),
        *("var", "local", "data", "module", "each"),
    }
)
"""Object names that start a code expression (`settings.DB_PASSWORD`, `os.environ[…]`,
Terraform's `var.api_key`, `data.aws_secretsmanager_secret_version.db.secret_string`)."""
_KEYWORDS = frozenset(
    {"raise", "return", "await", "yield", "throw", "new", "not", "lambda", "assert", "del"}
)
"""Statement words: `if not api_key: raise …` has a credential word before a colon."""
_TYPE_NAMES = frozenset(
    {"secretstr", "secretbytes", "bytes", "optional", "any", "union", "text", "char", "varchar"}
)
_STRING_PREFIXES = frozenset({"f", "b", "r", "u", "rb", "br", "fr", "rf", "N", "E"})
"""Python string prefixes, and SQL's national (`N'…'`) and escape (`E'…'`) strings."""


def is_code_reference(value: str, following: str) -> bool:
    """Whether a value after a credential key is code that *reads* the secret, not the secret.

    A call or a subscript (`os.getenv(…)`, `load_secret(…)`, `config['db']`: the value is an
    identifier or dotted path and `(` or `[` follows), an attribute path on a known object
    (`settings.DATABASE_PASSWORD`, `process.env.API_KEY`), a string prefix (`f"Bearer {t}"`),
    a type annotation (`token: SecretStr`), a statement word (`raise`, `return`), a path of
    three or more lower-case names from a snake_case type (`aws_db_instance.main.password`:
    an attribute in Terraform), or punctuation that closes code (`')`). Rust paths
    (`env::var(…)`) count as dotted ones.

    Args:
        value: the value as the rule took it (stripped).
        following: the character right after it (empty at the end of the text).
    """
    if not value:
        return False
    if _is_identifier_path(value) or value == "%":
        if following in ("(", "["):
            return True
        parts = value.replace("::", ".").split(".")
        if len(parts) > 1 and parts[0] in _OBJECTS:
            return True
        if len(parts) > 2 and value.islower() and "_" in parts[0]:
            return True  # a resource's attribute: `random_password.db.result`
        if value in _KEYWORDS and following in ("", " ", "("):
            return True
        if value in _STRING_PREFIXES and following in ("'", '"'):
            return True
        if value.lower() in _TYPE_NAMES:
            return True
    return _CLOSERS.issuperset(value)


_CLOSERS = frozenset(")]};,'\"")


def _is_identifier_path(value: str) -> bool:
    parts = value.replace("::", ".").split(".")
    return all(part.isidentifier() and part.isascii() for part in parts)


_NON_FINITE = frozenset({"nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def is_measurement(value: str) -> bool:
    """Whether a value under a sensitive key is a number the runtime measured, not a secret.

    A credential word is often followed by a number that describes it: a counter
    (`token_errors: 3`), a duration or a timestamp (`password_age: 1700000000.5`), a
    Prometheus sample (`…{tool="get_deploy_token"} 1.79e+09`). Those are decimals with a
    fraction or an exponent, signed numbers, `NaN`/`Inf`, and integers of at most three
    digits. An unsigned integer of four or more digits is *not* one: numeric PINs,
    passwords, OTP codes and numeric tokens look exactly like that, so under a sensitive key
    it stays a secret (an epoch timestamp written as a bare integer there is redacted too,
    erring towards sensitive).
    """
    v = value.strip()
    if v.lower() in _NON_FINITE:
        return True
    if len(v) > 32 or not v or not v.isascii():
        return False
    if v.isdigit():
        return len(v) <= 3
    try:
        float(v)
    except ValueError:
        return False
    return v[0] in "+-" or "." in v or "e" in v.lower()


_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def decode_base64_text(value: str) -> str | None:
    """The text a base64 or base64url string encodes, or None if it is not printable text.

    Refuses mixed alphabets, impossible lengths and anything that decodes to bytes other
    than printable ASCII: images, compressed data, digests and random keys are binary, so a
    base64 data blob is never mistaken for an encoded secret.
    """
    core = value.rstrip("=")
    if len(core) < 16:
        return None
    url = "-" in core or "_" in core
    if url and ("+" in core or "/" in core):
        return None
    pad = -len(core) % 4
    if pad == 3:
        return None
    try:
        raw = base64.b64decode(core + "=" * pad, altchars=b"-_" if url else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 8 or raw.translate(None, _PRINTABLE):
        return None
    return raw.decode("ascii")


_PUBLIC_PREFIXES = ("pk_live_", "pk_test_")
"""Stripe publishable keys: shipped to every browser by design."""


def is_public_value(value: str, hit: Any) -> bool:
    """Whether a value next to a credential word is public by construction.

    A Stripe publishable key (`pk_live_…`), or a match inside an ARN
    (`arn:aws:secretsmanager:…:secret:prod/db`: the `secret:` there names a resource type,
    and what follows is a path, not a value).
    """
    if value.startswith(_PUBLIC_PREFIXES):
        return True
    return _inside_arn(hit.text, hit.match_start)


def _inside_arn(text: str, at: int) -> bool:
    """Whether position `at` lies inside a word (no space, quote or `=` before it) that
    starts with `arn:`; looks back a bounded window only."""
    window = text[max(0, at - 160) : at]
    if "arn:" not in window:
        return False  # the common case, without a search per delimiter
    cut = max(window.rfind(c) for c in " \t\r\n\"'=(,;")
    return window[cut + 1 :].startswith("arn:")


def is_basic_credential(value: str) -> bool:
    """Whether `value` is base64 of `user:password` (a Docker `auth`, an npm `_auth`).

    The decoded text must be printable, hold no whitespace, and have something on both sides
    of its first colon that is not a bare port (`host:8080`).
    """
    core = value.strip().rstrip("=")
    if not 8 <= len(core) <= 512 or not core.isascii():
        return False
    try:
        raw = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if raw.translate(None, _PRINTABLE) or any(c in raw for c in b" \t\r\n"):
        return False
    user, sep, password = raw.partition(b":")
    return bool(sep and user and password and not password.isdigit())


def is_events_routing_key(value: str) -> bool:
    """Whether `value` has the form of a PagerDuty Events API routing (integration) key: 32
    lowercase hex characters. Under `routing_key` such a value is a credential (it opens
    incidents); a message broker's routing keys are dotted words (`orders.created`)."""
    return len(value) == 32 and not value.strip("0123456789abcdef")
