"""The corpus's building blocks: `Case`, alphabets and random pieces, checksums, provider
token formats, and the kind registry every carrier module adds to."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import re
import string
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    """One payload for the redactor, with what must leave it and what must survive it."""

    kind: str
    """The kind of case (see `KINDS`); `keep_*` kinds carry no secrets."""
    payload: str | dict | list
    """Text for `redact_text`, or a JSON-like value for the key-aware `redact_value`."""
    secrets: tuple[str, ...]
    """Every string that must be gone; the first always appears verbatim in the payload."""
    keep: tuple[str, ...]
    """Look-alikes that must survive verbatim."""
    pii: bool = False
    """A personal-data case: with PII redaction off its secrets are expected to stay."""


# --------------------------------------------------------------------------------------------
# Alphabets and random building blocks
# --------------------------------------------------------------------------------------------

_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"
_B64URL = _ALNUM + "-_"
_HEX = "0123456789abcdef"
_B32 = string.ascii_uppercase + "234567"
_PW = _ALNUM + "!%^*-_.+~"
_URL_PW = _ALNUM + "-_.~"
_UPPER_ALNUM = string.ascii_uppercase + string.digits

# Random text must not accidentally spell another format's prefix, or a look-alike could turn
# into a real detection (and a secret could be caught for the wrong reason).
_FORBIDDEN = re.compile(
    r"AKIA|ASIA|AIza|gh[pousr]_|github_pat|glpat|xox|xapp|[sr]k_|sk-|SG\.|npm_|pypi|hf_|eyJ"
    r"|BEGIN|REDACTED|bearer|basic|token|secret|passw|key",
    re.IGNORECASE,
)


def _words(text: str) -> tuple[str, ...]:
    """A tuple of the space-separated words of `text` (long word lists read better as prose)."""
    return tuple(text.split())


_WORDS = _words(
    "orbit maple cactus harbor violet granite meadow falcon copper lantern willow quartz summit "
    "ember glacier canyon thistle puffin saffron cobalt tundra juniper pebble nimbus marble "
    "otter fjord cedar bramble dune"
)
_SERVICES = ("billing-api", "orders-svc", "ledger", "search-indexer", "notifier", "auth-gw")
_HOSTS = (
    "db-primary.internal",
    "pg-1.prod.svc.cluster.local",
    "mysql.eu-west-1.rds.amazonaws.com",
    "cache-01.internal",
    "10-0-4-17.billing.svc",
    "warehouse.acme-corp.io",
)
_REGIONS = ("eu-west-1", "us-east-1", "ap-southeast-2", "us-west-2", "eu-central-1")


def _classes(alphabet: str) -> list[set[str]]:
    sets = [set(string.ascii_lowercase), set(string.ascii_uppercase), set(string.digits)]
    return [cls & set(alphabet) for cls in sets if cls & set(alphabet)]


def _tok(rng: random.Random, alphabet: str, n: int) -> str:
    """Random text of `n` characters that mixes the alphabet's classes and spells no prefix."""
    classes = _classes(alphabet)
    while True:
        s = "".join(rng.choices(alphabet, k=n))
        if _FORBIDDEN.search(s):
            continue
        if n >= 8 and not all(any(c in cls for c in s) for cls in classes):
            continue
        return s


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_HEX, k=n))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _clean_b64(rng: random.Random, prefix: bytes, n: int, url: bool = False) -> str:
    """Base64 of `prefix` + `n` random bytes, redrawn until it spells no token prefix."""
    while True:
        s = (_b64url if url else _b64)(prefix + rng.randbytes(n))
        if not _FORBIDDEN.search(s[len(prefix) * 4 // 3 :]):
            return s


def _wrap(s: str, width: int) -> list[str]:
    return [s[i : i + width] for i in range(0, len(s), width)]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _git_sha(rng: random.Random) -> str:
    return _hex(rng, 40)


def _ts_epoch(rng: random.Random) -> int:
    return 1_704_067_200 + rng.randrange(540 * 86_400)


def _ts(rng: random.Random) -> str:
    t = _ts_epoch(rng)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{rng.randrange(1000):03d}Z"


def _password(rng: random.Random) -> str:
    """A human-chosen password: no provider format, so only its key gives it away."""
    style = rng.randrange(3)
    if style == 0:
        return rng.choice(string.ascii_letters) + _tok(rng, _PW, rng.randint(9, 21))
    if style == 1:
        return "-".join(rng.sample(_WORDS, 3)) + "-" + str(rng.randint(10, 999))
    return _tok(rng, _ALNUM, rng.randint(12, 32))


def _url_password(rng: random.Random) -> tuple[str, str]:
    """A URL password as it appears (sometimes percent-encoded) and decoded."""
    raw = _tok(rng, _URL_PW, rng.randint(12, 24))
    if rng.random() < 0.3:
        cut = rng.randrange(4, len(raw) - 4)
        raw = raw[:cut] + rng.choice("@/!:$") + raw[cut:]
    return urllib.parse.quote(raw, safe="-_.~"), raw


# Look-alikes: a placeholder of one of these names in a template becomes a `keep` item.
_LOOKALIKES: dict[str, Callable[[random.Random], str]] = {
    "uuid": _uuid,
    "sha": _git_sha,
    "short_sha": lambda r: _hex(r, 7),
    "trace": lambda r: _hex(r, 32),
    "span": lambda r: _hex(r, 16),
    "digest": lambda r: "sha256:" + _hex(r, 64),
}
# Filler: realistic variety that is neither secret nor a look-alike.
_FILLERS: dict[str, Callable[[random.Random], str]] = {
    "ts": _ts,
    "n": lambda r: str(r.randint(2, 9999)),
    "ms": lambda r: str(r.randint(1, 2500)),
    "small": lambda r: str(r.randint(1, 5)),
    "ver": lambda r: f"{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
    "host": lambda r: r.choice(_HOSTS),
    "svc": lambda r: r.choice(_SERVICES),
    "region": lambda r: r.choice(_REGIONS),
    "word": lambda r: r.choice(_WORDS),
    "port": lambda r: str(r.choice((5432, 3306, 6379, 5672, 8443, 27017))),
}
_PLACEHOLDER = re.compile(r"⟪(\w+)⟫")


def _fill(rng: random.Random, template: str, **given: str) -> tuple[str, tuple[str, ...]]:
    """Fill `⟪name⟫` placeholders; `given` first, then look-alikes (returned), then filler.

    A trailing number makes a second independent value of the same sort (`⟪uuid2⟫`).
    """
    values = dict(given)
    keep: list[str] = []

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            base = name.rstrip("0123456789")
            if base in _LOOKALIKES:
                values[name] = _LOOKALIKES[base](rng)
                keep.append(values[name])
            else:
                values[name] = _FILLERS[base](rng)
        return values[name]

    return _PLACEHOLDER.sub(sub, template), tuple(keep)


def _text_case(
    kind: str,
    rng: random.Random,
    template: str,
    secrets: dict[str, str],
    *,
    values: dict[str, str] | None = None,
    lookalikes: dict[str, str] | None = None,
    also: tuple[str, ...] = (),
    keep: tuple[str, ...] = (),
    pii: bool = False,
) -> Case:
    """A text case: the `secrets` placeholders the template uses, in order, then `also`.

    `values` and `lookalikes` are pasted into the template first (so they may themselves hold
    secret placeholders); a `lookalikes` value the template uses becomes a `keep` item.
    """
    given = {**(values or {}), **(lookalikes or {})}
    extra = [v for n, v in (lookalikes or {}).items() if f"⟪{n}⟫" in template]
    for name, value in given.items():
        template = template.replace(f"⟪{name}⟫", value)
    text, found_keep = _fill(rng, template, **secrets)
    used = [secrets[n] for n in dict.fromkeys(_PLACEHOLDER.findall(template)) if n in secrets]
    found = tuple(dict.fromkeys([*used, *also]))
    return Case(kind, text, found, tuple(dict.fromkeys([*found_keep, *extra, *keep])), pii)


# --------------------------------------------------------------------------------------------
# Checksums and formats
# --------------------------------------------------------------------------------------------


def luhn_ok(number: str) -> bool:
    """True when the digits of `number` pass the Luhn check."""
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return bool(digits) and total % 10 == 0


def _luhn_digit(body: str) -> str:
    for d in "0123456789":
        if luhn_ok(body + d):
            return d
    raise AssertionError("unreachable")


def _iban_number(s: str) -> int:
    return int("".join(str(int(c, 36)) for c in s))


def iban_ok(iban: str) -> bool:
    """True when `iban` (spaces allowed) passes the ISO 13616 mod-97 check."""
    s = iban.replace(" ", "").upper()
    return len(s) > 4 and s.isalnum() and _iban_number(s[4:] + s[:4]) % 97 == 1


# BBAN shapes: n digit, a upper letter, c upper letter or digit.
_IBAN_BBAN = {
    "DE": "n" * 18,
    "GB": "aaaa" + "n" * 14,
    "FR": "n" * 10 + "c" * 11 + "nn",
    "NL": "aaaa" + "n" * 10,
    "ES": "n" * 20,
    "IT": "a" + "n" * 10 + "c" * 12,
    "CH": "n" * 5 + "c" * 12,
    "BE": "n" * 12,
    "PL": "n" * 24,
    "AT": "n" * 16,
}


def _iban(rng: random.Random, country: str, valid: bool = True) -> str:
    pools = {"n": string.digits, "a": string.ascii_uppercase, "c": _UPPER_ALNUM}
    bban = "".join(rng.choice(pools[p]) for p in _IBAN_BBAN[country])
    check = 98 - _iban_number(bban + country + "00") % 97
    if not valid:
        check = rng.choice([c for c in range(2, 99) if c != check])
    return f"{country}{check:02d}{bban}"


def _group4(s: str) -> str:
    return " ".join(_wrap(s, 4))


_CARD_BRANDS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("visa", ("4",), 16),
    ("mastercard", ("51", "52", "53", "54", "55", "2221", "2500", "2720"), 16),
    ("amex", ("34", "37"), 15),
    ("discover", ("6011", "65"), 16),
    ("jcb", ("3528", "3540", "3589"), 16),
    ("diners", ("36", "38"), 14),
    ("unionpay", ("62",), 19),
)


def _card(rng: random.Random, brand_index: int) -> tuple[str, str]:
    """A Luhn-valid card number of one brand, as digits and formatted as people write it."""
    _, prefixes, length = _CARD_BRANDS[brand_index % len(_CARD_BRANDS)]
    body = rng.choice(prefixes)
    body += "".join(rng.choices(string.digits, k=length - 1 - len(body)))
    digits = body + _luhn_digit(body)
    sep = rng.choice(("", " ", "-"))
    if length == 15 or length == 14:
        groups = [digits[:4], digits[4:10], digits[10:]]
    else:
        groups = _wrap(digits, 4)
    return digits, sep.join(groups) if sep else digits


def _non_luhn(rng: random.Random, length: int) -> str:
    body = rng.choice("123456789") + "".join(rng.choices(string.digits, k=length - 2))
    good = _luhn_digit(body)
    return body + rng.choice([d for d in string.digits if d != good])


def _jwt(rng: random.Random) -> str:
    """A well-formed JWT: base64url JSON header and claims, and a signature of the alg's size."""
    alg, sig_len = rng.choice((("HS256", 32), ("RS256", 256), ("ES256", 64), ("HS512", 64)))
    header: dict[str, Any] = {"alg": alg, "typ": "JWT"}
    if rng.random() < 0.5:
        header["kid"] = _hex(rng, 16)
    now = _ts_epoch(rng)
    claims: dict[str, Any] = {
        "sub": str(rng.randint(10_000, 99_999_999)),
        "iss": rng.choice(("https://auth.acme-corp.io", "https://login.example-idp.com/")),
        "aud": rng.choice(_SERVICES),
        "iat": now,
        "exp": now + 3600,
    }
    if rng.random() < 0.5:
        claims["scope"] = rng.choice(("read:orders write:orders", "openid profile", "admin"))
    seg = [_b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, claims)]
    return ".".join([*seg, _clean_b64(rng, b"", sig_len, url=True)])


