"""A seeded, black-box corpus for the redactor: secrets it must remove, look-alikes it must keep.

Written from the redaction specification alone, as an auditor would: nothing here reads the
redactor's rules, and this module imports nothing of zeroclaw-obs, so tests and the benchmark
share one corpus (`from tests.redaction.corpus import generate, mixed_payload, caught, kept`).

Every secret is generated at run time with the alphabet, length and checksum of its format
(Luhn cards, mod-97 IBANs, base64url JWTs, DER-prefixed PEM bodies, ...), so no real credential
is ever stored in the repository and secret scanners have nothing to flag here.

Risky parts:
- A case is only evidence if it is right. The self-checks in `test_corpus.py` pin what can be
  checked mechanically (the secret is in the payload, look-alikes share no 12-character piece
  with a secret, checksums hold); the judgement that a look-alike is *not* a secret is ours, and
  each keep kind says why in its generator's docstring.
- `caught` is deliberately strict: any 12-character piece of a secret left in the output is a
  leak. A secret is therefore only the secret part (a URL's password, not its host).
- `score` is the one scorer for this corpus and the held-out set (`heldout.py`), in tests and
  in `make bench`: recall (`gone`: not present whole), strict recall (`strictly_gone`: no
  `STRICT_PIECE`-character piece left either) and look-alikes lost, per kind.
- Determinism rests on `random.Random(str)` seeding (SHA-512 of the string), which does not
  depend on `PYTHONHASHSEED`; do not seed from `hash()`.
"""

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "DETECT_KINDS",
    "KEEP_KINDS",
    "KINDS",
    "PII_KINDS",
    "STRICT_PIECE",
    "Case",
    "Score",
    "caught",
    "generate",
    "gone",
    "iban_ok",
    "kept",
    "luhn_ok",
    "mixed_payload",
    "score",
    "score_case",
    "strictly_gone",
    "total",
]


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


# Key-aware and key=value forms ---------------------------------------------------------------

_SENSITIVE_JSON_KEYS = _words(
    "password Password passwd pwd secret client_secret clientSecret token access_token "
    "accessToken refresh_token api_key apiKey apikey api-key API_KEY authorization "
    "Authorization cookie Set-Cookie private_key privateKey credential session x-api-key "
    "X-Auth-Token db_password SMTP_PASSWORD github_token"
)


@_kind("sensitive_key_json")
def _sensitive_key_json(rng: random.Random, i: int) -> Case:
    """A value under a sensitive key, at depth 1 to 6 of a JSON-like document, is masked."""
    keep: list[str] = []
    secrets: list[str] = []
    leaf_id = _uuid(rng)
    keep.append(leaf_id)
    leaf: dict[str, Any] = {"id": leaf_id, "service": rng.choice(_SERVICES)}
    key = _pick(rng, _SENSITIVE_JSON_KEYS, i)
    secret = _password(rng)
    secrets.append(secret)
    if i % 7 == 3:
        user = "svc-" + rng.choice(_WORDS)
        leaf["credentials"] = {"username": user, "password": secret}
    else:
        leaf[key] = secret
    if i % 3 == 0:
        n = rng.randint(16, 4096)
        leaf["token_count"] = n
        keep.append(f'"token_count": {n}')
    if i % 4 == 1:
        second = _password(rng)
        others = [k for k in ("refreshToken", "client_secret", "passwd") if k != key]
        leaf[rng.choice(others)] = second
        secrets.append(second)
    doc: Any = leaf
    for depth in range(i % 6):
        wrap_id = _uuid(rng)
        shape = (i + depth) % 4
        if shape == 0:
            doc = {"config": doc, "version": depth + 2}
            continue
        keep.append(wrap_id)
        if shape == 1:
            doc = {"items": [{"id": wrap_id}, doc]}
        elif shape == 2:
            doc = {"result": {"data": doc, "request_id": wrap_id}}
        else:
            doc = [{"ref": wrap_id}, doc]
    return Case("sensitive_key_json", doc, tuple(secrets), tuple(keep))


_TEXT_KEYS = _words(
    "password passwd pwd secret client_secret token access_token refresh_token api_key apikey "
    "api-key credentials session x-api-key DB_PASSWORD REDIS_PASSWORD AUTH_TOKEN SECRET_KEY "
    "CLIENT_SECRET spring.datasource.password"
)
_KEY_VALUE_TEMPLATES = (
    "# .env (generated ⟪ts⟫)\nAPP_ENV=production\nINSTANCE_ID=⟪uuid⟫\n⟪key⟫=⟪secret⟫\n"
    "LOG_LEVEL=info\n",
    "services:\n  ⟪svc⟫:\n    image: ghcr.io/acme/⟪svc⟫@⟪digest⟫\n    environment:\n"
    "      ⟪key⟫: ⟪secret⟫\n      REGION: ⟪region⟫\n",
    "⟪ts⟫ INFO  db.connect host=⟪host⟫ user=app ⟪key⟫=⟪secret⟫ request_id=⟪uuid⟫",
    '[database]\nhost = "⟪host⟫"\nport = ⟪port⟫\n⟪key⟫ = "⟪secret⟫"\n\n[build]\ncommit = "⟪sha⟫"\n',
    "export ⟪key⟫='⟪secret⟫'\nexport DEPLOY_SHA=⟪sha⟫\n",
    '{"request_id": "⟪uuid⟫", "⟪key⟫": "⟪secret⟫", "region": "⟪region⟫"}',
    "```yaml\n# config for ⟪svc⟫ (commit ⟪short_sha⟫)\n⟪key⟫: ⟪secret⟫\ntimeout: 30\n```\n",
    'Traceback (most recent call last):\n  File "/srv/app/db.py", line ⟪n⟫, in connect\n'
    "    conn = driver.connect(**cfg)\nConnectionError: auth failed with ⟪key⟫=⟪secret⟫ "
    "(trace ⟪trace⟫)",
)


@_kind("sensitive_key_text")
def _sensitive_key_text(rng: random.Random, i: int) -> Case:
    """`key=value`, `key: value`, `key = "value"` forms of the sensitive keys in text carriers."""
    template = _pick(rng, _KEY_VALUE_TEMPLATES, i)
    key = _TEXT_KEYS[(i * 7) % len(_TEXT_KEYS)]
    return _text_case(
        "sensitive_key_text", rng, template, {"secret": _password(rng)}, values={"key": key}
    )


_FLAG_FORMS = (
    "--password ⟪secret⟫",
    "--password=⟪secret⟫",
    "--token ⟪secret⟫",
    "--api-key ⟪secret⟫",
    "--client-secret=⟪secret⟫",
    "-p⟪secret⟫",
    "--secret ⟪secret⟫",
    "--access-token=⟪secret⟫",
    "--db-password ⟪secret⟫",
    "--refresh-token ⟪secret⟫",
)
_FLAG_CARRIERS = (
    "$ ⟪tool⟫ --host ⟪host⟫ ⟪flag⟫ --verbose\nconnected (session ⟪uuid⟫)\n",
    "deploy    4242  0.3  1.2 181236 24120 ?  Ssl  09:12   0:03 /usr/bin/python3 sync.py "
    "⟪flag⟫ --commit ⟪sha⟫",
    "+ ./scripts/release.sh ⟪flag⟫ --env prod --sha ⟪sha⟫\n##[group]Run release\n",
    "RUN ⟪tool⟫ ⟪flag⟫ --region ⟪region⟫ && rm -rf /tmp/*\n"
    "LABEL org.opencontainers.image.revision=⟪sha⟫",
    "```bash\n⟪tool⟫ ⟪flag⟫ --dry-run  # request ⟪uuid⟫\n```",
)


@_kind("sensitive_cli_flag")
def _sensitive_cli_flag(rng: random.Random, i: int) -> Case:
    """`--flag value`, `--flag=value` and mysql's `-pPASSWORD` in shell, ps, CI and argv."""
    secret = _password(rng).replace("~", "x")
    form = _pick(rng, _FLAG_FORMS, i)
    tool = "mysql -u app" if form.startswith("-p") else rng.choice(("mytool", "vault-sync", "psql"))
    if i % 5 == 4:
        flag, _, _ = form.partition("⟪")
        flag = flag.rstrip(" =")
        if flag == "-p":
            flag = "--password"
        argv = ["deploy", "--region", rng.choice(_REGIONS), flag, secret, "--yes"]
        req = _uuid(rng)
        payload = {"call_id": req, "argv": argv, "exit_code": 1}
        return Case("sensitive_cli_flag", payload, (secret,), (req,))
    if i % 5 == 3:
        flag = form.partition("⟪")[0].rstrip(" =")
        args = "'-p⟪secret⟫'" if flag == "-p" else f"'{flag}', '⟪secret⟫'"
        tpl = (
            f"subprocess.CalledProcessError: Command '['{tool.split()[0]}', {args}, '--quiet']' "
            "returned non-zero exit status 2. (trace ⟪trace⟫)"
        )
        return _text_case("sensitive_cli_flag", rng, tpl, {"secret": secret})
    carrier = rng.choice(_FLAG_CARRIERS)
    template = carrier.replace("⟪flag⟫", form).replace("⟪tool⟫", tool)
    return _text_case("sensitive_cli_flag", rng, template, {"secret": secret})


_HEADER_TEMPLATES = (
    "GET /v1/orders HTTP/1.1\r\nHost: api.acme-corp.io\r\nX-API-Key: ⟪secret⟫\r\n"
    "X-Request-Id: ⟪uuid⟫\r\nAccept: application/json\r\n\r\n",
    "> POST /graphql HTTP/2\n> host: gql.acme-corp.io\n> x-auth-token: ⟪secret⟫\n"
    "> traceparent: 00-⟪trace⟫-⟪span⟫-01\n> content-type: application/json\n",
    "GET /dashboard HTTP/1.1\nHost: app.acme-corp.io\nCookie: _ga=GA1.2.1554.1701; "
    "sessionid=⟪secret⟫; csrftoken=⟪secret2⟫\nX-Request-Id: ⟪uuid⟫\n",
    "HTTP/1.1 200 OK\nContent-Type: text/html\nSet-Cookie: session=⟪secret⟫; Path=/; "
    "HttpOnly; Secure; SameSite=Lax\nX-Trace-Id: ⟪trace⟫\n",
    "PUT /v1/secret/data/app HTTP/1.1\nHost: vault.internal:8200\nX-Vault-Token: ⟪secret⟫\n"
    "X-Request-Id: ⟪uuid⟫\n",
    "curl -sS https://api.partner.io/v2/items -H 'Api-Key: ⟪secret⟫' -H 'X-Request-Id: ⟪uuid⟫'",
)


@_kind("sensitive_http_header")
def _sensitive_http_header(rng: random.Random, i: int) -> Case:
    """Credential headers (X-API-Key, X-Auth-Token, Cookie, Set-Cookie, ...) in request dumps."""
    secret, secret2 = _tok(rng, _B64URL, rng.randint(24, 48)), _tok(rng, _ALNUM, 32)
    if i % 4 == 3:
        req = _uuid(rng)
        header = rng.choice(("X-API-Key", "x-auth-token", "Cookie", "X-Api-Token"))
        value = f"sessionid={secret}" if header == "Cookie" else secret
        payload = {
            "request": {
                "method": "POST",
                "url": "https://api.acme-corp.io/v1/charges",
                "headers": {header: value, "X-Request-Id": req, "Content-Type": "application/json"},
            },
            "status": 401,
        }
        return Case("sensitive_http_header", payload, (secret,), (req,))
    template = _pick(rng, _HEADER_TEMPLATES, i)
    return _text_case(
        "sensitive_http_header", rng, template, {"secret": secret, "secret2": secret2}
    )


# Provider formats ----------------------------------------------------------------------------


@_kind("aws")
def _aws(rng: random.Random, i: int) -> Case:
    """AWS access key ids (`AKIA`/`ASIA` + 16) and 40-character secret keys beside their names."""
    key_id, secret = _aws_key_id(rng), _aws_secret(rng)
    variant = i % 8
    if variant == 0:
        tpl = (
            "[default]\naws_access_key_id = ⟪id⟫\naws_secret_access_key = ⟪secret⟫\n"
            "region = ⟪region⟫\n# rotated ⟪ts⟫ by job ⟪uuid⟫\n"
        )
    elif variant == 1:
        tpl = (
            "export AWS_ACCESS_KEY_ID=⟪id⟫\nexport AWS_SECRET_ACCESS_KEY=⟪secret⟫\n"
            "$ git rev-parse HEAD\n⟪sha⟫\n"
        )
    elif variant == 2:
        tpl = (
            '{\n    "AccessKey": {\n        "UserName": "ci-bot",\n        "AccessKeyId": "⟪id⟫",\n'
            '        "Status": "Active",\n        "SecretAccessKey": "⟪secret⟫",\n'
            '        "CreateDate": "⟪ts⟫"\n    }\n}\n(RequestId: ⟪uuid⟫)'
        )
    elif variant == 3:
        req = _uuid(rng)
        payload = {
            "tool": "aws_cli",
            "result": {
                "AccessKey": {"AccessKeyId": key_id, "SecretAccessKey": secret},
                "ResponseMetadata": {"RequestId": req},
            },
        }
        return Case("aws", payload, (key_id, secret), (req,))
    elif variant == 4:
        tpl = (
            'provider "aws" {\n  region     = "⟪region⟫"\n  access_key = "⟪id⟫"\n'
            '  secret_key = "⟪secret⟫"\n}\n# module ref ⟪sha⟫'
        )
    elif variant == 5:
        tpl = (
            "botocore.exceptions.ClientError: An error occurred (InvalidClientTokenId) when "
            "calling the GetCallerIdentity operation: The security token included in the request "
            "is invalid. AccessKeyId=⟪id⟫ RequestId=⟪uuid⟫"
        )
        return _text_case("aws", rng, tpl, {"id": key_id})
    elif variant == 6:
        session = "IQoJb3JpZ2luX2Vj" + _tok(rng, _B64, rng.randint(280, 400))
        tpl = (
            "AWS_ACCESS_KEY_ID=⟪id⟫\nAWS_SECRET_ACCESS_KEY=⟪secret⟫\nAWS_SESSION_TOKEN=⟪st⟫\n"
            "AWS_REGION=⟪region⟫\nJOB_ID=⟪uuid⟫\n"
        )
        return _text_case(
            "aws", rng, tpl, {"id": _aws_key_id(rng, "ASIA"), "secret": secret, "st": session}
        )
    else:
        tpl = (
            "docker run --rm -e AWS_ACCESS_KEY_ID=⟪id⟫ -e AWS_SECRET_ACCESS_KEY=⟪secret⟫ "
            "ghcr.io/acme/etl@⟪digest⟫ --run-id ⟪uuid⟫"
        )
    return _text_case("aws", rng, tpl, {"id": key_id, "secret": secret})


_TOKEN_CARRIERS = (
    "⟪ts⟫ INFO  client initialised with ⟪token⟫ for ⟪svc⟫ (request ⟪uuid⟫)",
    "$ git log -1 --format=%H\n⟪sha⟫\n$ echo $CI_TOKEN\n⟪token⟫\n",
    '{"tool": "read_file", "path": "deploy/.env", "content": "REGION=⟪region⟫\\nKEY=⟪token⟫\\n", '
    '"request_id": "⟪uuid⟫"}',
    "## Local setup\n\nPaste `⟪token⟫` into your shell profile, then run `make dev` "
    "(tested at ⟪short_sha⟫).\n",
    'Traceback (most recent call last):\n  File "/app/client.py", line ⟪n⟫, in send\n'
    '    raise AuthError(f"rejected {key}")\nAuthError: rejected ⟪token⟫ (trace_id=⟪trace⟫)',
)


def _token_case(
    kind: str,
    rng: random.Random,
    i: int,
    token: str,
    templates: tuple[str, ...],
    lookalikes: dict[str, str] | None = None,
) -> Case:
    """A provider token in a kind-specific carrier, or in one of the generic carriers."""
    pool = templates + _TOKEN_CARRIERS
    return _text_case(kind, rng, _pick(rng, pool, i), {"token": token}, lookalikes=lookalikes)


@_kind("github")
def _github_kind(rng: random.Random, i: int) -> Case:
    """GitHub classic (ghp_), fine-grained (github_pat_), app (ghs_/ghu_) and OAuth (gho_)."""
    token = _github(rng, i)
    if i % 6 == 5:
        sha = _git_sha(rng)
        payload = {"head_sha": sha, "stdout": f"Cloning with {token}\nHEAD is now at {sha[:7]}"}
        return Case("github", payload, (token,), (sha,))
    return _token_case(
        "github",
        rng,
        i,
        token,
        (
            "$ git remote -v\n"
            "origin\thttps://x-access-token:⟪token⟫@github.com/acme/api.git (fetch)\n"
            "$ git rev-parse HEAD\n⟪sha⟫\n",
            "GITHUB_TOKEN=⟪token⟫\nGITHUB_SHA=⟪sha⟫\nGITHUB_RUN_ID=⟪n⟫\n",
            '{"token": "⟪token⟫", "expires_at": "⟪ts⟫", "permissions": {"contents": "read"}, '
            '"x_github_request_id": "⟪uuid⟫"}',
            "gh: HTTP 401: Bad credentials (https://api.github.com/repos/acme/api/commits/⟪sha⟫) "
            "token=⟪token⟫",
        ),
    )


@_kind("gitlab")
def _gitlab(rng: random.Random, i: int) -> Case:
    """GitLab personal access tokens (glpat- + 20)."""
    token = "glpat-" + _tok(rng, _B64URL, 20)
    return _token_case(
        "gitlab",
        rng,
        i,
        token,
        (
            'curl --header "PRIVATE-TOKEN: ⟪token⟫" https://gitlab.com/api/v4/projects/⟪n⟫/pipelines'
            "  # retry for ⟪sha⟫",
            "git clone https://oauth2:⟪token⟫@gitlab.com/acme/infra.git\n"
            "HEAD is now at ⟪short_sha⟫",
            "variables:\n  GITLAB_TOKEN: ⟪token⟫\n  CI_COMMIT_SHA: ⟪sha⟫\n",
        ),
    )