def _pem_body(rng: random.Random, der_prefix: bytes, n: int, width: int = 64) -> list[str]:
    return _wrap(_clean_b64(rng, der_prefix, n), width)


_PRIVATE_PEMS: tuple[tuple[str, bytes, int], ...] = (
    ("RSA PRIVATE KEY", bytes.fromhex("308204a40201000282010100"), 1180),
    ("PRIVATE KEY", bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7"), 1190),
    ("EC PRIVATE KEY", bytes.fromhex("30770201010420"), 114),
    ("ENCRYPTED PRIVATE KEY", bytes.fromhex("3082051c304e06092a864886f70d01050d3041"), 1290),
    ("DSA PRIVATE KEY", bytes.fromhex("308201bb02010002818100"), 430),
)


def _private_pem(rng: random.Random, i: int) -> tuple[str, list[str]]:
    """A PEM private key block's label and its body lines (the secret part)."""
    label, prefix, n = _PRIVATE_PEMS[i % len(_PRIVATE_PEMS)]
    return label, _pem_body(rng, prefix, n)


def _ssh_string(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big") + b


def _ssh_ed25519_public(rng: random.Random) -> tuple[bytes, str]:
    blob = _ssh_string(b"ssh-ed25519") + _ssh_string(rng.randbytes(32))
    return blob, "ssh-ed25519 " + _b64(blob)


def _ssh_rsa_public(rng: random.Random) -> str:
    n = b"\x00" + bytes([rng.randint(0x80, 0xFF)]) + rng.randbytes(255)
    blob = _ssh_string(b"ssh-rsa") + _ssh_string(b"\x01\x00\x01") + _ssh_string(n)
    return "ssh-rsa " + _b64(blob)


def _openssh_private(rng: random.Random) -> tuple[list[str], str]:
    """An OpenSSH private key body (70-column lines) and its matching public key line."""
    pub_blob, pub_line = _ssh_ed25519_public(rng)
    check = rng.randbytes(4)
    private = (
        check
        + check
        + _ssh_string(b"ssh-ed25519")
        + _ssh_string(pub_blob[-32:])
        + _ssh_string(rng.randbytes(64))
        + _ssh_string(b"deploy@ci")
        + bytes(range(1, 6))
    )
    body = (
        b"openssh-key-v1\x00"
        + _ssh_string(b"none")
        + _ssh_string(b"none")
        + _ssh_string(b"")
        + (1).to_bytes(4, "big")
        + _ssh_string(pub_blob)
        + _ssh_string(private)
    )
    return _wrap(_b64(body), 70), pub_line


def _public_pem_body(rng: random.Random) -> list[str]:
    prefix = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
    modulus = bytes([rng.randint(0x80, 0xFF)]) + rng.randbytes(255)
    return _wrap(_b64(prefix + modulus + bytes.fromhex("0203010001")), 64)


def _cert_body(rng: random.Random) -> list[str]:
    prefix = bytes.fromhex("3082038d30820275a0030201020214")
    return _pem_body(rng, prefix, rng.randint(820, 960))


def _pem(label: str, lines: list[str], nl: str = "\n", indent: str = "") -> str:
    body = (nl + indent).join(lines)
    return f"-----BEGIN {label}-----{nl}{indent}{body}{nl}{indent}-----END {label}-----"


def _receipt(rng: random.Random) -> str:
    key = rng.randbytes(32)
    ts = _ts_epoch(rng)
    msg = f"read_file|{json.dumps({'path': 'README.md'})}|ok|{ts}".encode()
    return f"zc-receipt-{ts}-{_b64url(hmac.new(key, msg, hashlib.sha256).digest())}"


# Provider token formats ---------------------------------------------------------------------


def _aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + _tok(rng, _B32, 16)


def _aws_secret(rng: random.Random) -> str:
    return _tok(rng, _B64, 40)


def _github(rng: random.Random, i: int) -> str:
    prefix = ("ghp_", "github_pat_", "ghs_", "ghu_", "gho_")[i % 5]
    if prefix == "github_pat_":
        return prefix + _tok(rng, _ALNUM, 22) + "_" + _tok(rng, _ALNUM, 59)
    return prefix + _tok(rng, _ALNUM, 36)


def _slack_token(rng: random.Random, i: int) -> str:
    digits = string.digits
    if i % 3 == 0:
        a, b = (str(rng.randint(1, 9)) + "".join(rng.choices(digits, k=11)) for _ in range(2))
        return f"xoxb-{a}-{b}-{_tok(rng, _ALNUM, 24)}"
    if i % 3 == 1:
        a, b, c = (str(rng.randint(1, 9)) + "".join(rng.choices(digits, k=11)) for _ in range(3))
        return f"xoxp-{a}-{b}-{c}-{_hex(rng, 32)}"
    app = "A" + _tok(rng, _UPPER_ALNUM, 10)
    return f"xapp-1-{app}-{rng.randint(10**12, 10**13 - 1)}-{_hex(rng, 64)}"


def _stripe(rng: random.Random, i: int) -> str:
    prefix = ("sk_live_", "sk_test_", "rk_live_")[i % 3]
    return prefix + "51" + _tok(rng, _ALNUM, rng.choice((22, 97)))


def _openai(rng: random.Random, i: int) -> str:
    kind = i % 3
    if kind == 0:
        return "sk-" + _tok(rng, _ALNUM, 20) + "T3BlbkFJ" + _tok(rng, _ALNUM, 20)
    if kind == 1:
        return "sk-proj-" + _tok(rng, _B64URL, 74) + "T3BlbkFJ" + _tok(rng, _B64URL, 74)
    return "sk-svcacct-" + _tok(rng, _B64URL, 64) + "T3BlbkFJ" + _tok(rng, _B64URL, 64)


def _anthropic(rng: random.Random, i: int) -> str:
    prefix = ("sk-ant-api03-", "sk-ant-admin01-")[i % 2]
    return prefix + _tok(rng, _B64URL, 93) + "AA"


def _google_key(rng: random.Random) -> str:
    return "AIza" + _tok(rng, _B64URL, 35)


def _pypi(rng: random.Random) -> str:
    macaroon = (
        b"\x02\x01\x08pypi.org\x02\x25"
        + _uuid(rng).encode()
        + b'\x00\x02\x2a[1,{"version":1}]\x00\x06 '
        + rng.randbytes(rng.randint(60, 110))
    )
    return "pypi-" + _b64url(macaroon)


def _provider_token(rng: random.Random, i: int) -> str:
    """A token of one of the provider formats, cycling through families by `i`."""
    makers: tuple[Callable[[], str], ...] = (
        lambda: _github(rng, i // 10),
        lambda: _aws_key_id(rng),
        lambda: _stripe(rng, i // 10),
        lambda: _slack_token(rng, i // 10),
        lambda: "glpat-" + _tok(rng, _B64URL, 20),
        lambda: _google_key(rng),
        lambda: _anthropic(rng, i // 10),
        lambda: "hf_" + _tok(rng, string.ascii_letters, 34),
        lambda: "npm_" + _tok(rng, _ALNUM, 36),
        lambda: "SG." + _tok(rng, _B64URL, 22) + "." + _tok(rng, _B64URL, 43),
        lambda: _openai(rng, i // 10),
    )
    return makers[i % len(makers)]()


# --------------------------------------------------------------------------------------------
# Kind registry
# --------------------------------------------------------------------------------------------

_Generator = Callable[[random.Random, int], Case]
_GENERATORS: dict[str, _Generator] = {}


def _kind(name: str) -> Callable[[_Generator], _Generator]:
    def register(fn: _Generator) -> _Generator:
        _GENERATORS[name] = fn
        return fn

    return register


def _pick(rng: random.Random, options: tuple[str, ...] | list[str], i: int) -> str:
    """Cycle through `options` by `i` for the first round, then choose at random."""
    return options[i] if i < len(options) else rng.choice(options)