@_kind("slack")
def _slack(rng: random.Random, i: int) -> Case:
    """Slack bot (xoxb-), user (xoxp-), app (xapp-) tokens and incoming webhook URLs."""
    if i % 4 == 3:
        team = "T" + _tok(rng, _UPPER_ALNUM, rng.randint(8, 10))
        bot = "B" + _tok(rng, _UPPER_ALNUM, rng.randint(8, 10))
        url = f"https://hooks.slack.com/services/{team}/{bot}/⟪secret⟫"
        templates = (
            "⟪ts⟫ INFO  notify: POST ⟪url⟫ -> 200 (deploy ⟪short_sha⟫)",
            '{"channel": "#deploys", "webhook_url": "⟪url⟫", "run": "⟪uuid⟫"}',
            "SLACK_WEBHOOK=⟪url⟫\nBUILD_SHA=⟪sha⟫\n",
        )
        secret = _tok(rng, _ALNUM, 24)
        tpl = _pick(rng, templates, i // 4)
        return _text_case("slack", rng, tpl, {"secret": secret}, values={"url": url})
    token = _slack_token(rng, i)
    templates = (
        "SLACK_BOT_TOKEN=⟪token⟫\nSLACK_CHANNEL=C0⟪n⟫\nDEPLOY_ID=⟪uuid⟫\n",
        'client = WebClient(token="⟪token⟫")  # run ⟪uuid⟫',
        "SLACK_APP_TOKEN=⟪token⟫\n# socket mode, build ⟪sha⟫\n",
    )
    return _token_case("slack", rng, i, token, templates)


@_kind("stripe")
def _stripe_kind(rng: random.Random, i: int) -> Case:
    """Stripe secret (sk_live_, sk_test_) and restricted (rk_live_) keys."""
    token = _stripe(rng, i)
    templates = (
        "curl https://api.stripe.com/v1/customers/⟪cus⟫ -u ⟪token⟫: (request ⟪uuid⟫)",
        'import stripe\nstripe.api_key = "⟪token⟫"\nstripe.Customer.retrieve("⟪cus⟫")\n',
        "STRIPE_SECRET_KEY=⟪token⟫\nSTRIPE_ACCOUNT_REGION=⟪region⟫\nRELEASE=⟪sha⟫\n",
        '{"customer": "⟪cus⟫", "config": {"stripe": "⟪token⟫"}, "idempotency": "⟪uuid⟫"}',
    )
    customer = {"cus": "cus_" + _tok(rng, _ALNUM, 14)}
    return _token_case("stripe", rng, i, token, templates, lookalikes=customer)


@_kind("openai")
def _openai_kind(rng: random.Random, i: int) -> Case:
    """OpenAI keys: legacy sk-…T3BlbkFJ…, project sk-proj-…, service-account sk-svcacct-…."""
    token = _openai(rng, i)
    templates = (
        "OPENAI_API_KEY=⟪token⟫\nOPENAI_MODEL=gpt-4o-mini-2024-07-18\nDEPLOY=⟪sha⟫\n",
        'client = OpenAI(api_key="⟪token⟫")\n# last completion ⟪completion⟫\n',
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        "provided: ⟪token⟫.', 'type': 'invalid_request_error'}} request_id=⟪uuid⟫",
        "⟪ts⟫ DEBUG completion ⟪completion⟫ used key ⟪token⟫ (trace ⟪trace⟫)",
    )
    completion = {"completion": "chatcmpl-" + _tok(rng, _ALNUM, 29)}
    return _token_case("openai", rng, i, token, templates, lookalikes=completion)


@_kind("anthropic")
def _anthropic_kind(rng: random.Random, i: int) -> Case:
    """Anthropic keys: sk-ant-api03-… and sk-ant-admin01-…."""
    token = _anthropic(rng, i)
    templates = (
        "ANTHROPIC_API_KEY=⟪token⟫\nMODEL=claude-sonnet-4-20250514\nRELEASE_SHA=⟪sha⟫\n",
        "> POST /v1/messages HTTP/1.1\n> x-api-key: ⟪token⟫\n> anthropic-version: 2023-06-01\n"
        '< HTTP/1.1 200 OK\n{"id": "⟪msg⟫", "type": "message"}',
        'client = anthropic.Anthropic(api_key="⟪token⟫")  # ⟪msg⟫',
    )
    msg = {"msg": "msg_01" + _tok(rng, _ALNUM, 22)}
    return _token_case("anthropic", rng, i, token, templates, lookalikes=msg)


@_kind("google_api_key")
def _google_api_key(rng: random.Random, i: int) -> Case:
    """Google API keys (AIza + 35) in Maps URLs, Firebase config, env files and JSON."""
    token = _google_key(rng)
    if i % 5 == 4:
        project = f"acme-mobile-{rng.randint(1000, 9999)}"
        payload = {
            "project_info": {
                "project_id": project,
                "project_number": str(rng.randint(10**11, 10**12)),
            },
            "client": [{"api_key": [{"current_key": token}], "services": {}}],
        }
        return Case("google_api_key", payload, (token,), (project,))
    return _token_case(
        "google_api_key",
        rng,
        i,
        token,
        (
            "GET https://maps.googleapis.com/maps/api/geocode/json?address=Main+St&key=⟪token⟫ 200 "
            "⟪ms⟫ms req=⟪uuid⟫",
            "const firebaseConfig = "
            '{\n  apiKey: "⟪token⟫",\n  authDomain: "acme-app.firebaseapp.com",\n'
            '  appId: "1:⟪n⟫:web:⟪span⟫"\n};\n',
            "GOOGLE_API_KEY=⟪token⟫\nGEMINI_MODEL=gemini-1.5-pro\nBUILD_ID=⟪uuid⟫\n",
        ),
    )


@_kind("google_service_account")
def _google_service_account(rng: random.Random, i: int) -> Case:
    """A service-account JSON's PEM private key, as a file's text or as a parsed value."""
    project = f"acme-{rng.choice(_WORDS)}-{rng.randint(100000, 999999)}"
    body = _pem_body(rng, _PRIVATE_PEMS[1][1], _PRIVATE_PEMS[1][2])
    pem = _pem("PRIVATE KEY", body) + "\n"
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": _hex(rng, 40),
        "private_key": pem,
        "client_email": f"etl@{project}.iam.gserviceaccount.com",
        "client_id": str(rng.randint(10**20, 10**21 - 1)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "universe_domain": "googleapis.com",
    }
    if i % 2:
        return Case("google_service_account", doc, ("\n".join(body),), (project,))
    text = json.dumps(doc, indent=2)
    if i % 4 == 2:
        text = f"$ cat ~/keys/{project}.json\n{text}\n$ gcloud auth activate-service-account"
    return Case("google_service_account", text, ("\\n".join(body),), (project,))


def _azure_connection_string(rng: random.Random, i: int) -> tuple[str, str]:
    """A connection string template holding `⟪secret⟫`, and that secret (an account or SAS key)."""
    account_key, sas_key = _b64(rng.randbytes(64)), _b64(rng.randbytes(32))
    name = "acme" + rng.choice(_WORDS) + str(rng.randint(10, 99))
    options = (
        (
            f"DefaultEndpointsProtocol=https;AccountName={name};AccountKey=⟪secret⟫;"
            "EndpointSuffix=core.windows.net",
            account_key,
        ),
        (
            f"Endpoint=sb://{name}.servicebus.windows.net/;SharedAccessKeyName="
            "RootManageSharedAccessKey;SharedAccessKey=⟪secret⟫;EntityPath=orders",
            sas_key,
        ),
        (
            f"HostName={name}.azure-devices.net;SharedAccessKeyName=iothubowner;"
            "SharedAccessKey=⟪secret⟫",
            sas_key,
        ),
        (
            f"AccountEndpoint=https://{name}.documents.azure.com:443/;AccountKey=⟪secret⟫;",
            account_key,
        ),
    )
    return options[i % len(options)]


@_kind("azure")
def _azure(rng: random.Random, i: int) -> Case:
    """Azure connection strings: `AccountKey=` (Storage, Cosmos), `SharedAccessKey=` (Bus, IoT)."""
    cs, secret = _azure_connection_string(rng, i)
    if i % 5 == 4:
        run = _uuid(rng)
        values = {"AzureWebJobsStorage": cs.replace("⟪secret⟫", secret), "RUN_ID": run}
        payload = {"IsEncrypted": False, "Values": values}
        return Case("azure", payload, (secret,), (run,))
    templates = (
        '{\n  "ConnectionStrings": {\n    "Default": "⟪cs⟫"\n  },\n  "InstanceId": "⟪uuid⟫"\n}',
        'AZURE_STORAGE_CONNECTION_STRING="⟪cs⟫"\nBUILD_SHA=⟪sha⟫\n',
        "⟪ts⟫ INFO  ServiceBusClient created from '⟪cs⟫' (operation ⟪uuid⟫)",
        'az storage blob list --connection-string "⟪cs⟫" --container-name logs  # ⟪trace⟫',
    )
    tpl = _pick(rng, templates, i)
    return _text_case("azure", rng, tpl, {"secret": secret}, values={"cs": cs})


@_kind("twilio")
def _twilio(rng: random.Random, i: int) -> Case:
    """Twilio account SIDs (AC…), API key SIDs (SK…) and the auth token or API secret with them."""
    account, api_key = "AC" + _hex(rng, 32), "SK" + _hex(rng, 32)
    auth_token, api_secret = _hex(rng, 32), _tok(rng, _ALNUM, 32)
    tpl = _pick(
        rng,
        (
            "TWILIO_ACCOUNT_SID=⟪ac⟫\nTWILIO_AUTH_TOKEN=⟪at⟫\nDEPLOY_ID=⟪uuid⟫\n",
            "from twilio.rest import Client\n"
            'client = Client("⟪ac⟫", "⟪at⟫")  # build ⟪short_sha⟫\n',
            "curl -X POST https://api.twilio.com/2010-04-01/Accounts/⟪ac⟫/Messages.json "
            "-u ⟪ac⟫:⟪at⟫ --data-urlencode 'Body=deploy ⟪sha⟫ done'",
            '{"account_sid": "⟪ac⟫", "api_key": "⟪sk⟫", "api_secret": "⟪as⟫", "request": "⟪uuid⟫"}',
            "TWILIO_API_KEY=⟪sk⟫\nTWILIO_API_SECRET=⟪as⟫\nTWILIO_ACCOUNT_SID=⟪ac⟫\n"
            "DEPLOY_SHA=⟪sha⟫\n",
        ),
        i,
    )
    secrets = {"ac": account, "sk": api_key, "at": auth_token, "as": api_secret}
    return _text_case("twilio", rng, tpl, secrets)


@_kind("sendgrid")
def _sendgrid(rng: random.Random, i: int) -> Case:
    """SendGrid API keys (SG.<22>.<43>)."""
    token = "SG." + _tok(rng, _B64URL, 22) + "." + _tok(rng, _B64URL, 43)
    return _token_case(
        "sendgrid",
        rng,
        i,
        token,
        (
            "SENDGRID_API_KEY=⟪token⟫\nMAIL_FROM_NAME=Acme Billing\nMAIL_BATCH_ID=⟪uuid⟫\n",
            'sg = SendGridAPIClient("⟪token⟫")  # message batch ⟪uuid⟫',
            "smtp:\n  host: smtp.sendgrid.net\n  user: apikey\n  pass: ⟪token⟫\n  trace: ⟪trace⟫\n",
        ),
    )


@_kind("npm")
def _npm(rng: random.Random, i: int) -> Case:
    """npm automation/publish tokens (npm_ + 36)."""
    token = "npm_" + _tok(rng, _ALNUM, 36)
    templates = (
        "//registry.npmjs.org/:_authToken=⟪token⟫\n@acme:registry=https://npm.pkg.github.com\n"
        "; synced from ⟪sha⟫\n",
        'npmAuthToken: ⟪token⟫\nnpmRegistryServer: "https://registry.npmjs.org"\n'
        "# cache key ⟪uuid⟫\n",
        "npm notice Publishing to https://registry.npmjs.org/ with tag latest\n"
        "npm notice integrity: ⟪integrity⟫\nNPM_TOKEN=⟪token⟫\n",
    )
    integrity = {"integrity": "sha512-" + _clean_b64(rng, b"", 64)}
    return _token_case("npm", rng, i, token, templates, lookalikes=integrity)


@_kind("pypi")
def _pypi_kind(rng: random.Random, i: int) -> Case:
    """PyPI API tokens (pypi-AgEIcHlwaS5vcmc… macaroons)."""
    token = _pypi(rng)
    return _token_case(
        "pypi",
        rng,
        i,
        token,
        (
            "[pypi]\n  username = __token__\n  password = ⟪token⟫\n# written by job ⟪uuid⟫\n",
            "$ uv publish --token ⟪token⟫ dist/*\n"
            "Uploading acme_sdk-⟪ver⟫-py3-none-any.whl (⟪digest⟫)\n",
            "TWINE_USERNAME=__token__\nTWINE_PASSWORD=⟪token⟫\nGITHUB_SHA=⟪sha⟫\n",
            "$ poetry config pypi-token.pypi ⟪token⟫\n$ poetry publish --build  # ⟪sha⟫\n",
        ),
    )


@_kind("huggingface")
def _huggingface(rng: random.Random, i: int) -> Case:
    """Hugging Face user access tokens (hf_ + 34 letters)."""
    token = "hf_" + _tok(rng, string.ascii_letters, 34)
    templates = (
        "$ huggingface-cli login --token ⟪token⟫\nToken is valid (permission: write).\n"
        "⟪transfer⟫\n",
        "HF_TOKEN=⟪token⟫\nMODEL_REVISION=⟪sha⟫\n",
        'from huggingface_hub import login\nlogin(token="⟪token⟫")\n'
        'snapshot_download("acme/intent-classifier", revision="⟪sha⟫")\n',
        "git clone https://user:⟪token⟫@huggingface.co/acme/intent-classifier  # ⟪short_sha⟫",
    )
    transfer = {"transfer": "HF_HUB_ENABLE_HF_TRANSFER=1"}
    return _token_case("huggingface", rng, i, token, templates, lookalikes=transfer)


@_kind("datadog")
def _datadog(rng: random.Random, i: int) -> Case:
    """Datadog API (32 hex) and application (40 hex) keys beside DD_API_KEY / DD_APP_KEY."""
    api, app = _hex(rng, 32), _hex(rng, 40)
    tpl = _pick(
        rng,
        (
            "DD_API_KEY=⟪api⟫\nDD_SITE=datadoghq.eu\nDD_VERSION=⟪sha⟫\n",
            "DD_API_KEY=⟪api⟫\nDD_APP_KEY=⟪app⟫\nDD_ENV=prod\nDD_VERSION=⟪sha⟫\n",
            "docker run -d -e DD_API_KEY=⟪api⟫ -e DD_ENV=prod gcr.io/datadoghq/agent:7  # ⟪sha⟫",
            "datadog:\n  apiKey: ⟪api⟫\n  appKey: ⟪app⟫\n  clusterName: prod-⟪region⟫\n"
            "  tags:\n    - git.commit.sha:⟪sha⟫\n",
            'curl -X GET https://api.datadoghq.com/api/v1/monitor -H "DD-API-KEY: ⟪api⟫" '
            '-H "DD-APPLICATION-KEY: ⟪app⟫"  # ⟪uuid⟫',
            "# datadog.yaml\napi_key: ⟪api⟫\nsite: datadoghq.com\nhostname: ⟪host⟫\n"
            "tags:\n  - git.commit.sha:⟪sha⟫\n",
        ),
        i,
    )
    return _text_case("datadog", rng, tpl, {"api": api, "app": app})


# Generic credential shapes -------------------------------------------------------------------


@_kind("jwt")
def _jwt_kind(rng: random.Random, i: int) -> Case:
    """JWTs (header.claims.signature) in logs, URLs, cookies and tool output."""
    token = _jwt(rng)
    if i % 5 == 4:
        req = _uuid(rng)
        return Case("jwt", {"stdout": f"issued {token}\n", "run_id": req}, (token,), (req,))
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ DEBUG auth: verifying ⟪token⟫ for aud=⟪svc⟫ trace_id=⟪trace⟫",
            "jwt.exceptions.ExpiredSignatureError: Signature has expired\n"
            "  while decoding ⟪token⟫\n"
            "  request ⟪uuid⟫",
            "HTTP/1.1 302 Found\nLocation: https://app.acme-corp.io/callback#id_token=⟪token⟫&state=⟪span⟫",
            "Cookie: theme=dark; jwt=⟪token⟫\nX-Request-Id: ⟪uuid⟫",
            "Use this for local testing: `⟪token⟫` (expires in 1h, build ⟪short_sha⟫)",
        ),
        i,
    )
    return _text_case("jwt", rng, tpl, {"token": token})


@_kind("bearer_basic")
def _bearer_basic(rng: random.Random, i: int) -> Case:
    """`Authorization: Bearer <opaque>` and `Basic <base64(user:pass)>` values."""
    bearer = _tok(rng, _ALNUM + "-._~+/", rng.randint(32, 64))
    password = _tok(rng, _URL_PW, rng.randint(12, 20))
    basic = _b64(f"svc-{rng.choice(_WORDS)}:{password}".encode())
    if i % 5 == 4:
        req = _uuid(rng)
        payload = {"headers": {"authorization": f"Basic {basic}", "x-request-id": req}}
        return Case("bearer_basic", payload, (basic, password), (req,))
    tpl = _pick(
        rng,
        (
            'curl -sS -H "Authorization: Bearer ⟪bearer⟫" https://api.acme-corp.io/v1/me  # ⟪uuid⟫',
            "GET /v1/items HTTP/1.1\nhost: api.acme-corp.io\nauthorization: bearer ⟪bearer⟫\n"
            "x-request-id: ⟪uuid⟫\n",
            "CONNECT api.acme-corp.io:443 HTTP/1.1\nProxy-Authorization: Basic ⟪basic⟫\n"
            "X-Request-Id: ⟪uuid⟫\n",
            'requests.get(url, headers={"Authorization": "Basic ⟪basic⟫"})  # trace ⟪trace⟫',
            "grpc metadata: authorization=Bearer ⟪bearer⟫ traceparent=00-⟪trace⟫-⟪span⟫-01",
        ),
        i,
    )
    also = (password,) if "⟪basic⟫" in tpl else ()
    return _text_case("bearer_basic", rng, tpl, {"bearer": bearer, "basic": basic}, also=also)


@_kind("pem_private_key")
def _pem_private_key(rng: random.Random, i: int) -> Case:
    """PEM private key blocks (RSA, PKCS#8, EC, encrypted, DSA): the multi-line body must go."""
    label, body = _private_pem(rng, i)
    variant = i % 6
    if variant == 0:
        digest = _hex(rng, 64)
        text = (
            f"$ cat deploy/server.key\n{_pem(label, body)}\n$ sha256sum deploy/server.key\n"
            f"{digest}  deploy/server.key\n"
        )
        return Case("pem_private_key", text, ("\n".join(body),), (digest,))
    if variant == 1:
        cert = _pem("CERTIFICATE", _cert_body(rng), indent="    ")
        key = _pem(label, body, indent="    ")
        text = (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-tls\ntype: kubernetes.io/tls\n"
            f"stringData:\n  tls.crt: |\n    {cert}\n  tls.key: |\n    {key}\n"
        )
        return Case("pem_private_key", text, ("\n    ".join(body),), (cert,))
    if variant == 2:
        run = _uuid(rng)
        text = json.dumps({"run": run, "private_key_pem": _pem(label, body) + "\n"})
        return Case("pem_private_key", text, ("\\n".join(body),), (run,))
    if variant == 3:
        run = _uuid(rng)
        payload = {"files": [{"path": "certs/client.pem", "content": _pem(label, body)}], "id": run}
        return Case("pem_private_key", payload, ("\n".join(body),), (run,))
    if variant == 4:
        crlf = "\r\n"
        run = _uuid(rng).upper()
        text = f"Export {run}:{crlf}{_pem(label, body, nl=crlf)}{crlf}exported ok{crlf}"
        return Case("pem_private_key", text, (crlf.join(body),), (run,))
    sha = _git_sha(rng)
    header = f"Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,{_hex(rng, 32).upper()}\n\n"
    text = (
        f"tls_private_key.api: Refreshing state... [id={sha}]\nOutputs:\n\n"
        "private_key_pem = <<EOT\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{header}"
        + "\n".join(body)
        + "\n-----END RSA PRIVATE KEY-----\nEOT\n"
    )
    return Case("pem_private_key", text, ("\n".join(body),), (sha,))


@_kind("openssh_private_key")
def _openssh_private_key(rng: random.Random, i: int) -> Case:
    """OpenSSH private key blocks, next to the public key that must survive."""
    body, pub = _openssh_private(rng)
    block = _pem("OPENSSH PRIVATE KEY", body)
    variant = i % 4
    if variant == 0:
        text = f"$ cat ~/.ssh/id_ed25519.pub\n{pub} deploy@ci\n$ cat ~/.ssh/id_ed25519\n{block}\n"
        return Case("openssh_private_key", text, ("\n".join(body),), (pub,))
    if variant == 1:
        indented = _pem("OPENSSH PRIVATE KEY", body, indent="    ")
        text = f"variables:\n  DEPLOY_PUBKEY: {pub}\n  SSH_DEPLOY_KEY: |\n    {indented}\n"
        return Case("openssh_private_key", text, ("\n    ".join(body),), (pub,))
    if variant == 2:
        payload = {"authorized_key": pub, "key_material": block + "\n"}
        return Case("openssh_private_key", payload, ("\n".join(body),), (pub,))
    run = _uuid(rng)
    doc = {"tool": "read_file", "path": "/home/ci/.ssh/id_ed25519", "content": block, "id": run}
    return Case("openssh_private_key", json.dumps(doc), ("\\n".join(body),), (run,))


@_kind("db_connection_string")
def _db_connection_string(rng: random.Random, i: int) -> Case:
    """Database URLs and DSNs with credentials: postgres, mysql, mongodb, JDBC, ADO.NET, libpq."""
    shown, raw = _url_password(rng)
    user = rng.choice(("app", "admin", "etl_rw", "report"))
    url = _pick(
        rng,
        (
            f"postgres://{user}:⟪pw⟫@⟪host⟫:5432/orders?sslmode=require",
            f"postgresql+psycopg2://{user}:⟪pw⟫@⟪host⟫/ledger",
            f"mysql://{user}:⟪pw⟫@⟪host⟫:3306/shop",
            f"mongodb+srv://{user}:⟪pw⟫@cluster0.x7kq2.mongodb.net/app?retryWrites=true&w=majority",
            f"mongodb://{user}:⟪pw⟫@mongo-0:27017,mongo-1:27017/admin?replicaSet=rs0",
            f"jdbc:postgresql://⟪host⟫:5432/orders?user={user}&password=⟪pw⟫&ssl=true",
        ),
        i,
    )
    if i % 8 == 6:
        url = (
            "Server=tcp:acme.database.windows.net,1433;Database=orders;"
            f"User ID={user};Password=⟪pw⟫;Encrypt=true"
        )
    if i % 8 == 7:
        url = f"host=⟪host⟫ port=5432 dbname=orders user={user} password=⟪pw⟫ sslmode=require"
    if i % 5 == 4:
        run = _uuid(rng)
        filled, _ = _fill(rng, url, pw=shown)
        payload = {"datasource": {"url": filled, "pool_size": 10}, "run_id": run}
        return Case("db_connection_string", payload, (shown, raw), (run,))
    tpl = rng.choice(
        (
            "DATABASE_URL=⟪url⟫\nRELEASE_SHA=⟪sha⟫\n",
            "⟪ts⟫ INFO  sqlalchemy.engine connecting to ⟪url⟫ (pool ⟪uuid⟫)",
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
            "failed\n"
            "[SQL: SELECT 1]\n(url: ⟪url⟫) trace_id=⟪trace⟫",
            "spring:\n  datasource:\n    url: ⟪url⟫\n    hikari:\n      pool-name: ⟪uuid⟫\n",
        )
    )
    return _text_case(
        "db_connection_string", rng, tpl.replace("⟪url⟫", url), {"pw": shown}, also=(raw,)
    )


@_kind("broker_connection_string")
def _broker_connection_string(rng: random.Random, i: int) -> Case:
    """Broker and cache URLs with credentials: redis(s)://, amqp(s)://, nats://."""
    shown, raw = _url_password(rng)
    url = _pick(
        rng,
        (
            "redis://:⟪pw⟫@cache-01.internal:6379/0",
            "rediss://default:⟪pw⟫@redis-12345.c1.eu-west-1-2.ec2.cloud.redislabs.com:16380",
            "amqp://celery:⟪pw⟫@rabbitmq:5672/%2F",
            "amqps://orders:⟪pw⟫@b-1c2d3e4f.mq.us-east-1.amazonaws.com:5671/prod",
            "nats://svc:⟪pw⟫@nats.internal:4222",
        ),
        i,
    )
    tpl = rng.choice(
        (
            "CELERY_BROKER_URL=⟪url⟫\nCELERY_RESULT_BACKEND=rpc://\nBUILD=⟪sha⟫\n",
            "⟪ts⟫ ERROR kombu.connection: Connection to ⟪url⟫ refused, retrying in 2s (task "
            "⟪uuid⟫)",
            "[2024-05-01 12:00:00,000: INFO/MainProcess] Connected to ⟪url⟫\n"
            "[worker] hostname=celery@⟪svc⟫ trace=⟪trace⟫",
            "cache:\n  url: ⟪url⟫\n  ttl: 300\n  instance: ⟪uuid⟫\n",
        )
    )
    return _text_case(
        "broker_connection_string", rng, tpl.replace("⟪url⟫", url), {"pw": shown}, also=(raw,)
    )


@_kind("url_credentials")
def _url_credentials(rng: random.Random, i: int) -> Case:
    """`scheme://user:pass@host` credentials in HTTP(S), proxy, FTP, git+https and index URLs."""
    shown, raw = _url_password(rng)
    tpl = _pick(
        rng,
        (
            "HTTPS_PROXY=http://proxyuser:⟪pw⟫@proxy.corp.internal:3128\nNO_PROXY=localhost\n"
            "RUNNER_ID=⟪uuid⟫\n",
            "--index-url https://deploy:⟪pw⟫@nexus.acme-corp.io/repository/pypi/simple\n"
            "acme-sdk==⟪ver⟫ --hash=⟪digest⟫\n",
            "git+https://ci:⟪pw⟫@git.acme-corp.io/platform/tools.git@⟪sha⟫#egg=tools",
            "⟪ts⟫ INFO  fetching https://backup:⟪pw⟫@files.acme-corp.io/exports/⟪uuid⟫.tar.gz",
            "ftp://reports:⟪pw⟫@ftp.partner-bank.com/outgoing/⟪n⟫.csv downloaded in ⟪ms⟫ms "
            "(transfer ⟪uuid⟫)",
            '[remote "origin"]\n\turl = https://bot:⟪pw⟫@bitbucket.org/acme/api.git\n# HEAD ⟪sha⟫',
        ),
        i,
    )
    return _text_case("url_credentials", rng, tpl, {"pw": shown}, also=(raw,))


@_kind("url_query_secret")
def _url_query_secret(rng: random.Random, i: int) -> Case:
    """Secret query parameters: api_key, token, access_token, client_secret, sig, Amz signature."""
    variant = i % 8
    if variant == 5:
        sig_raw = _b64(rng.randbytes(32))
        base = "https://acmelogs.blob.core.windows.net/logs/app.log"
        url = f"{base}?sv=2022-11-02&ss=b&srt=o&sp=r&se=2025-01-01T00:00:00Z&spr=https&sig=⟪sig⟫"
        tpl = "⟪ts⟫ INFO  uploaded to ⟪url⟫ (request ⟪uuid⟫)"
        secrets = {"sig": urllib.parse.quote(sig_raw, safe="")}
        return _text_case(
            "url_query_secret",
            rng,
            tpl,
            secrets,
            values={"url": url},
            also=(sig_raw,),
            keep=(base,),
        )
    if variant in (6, 7):
        key_id, signature = _aws_key_id(rng), _hex(rng, 64)
        base = "https://acme-exports.s3.eu-west-1.amazonaws.com/reports/q3.parquet"
        query = (
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=⟪id⟫%2F20240501%2Feu-west-1%2Fs3"
            "%2Faws4_request&X-Amz-Date=20240501T120000Z&X-Amz-Expires=3600"
            "&X-Amz-SignedHeaders=host&X-Amz-Signature=⟪signature⟫"
        )
        if variant == 7:
            url = base + query.replace("⟪id⟫", key_id).replace("⟪signature⟫", signature)
            payload = {"download_url": url, "bytes": rng.randint(1000, 90000)}
            return Case("url_query_secret", payload, (signature, key_id), (base,))
        tpl = "presigned: ⟪url⟫\nexpires in 3600s (⟪uuid⟫)"
        return _text_case(
            "url_query_secret",
            rng,
            tpl,
            {"signature": signature, "id": key_id},
            values={"url": base + query},
            keep=(base,),
        )
    param = ("api_key", "token", "access_token", "client_secret", "apikey")[variant]
    base = "https://files.acme-corp.io/exports/report-2024.csv"
    tpl = rng.choice(
        (
            "⟪ts⟫ INFO  GET ⟪base⟫?page=2&⟪param⟫=⟪value⟫ 200 ⟪ms⟫ms request_id=⟪uuid⟫",
            "curl -s '⟪base⟫?⟪param⟫=⟪value⟫&format=json' | jq .  # trace ⟪trace⟫",
            "[Download the report](⟪base⟫?⟪param⟫=⟪value⟫) (generated for run ⟪uuid⟫)",
        )
    )
    value = _tok(rng, _ALNUM, rng.randint(24, 40))
    return _text_case(
        "url_query_secret",
        rng,
        tpl,
        {"value": value},
        values={"base": base, "param": param},
        keep=(base,),
    )


# Encoded and disguised ------------------------------------------------------------------------


@_kind("base64_encoded")
def _base64_encoded(rng: random.Random, i: int) -> Case:
    """Secrets hidden inside base64 text: the encoded form and the decoded secret must both go."""
    variant = i % 5
    if variant == 0:
        pw, _ = _url_password(rng)
        pw = urllib.parse.unquote(pw)
        inner = f"postgres://app:{pw}@db-primary.internal:5432/orders"
        enc = _b64(inner.encode())
        tpl = (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: orders-db\n  uid: ⟪uuid⟫\n"
            "type: Opaque\ndata:\n  DATABASE_URL: ⟪enc⟫\n"
        )
        return _text_case("base64_encoded", rng, tpl, {"enc": enc}, also=(pw,))
    if variant == 1:
        token = _github(rng, i // 5)
        enc = _b64(f"ci-bot:{token}".encode())
        tpl = (
            '{\n  "auths": {\n    "ghcr.io": {\n      "auth": "⟪enc⟫"\n    }\n  }\n}\n'
            "# pulled ⟪digest⟫"
        )
        return _text_case("base64_encoded", rng, tpl, {"enc": enc}, also=(token,))
    if variant == 2:
        token = _stripe(rng, i // 5)
        env = f"REGION=eu-west-1\nSTRIPE_SECRET_KEY={token}\nLOG_LEVEL=info\n"
        wrapped = "\n".join(_wrap(_b64(env.encode()), 60)) + "\n"
        sha = _git_sha(rng)
        payload = {
            "name": ".env",
            "path": "deploy/.env",
            "sha": sha,
            "encoding": "base64",
            "content": wrapped,
        }
        return Case("base64_encoded", payload, (wrapped.rstrip("\n"), token), (sha,))
    if variant == 3:
        secret = _aws_secret(rng)
        enc = _b64(f"aws_secret_access_key={secret}\n".encode())
        tpl = "$ echo '⟪enc⟫' | base64 -d > ~/.aws/credentials\n$ git rev-parse HEAD\n⟪sha⟫\n"
        return _text_case("base64_encoded", rng, tpl, {"enc": enc}, also=(secret,))
    secret = _password(rng)
    enc = _b64(json.dumps({"user": "svc-sync", "api_key": secret}).encode())
    tpl = "⟪ts⟫ DEBUG webhook payload=⟪enc⟫ delivery=⟪uuid⟫"
    return _text_case("base64_encoded", rng, tpl, {"enc": enc}, also=(secret,))


def _pct(s: str) -> str:
    return urllib.parse.quote(s, safe="")


@_kind("url_encoded")
def _url_encoded(rng: random.Random, i: int) -> Case:
    """Secrets in percent-encoded text: encoded keys, encoded values, encoded nested URLs."""
    variant = i % 5
    if variant == 0:
        token = _tok(rng, _ALNUM, 40)
        inner = f"https://api.acme-corp.io/v1/export?access_token={token}&scope=read"
        tpl = (
            "HTTP/1.1 302 Found\nLocation: https://app.acme-corp.io/login?next=⟪enc⟫\n"
            "X-Request-Id: ⟪uuid⟫\n"
        )
        enc = _pct(inner).replace(token, "⟪token⟫")
        return _text_case("url_encoded", rng, tpl, {"token": token}, values={"enc": enc})
    if variant == 1:
        refresh = _tok(rng, _B64URL, 40)
        secret_raw = _tok(rng, _ALNUM, 20) + "/" + _tok(rng, _ALNUM, 10) + "+="
        secret = _pct(secret_raw)
        tpl = (
            "POST /oauth2/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n"
            "X-Request-Id: ⟪uuid⟫\n\ngrant_type=refresh_token&refresh_token=⟪rt⟫&client_id=web-⟪n⟫"
            "&client_secret=⟪cs⟫"
        )
        return _text_case(
            "url_encoded", rng, tpl, {"rt": refresh, "cs": secret}, also=(secret_raw,)
        )
    if variant == 2:
        secret = _password(rng)
        data = _pct(json.dumps({"api_key": secret, "event": "login"}))
        data = data.replace(_pct(secret), "⟪secret⟫")
        tpl = "⟪ts⟫ INFO  GET /collect?v=2&data=⟪data⟫ 204 ⟪ms⟫ms trace=⟪trace⟫"
        return _text_case(
            "url_encoded", rng, tpl, {"secret": _pct(secret)}, values={"data": data}, also=(secret,)
        )
    if variant == 3:
        key_id, secret_raw = _aws_key_id(rng), _aws_secret(rng)
        cfg = _pct(f"aws_access_key_id={key_id}&aws_secret_access_key={secret_raw}")
        secret = _pct(secret_raw)
        tpl = "⟪ts⟫ DEBUG loader cfg=⟪cfg⟫ job=⟪uuid⟫"
        cfg = cfg.replace(secret, "⟪secret⟫").replace(key_id, "⟪id⟫")
        return _text_case(
            "url_encoded",
            rng,
            tpl,
            {"secret": secret, "id": key_id},
            values={"cfg": cfg},
            also=(secret_raw,),
        )
    _, raw = _url_password(rng)
    dsn = _pct(f"postgresql://report:{raw}@db-primary.internal:5432/bi")
    dsn = dsn.replace(_pct(raw), "⟪pw⟫")
    tpl = "GET /admin/connect?dsn=⟪dsn⟫&test=1 HTTP/1.1\nX-Request-Id: ⟪uuid⟫\n"
    return _text_case("url_encoded", rng, tpl, {"pw": _pct(raw)}, values={"dsn": dsn}, also=(raw,))


@_kind("json_in_json")
def _json_in_json(rng: random.Random, i: int) -> Case:
    """Secrets under sensitive keys of JSON that is itself a string inside JSON (or text)."""
    s1, s2 = _password(rng), _tok(rng, _B64URL, 32)
    call_id = "call_" + _tok(rng, _ALNUM, 24)
    inner: dict[str, Any] = {
        "database": {"host": "db-primary.internal", "password": s1},
        "api_key": s2,
    }
    if i % 4 == 3:
        content = json.dumps({"status": 200, "body": json.dumps(inner)})
    else:
        content = json.dumps(inner)
    outer = {"tool_call_id": call_id, "name": "read_config", "content": content}
    if i % 2:
        return Case("json_in_json", outer, (s1, s2), (call_id,))
    return Case("json_in_json", json.dumps(outer), (s1, s2), (call_id,))


_INVISIBLES = ("\u200b", "\u200c", "\u200d", "\u2060", "\u2062", "\u2063", "\ufeff", "\u00ad")


@_kind("zero_width_split")
def _zero_width_split(rng: random.Random, i: int) -> Case:
    """Provider tokens split by zero-width or other invisible characters."""
    token = _provider_token(rng, i)
    cuts = sorted(rng.sample(range(5, len(token) - 2), rng.randint(1, 3)))
    split = token
    for cut in reversed(cuts):
        split = split[:cut] + rng.choice(_INVISIBLES) + split[cut:]
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ INFO  user pasted: ⟪split⟫ (conversation ⟪uuid⟫)",
            "Here is the value you asked for: ⟪split⟫\nCommit: ⟪sha⟫",
            '{"role": "user", "content": "use ⟪split⟫ for the deploy", "id": "⟪uuid⟫"}',
            "| name | value |\n|---|---|\n| ci | ⟪split⟫ |\n| sha | ⟪sha⟫ |\n",
        ),
        i,
    )
    return _text_case("zero_width_split", rng, tpl, {"split": split}, also=(token,))


_HOMOGLYPHS = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "s": "ѕ", "i": "і", "x": "х"}


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _homoglyph(rng: random.Random, s: str) -> str:
    spots = [k for k, c in enumerate(s) if c in _HOMOGLYPHS]
    chosen = set(rng.sample(spots, rng.randint(1, len(spots))))
    return "".join(_HOMOGLYPHS[c] if k in chosen else c for k, c in enumerate(s))


@_kind("homoglyph_key")
def _homoglyph_key(rng: random.Random, i: int) -> Case:
    """Sensitive key names in full-width forms or with Cyrillic look-alike letters."""
    word = _pick(rng, ("password", "api_key", "secret", "access_token", "client_secret"), i % 5)
    key = _fullwidth(word) if i % 2 == 0 else _homoglyph(rng, word)
    secret = _password(rng)
    if i % 5 == 4:
        req = _uuid(rng)
        return Case(
            "homoglyph_key", {"request_id": req, "config": {key: secret}}, (secret,), (req,)
        )
    sep = "＝" if i % 10 == 0 else rng.choice(("=", ": "))
    tpl = _pick(
        rng,
        (
            "⟪key⟫⟪sep⟫⟪secret⟫\nrequest_id⟪sep⟫⟪uuid⟫\n",
            "⟪ts⟫ INFO  login ⟪key⟫⟪sep⟫⟪secret⟫ trace⟪sep⟫⟪trace⟫",
            '{"⟪key⟫": "⟪secret⟫", "id": "⟪uuid⟫"}',
            "config:\n  ⟪key⟫: ⟪secret⟫\n  build: ⟪sha⟫\n",
        ),
        i % 4,
    )
    return _text_case(
        "homoglyph_key", rng, tpl, {"secret": secret}, values={"key": key, "sep": sep}
    )


_CLEAN_LINES = (
    "⟪ts⟫ INFO  http GET /api/v1/orders/⟪uuid⟫ 200 ⟪ms⟫ms",
    "⟪ts⟫ INFO  worker[⟪small⟫] processed batch of ⟪n⟫ events in ⟪ms⟫ms",
    "⟪ts⟫ DEBUG git checkout ⟪sha⟫ (detached HEAD)",
    "⟪ts⟫ INFO  otel trace_id=⟪trace⟫ span_id=⟪span⟫ name=tool.execute status=ok",
    "⟪ts⟫ INFO  llm usage prompt_tokens=⟪n⟫ completion_tokens=⟪n2⟫ model=gpt-4o-mini",
    "⟪ts⟫ WARN  retrying request ⟪uuid⟫ after 429 (attempt ⟪small⟫/5)",
    "⟪ts⟫ INFO  pulled image registry.acme-corp.io/api@⟪digest⟫",
    '⟪ts⟫ INFO  {"event": "tool_call", "tool": "read_file", "call_id": "⟪uuid⟫", '
    '"duration_ms": ⟪ms⟫}',
    "⟪ts⟫ DEBUG cache miss for /v1/users/⟪uuid⟫/profile",
    "⟪ts⟫ INFO  healthcheck ok db=up queue=up latency_ms=⟪ms⟫",
    "⟪ts⟫ INFO  deployed release v⟪ver⟫ from commit ⟪short_sha⟫",
    "⟪ts⟫ ERROR tool read_file failed: FileNotFoundError: [Errno 2] No such file or directory: "
    "'/srv/data/report-⟪n⟫.csv'",
    "⟪ts⟫ INFO  scheduler: job nightly-⟪word⟫ finished in ⟪ms⟫ms",
    "⟪ts⟫ DEBUG sql SELECT id, status FROM orders WHERE id = $1 (⟪ms⟫ms)",
)


def _clean_line(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    return _fill(rng, rng.choice(_CLEAN_LINES))


def _secret_line(rng: random.Random, i: int) -> tuple[str, tuple[str, ...]]:
    """One log record holding a secret of some family, and that secret."""
    which = i % 6
    if which == 0:
        token = _provider_token(rng, i // 6 + rng.randrange(11))
        return f"{_ts(rng)} INFO  env loaded CI_TOKEN={token}", (token,)
    if which == 1:
        pw = _password(rng)
        return f"{_ts(rng)} DEBUG db.connect host=db-1 password={pw} pool=4", (pw,)
    if which == 2:
        token = _jwt(rng)
        return f"{_ts(rng)} DEBUG auth header accepted: {token}", (token,)
    if which == 3:
        key_id, secret = _aws_key_id(rng), _aws_secret(rng)
        return f"{_ts(rng)} WARN  aws_access_key_id={key_id} aws_secret_access_key={secret}", (
            key_id,
            secret,
        )
    if which == 4:
        label, body = _private_pem(rng, i)
        return f"{_ts(rng)} ERROR bad key file:\n{_pem(label, body)}", ("\n".join(body),)
    shown, raw = _url_password(rng)
    line = f"{_ts(rng)} INFO  connecting to postgres://app:{shown}@db-1:5432/app"
    return line, tuple(dict.fromkeys((shown, raw)))


@_kind("long_log")
def _long_log(rng: random.Random, i: int) -> Case:
    """A 100 KB+ log with secrets anywhere: first line, last line, middle, around 64 KiB."""
    target = rng.randint(100_000, 180_000)
    lines: list[str] = []
    keeps: list[tuple[str, ...]] = []
    size = 0
    while size < target:
        line, lookalikes = _clean_line(rng)
        lines.append(line)
        keeps.append(lookalikes)
        size += len(line) + 1
    secret_line, secrets = _secret_line(rng, i)
    spot = i % 5
    if spot == 0:
        at = 0
    elif spot == 1:
        at = len(lines)
    elif spot == 2:
        at = rng.randrange(1, len(lines))
    else:
        boundary = 65_536 if spot == 3 else 100_000
        offset, at = 0, 0
        while offset < boundary and at < len(lines):
            offset += len(lines[at]) + 1
            at += 1
    lines.insert(at, secret_line)
    keeps.insert(at, ())
    near: list[str] = []
    for j in sorted(range(len(keeps)), key=lambda j: abs(j - at))[1:]:
        near.extend(keeps[j])
        if len(near) >= 2:
            break
    if i % 3 == 2:
        second, more = _secret_line(rng, i + 1)
        where = rng.randrange(len(lines) + 1)
        lines.insert(where, second)
        keeps.insert(where, ())
        secrets = tuple(dict.fromkeys((*secrets, *more)))
    return Case("long_log", "\n".join(lines) + "\n", secrets, tuple(dict.fromkeys(near)))


_ENTROPY_WORDS = _words(
    "signing_key encryption_key master_key hmac_key passphrase webhookSigningKey "
    "SECRET_KEY_BASE jwt_secret license_key APP_KEY"
)


@_kind("generic_high_entropy")
def _generic_high_entropy(rng: random.Random, i: int) -> Case:
    """Long token-like strings of no known format next to a credential-ish word."""
    word = _pick(rng, _ENTROPY_WORDS, i)
    value = _hex(rng, 64) if i % 4 == 1 else _tok(rng, _B64URL, rng.randint(32, 64))
    if word == "APP_KEY":
        value = "base64:" + _b64(rng.randbytes(32))
    if i % 6 == 5:
        req = _uuid(rng)
        return Case(
            "generic_high_entropy", {"id": req, "settings": {word: value}}, (value,), (req,)
        )
    tpl = _pick(
        rng,
        (
            "⟪word⟫=⟪value⟫\nREQUEST_ID=⟪uuid⟫\n",
            "⟪word⟫: ⟪value⟫\nbuild: ⟪sha⟫\n",
            '{"⟪word⟫": "⟪value⟫", "trace_id": "⟪trace⟫"}',
            '⟪word⟫ = "⟪value⟫"  # rotated ⟪ts⟫ (job ⟪uuid⟫)',
            "⟪ts⟫ INFO  generated new ⟪word⟫ ⟪value⟫ for tenant ⟪uuid⟫",
        ),
        i % 5,
    )
    return _text_case("generic_high_entropy", rng, tpl, {"value": value}, values={"word": word})


# Personal data --------------------------------------------------------------------------------

_FIRST = ("maria", "jonas", "aiko", "liam", "fatima", "chen", "olga", "diego", "amara", "noah")
_LAST = ("garcia", "müller", "tanaka", "oconnor", "haddad", "wang", "ivanova", "rossi", "okafor")
_DOMAINS = (
    "gmail.com",
    "outlook.com",
    "fastmail.fm",
    "acme-corp.io",
    "uni-berlin.de",
    "btinternet.co.uk",
)


def _email(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST).replace("ü", "u")
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first[0]}{last}",
            f"{first}+{rng.choice(_WORDS)}",
            f"{first}_{last}{rng.randint(1, 99)}",
        )
    )
    if rng.random() < 0.2:
        local = local.capitalize()
    return f"{local}@{rng.choice(_DOMAINS)}"


@_kind("pii_email")
def _pii_email(rng: random.Random, i: int) -> Case:
    """Email addresses in git logs, headers, CSV, JSON and prose."""
    email = _email(rng)
    if i % 5 == 4:
        uid = _uuid(rng)
        return Case(
            "pii_email",
            {"user": {"id": uid, "email": email, "plan": "pro"}},
            (email,),
            (uid,),
            True,
        )
    tpl = _pick(
        rng,
        (
            "commit ⟪sha⟫\nAuthor: Maria Garcia <⟪email⟫>\nDate:   Wed May 1 12:00:00 2024 +0000\n",
            "From: ⟪email⟫\nTo: support@acme-corp.io\nSubject: Order ⟪n⟫\nX-Request-Id: ⟪uuid⟫\n",
            "id,email,plan\n⟪uuid⟫,⟪email⟫,pro\n",
            "⟪ts⟫ INFO  password reset link sent to ⟪email⟫ (request ⟪uuid⟫)",
            "npm install @types/node@20.11.5 --save-dev  # asked by ⟪email⟫",
        ),
        i,
    )
    keep = ("@types/node@20.11.5",) if "@types/node" in tpl else ()
    return _text_case("pii_email", rng, tpl, {"email": email}, keep=keep, pii=True)


@_kind("pii_card")
def _pii_card(rng: random.Random, i: int) -> Case:
    """Luhn-valid payment card numbers of several brands, plain or grouped."""
    _, shown = _card(rng, i)
    if i % 5 == 4:
        order = f"ORD-{rng.randint(100000, 999999)}"
        payload = {"order": order, "payment": {"card_number": shown, "exp": "04/27"}}
        return Case("pii_card", payload, (shown,), (order,), True)
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ WARN  charge declined for card ⟪card⟫ (order ⟪uuid⟫)",
            "id,name,card,amount\n⟪uuid⟫,Maria Garcia,⟪card⟫,42.10\n",
            "POST /checkout cc_number=⟪card⟫&cvv=***&request_id=⟪uuid⟫",
            "The customer read out their card number ⟪card⟫ over chat; ticket ⟪uuid⟫",
        ),
        i,
    )
    return _text_case("pii_card", rng, tpl, {"card": shown}, pii=True)


@_kind("pii_iban")
def _pii_iban(rng: random.Random, i: int) -> Case:
    """mod-97-valid IBANs of several countries, compact or in groups of four."""
    iban = _iban(rng, list(_IBAN_BBAN)[i % len(_IBAN_BBAN)])
    shown = _group4(iban) if i % 2 else iban
    tpl = _pick(
        rng,
        (
            "Please transfer the amount to IBAN ⟪iban⟫ (invoice INV-2024-⟪n⟫, ref ⟪uuid⟫).",
            '{"payout": {"iban": "⟪iban⟫", "currency": "EUR"}, "id": "⟪uuid⟫"}',
            "<CdtrAcct><Id><IBAN>⟪iban⟫</IBAN></Id></CdtrAcct><!-- msg ⟪uuid⟫ -->",
            "id,iban,amount\n⟪uuid⟫,⟪iban⟫,1200.00\n",
        ),
        i % 4,
    )
    return _text_case("pii_iban", rng, tpl, {"iban": shown}, pii=True)


def _ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


@_kind("pii_ssn")
def _pii_ssn(rng: random.Random, i: int) -> Case:
    """US social security numbers (AAA-GG-SSSS with valid area, group and serial)."""
    ssn = _ssn(rng)
    tpl = _pick(
        rng,
        (
            "SSN: ⟪ssn⟫\nApplicant ID: ⟪uuid⟫\nSubmitted: 2024-05-01\n",
            '{"applicant": {"ssn": "⟪ssn⟫", "state": "CA"}, "request_id": "⟪uuid⟫"}',
            "id,first,last,ssn,dob\n⟪uuid⟫,Maria,Garcia,⟪ssn⟫,1984-03-12\n",
            "⟪ts⟫ INFO  verified social security number ⟪ssn⟫ for case ⟪uuid⟫",
        ),
        i % 4,
    )
    return _text_case("pii_ssn", rng, tpl, {"ssn": ssn}, pii=True)


def _phone(rng: random.Random, i: int) -> str:
    area = rng.choice([a for a in range(201, 990) if (a // 10) % 10 != 9 and a % 100 != 11])
    exch, line = rng.randint(200, 999), rng.randint(0, 9999)
    forms = (
        f"({area}) {exch}-{line:04d}",
        f"+1 {area}-{exch}-{line:04d}",
        f"{area}.{exch}.{line:04d}",
        f"+44 20 {rng.randint(7000, 8999)} {rng.randint(1000, 9999)}",
        f"+49 151 {rng.randint(10000000, 99999999)}",
        f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} "
        f"{rng.randint(10, 99)}",
        f"+91 {rng.randint(70000, 99999)} {rng.randint(10000, 99999)}",
        f"+81 3-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+55 11 9{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+61 4{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}",
    )
    return forms[i % len(forms)]


@_kind("pii_phone")
def _pii_phone(rng: random.Random, i: int) -> Case:
    """Phone numbers in US and international formats."""
    phone = _phone(rng, i)
    tpl = rng.choice(
        (
            "Call me back at ⟪phone⟫ tomorrow. (ticket ⟪uuid⟫)",
            '{"contact": {"phone": "⟪phone⟫"}, "id": "⟪uuid⟫"}',
            "⟪ts⟫ INFO  sms sent to ⟪phone⟫ message_id=⟪uuid⟫",
            "BEGIN:VCARD\nFN:Maria Garcia\nTEL;TYPE=cell:⟪phone⟫\nUID:⟪uuid⟫\nEND:VCARD\n",
        )
    )
    return _text_case("pii_phone", rng, tpl, {"phone": phone}, pii=True)


def _public_ipv4(rng: random.Random) -> str:
    while True:
        a = rng.randint(1, 223)
        b = rng.randint(0, 255)
        if a in (10, 127, 0) or (a == 172 and 16 <= b <= 31) or (a, b) in ((192, 168), (169, 254)):
            continue
        if (a == 100 and 64 <= b <= 127) or (a in (192, 198, 203) and b in (0, 18, 19, 51, 113)):
            continue
        return f"{a}.{b}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


@_kind("pii_ipv4")
def _pii_ipv4(rng: random.Random, i: int) -> Case:
    """Public IPv4 client addresses in access logs, headers and JSON."""
    ip = _public_ipv4(rng)
    tpl = _pick(
        rng,
        (
            '⟪ip⟫ - - [01/May/2024:12:03:44 +0000] "GET /v2.14.1/docs HTTP/1.1" 200 5123 "-" '
            '"curl/8.4.0"',
            "X-Forwarded-For: ⟪ip⟫\nX-Request-Id: ⟪uuid⟫\n",
            '{"event": "login", "client_ip": "⟪ip⟫", "session_ref": "⟪uuid⟫"}',
            "⟪ts⟫ WARN  rate limit exceeded for ⟪ip⟫ (trace ⟪trace⟫)",
            "sshd[⟪n⟫]: Accepted publickey for deploy from ⟪ip⟫ port 52144 ssh2: ED25519 "
            "SHA256:⟪span⟫",
        ),
        i,
    )
    keep = ("/v2.14.1/docs",) if "v2.14.1" in tpl else ()
    return _text_case("pii_ipv4", rng, tpl, {"ip": ip}, keep=keep, pii=True)


def _ipv6(rng: random.Random, i: int) -> str:
    while True:
        groups = [rng.randint(0x2000, 0x3FFF)] + [rng.randint(0, 0xFFFF) for _ in range(7)]
        if groups[:2] != [0x2001, 0x0DB8]:
            break
    if i % 3 == 0:
        return ":".join(f"{g:04x}" for g in groups)
    if i % 3 == 1:
        start = rng.randint(2, 5)
        run = rng.randint(2, 7 - start)
        head = ":".join(f"{g:x}" for g in groups[:start])
        tail = ":".join(f"{g:x}" for g in groups[start + run :])
        return f"{head}::{tail}"
    return ":".join(f"{g:x}" for g in groups).upper()


@_kind("pii_ipv6")
def _pii_ipv6(rng: random.Random, i: int) -> Case:
    """Global IPv6 addresses, full, compressed and upper-case."""
    ip = _ipv6(rng, i)
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ INFO  accepted connection from [⟪ip⟫]:51234 (conn ⟪uuid⟫)",
            "X-Forwarded-For: ⟪ip⟫\nX-Request-Id: ⟪uuid⟫\n",
            '{"client_ip": "⟪ip⟫", "ts": "14:03:27", "id": "⟪uuid⟫"}',
            '⟪ip⟫ - - [01/May/2024:14:03:27 +0000] "GET /healthz HTTP/2.0" 200 2 trace=⟪trace⟫',
        ),
        i % 4,
    )
    return _text_case("pii_ipv6", rng, tpl, {"ip": ip}, pii=True)


# Look-alikes that must be kept -----------------------------------------------------------------


def _keep_text(kind: str, rng: random.Random, template: str, keep: tuple[str, ...] = ()) -> Case:
    text, lookalikes = _fill(rng, template)
    return Case(kind, text, (), tuple(dict.fromkeys([*lookalikes, *keep])))


@_kind("keep_git_sha")
def _keep_git_sha(rng: random.Random, i: int) -> Case:
    """Git commit, tree and Change-Id SHAs: public identifiers, never credentials."""
    if i % 5 == 4:
        sha, tree = _git_sha(rng), _git_sha(rng)
        payload = {
            "sha": sha,
            "commit": {"tree": {"sha": tree}, "message": "fix: retry"},
            "parents": [{"sha": _git_sha(rng)}],
        }
        return Case("keep_git_sha", payload, (), (sha, tree, payload["parents"][0]["sha"]))
    return _keep_text(
        "keep_git_sha",
        rng,
        _pick(
            rng,
            (
                "$ git log --oneline -3\n⟪short_sha⟫ fix: retry on 429\n"
                "⟪short_sha2⟫ feat: add receipts\n"
                "⟪short_sha3⟫ chore: bump deps\n",
                "$ git rev-parse HEAD\n⟪sha⟫\n",
                "commit ⟪sha⟫\nMerge: ⟪short_sha⟫ ⟪short_sha2⟫\n\n    Merge pull request #⟪n⟫\n\n"
                "    Change-Id: I⟪sha2⟫\n",
                "HEAD is now at ⟪short_sha⟫ release: v⟪ver⟫\nGITHUB_SHA=⟪sha⟫\n",
            ),
            i,
        ),
    )


@_kind("keep_uuid")
def _keep_uuid(rng: random.Random, i: int) -> Case:
    """UUIDs and GUIDs as request ids, paths and idempotency keys: identifiers, not secrets."""
    if i % 5 == 4:
        a, b = _uuid(rng), _uuid(rng)
        return Case(
            "keep_uuid",
            {"id": a, "parent_id": b, "items": [{"ref": _uuid(rng).upper()}]},
            (),
            (a, b),
        )
    guid = "{" + _uuid(rng).upper() + "}"
    templates = (
        "X-Request-Id: ⟪uuid⟫\nIdempotency-Key: ⟪uuid2⟫\n",
        "GET /v1/tenants/⟪uuid⟫/users/⟪uuid2⟫ 200",
        "ProductCode = " + guid + "  ; installer run ⟪uuid⟫",
        "request ⟪uuid⟫ completed; correlation ⟪uuid2⟫",
    )
    tpl = _pick(rng, templates, i)
    return _keep_text("keep_uuid", rng, tpl, keep=(guid,) if guid in tpl else ())


@_kind("keep_trace_ids")
def _keep_trace_ids(rng: random.Random, i: int) -> Case:
    """W3C traceparent, OTel, B3, Jaeger and X-Ray trace and span ids."""
    if i % 5 == 4:
        trace, span = _hex(rng, 32), _hex(rng, 16)
        payload = {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {"spans": [{"traceId": trace, "spanId": span, "name": "tool.execute"}]}
                    ]
                }
            ]
        }
        return Case("keep_trace_ids", payload, (), (trace, span))
    xray = f"Root=1-{_hex(rng, 8)}-{_hex(rng, 24)}"
    case = _keep_text(
        "keep_trace_ids",
        rng,
        _pick(
            rng,
            (
                "traceparent: 00-⟪trace⟫-⟪span⟫-01\ntracestate: acme=⟪span2⟫\n",
                '{"trace_id": "⟪trace⟫", "span_id": "⟪span⟫", "parent_span_id": "⟪span2⟫"}',
                "X-B3-TraceId: ⟪trace⟫\nX-B3-SpanId: ⟪span⟫\nX-B3-Sampled: 1\n",
                "uber-trace-id: ⟪trace⟫:⟪span⟫:0:1\nX-Amzn-Trace-Id: " + xray + "\n",
            ),
            i,
        ),
    )
    if xray in str(case.payload):
        case = replace(case, keep=(*case.keep, xray))
    return case


@_kind("keep_lockfile_digest")
def _keep_lockfile_digest(rng: random.Random, i: int) -> Case:
    """sha256/sha512 digests in lockfiles and image references: public integrity hashes."""
    sri = "sha512-" + _clean_b64(rng, b"", 64)
    h = _hex(rng, 64)
    go = "h1:" + _clean_b64(rng, b"", 32)
    templates = (
        f'    "node_modules/lodash": {{\n      "version": "4.17.21",\n'
        f'      "integrity": "{sri}"\n    }}',
        f'[[package]]\nname = "requests"\nversion = "2.32.3"\nfiles = [\n'
        f'    {{file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:{h}"}},\n]',
        f"requests==2.32.3 \\\n    --hash=sha256:{h}",
        f'[[package]]\nname = "serde"\nversion = "1.0.203"\n'
        f'source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{h}"',
        f"golang.org/x/net v0.25.0 {go}",
        f'lodash@^4.17.21:\n  version "4.17.21"\n  integrity {sri}',
        f"Digest: sha256:{h}\nStatus: Downloaded newer image for python:3.11-slim",
    )
    kept = {0: sri, 1: f"sha256:{h}", 2: f"sha256:{h}", 3: h, 4: go, 5: sri, 6: f"sha256:{h}"}
    k = i % len(templates)
    return Case("keep_lockfile_digest", templates[k], (), (kept[k],))


@_kind("keep_public_key")
def _keep_public_key(rng: random.Random, i: int) -> Case:
    """SSH public keys, PEM public keys and JWKs: public by design."""
    variant = i % 5
    if variant == 0:
        _, pub = _ssh_ed25519_public(rng)
        return Case(
            "keep_public_key", f"$ cat ~/.ssh/id_ed25519.pub\n{pub} deploy@ci-runner\n", (), (pub,)
        )
    if variant == 1:
        pub = _ssh_rsa_public(rng)
        return Case("keep_public_key", f"# ~/.ssh/authorized_keys\n{pub} ops-laptop\n", (), (pub,))
    if variant == 2:
        _, pub = _ssh_ed25519_public(rng)
        return Case("keep_public_key", f"github.com {pub}\n", (), (pub,))
    if variant == 3:
        block = _pem("PUBLIC KEY", _public_pem_body(rng))
        return Case("keep_public_key", f"JWT verification key:\n{block}\n", (), (block,))
    n = _b64url(bytes([rng.randint(0x80, 0xFF)]) + rng.randbytes(255))
    kid = _hex(rng, 16)
    payload = {
        "keys": [{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"}]
    }
    return Case("keep_public_key", payload, (), (n, kid))


def _colon_hex(rng: random.Random, n: int, upper: bool = False) -> str:
    s = ":".join(f"{b:02x}" for b in rng.randbytes(n))
    return s.upper() if upper else s


@_kind("keep_certificate")
def _keep_certificate(rng: random.Random, i: int) -> Case:
    """X.509 certificates, chains and `openssl x509 -text` dumps: public documents."""
    variant = i % 3
    if variant == 0:
        block = _pem("CERTIFICATE", _cert_body(rng))
        return Case("keep_certificate", f"$ cat fullchain.pem\n{block}\n", (), (block,))
    if variant == 1:
        a, b = _pem("CERTIFICATE", _cert_body(rng)), _pem("CERTIFICATE", _cert_body(rng))
        return Case(
            "keep_certificate", {"ca_bundle": f"{a}\n{b}\n", "not_after": "2025-08-01"}, (), (a, b)
        )
    serial = _colon_hex(rng, 16)
    modulus = [_colon_hex(rng, 15) + ":" for _ in range(4)]
    fingerprint = _colon_hex(rng, 32, upper=True)
    text = (
        "Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number:\n"
        f"            {serial}\n        Signature Algorithm: sha256WithRSAEncryption\n"
        "        Subject: CN=api.acme-corp.io\n        Subject Public Key Info:\n"
        "            Public Key Algorithm: rsaEncryption\n                Public-Key: (2048 bit)\n"
        "                Modulus:\n"
        + "".join(f"                    {m}\n" for m in modulus)
        + f"sha256 Fingerprint={fingerprint}\n"
    )
    return Case("keep_certificate", text, (), (serial, *modulus, fingerprint))


@_kind("keep_base64_image")
def _keep_base64_image(rng: random.Random, i: int) -> Case:
    """Base64 images and file blobs with no credential context."""
    heads = (
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf"),
        (b"GIF89a", "image/gif"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "application/gzip"),
    )
    head, mime = heads[i % len(heads)]
    blob = _clean_b64(rng, head, rng.randint(150, 2200))
    variant = i % 4
    if variant == 0:
        return Case("keep_base64_image", f"![chart](data:{mime};base64,{blob})\n", (), (blob,))
    if variant == 1:
        payload = {"type": "image", "source": {"type": "base64", "media_type": mime, "data": blob}}
        return Case("keep_base64_image", payload, (), (blob,))
    if variant == 2:
        payload = {
            "attachments": [
                {
                    "filename": f"report-{rng.randint(1, 99)}.bin",
                    "content_type": mime,
                    "content": blob,
                }
            ]
        }
        return Case("keep_base64_image", payload, (), (blob,))
    return Case(
        "keep_base64_image", f'<img alt="logo" src="data:{mime};base64,{blob}">', (), (blob,)
    )


@_kind("keep_non_luhn_ids")
def _keep_non_luhn_ids(rng: random.Random, i: int) -> Case:
    """Card-length order numbers, tracking numbers and snowflake ids that fail Luhn."""
    a, b = _non_luhn(rng, rng.choice((13, 15, 16, 19))), _non_luhn(rng, 16)
    tpl = _pick(
        rng,
        (
            "Order #{a} shipped; tracking number {b}.",
            '{"order_id": "{a}", "invoice_no": "{b}", "total": 42.5}',
            "message_id={a} channel_id={b}",
            "ref {a} / batch {b} processed",
        ),
        i,
    )
    text = tpl.replace("{a}", a).replace("{b}", b)
    if i % 5 == 4:
        return Case("keep_non_luhn_ids", {"order_id": int(a), "tracking_number": b}, (), (a, b))
    return Case("keep_non_luhn_ids", text, (), (a, b))


@_kind("keep_invalid_iban")
def _keep_invalid_iban(rng: random.Random, i: int) -> Case:
    """IBAN-shaped strings whose mod-97 check fails: not account numbers."""
    bad = _iban(rng, list(_IBAN_BBAN)[i % len(_IBAN_BBAN)], valid=False)
    shown = _group4(bad) if i % 2 else bad
    tpl = rng.choice(
        (
            "validation failed: {x} is not a valid IBAN (checksum)",
            '{"field": "iban", "value": "{x}", "error": "invalid_checksum"}',
            "test fixture (bad checksum): {x}",
        )
    )
    return Case("keep_invalid_iban", tpl.replace("{x}", shown), (), (shown,))


_PROSE = (
    "Forgot your password? Use the password reset page to choose a new one.",
    "The tokenizer splits the prompt into tokens before the model sees it.",
    "Store secrets in the vault and never commit them to the repository.",
    "Rotate the API key from the dashboard if you think it leaked.",
    "Your session expired; please sign in again.",
    "Basic authentication is disabled on this endpoint.",
    "We use cookies to remember your language preference.",
    "Each access token is valid for one hour and each refresh token for thirty days.",
    "The private key never leaves the hardware security module.",
    "Authorization failed because the user lacks the admin role.",
    "Credentials are injected at runtime by the secrets operator.",
    "## Token usage\n\nThe model returned fewer tokens than the limit.",
)


@_kind("keep_prose")
def _keep_prose(rng: random.Random, i: int) -> Case:
    """Prose that merely mentions tokens, passwords, secrets, keys and sessions."""
    first = _PROSE[i % len(_PROSE)]
    second = _PROSE[(i + 5) % len(_PROSE)]
    if i % 5 == 4:
        return Case(
            "keep_prose", {"role": "assistant", "content": f"{first} {second}"}, (), (first, second)
        )
    return Case("keep_prose", f"{first}\n\n{second}\n", (), (first, second))


@_kind("keep_credential_names")
def _keep_credential_names(rng: random.Random, i: int) -> Case:
    """Names of and references to credentials (secret_name, secretKeyRef, --secret-id, ...)."""
    svc = rng.choice(_SERVICES)
    options: tuple[tuple[str, tuple[str, ...]], ...] = (
        (f"secret_name: db-password\nnamespace: {svc}\n", ("secret_name: db-password",)),
        (
            f"        env:\n          - name: DB_PASSWORD\n            valueFrom:\n"
            "              secretKeyRef:\n"
            f"                name: {svc}-credentials\n                key: password\n",
            ("name: DB_PASSWORD", f"name: {svc}-credentials", "key: password"),
        ),
        (
            f"$ aws secretsmanager get-secret-value --secret-id prod/{svc}/api-token --query "
            "SecretString",
            (f"--secret-id prod/{svc}/api-token",),
        ),
        (
            f'resource "aws_secretsmanager_secret" "db" {{\n  name = "prod/{svc}/db-password"\n}}',
            (f'name = "prod/{svc}/db-password"',),
        ),
        (
            f"$ vault kv get -field=password secret/data/prod/{svc}/postgres",
            ("-field=password", f"secret/data/prod/{svc}/postgres"),
        ),
        (
            "password_min_length: 12\npassword_expiry_days: 90\nsession_timeout_minutes: 30\n",
            ("password_min_length: 12", "password_expiry_days: 90", "session_timeout_minutes: 30"),
        ),
        (
            "[profile ci]\nrole_arn = arn:aws:iam::123456789012:role/ci\n"
            "credential_source = Ec2InstanceMetadata\n",
            ("credential_source = Ec2InstanceMetadata",),
        ),
    )
    if i % 8 == 7:
        payload = {
            "issuer": "https://login.acme-corp.io",
            "authorization_endpoint": "https://login.acme-corp.io/oauth2/authorize",
            "token_endpoint": "https://login.acme-corp.io/oauth2/token",
            "jwks_uri": "https://login.acme-corp.io/.well-known/jwks.json",
        }
        return Case("keep_credential_names", payload, (), tuple(payload.values()))
    if i % 8 == 6:
        payload = {"secret_name": f"{svc}-api-key", "secret_version": 3, "rotation_days": 30}
        return Case("keep_credential_names", payload, (), (f"{svc}-api-key", '"secret_version": 3'))
    text, keep = options[i % len(options)]
    return Case("keep_credential_names", text, (), keep)


@_kind("keep_auth_method")
def _keep_auth_method(rng: random.Random, i: int) -> Case:
    """Authentication *settings* (methods, schemes, grant types), not credentials."""
    options: tuple[tuple[str | dict, tuple[str, ...]], ...] = (
        ("auth: {method: oauth}\nretries: 3\n", ("auth: {method: oauth}",)),
        (
            {"auth": {"method": "oauth", "scopes": ["repo", "read:org"]}},
            ('"method": "oauth"', "read:org"),
        ),
        (
            "components:\n  securitySchemes:\n    bearerAuth:\n      type: http\n"
            "      scheme: bearer\n"
            "      bearerFormat: JWT\n    ApiKeyAuth:\n      type: apiKey\n      in: header\n"
            "      name: X-API-Key\n",
            ("scheme: bearer", "bearerFormat: JWT", "name: X-API-Key"),
        ),
        ("grant_type=client_credentials&scope=orders.read", ("grant_type=client_credentials",)),
        (
            {"authentication": {"type": "basic", "required": True}},
            ('"type": "basic"', '"required": true'),
        ),
        (
            "auth_type: password\nauth_method: token\nmfa: required\n",
            ("auth_type: password", "auth_method: token"),
        ),
        (
            "Host bastion\n  PasswordAuthentication no\n  PubkeyAuthentication yes\n",
            ("PasswordAuthentication no", "PubkeyAuthentication yes"),
        ),
        (
            {
                "mcpServers": {
                    "github": {"auth": {"type": "oauth", "client_id": "Iv1.8a61f9b3a7aba766"}}
                }
            },
            ('"type": "oauth"', "Iv1.8a61f9b3a7aba766"),
        ),
    )
    payload, keep = options[i % len(options)]
    return Case("keep_auth_method", payload, (), keep)


@_kind("keep_usage_metadata")
def _keep_usage_metadata(rng: random.Random, i: int) -> Case:
    """Token counts, limits and usage metadata of LLM calls."""
    p, c = rng.randint(10, 9000), rng.randint(1, 4000)
    variant = i % 6
    if variant == 0:
        payload = {
            "id": "chatcmpl-" + _tok(rng, _ALNUM, 29),
            "model": "gpt-4o-mini",
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        }
        return Case(
            "keep_usage_metadata",
            payload,
            (),
            (f'"prompt_tokens": {p}', f'"total_tokens": {p + c}'),
        )
    if variant == 1:
        payload = {"usage": {"input_tokens": p, "output_tokens": c, "cache_read_input_tokens": 0}}
        return Case(
            "keep_usage_metadata", payload, (), (f'"input_tokens": {p}', f'"output_tokens": {c}')
        )
    if variant == 2:
        return Case(
            "keep_usage_metadata",
            {"model": "claude-sonnet-4-20250514", "max_tokens": 4096},
            (),
            ('"max_tokens": 4096',),
        )
    texts = (
        (f"token_count: {p}\nmax_tokens: 4096\n", (f"token_count: {p}", "max_tokens: 4096")),
        (
            f"gen_ai.usage.input_tokens={p} gen_ai.usage.output_tokens={c}",
            (f"gen_ai.usage.input_tokens={p}", f"gen_ai.usage.output_tokens={c}"),
        ),
        (
            f'{{"max_tokens": 4096, "temperature": 0.2, "tokens_per_second": {c}.5}}',
            ('"max_tokens": 4096', f'"tokens_per_second": {c}.5'),
        ),
    )
    text, keep = texts[variant - 3]
    return Case("keep_usage_metadata", text, (), keep)


@_kind("keep_receipt")
def _keep_receipt(rng: random.Random, i: int) -> Case:
    """zeroclaw HMAC receipts (`zc-receipt-{unix seconds}-{43 base64url}`) and their key id."""
    receipt = _receipt(rng)
    key_id = _hex(rng, 16)
    if i % 3 == 2:
        payload = {"tool": "read_file", "outcome": "success", "receipt": receipt, "key_id": key_id}
        return Case("keep_receipt", payload, (), (receipt, key_id))
    tpl = rng.choice(
        (
            "zeroclaw.tool.name=read_file zeroclaw.tool.receipt=⟪r⟫ trace_id=⟪trace⟫",
            '{"ts": "⟪ts⟫", "tool": "http_get", "receipt": "⟪r⟫", "key_id": "⟪k⟫"}',
            "tool: read_file\noutcome: success\nreceipt: ⟪r⟫\n",
        )
    )
    text, keep = _fill(rng, tpl, r=receipt, k=key_id)
    return Case("keep_receipt", text, (), (receipt, *([key_id] if key_id in text else []), *keep))


@_kind("keep_token_lookalike_words")
def _keep_token_lookalike_words(rng: random.Random, i: int) -> Case:
    """Words and names that contain a token prefix but are ordinary text."""
    words = (
        "scikit-learn (sk-learn) estimators",
        "risk-assessment-framework-guidelines-v2",
        "task-scheduler-configuration-reference",
        "disk-encryption-at-rest-requirements",
        "HF_HUB_ENABLE_HF_TRANSFER=1",
        "npm_config_registry=https://registry.npmjs.org/",
        "ask-the-expert-knowledge-base-articles",
        "desk_booking_service_migration_plan",
    )
    a, b = words[i % len(words)], words[(i + 3) % len(words)]
    return Case("keep_token_lookalike_words", f"See {a} and {b}.\n", (), (a, b))


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(_GENERATORS)
"""Every kind, detect kinds first, then PII kinds, then `keep_*` kinds."""
KEEP_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k.startswith("keep_"))
"""Kinds whose cases carry only look-alikes."""
PII_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k.startswith("pii_"))
"""Personal-data kinds: their secrets stay when PII redaction is off."""
DETECT_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k not in KEEP_KINDS)
"""Kinds whose cases carry secrets (PII kinds included)."""


def generate(seed: int = 0, per_kind: int = 10) -> list[Case]:
    """The corpus: `per_kind` cases of every kind in `KINDS` order, the same for the same seed.

    Each kind draws from its own `random.Random(f"{seed}:{kind}")`, so adding a kind or
    changing one generator leaves every other kind's cases as they were.
    """
    cases: list[Case] = []
    for kind, make in _GENERATORS.items():
        rng = random.Random(f"{seed}:{kind}")
        cases.extend(make(rng, i) for i in range(per_kind))
    return cases


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, item in v.items():
            if isinstance(k, str):
                yield k
            yield from _strings(item)
    elif isinstance(v, list | tuple):
        for item in v:
            yield from _strings(item)


def _haystack(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\x00".join([json.dumps(output, ensure_ascii=False, default=str), *_strings(output)])


def caught(secret: str, output: Any) -> bool:
    """True when `secret` is gone from `output`: no piece of min(12, len) characters remains.

    Structured outputs are searched as `json.dumps(output, ensure_ascii=False)` and as their
    raw string keys and values, so an escaped and an unescaped leak both count.
    """
    hay = _haystack(output)
    width = min(12, len(secret))
    return not any(secret[k : k + width] in hay for k in range(len(secret) - width + 1))


def kept(lookalike: str, output: Any) -> bool:
    """True when `lookalike` survives verbatim in `output` (searched as in `caught`)."""
    return lookalike in _haystack(output)


# --------------------------------------------------------------------------------------------
# Scoring (one scorer for this corpus and the held-out set, tests and `make bench` alike)
# --------------------------------------------------------------------------------------------

STRICT_PIECE = 16
"""Strict recall counts a secret of this many characters or more as leaked while any piece of
this length is left; shorter secrets are judged whole."""


def gone(secret: str, output: Any) -> bool:
    """True when `secret` no longer appears whole in `output` (searched as in `caught`)."""
    return secret not in _haystack(output)


def strictly_gone(secret: str, output: Any) -> bool:
    """True when `secret` is gone and, if it is long, no `STRICT_PIECE`-character piece is left."""
    hay = _haystack(output)
    if secret in hay:
        return False
    w = STRICT_PIECE
    return len(secret) < w or not any(secret[k : k + w] in hay for k in range(len(secret) - w + 1))


@dataclass
class Score:
    """What one redactor did to a family's cases (or a whole set's): the counts behind the rates."""

    secrets: int = 0
    recalled: int = 0
    """Secrets no longer present whole (`gone`)."""
    strict: int = 0
    """Secrets with no long piece left either (`strictly_gone`)."""
    lookalikes: int = 0
    lost: int = 0
    """Look-alikes that did not survive verbatim."""
    errors: int = 0
    """Cases on which the redactor raised (scored as if it had returned the payload unchanged)."""

    @property
    def recall(self) -> float:
        return self.recalled / self.secrets if self.secrets else 1.0

    @property
    def strict_recall(self) -> float:
        return self.strict / self.secrets if self.secrets else 1.0

    @property
    def lost_share(self) -> float:
        return self.lost / self.lookalikes if self.lookalikes else 0.0

    def __iadd__(self, other: Score) -> Score:
        for name in ("secrets", "recalled", "strict", "lookalikes", "lost", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def score_case(case: Case, output: Any) -> Score:
    """The counts for one case given what the redactor returned for its payload."""
    return Score(
        secrets=len(case.secrets),
        recalled=sum(gone(s, output) for s in case.secrets),
        strict=sum(strictly_gone(s, output) for s in case.secrets),
        lookalikes=len(case.keep),
        lost=sum(not kept(k, output) for k in case.keep),
    )


def score(cases: list[Case], redact: Callable[[Any], Any]) -> dict[str, Score]:
    """Per-kind (per-family) scores of `redact` over `cases`, in first-seen order of kinds.

    `redact` takes a payload (text or JSON-like value) and returns the redacted output. Add the
    values up for the whole set (`total(...)`).
    """
    by_kind: dict[str, Score] = {}
    for case in cases:
        try:
            output = redact(case.payload)
            failed = 0
        except Exception:  # a crash is a finding to count, not a reason to stop
            output, failed = case.payload, 1
        result = score_case(case, output)
        result.errors = failed
        by_kind.setdefault(case.kind, Score()).__iadd__(result)
    return by_kind


def total(scores: dict[str, Score]) -> Score:
    """The sum of per-kind scores."""
    result = Score()
    for part in scores.values():
        result += part
    return result


def mixed_payload(seed: int, size_bytes: int) -> tuple[list[str], list[Case]]:
    """Log records of about `size_bytes` in all, most clean and ~3% carrying a corpus secret.

    Returns the lines and, for every line that carries secrets, a `Case` whose payload is that
    line (structured cases are embedded as their one-line JSON). Lines hold no newline, so a
    benchmark can treat each as one record.
    """
    rng = random.Random(f"mixed:{seed}")
    pool: list[Case] = []
    for case in generate(seed, per_kind=3):
        if case.kind in KEEP_KINDS or case.kind == "long_log":
            continue
        line = (
            case.payload
            if isinstance(case.payload, str)
            else json.dumps(case.payload, ensure_ascii=False)
        )
        if "\n" in line or "\r" in line or len(line) > 4000:
            continue
        if all(not caught(s, line) for s in case.secrets[:1]) and all(k in line for k in case.keep):
            pool.append(replace(case, payload=line))
    lines: list[str] = []
    carried: list[Case] = []
    size = 0
    while size < size_bytes:
        if rng.random() < 0.03:
            case = rng.choice(pool)
            line = f"{_ts(rng)} INFO  tool_result {case.payload}"
            carried.append(replace(case, payload=line))
        else:
            line, _ = _clean_line(rng)
        lines.append(line)
        size += len(line.encode()) + 1
    return lines, carried
