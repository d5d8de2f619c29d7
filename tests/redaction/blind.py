"""The blind evaluation set: the redactor was never tuned against it (issue 15).

The corpus (`corpus/`) and the held-out set (`heldout.py`) were both used to tune the rules, so
neither measures generalisation any more. This set was written without reading the redactor, the
corpus, the held-out set or their family tests: only the scoring API (`corpus.Case`, `score`) was
read. The formats come from public sources (gitleaks' rule tests and their true and false
positives, detect-secrets' test data, trufflehog detectors, real file formats: dotenv, Spring,
.NET, Django, Rails, WordPress, Terraform, Ansible, GitHub Actions, GitLab CI, kubeconfig,
Kubernetes manifests, Helm, compose, .netrc/.pgpass/.npmrc/.pypirc, Maven, NuGet, FileZilla,
curl, raw HTTP, nginx logs, Python/Java/Node stack traces, CI logs, chat transcripts, Jupyter
notebooks, SQL, span attributes). Only their shape was learnt: every value is generated here from
a seeded `random.Random` with the format's alphabet, length, prefix and checksum (GitHub and npm
CRC32, Luhn cards, mod-97 IBANs, base64 DER bodies), and no fixture value is copied.

`generate(seed, per_family)` returns `corpus.Case`s scored by the one scorer
(`corpus.score`: recall, strict recall, look-alikes lost). Families:
- secret families: a carrier or a provider group, each case with its secrets and the
  non-secret neighbours that must survive (hosts, regions, ids, public keys, settings);
- `pii_*` families: the personal data of the redaction contract (docs/scenarios.md, `pii`:
  email, Luhn-checked cards, IBAN, US SSN, phone, IP; DESIGN.md names no PII kind itself), with
  look-alikes that are not personal data (git remotes, package scopes, order numbers, versions);
- `keep_*` families: look-alikes only (ids, hashes, public keys and certificates, publishable
  keys, secret references and templates, words near credential words, timestamps, versions,
  base64 of ordinary data, code identifiers, cloud resource ids, URLs, numbers).

Judgement calls, stated so a reader can discount them:
- A secret is only the secret part: a URL's password, not its user or host; the token of a
  webhook URL, not its host. A username, a tenant id or an account SID is neither a secret nor a
  look-alike (unmarked), so redacting it costs nothing either way.
- Password hashes (shadow, htpasswd, framework hashers) are scored as secrets (offline-crackable
  credential material) in their own family, `password_hashes`, so they can be read apart.
- AWS access key ids are scored as secrets (every scanner treats them so); AWS role ids
  (`AROA...`), account ids and ARNs are look-alikes.
- Private and loopback IP addresses are unmarked; only public client addresses are PII here.
- No look-alike is something the PII contract lets a redactor remove: none contains an
  email-shaped string (so Message-IDs, `user@host` logins and Sentry DSNs, whose userinfo is
  also a key, are unmarked), an IPv4 address, or a Luhn-valid 13-19 digit number with a card
  brand's first digit (`test_blind.py` checks all three).
- Base64 carriers (Kubernetes `data:`, Basic auth, docker `auth`) mark the encoded text as the
  secret, since that is what appears in the payload.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import random
import string
import urllib.parse
import uuid
import zlib
from collections.abc import Callable
from typing import Any

from tests.redaction.corpus import Case
from tests.redaction.formats import base62

__all__ = ["FAMILIES", "KEEP_FAMILIES", "PII_FAMILIES", "generate"]

# --------------------------------------------------------------------------------------------
# Alphabets, random pieces, checksums
# --------------------------------------------------------------------------------------------

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = string.ascii_letters + string.digits
_LOWER_ALNUM = _LOWER + _DIGITS
_UPPER_ALNUM = _UPPER + _DIGITS
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_B64URL = _ALNUM + "-_"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def _raw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _tok(rng: random.Random, alphabet: str, n: int) -> str:
    """`n` characters of `alphabet` with a digit and every letter case the alphabet has, as a
    generated credential has (long enough that a dictionary word inside it is chance)."""
    need = [c for c in (_DIGITS, _LOWER, _UPPER) if any(ch in alphabet for ch in c)]
    while True:
        s = _raw(rng, alphabet, n)
        if n < 8 or all(any(ch in cls for ch in s) for cls in need):
            return s


def _hex(rng: random.Random, n: int) -> str:
    return _tok(rng, _HEX, n)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _rbytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def _crc_token(rng: random.Random, prefix: str, body: int = 30) -> str:
    """A GitHub/npm-style token: prefix, `body` base62 characters, 6 of CRC32 in base62."""
    random_part = _tok(rng, _ALNUM, body)
    return prefix + random_part + base62(zlib.crc32(random_part.encode()), 6)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _sha(rng: random.Random, n: int = 40) -> str:
    return _raw(rng, _HEX, n)


def _epoch(rng: random.Random) -> int:
    return rng.randrange(1_672_531_200, 1_767_225_600)  # 2023-01-01 .. 2026-01-01


def _iso(rng: random.Random, t: int | None = None, *, ms: bool = False, z: bool = True) -> str:
    t = _epoch(rng) if t is None else t
    d = _dt.datetime.fromtimestamp(t, tz=_dt.UTC)
    s = d.strftime("%Y-%m-%dT%H:%M:%S")
    if ms:
        s += f".{rng.randrange(1000):03d}"
    return s + ("Z" if z else "+00:00")


def luhn_digit(body: str) -> str:
    """The Luhn check digit that completes `body`."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    digits = [c for c in number if c.isdigit()]
    return len(digits) > 1 and luhn_digit("".join(digits[:-1])) == digits[-1]


def iban_valid(iban: str) -> bool:
    s = iban.replace(" ", "")
    moved = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


# --------------------------------------------------------------------------------------------
# Vocabulary (names are generic; organisations and domains are made up)
# --------------------------------------------------------------------------------------------

_FIRST = (
    "amelia", "bruno", "chloe", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas",
    "kavya", "liam", "maren", "nadia", "oskar", "priya", "quentin", "rosa", "sven", "tomas",
    "ulla", "victor", "wen", "ximena", "yusuf", "zofia",
)  # fmt: skip
_LAST = (
    "almeida", "brandt", "castillo", "dubois", "eriksen", "fischer", "gallagher", "haddad",
    "ivanova", "jansen", "kowalski", "lindqvist", "moreau", "nakamura", "okafor", "petrov",
    "quinn", "rahman", "schmidt", "tanaka", "umarov", "varga", "weber", "yilmaz", "zhou",
)  # fmt: skip
_ORGS = (
    "northwind", "bluefern", "quarkline", "tidewater", "copperleaf", "halcyon", "brightmoor",
    "ravenstone", "meridiana", "palisade", "lumenworks", "oakridge-labs", "vantablue",
)  # fmt: skip
_TLDS = ("com", "io", "de", "co.uk", "fr", "net", "dev", "nl", "es", "app")
_WORDS = (
    "maple", "orbit", "canyon", "velvet", "harbor", "tulip", "granite", "falcon", "ember",
    "willow", "quartz", "meadow", "cobalt", "saffron", "glacier", "lantern", "thistle", "cinder",
)  # fmt: skip
_SERVICES = ("billing", "ledger", "checkout", "inventory", "notify", "search", "auth", "reports")
_REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-southeast-2", "eu-central-1", "sa-east-1")
_MODELS = ("gpt-4o-mini", "claude-3-5-sonnet-20241022", "llama-3.1-70b", "mistral-large-2407")


def _org(rng: random.Random) -> str:
    return rng.choice(_ORGS)


def _domain(rng: random.Random) -> str:
    return f"{_org(rng)}.{rng.choice(_TLDS)}"


def _host(rng: random.Random) -> str:
    kind = rng.choice(("db", "pg", "mysql", "redis", "mq", "cache", "api", "core"))
    return f"{kind}-{rng.randrange(1, 40)}.{rng.choice(_SERVICES)}.{_org(rng)}.internal"


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(_FIRST), rng.choice(_LAST)


def _user(rng: random.Random) -> str:
    return rng.choice(("svc_", "app_", "deploy", "ci-", "etl_", "")) + rng.choice(_SERVICES)


def _password(rng: random.Random, symbols: str = "!#%^*-_=+.?~") -> str:
    """A password as people and password managers make them (no quote, space or `$`)."""
    style = rng.randrange(4)
    if style == 0:
        return _tok(rng, _ALNUM, rng.randrange(4, 8)) + _tok(rng, _ALNUM + symbols, 10)
    if style == 1:
        w1, w2 = rng.sample(_WORDS, 2)
        sym = rng.choice(symbols) if symbols else ""
        return f"{w1.capitalize()}{sym}{w2.capitalize()}{rng.randrange(10, 9999)}"
    if style == 2:
        sep = rng.choice("-_.") if set("-_.") & set(symbols) else ""
        return sep.join(rng.sample(_WORDS, 3)) + f"{sep}{rng.randrange(10, 99)}"
    return _tok(rng, _ALNUM, rng.randrange(16, 25))


def _url_password(rng: random.Random) -> str:
    return _password(rng, symbols="-_.~")


# --------------------------------------------------------------------------------------------
# Provider token formats (shapes from scanners' rules; values random)
# --------------------------------------------------------------------------------------------


def _github(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 4:
        return "github_pat_" + _tok(rng, _ALNUM, 22) + "_" + _tok(rng, _ALNUM, 59)
    return _crc_token(rng, ("ghp_", "gho_", "ghs_", "ghu_")[kind])


def _gitlab(rng: random.Random) -> str:
    prefix = rng.choice(("glpat-", "glpat-", "glrt-", "gldt-", "glptt-"))
    if prefix == "glptt-":
        return prefix + _hex(rng, 40)
    return prefix + _tok(rng, _ALNUM + "_-", 20)


def _npm(rng: random.Random) -> str:
    return _crc_token(rng, "npm_")


def _pypi(rng: random.Random) -> str:
    return "pypi-AgEIcHlwaS5vcmc" + _tok(rng, _B64URL, rng.randrange(120, 180))


def _openai(rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return "sk-" + _tok(rng, _ALNUM, 20) + "T3BlbkFJ" + _tok(rng, _ALNUM, 20)
    n = rng.choice((58, 74))
    pre = ("sk-proj-", "sk-svcacct-")[kind - 1]
    return pre + _tok(rng, _B64URL, n) + "T3BlbkFJ" + _tok(rng, _B64URL, n)


def _anthropic(rng: random.Random) -> str:
    return "sk-ant-api03-" + _tok(rng, _B64URL, 93) + "AA"


def _google_api_key(rng: random.Random) -> str:
    return "AIza" + _tok(rng, _B64URL, 35)


def _aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + _tok(rng, _UPPER + "234567", 16)


def _aws_secret(rng: random.Random) -> str:
    return _tok(rng, _B64, 40)


def _aws_session_token(rng: random.Random) -> str:
    return "IQoJb3JpZ2luX2Vj" + _tok(rng, _B64, rng.randrange(300, 420)) + "="


def _slack(rng: random.Random) -> str:
    kind = rng.randrange(3)
    d = lambda n: str(rng.randrange(10 ** (n - 1), 10**n))  # noqa: E731
    if kind == 0:
        return f"xoxb-{d(12)}-{d(13)}-{_tok(rng, _ALNUM, 24)}"
    if kind == 1:
        return f"xoxp-{d(12)}-{d(12)}-{d(13)}-{_hex(rng, 32)}"
    return f"xapp-1-A{_tok(rng, _UPPER_ALNUM, 10)}-{d(13)}-{_hex(rng, 64)}"


def _discord_bot(rng: random.Random) -> str:
    user_id = str(rng.randrange(10**17, 10**19)).encode()
    return f"{_b64url(user_id)}.{_tok(rng, _B64URL, 6)}.{_tok(rng, _B64URL, 38)}"


def _telegram(rng: random.Random) -> str:
    return f"{rng.randrange(10**8, 10**10)}:AA{_tok(rng, _B64URL, 33)}"


def _sendgrid(rng: random.Random) -> str:
    return f"SG.{_tok(rng, _B64URL, 22)}.{_tok(rng, _B64URL, 43)}"


def _stripe(rng: random.Random, kind: str = "sk") -> str:
    n = rng.choice((24, 99))
    body = ("51" + _tok(rng, _ALNUM, 97)) if n == 99 else _tok(rng, _ALNUM, 24)
    return f"{kind}_live_{body}"


def _dev_platform(rng: random.Random) -> tuple[str, str]:
    """A token of a developer platform and the environment name it usually lives under."""
    options: list[tuple[str, Callable[[], str]]] = [
        ("NPM_TOKEN", lambda: _npm(rng)),
        ("PYPI_API_TOKEN", lambda: _pypi(rng)),
        ("GEM_HOST_API_KEY", lambda: "rubygems_" + _hex(rng, 48)),
        ("DOCKERHUB_TOKEN", lambda: "dckr_pat_" + _tok(rng, _B64URL, 27)),
        ("VAULT_TOKEN", lambda: "hvs.CAESI" + _tok(rng, _B64URL, 91)),
        ("TF_TOKEN_app_terraform_io",
         lambda: f"{_tok(rng, _LOWER_ALNUM, 14)}.atlasv1.{_tok(rng, _B64URL, 67)}"),
        ("DOPPLER_TOKEN", lambda: "dp.pt." + _tok(rng, _ALNUM, 43)),
        ("PULUMI_ACCESS_TOKEN", lambda: "pul-" + _hex(rng, 40)),
        ("POSTMAN_API_KEY", lambda: f"PMAK-{_hex(rng, 24)}-{_hex(rng, 34)}"),
        ("LINEAR_API_KEY", lambda: "lin_api_" + _tok(rng, _ALNUM, 40)),
        ("NOTION_TOKEN", lambda: f"ntn_{rng.randrange(10**10, 10**11)}{_tok(rng, _ALNUM, 35)}"),
        ("SENTRY_AUTH_TOKEN", lambda: "sntryu_" + _hex(rng, 64)),
        ("GRAFANA_SA_TOKEN", lambda: f"glsa_{_tok(rng, _ALNUM, 32)}_{_hex(rng, 8)}"),
        ("DATABRICKS_TOKEN", lambda: "dapi" + _hex(rng, 32)),
        ("DIGITALOCEAN_TOKEN", lambda: "dop_v1_" + _hex(rng, 64)),
        ("HEROKU_API_KEY", lambda: "HRKU-AA" + _tok(rng, _B64URL, 58)),
        ("FLY_API_TOKEN", lambda: "fo1_" + _tok(rng, _B64URL, 43)),
        ("PLANETSCALE_PASSWORD", lambda: "pscale_pw_" + _tok(rng, _ALNUM + "_", 43)),
        ("AIRTABLE_TOKEN", lambda: f"pat{_tok(rng, _ALNUM, 14)}.{_hex(rng, 64)}"),
        ("ATLASSIAN_API_TOKEN",
         lambda: "ATATT3xFfGF0" + _tok(rng, _B64URL, 171) + "=" + _raw(rng, "0123456789ABCDEF", 8)),
        ("SHOPIFY_ACCESS_TOKEN", lambda: "shpat_" + _hex(rng, 32)),
        ("SONAR_TOKEN", lambda: "squ_" + _hex(rng, 40)),
        ("SOPS_AGE_KEY", lambda: "AGE-SECRET-KEY-1" + _raw(rng, _BECH32, 58)),
        ("NEW_RELIC_API_KEY", lambda: "NRAK-" + _tok(rng, _UPPER_ALNUM, 27)),
    ]  # fmt: skip
    name, make = rng.choice(options)
    return name, make()


def _ai_key(rng: random.Random) -> tuple[str, str]:
    options: list[tuple[str, Callable[[], str]]] = [
        ("OPENAI_API_KEY", lambda: _openai(rng)),
        ("ANTHROPIC_API_KEY", lambda: _anthropic(rng)),
        ("GROQ_API_KEY", lambda: "gsk_" + _tok(rng, _ALNUM, 52)),
        ("HF_TOKEN", lambda: "hf_" + _tok(rng, string.ascii_letters, 34)),
        ("PERPLEXITY_API_KEY", lambda: "pplx-" + _tok(rng, _ALNUM, 48)),
        ("REPLICATE_API_TOKEN", lambda: "r8_" + _tok(rng, _ALNUM, 37)),
        ("GOOGLE_API_KEY", lambda: _google_api_key(rng)),
        ("XAI_API_KEY", lambda: "xai-" + _tok(rng, _ALNUM, 80)),
    ]
    name, make = rng.choice(options)
    return name, make()


# --------------------------------------------------------------------------------------------
# Keys, certificates, JWTs
# --------------------------------------------------------------------------------------------

_DER_PREFIX = {
    "RSA PRIVATE KEY": bytes.fromhex("308204a40201000282010100"),
    "PRIVATE KEY": bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8"),
    "EC PRIVATE KEY": bytes.fromhex("30770201010420"),
    "ENCRYPTED PRIVATE KEY": bytes.fromhex("308205263050"),
    "CERTIFICATE": bytes.fromhex("3082036f30820257a003020102"),
    "PUBLIC KEY": bytes.fromhex(
        "30820122300d06092a864886f70d01010105000382010f003082010a0282010100"
    ),
}
_DER_SIZE = {
    "RSA PRIVATE KEY": 1190, "PRIVATE KEY": 1218, "EC PRIVATE KEY": 121,
    "ENCRYPTED PRIVATE KEY": 1322, "CERTIFICATE": 883, "PUBLIC KEY": 294,
}  # fmt: skip


def _wrap(s: str, width: int) -> list[str]:
    return [s[i : i + width] for i in range(0, len(s), width)]


def _pem_body(rng: random.Random, label: str) -> list[str]:
    prefix = _DER_PREFIX[label]
    return _wrap(_b64(prefix + _rbytes(rng, _DER_SIZE[label] - len(prefix))), 64)


def _pem(rng: random.Random, label: str, nl: str = "\n") -> tuple[str, str]:
    """A PEM block and its body (the base64 lines joined by `nl`, as they appear)."""
    body = nl.join(_pem_body(rng, label))
    return f"-----BEGIN {label}-----{nl}{body}{nl}-----END {label}-----", body


def _openssh_private(rng: random.Random) -> tuple[str, str]:
    blob = b"openssh-key-v1\x00" + _rbytes(rng, 380)
    body = "\n".join(_wrap(_b64(blob), 70))
    return (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----",
        body,
    )


def _ssh_string(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big") + b


def _ssh_public(rng: random.Random, comment: str = "") -> str:
    kind = rng.randrange(3)
    if kind == 0:
        blob = _ssh_string(b"ssh-ed25519") + _ssh_string(_rbytes(rng, 32))
        name = "ssh-ed25519"
    elif kind == 1:
        blob = (
            _ssh_string(b"ssh-rsa")
            + _ssh_string(b"\x01\x00\x01")
            + _ssh_string(b"\x00" + _rbytes(rng, 256))
        )
        name = "ssh-rsa"
    else:
        blob = (
            _ssh_string(b"ecdsa-sha2-nistp256")
            + _ssh_string(b"nistp256")
            + _ssh_string(b"\x04" + _rbytes(rng, 64))
        )
        name = "ecdsa-sha2-nistp256"
    return f"{name} {_b64(blob)}" + (f" {comment}" if comment else "")


def _jwt(rng: random.Random, *, rs256: bool = False, claims: dict[str, Any] | None = None) -> str:
    header: dict[str, Any] = {"alg": "RS256" if rs256 else "HS256", "typ": "JWT"}
    if rs256:
        header["kid"] = _tok(rng, _B64URL, 20)
    t = _epoch(rng)
    body: dict[str, Any] = {
        "sub": rng.choice((_uuid(rng), str(rng.randrange(10**6, 10**9)))),
        "iss": f"https://auth.{_domain(rng)}/",
        "aud": rng.choice(("api", "orders-api", "https://api.internal")),
        "iat": t,
        "exp": t + rng.choice((900, 3600, 86400)),
        "scope": rng.choice(("read:orders write:orders", "openid profile email", "admin")),
        "jti": _tok(rng, _ALNUM, 16),
    }
    body.update(claims or {})
    sig = _b64url(_rbytes(rng, 256 if rs256 else 32))
    head = _b64url(json.dumps(header, separators=(",", ":")).encode())
    return f"{head}.{_b64url(json.dumps(body, separators=(',', ':')).encode())}.{sig}"


# --------------------------------------------------------------------------------------------
# Personal data
# --------------------------------------------------------------------------------------------

_CARD_BRANDS: tuple[tuple[str, int], ...] = (
    ("4", 16), ("51", 16), ("53", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
    ("6011", 16), ("65", 16), ("3530", 16), ("36", 14), ("62", 16), ("4", 19),
)  # fmt: skip


def _card(rng: random.Random) -> str:
    """A Luhn-valid card number of a real brand's prefix and length, in one of the ways people
    write it (contiguous, grouped by spaces or dashes; Amex 4-6-5)."""
    prefix, length = rng.choice(_CARD_BRANDS)
    body = prefix + _raw(rng, _DIGITS, length - len(prefix) - 1)
    number = body + luhn_digit(body)
    style = rng.randrange(3)
    if style == 0:
        return number
    sep = " " if style == 1 else "-"
    if length == 15:
        return sep.join((number[:4], number[4:10], number[10:]))
    return sep.join(_wrap(number, 4))


def _not_luhn(rng: random.Random, length: int) -> str:
    while True:
        s = rng.choice("123456789") + _raw(rng, _DIGITS, length - 1)
        if not luhn_valid(s):
            return s


_IBAN_SHAPES = {
    "DE": "n18", "GB": "a4n14", "FR": "n10c11n2", "NL": "a4n10", "ES": "n20", "IT": "a1n10c12",
    "CH": "n5c12", "PL": "n24", "BE": "n12", "AT": "n16", "IE": "a4n14", "PT": "n21",
}  # fmt: skip


def _iban(rng: random.Random, country: str | None = None, grouped: bool | None = None) -> str:
    country = country or rng.choice(tuple(_IBAN_SHAPES))
    shape, bban, i = _IBAN_SHAPES[country], "", 0
    while i < len(shape):
        kind = shape[i]
        j = i + 1
        while j < len(shape) and shape[j].isdigit():
            j += 1
        n = int(shape[i + 1 : j])
        alphabet = {"n": _DIGITS, "a": _UPPER, "c": _UPPER_ALNUM}[kind]
        bban += _raw(rng, alphabet, n)
        i = j
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    iban = f"{country}{check:02d}{bban}"
    grouped = rng.random() < 0.5 if grouped is None else grouped
    return " ".join(_wrap(iban, 4)) if grouped else iban


def _ssn(rng: random.Random) -> str:
    while True:
        area = rng.randrange(1, 900)
        if area != 666:
            break
    return f"{area:03d}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"


def _phone(rng: random.Random) -> str:
    """A phone number in one of several national and international written forms."""
    d = lambda n: _raw(rng, _DIGITS, n)  # noqa: E731
    nanp = lambda: rng.choice("23456789") + d(2)  # noqa: E731
    forms = [
        lambda: f"+1 {nanp()}-{rng.choice('23456789')}{d(2)}-{d(4)}",
        lambda: f"({nanp()}) {rng.choice('23456789')}{d(2)}-{d(4)}",
        lambda: f"{nanp()}.{rng.choice('23456789')}{d(2)}.{d(4)}",
        lambda: f"+44 20 {rng.choice('378')}{d(3)} {d(4)}",
        lambda: f"07{rng.choice('3456789')}{d(2)} {d(6)}",
        lambda: f"+49 30 {d(8)}",
        lambda: f"+49 (0)151 {d(8)}",
        lambda: f"+33 6 {d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"06 {d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"+91 {rng.choice('6789')}{d(4)} {d(5)}",
        lambda: f"+81 3-{d(4)}-{d(4)}",
        lambda: f"+55 11 9{d(4)}-{d(4)}",
        lambda: f"+61 4{d(2)} {d(3)} {d(3)}",
        lambda: f"+34 6{d(2)} {d(3)} {d(3)}",
        lambda: f"+31 6 {d(8)}",
        lambda: f"+1{nanp()}{rng.choice('23456789')}{d(6)}",
    ]
    return rng.choice(forms)()


def _email(rng: random.Random) -> str:
    first, last = _person(rng)
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first[0]}{last}",
            f"{first}_{last}{rng.randrange(10, 99)}",
            f"{first}+{rng.choice(('billing', 'news', 'jira'))}",
            f"{last}.{first}",
        )
    )
    domain = rng.choice((_domain(rng), "gmail.com", "outlook.com", "proton.me", "yahoo.co.uk"))
    return f"{local}@{domain}"


def _public_ipv4(rng: random.Random) -> str:
    while True:
        a = rng.randrange(1, 224)
        b = rng.randrange(256)
        if a in (10, 127, 0) or (a == 172 and 16 <= b < 32) or (a == 192 and b == 168):
            continue
        if (a == 100 and 64 <= b < 128) or (a == 169 and b == 254) or a in (192, 198, 203):
            continue
        return f"{a}.{b}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _public_ipv6(rng: random.Random) -> str:
    head = rng.choice(("2a01", "2a02", "2a03", "2600", "2607", "2806", "2c0f", "2401"))
    groups = [head] + [f"{rng.randrange(1, 0x10000):x}" for _ in range(7)]
    if rng.random() < 0.5:
        return ":".join(groups[:4]) + "::" + ":".join(groups[6:])
    return ":".join(groups)


# --------------------------------------------------------------------------------------------
# The family registry
# --------------------------------------------------------------------------------------------


class _Draft:
    """A case being written: marks each secret and look-alike as it goes into the payload."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.secrets: list[str] = []
        self.keep: list[str] = []

    def s(self, value: str) -> str:
        """Mark `value` as a secret (it must be gone) and return it for the payload."""
        self.secrets.append(value)
        return value

    def k(self, value: str) -> str:
        """Mark `value` as a look-alike (it must survive verbatim) and return it."""
        self.keep.append(value)
        return value


_Variant = Callable[[_Draft], Any]
_REGISTRY: dict[str, tuple[tuple[_Variant, ...], bool]] = {}


def _family(name: str, *variants: _Variant, pii: bool = False) -> None:
    """Register a family; case `i` of it is written by variant `i % len(variants)`, so every
    variant is used once `per_family` reaches their number."""
    _REGISTRY[name] = (variants, pii)


# --------------------------------------------------------------------------------------------
# Secret families: provider formats in their usual carriers
# --------------------------------------------------------------------------------------------


def _repo(rng: random.Random) -> str:
    return f"{_org(rng)}/{rng.choice(_SERVICES)}-{rng.choice(('api', 'web', 'worker', 'infra'))}"


def _gh_remote(d: _Draft) -> str:
    r = d.rng
    repo = d.k(_repo(r) + ".git")
    user = r.choice(("x-access-token", "oauth2", "git", r.choice(_FIRST)))
    tok = d.s(_github(r) if user != "oauth2" else _gitlab(r))
    host = "github.com" if user != "oauth2" else "gitlab.com"
    return (
        f"$ git remote -v\norigin\thttps://{user}:{tok}@{host}/{repo} (fetch)\n"
        f"origin\thttps://{user}:{tok}@{host}/{repo} (push)\n"
    )


def _gh_export(d: _Draft) -> str:
    r = d.rng
    sha = d.k(_sha(r))
    return (
        f"export GH_TOKEN={d.s(_github(r))}\n"
        f"gh api repos/{_repo(r)}/commits/{sha}/status --jq .state\n"
    )


def _gh_json(d: _Draft) -> str:
    r = d.rng
    cfg = {
        "github": {
            "owner": _org(r),
            "token": d.s(_github(r)),
            "base_sha": d.k(_sha(r)),
            "app_id": r.randrange(100000, 999999),
        },
        "labels": ["release", "automerge"],
    }
    return json.dumps(cfg, indent=2)


def _gh_log(d: _Draft) -> str:
    r = d.rng
    ts = d.k(_iso(r, ms=True))
    return (
        f"{ts} INFO  github.auth installation token minted installation_id="
        f"{r.randrange(10**7, 10**8)} token={d.s(_github(r))} expires_in=3600\n"
    )


def _gitlab_runner(d: _Draft) -> str:
    r = d.rng
    image = d.k(
        f"{r.choice(('ruby', 'python', 'node'))}:{r.randrange(3, 22)}.{r.randrange(10)}-alpine"
    )
    return (
        "concurrent = 4\n\n[[runners]]\n"
        f'  name = "{r.choice(_SERVICES)}-runner-{r.randrange(1, 9)}"\n'
        '  url = "https://gitlab.com/"\n'
        f'  token = "{d.s("glrt-" + _tok(r, _B64URL, 20))}"\n'
        '  executor = "docker"\n  [runners.docker]\n'
        f'    image = "{image}"\n    privileged = false\n'
    )


def _gh_python(d: _Draft) -> str:
    r = d.rng
    return (
        "from github import Auth, Github\n\n"
        f'gh = Github(auth=Auth.Token("{d.s(_github(r))}"))\n'
        f'repo = gh.get_repo("{_repo(r)}")\n'
        f'commit = repo.get_commit("{d.k(_sha(r))}")\n'
    )


_family(
    "github_gitlab_tokens", _gh_remote, _gh_export, _gh_json, _gh_log, _gitlab_runner, _gh_python
)


def _devp_env(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    name2, tok2 = _dev_platform(r)
    return (
        f"{name}={d.s(tok)}\n{d.k('NODE_ENV=production')}\n{name2}={d.s(tok2)}\n"
        f"{d.k(f'BUILD_NUMBER={r.randrange(1000, 99999)}')}\n"
    )


def _devp_yaml(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    return (
        "deploy:\n  provider: script\n"
        f"  region: {d.k(r.choice(_REGIONS))}\n"
        f"  {name.lower()}: {d.s(tok)}\n"
        f"  artifact_digest: {d.k('sha256:' + _sha(r, 64))}\n"
    )


def _devp_log(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    rid = d.k(_uuid(r))
    return (
        f"[{_iso(r)}] DEBUG http.client request_id={rid} sending header "
        f"'Authorization: Bearer {d.s(tok)}' (from {name})\n"
    )


def _devp_cli(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    return (
        f"$ {name}='{d.s(tok)}' ./scripts/release.sh --tag "
        f"{d.k(f'v{r.randrange(1, 9)}.{r.randrange(30)}.{r.randrange(30)}')}\n"
        "release: uploading 3 artifacts... done\n"
    )


def _devp_code(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    var = name.lower()
    return (
        f"// {r.choice(('TODO: move to vault', 'temporary', 'for local testing'))}\n"
        f'const {var} = "{d.s(tok)}";\n'
        f"const client = new Client({{ token: {var}, timeoutMs: 30000 }});\n"
        f'const traceId = "{d.k(_hex(r, 32))}";\n'
    )


_family("dev_platform_tokens", _devp_env, _devp_yaml, _devp_log, _devp_cli, _devp_code)


def _ai_env(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    return (
        f"{name}={d.s(key)}\n{d.k('LLM_MAX_TOKENS=4096')}\n"
        f"{d.k('LLM_MODEL=' + r.choice(_MODELS))}\n{d.k('LLM_TEMPERATURE=0.2')}\n"
    )


def _ai_code(d: _Draft) -> str:
    r = d.rng
    _, key = _ai_key(r)
    cls = r.choice(("OpenAI", "Anthropic", "Groq", "InferenceClient"))
    return (
        f'client = {cls}(\n    api_key="{d.s(key)}",\n    timeout=60,\n)\n'
        f'resp = client.chat.completions.create(model="{d.k(r.choice(_MODELS))}", '
        "max_tokens=512, messages=msgs)\n"
    )


def _ai_curl(d: _Draft) -> str:
    r = d.rng
    _, key = _ai_key(r)
    header = r.choice(("Authorization: Bearer ", "x-api-key: ", "x-goog-api-key: "))
    return (
        "curl https://api.example-llm.com/v1/messages \\\n"
        f'  -H "{header}{d.s(key)}" \\\n'
        '  -H "content-type: application/json" \\\n'
        f'  -d \'{{"model": "{d.k(r.choice(_MODELS))}", "max_tokens": 1024}}\'\n'
    )


def _ai_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    name, key = _ai_key(r)
    return {
        "providers": [
            {
                "name": name.split("_")[0].lower(),
                "apiKey": d.s(key),
                "model": d.k(r.choice(_MODELS)),
            },
        ],
        "request_id": d.k("req_" + _tok(r, _ALNUM, 24)),
    }


def _ai_error(d: _Draft) -> str:
    r = d.rng
    _, key = _ai_key(r)
    return (
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        f"provided: {d.s(key)}. You can find your API key at https://platform.example.com/"
        f"account/api-keys.', 'type': 'invalid_request_error', 'code': 'invalid_api_key'}}}}\n"
        f"request id: {d.k('req_' + _hex(r, 32))}\n"
    )


_family("ai_provider_keys", _ai_env, _ai_code, _ai_curl, _ai_json, _ai_error)


def _msg_slack(d: _Draft) -> str:
    r = d.rng
    channel = d.k("C0" + _tok(r, _UPPER_ALNUM, 9))
    return (
        f"SLACK_BOT_TOKEN={d.s(_slack(r))}\nSLACK_SIGNING_SECRET={d.s(_hex(r, 32))}\n"
        f"SLACK_ALERT_CHANNEL={channel}\n"
    )


def _msg_discord(d: _Draft) -> str:
    r = d.rng
    gid = d.k(str(r.randrange(10**17, 10**18)))
    return (
        "import discord\n\nclient = discord.Client(intents=discord.Intents.default())\n"
        f"GUILD_ID = {gid}\nclient.run('{d.s(_discord_bot(r))}')\n"
    )


def _msg_telegram(d: _Draft) -> str:
    r = d.rng
    tok = d.s(_telegram(r))
    chat = d.k(f"-100{r.randrange(10**9, 10**10)}")
    return (
        f"curl -s 'https://api.telegram.org/bot{tok}/sendMessage' "
        f"-d chat_id={chat} -d text='deploy finished'\n"
    )


def _msg_twilio(d: _Draft) -> str:
    r = d.rng
    sid = "AC" + _hex(r, 32)
    return (
        "twilio:\n"
        f"  account_sid: {sid}\n"
        f"  auth_token: {d.s(_hex(r, 32))}\n"
        f"  api_key: {d.s('SK' + _hex(r, 32))}\n"
        f"  api_secret: {d.s(_tok(r, _ALNUM, 32))}\n"
        f"  from_number_sid: {d.k('PN' + _hex(r, 32))}\n"
    )


def _msg_sendgrid(d: _Draft) -> str:
    r = d.rng
    return (
        "EMAIL_BACKEND=sendgrid_backend.SendgridBackend\n"
        f"SENDGRID_API_KEY={d.s(_sendgrid(r))}\n"
        f"MAILGUN_API_KEY={d.s('key-' + _hex(r, 32))}\n"
        f"MAILCHIMP_KEY={d.s(_hex(r, 32) + '-us' + str(r.randrange(1, 21)))}\n"
        f"{d.k('DEFAULT_FROM_EMAIL_NAME=Notifications')}\n"
    )


_family("messaging_tokens", _msg_slack, _msg_discord, _msg_telegram, _msg_twilio, _msg_sendgrid)


def _pay_stripe_env(d: _Draft) -> str:
    r = d.rng
    pk = d.k("pk_live_" + _tok(r, _ALNUM, r.choice((24, 99))))
    return (
        f"STRIPE_SECRET_KEY={d.s(_stripe(r))}\n"
        f"STRIPE_WEBHOOK_SECRET={d.s('whsec_' + _tok(r, _ALNUM, 32))}\n"
        f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY={pk}\n"
    )


def _pay_stripe_code(d: _Draft) -> str:
    r = d.rng
    return (
        "import stripe\n\n"
        f'stripe.api_key = "{d.s(_stripe(r, r.choice(("sk", "rk"))))}"\n'
        f'intent = stripe.PaymentIntent.retrieve("{d.k("pi_" + _tok(r, _ALNUM, 24))}")\n'
        f'customer = "{d.k("cus_" + _tok(r, _ALNUM, 14))}"\n'
    )


def _pay_square(d: _Draft) -> str:
    r = d.rng
    return (
        "square:\n  environment: production\n"
        f"  access_token: {d.s('EAAA' + _tok(r, _B64URL, 60))}\n"
        f"  application_id: {d.k('sq0idp-' + _tok(r, _B64URL, 22))}\n"
        f"  application_secret: {d.s('sq0csp-' + _tok(r, _B64URL, 43))}\n"
        f"  location_id: {d.k('L' + _tok(r, _UPPER_ALNUM, 12))}\n"
    )


def _pay_braintree(d: _Draft) -> str:
    r = d.rng
    tok = f"access_token$production${_tok(r, _LOWER_ALNUM, 16)}${_hex(r, 32)}"
    return (
        "BraintreeGateway gateway = new BraintreeGateway(\n"
        f'    "{d.s(tok)}");\n'
        f'String merchantAccount = "{d.k(_org(r) + "_" + r.choice(("EUR", "USD", "GBP")))}";\n'
    )


def _pay_shopify(d: _Draft) -> str:
    r = d.rng
    shop = d.k(f"{_org(r)}-store.myshopify.com")
    return (
        f"SHOPIFY_SHOP={shop}\nSHOPIFY_ADMIN_TOKEN={d.s('shpat_' + _hex(r, 32))}\n"
        f"SHOPIFY_API_SECRET={d.s('shpss_' + _hex(r, 32))}\n"
        f"{d.k('SHOPIFY_API_VERSION=2024-07')}\n"
    )


_family(
    "payment_keys", _pay_stripe_env, _pay_stripe_code, _pay_square, _pay_braintree, _pay_shopify
)


# --------------------------------------------------------------------------------------------
# Secret families: cloud credentials
# --------------------------------------------------------------------------------------------


def _account(rng: random.Random) -> str:
    return str(rng.randrange(10**11, 10**12))


def _aws_credentials_file(d: _Draft) -> str:
    r = d.rng
    prof = d.k(f"{r.choice(_SERVICES)}-{r.choice(('prod', 'staging', 'dev'))}")
    return (
        "[default]\n"
        f"aws_access_key_id = {d.s(_aws_key_id(r))}\n"
        f"aws_secret_access_key = {d.s(_aws_secret(r))}\n\n"
        f"[profile {prof}]\n"
        f"role_arn = {d.k(f'arn:aws:iam::{_account(r)}:role/{r.choice(_SERVICES)}-deployer')}\n"
        "source_profile = default\n"
        f"region = {d.k(r.choice(_REGIONS))}\n"
        "output = json\n"
    )


def _aws_session_file(d: _Draft) -> str:
    r = d.rng
    return (
        f"[{d.k('sso-' + r.choice(_SERVICES) + '-admin')}]\n"
        f"aws_access_key_id={d.s(_aws_key_id(r, 'ASIA'))}\n"
        f"aws_secret_access_key={d.s(_aws_secret(r))}\n"
        f"aws_session_token={d.s(_aws_session_token(r))}\n"
        f"x_security_token_expires={d.k(_iso(r, z=False))}\n"
    )


def _aws_env_dump(d: _Draft) -> str:
    r = d.rng
    return (
        f"AWS_DEFAULT_REGION={r.choice(_REGIONS)}\n"
        f"AWS_ACCESS_KEY_ID={d.s(_aws_key_id(r))}\n"
        f"AWS_SECRET_ACCESS_KEY={d.s(_aws_secret(r))}\n"
        f"{d.k('AWS_SDK_LOAD_CONFIG=1')}\n"
        f"{d.k('AWS_S3_BUCKET=' + _org(r) + '-artifacts-' + r.choice(_REGIONS))}\n"
    )


def _aws_s3cfg(d: _Draft) -> str:
    r = d.rng
    return (
        "[default]\n"
        f"access_key = {d.s(_aws_key_id(r))}\n"
        f"secret_key = {d.s(_aws_secret(r))}\n"
        f"{d.k('host_base = s3.amazonaws.com')}\n"
        f"{d.k('host_bucket = %(bucket)s.s3.amazonaws.com')}\n"
        "use_https = True\n"
    )


def _aws_boto_code(d: _Draft) -> str:
    r = d.rng
    return (
        "session = boto3.Session(\n"
        f"    aws_access_key_id='{d.s(_aws_key_id(r))}',\n"
        f"    aws_secret_access_key='{d.s(_aws_secret(r))}',\n"
        f"    region_name='{d.k(r.choice(_REGIONS))}',\n)\n"
        f"kms_key = '{d.k(f'arn:aws:kms:{r.choice(_REGIONS)}:{_account(r)}:key/{_uuid(r)}')}'\n"
    )


_family(
    "aws_credentials",
    _aws_credentials_file,
    _aws_session_file,
    _aws_env_dump,
    _aws_s3cfg,
    _aws_boto_code,
)


def _sts_payload(d: _Draft) -> dict[str, Any]:
    r = d.rng
    session = f"{r.choice(_FIRST)}-{r.randrange(10**9, 10**10)}"
    role = f"{r.choice(_SERVICES)}-readonly"
    acct = _account(r)
    return {
        "Credentials": {
            "AccessKeyId": d.s(_aws_key_id(r, "ASIA")),
            "SecretAccessKey": d.s(_aws_secret(r)),
            "SessionToken": d.s(_aws_session_token(r)),
            "Expiration": d.k(_iso(r, z=False)),
        },
        "AssumedRoleUser": {
            "AssumedRoleId": d.k(f"AROA{_tok(r, _UPPER + '234567', 17)}:{session}"),
            "Arn": d.k(f"arn:aws:sts::{acct}:assumed-role/{role}/{session}"),
        },
        "PackedPolicySize": 6,
    }


def _sts_json_text(d: _Draft) -> str:
    return "$ aws sts assume-role --role-arn ... --role-session-name ci\n" + json.dumps(
        _sts_payload(d), indent=4
    )


def _sts_value(d: _Draft) -> dict[str, Any]:
    return {"tool": "aws_cli", "exit_code": 0, "stdout": _sts_payload(d)}


def _sts_export(d: _Draft) -> str:
    r = d.rng
    return (
        "# eval $(aws configure export-credentials --format env)\n"
        f"export AWS_ACCESS_KEY_ID={d.s(_aws_key_id(r, 'ASIA'))}\n"
        f"export AWS_SECRET_ACCESS_KEY={d.s(_aws_secret(r))}\n"
        f"export AWS_SESSION_TOKEN={d.s(_aws_session_token(r))}\n"
        f"export AWS_CREDENTIAL_EXPIRATION={d.k(_iso(r, z=False))}\n"
    )


_family("aws_sts_responses", _sts_json_text, _sts_value, _sts_export)


def _pem_marks(d: _Draft, lines: list[str]) -> None:
    """Mark the first, a middle and the last full body line of a key as its secrets: three
    pieces stand for the whole body without letting one key outweigh a family."""
    full = [line for line in lines if len(line) == len(lines[0])]
    for line in dict.fromkeys((full[0], full[len(full) // 2], full[-1])):
        d.s(line)


def _gcp_sa(d: _Draft) -> dict[str, Any]:
    r = d.rng
    project = d.k(f"{_org(r)}-{r.choice(('prod', 'data', 'ml'))}-{r.randrange(100000, 999999)}")
    lines = _pem_body(r, "PRIVATE KEY")
    _pem_marks(d, lines)
    key = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"
    return {
        "type": "service_account",
        "project_id": project,
        "private_key_id": d.s(_hex(r, 40)),
        "private_key": key,
        "client_email": f"{r.choice(_SERVICES)}-sa@{project}.iam.gserviceaccount.com",
        "client_id": d.k(str(r.randrange(10**20, 10**21))),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": d.k("https://oauth2.googleapis.com/token"),
        "universe_domain": "googleapis.com",
    }


def _gcp_sa_text(d: _Draft) -> str:
    return json.dumps(_gcp_sa(d), indent=2) + "\n"


def _gcp_sa_value(d: _Draft) -> dict[str, Any]:
    return {"file": "key.json", "content": _gcp_sa(d)}


def _gcp_sa_b64(d: _Draft) -> str:
    r = d.rng
    blob = _b64(json.dumps(_gcp_sa(_Draft(r))).encode())
    return (
        f"GOOGLE_CREDENTIALS_BASE64={d.s(blob)}\n"
        f"{d.k('GOOGLE_CLOUD_PROJECT=' + _org(r) + '-analytics')}\n"
    )


def _gcp_oauth_client(d: _Draft) -> str:
    r = d.rng
    cid = d.k(
        f"{r.randrange(10**11, 10**12)}-{_tok(r, _LOWER_ALNUM, 32)}.apps.googleusercontent.com"
    )
    return json.dumps(
        {
            "web": {
                "client_id": cid,
                "project_id": d.k(f"{_org(r)}-web-{r.randrange(1000, 9999)}"),
                "client_secret": d.s("GOCSPX-" + _tok(r, _B64URL, 28)),
                "redirect_uris": ["https://app.example.com/oauth2/callback"],
            }
        },
        indent=2,
    )


_family("gcp_service_accounts", _gcp_sa_text, _gcp_sa_value, _gcp_sa_b64, _gcp_oauth_client)


def _azure_storage(d: _Draft) -> str:
    r = d.rng
    acct = d.k(f"{_org(r).replace('-', '')}{r.randrange(100, 999)}sa")
    key = d.s(_b64(_rbytes(r, 64)))
    return (
        f'"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName={acct};'
        f'AccountKey={key};EndpointSuffix=core.windows.net",\n'
    )


def _azure_sas(d: _Draft) -> str:
    r = d.rng
    sig = _b64(_rbytes(r, 32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    acct = f"{_org(r).replace('-', '')}store"
    return (
        f"GET https://{acct}.blob.core.windows.net/{d.k('exports-' + str(r.randrange(2023, 2026)))}"
        f"/report.csv?sv={d.k('2022-11-02')}&ss=b&srt=co&sp=rl&se={_iso(r)}&spr=https"
        f"&sig={d.s(sig)}\n"
    )


def _azure_sp(d: _Draft) -> str:
    r = d.rng
    secret = _tok(r, _ALNUM + "_~.", 3) + str(r.randrange(10)) + "Q~" + _tok(r, _ALNUM + "_~.-", 34)
    return (
        f"AZURE_TENANT_ID={_uuid(r)}\n"
        f"AZURE_CLIENT_ID={_uuid(r)}\n"
        f"AZURE_CLIENT_SECRET={d.s(secret)}\n"
        f"AZURE_SUBSCRIPTION_ID={_uuid(r)}\n"
        f"{d.k('AZURE_AUTHORITY_HOST=https://login.microsoftonline.com/')}\n"
    )


def _azure_servicebus(d: _Draft) -> str:
    r = d.rng
    ns = d.k(f"{_org(r)}-events-{r.choice(('prod', 'dev'))}")
    return (
        f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName="
        f"RootManageSharedAccessKey;SharedAccessKey={d.s(_b64(_rbytes(r, 32)))};"
        f"EntityPath={d.k('orders-' + r.choice(('created', 'paid', 'shipped')))}\n"
    )


def _azure_cosmos(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "CosmosDb": {
            "AccountEndpoint": d.k(f"https://{_org(r)}-cosmos.documents.azure.com:443/"),
            "AccountKey": d.s(_b64(_rbytes(r, 64))),
            "DatabaseName": d.k(f"{r.choice(_SERVICES)}db"),
        }
    }


_family(
    "azure_credentials", _azure_storage, _azure_sas, _azure_sp, _azure_servicebus, _azure_cosmos
)


# --------------------------------------------------------------------------------------------
# Secret families: tokens in URLs, headers and auth flows; keys
# --------------------------------------------------------------------------------------------


def _hook_slack(d: _Draft) -> str:
    r = d.rng
    team, bot = "T" + _tok(r, _UPPER_ALNUM, 10), "B" + _tok(r, _UPPER_ALNUM, 10)
    return (
        "alertmanager.yml:\n  receivers:\n    - name: oncall\n      slack_configs:\n"
        f"        - api_url: https://hooks.slack.com/services/{team}/{bot}/"
        f"{d.s(_tok(r, _ALNUM, 24))}\n"
        f"          channel: '{d.k('#alerts-' + r.choice(_SERVICES))}'\n"
    )


def _hook_discord(d: _Draft) -> str:
    r = d.rng
    wid = r.randrange(10**17, 10**19)
    return (
        f'{{"webhook": "https://discord.com/api/webhooks/{wid}/{d.s(_tok(r, _B64URL, 68))}", '
        f'"username": "{d.k(r.choice(_SERVICES) + "-bot")}"}}\n'
    )


def _hook_teams(d: _Draft) -> str:
    r = d.rng
    tenant = _uuid(r)
    return (
        f"TEAMS_WEBHOOK_URL=https://{_org(r)}.webhook.office.com/webhookb2/{_uuid(r)}@{tenant}"
        f"/IncomingWebhook/{d.s(_hex(r, 32))}/{_uuid(r)}\n"
    )


def _hook_s3_presigned(d: _Draft) -> str:
    r = d.rng
    bucket = d.k(f"{_org(r)}-exports")
    date = f"{r.randrange(2023, 2026)}{r.randrange(1, 13):02d}{r.randrange(1, 28):02d}"
    region = r.choice(_REGIONS)
    return (
        f"Download: https://{bucket}.s3.{region}.amazonaws.com/reports/q3.pdf?"
        f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={d.s(_aws_key_id(r, 'ASIA'))}%2F{date}"
        f"%2F{region}%2Fs3%2Faws4_request&{d.k(f'X-Amz-Date={date}T{r.randrange(10, 23)}0000Z')}"
        f"&X-Amz-Expires=3600&X-Amz-Security-Token="
        f"{d.s(_aws_session_token(r).replace('+', '%2B').replace('/', '%2F').replace('=', '%3D'))}"
        f"&X-Amz-SignedHeaders=host&X-Amz-Signature={d.s(_hex(r, 64))}\n"
    )


def _hook_gcs_signed(d: _Draft) -> str:
    r = d.rng
    sig = _hex(r, 512)
    obj = d.k(f"uploads/{_uuid(r)}.png")
    return (
        f"PUT https://storage.googleapis.com/{_org(r)}-media/{obj}?X-Goog-Algorithm="
        f"GOOG4-RSA-SHA256&X-Goog-Credential=uploader%40proj.iam.gserviceaccount.com%2F20240101"
        f"%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900"
        f"&X-Goog-SignedHeaders=host&X-Goog-Signature={d.s(sig)}\n"
    )


def _hook_generic(d: _Draft) -> str:
    r = d.rng
    key = r.choice(("token", "api_key", "apikey", "access_token", "key", "auth"))
    return (
        f"POST https://hooks.{_domain(r)}/v1/ingest?source={d.k(r.choice(_SERVICES) + '-svc')}"
        f"&{key}={d.s(_tok(r, _ALNUM, r.randrange(32, 48)))}&format=json\n"
    )


_family(
    "webhook_and_signed_urls",
    _hook_slack,
    _hook_discord,
    _hook_teams,
    _hook_s3_presigned,
    _hook_gcs_signed,
    _hook_generic,
)


def _jwt_header(d: _Draft) -> str:
    r = d.rng
    return (
        "GET /api/v2/orders?page=2 HTTP/1.1\nHost: api.internal\n"
        f"Authorization: Bearer {d.s(_jwt(r, rs256=r.random() < 0.5))}\n"
        f"X-Request-ID: {d.k(_uuid(r))}\n"
    )


def _jwt_cookie(d: _Draft) -> str:
    r = d.rng
    return (
        f"Set-Cookie: access_token={d.s(_jwt(r))}; Path=/; HttpOnly; Secure; SameSite=Lax\n"
        f"Set-Cookie: {d.k('theme=dark; Path=/; Max-Age=31536000')}\n"
    )


def _jwt_token_response(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "access_token": d.s(_jwt(r, rs256=True)),
        "id_token": d.s(_jwt(r, rs256=True, claims={"email_verified": True})),
        "refresh_token": d.s(_tok(r, _B64URL, 54)),
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": d.k("openid profile offline_access"),
    }


def _jwt_local_storage(d: _Draft) -> str:
    r = d.rng
    return (
        "> localStorage\nStorage {\n"
        f'  \'auth.session\': \'{{"token":"{d.s(_jwt(r))}","user":"{r.randrange(10**5, 10**6)}"}}\''
        f",\n"
        f"  'ui.lastRoute': '{d.k('/dashboard/projects/' + str(r.randrange(100, 999)))}',\n"
        "  length: 2 }\n"
    )


def _jwt_opaque_bearer(d: _Draft) -> str:
    r = d.rng
    tok = _tok(r, _ALNUM, r.choice((32, 40, 48)))
    return (
        f"{_iso(r)} WARN upstream 401 for GET {d.k('https://partner.' + _domain(r) + '/v3/stock')} "
        f"headers={{'Accept': 'application/json', 'Authorization': 'Bearer {d.s(tok)}'}}\n"
    )


_family(
    "jwt_bearer_tokens",
    _jwt_header,
    _jwt_cookie,
    _jwt_token_response,
    _jwt_local_storage,
    _jwt_opaque_bearer,
)


def _oauth_client_creds(d: _Draft) -> str:
    r = d.rng
    cid = d.k(_tok(r, _ALNUM, 20))
    return (
        f"POST /oauth/token HTTP/1.1\nHost: {d.k('login.' + _domain(r))}\n"
        "Content-Type: application/x-www-form-urlencoded\n\n"
        f"grant_type=client_credentials&client_id={cid}"
        f"&client_secret={d.s(_tok(r, _B64URL, 40))}&scope=orders.read\n"
    )


def _oauth_code_exchange(d: _Draft) -> str:
    r = d.rng
    challenge = _b64url(_rbytes(r, 32))
    return (
        "POST /token\n"
        f"grant_type=authorization_code&code={d.s(_tok(r, _B64URL, 43))}"
        f"&redirect_uri={d.k('https%3A%2F%2Fapp.' + _domain(r) + '%2Fcallback')}"
        f"&code_verifier={d.s(_b64url(_rbytes(r, 48)))}\n"
        f"# authorize request used code_challenge={d.k(challenge)}&code_challenge_method=S256\n"
    )


def _oauth_refresh(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "grant_type": "refresh_token",
        "refresh_token": d.s("1//" + _tok(r, _B64URL, 100)),
        "client_id": d.k(
            f"{r.randrange(10**11, 10**12)}-{_tok(r, _LOWER_ALNUM, 32)}.apps.googleusercontent.com"
        ),
        "client_secret": d.s("GOCSPX-" + _tok(r, _B64URL, 28)),
    }


def _oauth_config_yaml(d: _Draft) -> str:
    r = d.rng
    return (
        "spring:\n  security:\n    oauth2:\n      client:\n        registration:\n"
        f"          "
        f"{d.k(r.choice(('keycloak', 'okta', 'auth0', 'azure')) + '-' + r.choice(_SERVICES))}:\n"
        f"            client-id: {r.choice(_SERVICES)}-backend\n"
        f"            client-secret: {d.s(_tok(r, _ALNUM, 32))}\n"
        "            authorization-grant-type: client_credentials\n"
        f"            scope: {d.k('openid,' + r.choice(_SERVICES) + ':read')}\n"
    )


def _oauth_okta(d: _Draft) -> str:
    r = d.rng
    return (
        f"OKTA_ORG_URL=https://{d.k(_org(r) + '.okta.com')}\n"
        f"OKTA_API_TOKEN={d.s('00' + _tok(r, _B64URL, 40))}\n"
        f"AUTH0_CLIENT_SECRET={d.s(_tok(r, _B64URL, 64))}\n"
    )


_family(
    "oauth_exchanges",
    _oauth_client_creds,
    _oauth_code_exchange,
    _oauth_refresh,
    _oauth_config_yaml,
    _oauth_okta,
)


def _pk_pem_file(d: _Draft) -> str:
    r = d.rng
    label = r.choice(("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"))
    lines = _pem_body(r, label)
    _pem_marks(d, lines)
    fp = d.k("SHA256:" + _b64(_rbytes(r, 32)).rstrip("="))
    return (
        f"$ cat ~/.ssh/deploy_key\n-----BEGIN {label}-----\n"
        + "\n".join(lines)
        + f"\n-----END {label}-----\n$ ssh-keygen -lf ~/.ssh/deploy_key.pub\n"
        f"256 {fp} deploy@ci (ED25519)\n"
    )


def _pk_openssh_pair(d: _Draft) -> str:
    r = d.rng
    block, body = _openssh_private(r)
    _pem_marks(d, body.split("\n"))
    pub = d.k(_ssh_public(r, f"{r.choice(_FIRST)}@laptop"))
    return f"==> id_ed25519 <==\n{block}\n\n==> id_ed25519.pub <==\n{pub}\n"


def _pk_env_escaped(d: _Draft) -> str:
    r = d.rng
    lines = _pem_body(r, "RSA PRIVATE KEY")
    _pem_marks(d, lines)
    key = (
        "-----BEGIN RSA PRIVATE KEY-----\\n"
        + "\\n".join(lines)
        + "\\n-----END RSA PRIVATE KEY-----"
    )
    return f'JWT_PRIVATE_KEY="{key}"\n{d.k("JWT_ISSUER=https://auth." + _domain(r))}\n'


def _pk_wireguard(d: _Draft) -> str:
    r = d.rng
    return (
        "[Interface]\n"
        f"PrivateKey = {d.s(_b64(_rbytes(r, 32)))}\n"
        "Address = 10.8.0.2/24\nDNS = 1.1.1.1\n\n[Peer]\n"
        f"PublicKey = {d.k(_b64(_rbytes(r, 32)))}\n"
        f"PresharedKey = {d.s(_b64(_rbytes(r, 32)))}\n"
        f"Endpoint = {d.k('vpn.' + _domain(r) + ':51820')}\nAllowedIPs = 0.0.0.0/0\n"
    )


def _pk_putty(d: _Draft) -> str:
    r = d.rng
    pub_lines = _wrap(_b64(_ssh_string(b"ssh-rsa") + _rbytes(r, 260)), 64)
    priv_lines = _wrap(_b64(_rbytes(r, 660)), 64)
    _pem_marks(d, priv_lines)
    d.k(pub_lines[1])
    return (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\n"
        f"Comment: {r.choice(_FIRST)}@workstation\n"
        f"Public-Lines: {len(pub_lines)}\n"
        + "\n".join(pub_lines)
        + f"\nPrivate-Lines: {len(priv_lines)}\n"
        + "\n".join(priv_lines)
        + f"\nPrivate-MAC: {_hex(r, 64)}\n"
    )


def _pk_pgp(d: _Draft) -> str:
    r = d.rng
    lines = _wrap(_b64(b"\x95\x03\xc6\x04" + _rbytes(r, 900)), 64)
    _pem_marks(d, lines)
    return (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(lines)
        + f"\n={_tok(r, _B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----\n"
        f"# key id {d.k(_raw(r, '0123456789ABCDEF', 16))}\n"
    )


_family(
    "private_keys",
    _pk_pem_file,
    _pk_openssh_pair,
    _pk_env_escaped,
    _pk_wireguard,
    _pk_putty,
    _pk_pgp,
)


# --------------------------------------------------------------------------------------------
# Secret families: connection strings and configuration files
# --------------------------------------------------------------------------------------------


def _cs_url(d: _Draft) -> str:
    r = d.rng
    scheme, port = r.choice(
        (
            ("postgresql", 5432),
            ("postgres", 5432),
            ("mysql", 3306),
            ("mongodb", 27017),
            ("amqps", 5671),
            ("redis", 6379),
            ("mssql", 1433),
            ("clickhouse", 8443),
        )
    )
    host = d.k(_host(r))
    user = "" if scheme == "redis" and r.random() < 0.5 else _user(r)
    db = d.k(f"{r.choice(_SERVICES)}_{r.choice(('prod', 'main', 'replica'))}")
    params = r.choice(("?sslmode=require", "?authSource=admin&tls=true", "", "?connect_timeout=10"))
    url = f"{scheme}://{user}:{d.s(_url_password(r))}@{host}:{port}/{db}{params}"
    return r.choice(("DATABASE_URL=", "url: ", "dsn = ", "Connecting to ")) + url + "\n"


def _cs_mongo_srv(d: _Draft) -> str:
    r = d.rng
    cluster = d.k(f"cluster{r.randrange(10)}.{_tok(r, _LOWER_ALNUM, 5)}.mongodb.net")
    return (
        f'MONGO_URI="mongodb+srv://{_user(r)}:{d.s(_url_password(r))}@{cluster}/'
        f'?retryWrites=true&w=majority&appName={d.k(_org(r) + "-api")}"\n'
    )


def _cs_ado(d: _Draft) -> str:
    r = d.rng
    server = d.k(f"{_org(r)}-sql.database.windows.net")
    pw = d.s(_password(r, "!#%^*-_=+.?~@"))
    return (
        f"Server=tcp:{server},1433;Initial Catalog={d.k(r.choice(_SERVICES) + 'Db')};"
        f"Persist Security Info=False;User ID={_user(r)};Password={pw};"
        "MultipleActiveResultSets=False;Encrypt=True;TrustServerCertificate=False;"
        "Connection Timeout=30;\n"
    )


def _cs_jdbc(d: _Draft) -> str:
    r = d.rng
    host = d.k(_host(r))
    pw = d.s(_url_password(r))
    form = r.randrange(3)
    if form == 0:
        url = f"jdbc:postgresql://{host}:5432/app?user={_user(r)}&password={pw}&ssl=true"
    elif form == 1:
        url = f"jdbc:mysql://{host}:3306/app?useSSL=true&user={_user(r)}&password={pw}"
    else:
        url = f"jdbc:sqlserver://{host}:1433;databaseName=app;user={_user(r)};password={pw};encrypt=true"
    return f"{_iso(r)} INFO  HikariPool-1 - Starting with url {url}\n"


def _cs_odbc(d: _Draft) -> str:
    r = d.rng
    account = _tok(r, _LOWER, 7) + "-" + _tok(r, _LOWER_ALNUM, 7)
    return (
        "[ODBC Data Sources]\nwarehouse = Snowflake\n\n[warehouse]\nDriver = SnowflakeDSIIDriver\n"
        f"Server = {d.k(account + '.snowflakecomputing.com')}\n"
        f"UID = {_user(r)}\nPWD = {d.s(_password(r))}\n"
        f"Warehouse = {d.k(r.choice(('ANALYTICS_WH', 'LOAD_WH', 'REPORTING_WH')))}\n"
    )


def _cs_redis_cli_url(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "cache": {
            "url": f"rediss://default:{d.s(_tok(r, _ALNUM, 32))}@{d.k(_host(r))}:6380/0",
            "ttl_seconds": 300,
        },
        "queue": {"broker_url": f"amqp://{_user(r)}:{d.s(_url_password(r))}@{_host(r)}:5672//"},
    }


_family(
    "connection_strings", _cs_url, _cs_mongo_srv, _cs_ado, _cs_jdbc, _cs_odbc, _cs_redis_cli_url
)


def _env_web(d: _Draft) -> str:
    r = d.rng
    return (
        "# .env.production\n"
        f"{d.k('APP_URL=https://app.' + _domain(r))}\n"
        f"{d.k('PORT=' + str(r.choice((3000, 8000, 8080))))}\n"
        f"DB_HOST={d.k(_host(r))}\nDB_USER={_user(r)}\n"
        f"DB_PASSWORD={d.s(_password(r))}\n"
        f"SESSION_SECRET={d.s(_hex(r, 64))}\n"
        f"{d.k('LOG_LEVEL=info')}\n"
    )


def _env_quoted(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    return (
        f'{name}="{d.s(key)}"\n'
        f"export ENCRYPTION_KEY='{d.s(_b64(_rbytes(r, 32)))}'\n"
        f"{d.k('FEATURE_FLAGS=search,checkout-v2')}\n"
        f"{d.k('NEXT_PUBLIC_STRIPE_KEY=pk_live_' + _tok(r, _ALNUM, 24))}\n"
    )


def _env_compose_interp(d: _Draft) -> str:
    r = d.rng
    return (
        f"POSTGRES_PASSWORD={d.s(_password(r))}\n"
        f"{d.k('POSTGRES_DB=' + r.choice(_SERVICES))}\n"
        f"{d.k('DATABASE_URL=postgres://app:${POSTGRES_PASSWORD}@db:5432/${POSTGRES_DB}')}\n"
        f"REDIS_PASSWORD={d.s(_tok(r, _ALNUM, 24))}\n"
    )


def _env_laravel(d: _Draft) -> str:
    r = d.rng
    return (
        f"APP_NAME={d.k(_org(r).capitalize())}\nAPP_ENV=production\n"
        f"APP_KEY=base64:{d.s(_b64(_rbytes(r, 32)))}\nAPP_DEBUG=false\n"
        f"MAIL_PASSWORD={d.s(_password(r))}\n"
        f"{d.k('MAIL_FROM_ADDRESS=null')}\n"
        f"PUSHER_APP_SECRET={d.s(_tok(r, _LOWER_ALNUM, 20))}\n"
    )


def _env_printenv(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    pod = f"{r.choice(_SERVICES)}-{_tok(r, _LOWER_ALNUM, 10)}-{_tok(r, _LOWER_ALNUM, 5)}"
    return (
        f"HOSTNAME={d.k(pod)}\n"
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin\n"
        f"{name}={d.s(tok)}\nDB_PASS={d.s(_password(r))}\n"
        f"{d.k('PYTHON_VERSION=3.12.' + str(r.randrange(1, 9)))}\n"
    )


_family("dotenv_files", _env_web, _env_quoted, _env_compose_interp, _env_laravel, _env_printenv)


def _spring_yaml(d: _Draft) -> str:
    r = d.rng
    host = d.k(_host(r))
    return (
        "spring:\n  datasource:\n"
        f"    url: jdbc:postgresql://{host}:5432/{r.choice(_SERVICES)}\n"
        f"    username: {_user(r)}\n"
        f"    password: {d.s(_password(r))}\n"
        f"    hikari:\n      {d.k('maximum-pool-size: 20')}\n"
        "  mail:\n    host: smtp.office365.com\n"
        f"    password: '{d.s(_password(r))}'\n"
    )


def _spring_props(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('server.port=8443')}\n"
        f"server.ssl.key-store-password={d.s(_password(r))}\n"
        f"{d.k('server.ssl.key-store=classpath:keystore.p12')}\n"
        f"jwt.secret={d.s(_b64(_rbytes(r, 48)))}\n"
        f"{d.k('jwt.expiration-ms=86400000')}\n"
    )


def _spring_boot_log(d: _Draft) -> str:
    r = d.rng
    return (
        f"{_iso(r)}  INFO 1 --- [main] o.s.b.c.c.ConfigDataEnvironment : Property "
        f"'spring.rabbitmq.password' = '{d.s(_password(r))}' from [Config resource "
        f"'{d.k('class path resource [application-' + r.choice(('prod', 'k8s')) + '.yml]')}']\n"
    )


def _spring_cloud_config(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "name": d.k(f"{r.choice(_SERVICES)}-service"),
        "profiles": ["prod"],
        "propertySources": [
            {
                "name": "vault:secret/app",
                "source": {
                    "spring.datasource.password": d.s(_password(r)),
                    "app.encryption.key": d.s(_hex(r, 64)),
                    "management.endpoints.web.exposure.include": d.k("health,info,prometheus"),
                },
            }
        ],
    }


_family("spring_config", _spring_yaml, _spring_props, _spring_boot_log, _spring_cloud_config)


def _dotnet_text(d: _Draft) -> str:
    r = d.rng
    server = d.k(f"{_org(r)}-sql-{r.choice(('we', 'ne', 'eus'))}.database.windows.net")
    return json.dumps(
        {
            "Logging": {"LogLevel": {"Default": "Information", "Microsoft.AspNetCore": "Warning"}},
            "AllowedHosts": "*",
            "ConnectionStrings": {
                "DefaultConnection": f"Server={server};Database={r.choice(_SERVICES)};"
                f"User Id={_user(r)};Password={d.s(_password(r))};TrustServerCertificate=True;"
            },
            "Jwt": {
                "Issuer": d.k("https://api." + _domain(r)),
                "Key": d.s(_tok(r, _ALNUM, 48)),
                "ExpiresInMinutes": 60,
            },
        },
        indent=2,
    )


def _dotnet_value(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "Smtp": {
            "Host": d.k("smtp." + _domain(r)),
            "Port": 587,
            "UserName": _user(r),
            "Password": d.s(_password(r)),
        },
        "Redis": {"Configuration": f"{_host(r)}:6380,password={d.s(_tok(r, _B64, 44))},ssl=True"},
        "FeatureManagement": {"NewCheckout": d.k("Percentage:25")},
    }


def _dotnet_user_secrets(d: _Draft) -> str:
    r = d.rng
    usid = d.k(_uuid(r))
    return (
        f"$ dotnet user-secrets list --id {usid}\n"
        f"Stripe:SecretKey = {d.s(_stripe(r))}\n"
        f"Authentication:Google:ClientSecret = {d.s('GOCSPX-' + _tok(r, _B64URL, 28))}\n"
    )


def _dotnet_webconfig(d: _Draft) -> str:
    r = d.rng
    return (
        "<connectionStrings>\n"
        f'  <add name="{d.k(r.choice(_SERVICES).capitalize() + "Context")}" '
        f'connectionString="Data Source={_host(r)};Initial Catalog=app;User ID={_user(r)};'
        f'Password={d.s(_password(r))}" providerName="System.Data.SqlClient" />\n'
        "</connectionStrings>\n<appSettings>\n"
        f'  <add key="ApiKey" value="{d.s(_tok(r, _ALNUM, 32))}" />\n'
        f'  <add key="ApiBaseUrl" value="{d.k("https://partner." + _domain(r) + "/v2/")}" />\n'
        "</appSettings>\n"
    )


_family("dotnet_appsettings", _dotnet_text, _dotnet_value, _dotnet_user_secrets, _dotnet_webconfig)


_DJANGO_ALPHABET = _LOWER + _DIGITS + "!@#%^&*(-_=+)"


def _django_settings(d: _Draft) -> str:
    r = d.rng
    key = _tok(r, _DJANGO_ALPHABET, 50)
    if r.random() < 0.3:
        key = "django-insecure-" + key
    return (
        f"SECRET_KEY = '{d.s(key)}'\n\nDEBUG = False\n"
        f"ALLOWED_HOSTS = ['{d.k('app.' + _domain(r))}']\n\nDATABASES = {{\n"
        "    'default': {\n        'ENGINE': 'django.db.backends.postgresql',\n"
        f"        'NAME': '{r.choice(_SERVICES)}',\n        'USER': '{_user(r)}',\n"
        f"        'PASSWORD': '{d.s(_password(r))}',\n        'HOST': '{d.k(_host(r))}',\n"
        "    }\n}\n"
        f"{d.k('AUTH_PASSWORD_VALIDATORS')} = []\n"
    )


def _rails_secrets(d: _Draft) -> str:
    r = d.rng
    return (
        "production:\n"
        f"  secret_key_base: {d.s(_hex(r, 128))}\n"
        f"  aws_bucket: {d.k(_org(r) + '-uploads')}\n"
        f"  devise_pepper: {d.s(_hex(r, 64))}\n"
        f"# config/master.key: {d.s(_hex(r, 32))}\n"
    )


_WP_ALPHABET = _ALNUM + "!#%&()*+,-./:;<=>?@[]^_`{|}~"


def _wp_config(d: _Draft) -> str:
    r = d.rng
    lines = [
        f"define( 'DB_NAME', '{d.k('wp_' + _org(r).replace('-', '_'))}' );",
        f"define( 'DB_USER', '{_user(r)}' );",
        f"define( 'DB_PASSWORD', '{d.s(_password(r))}' );",
        "define( 'DB_HOST', 'localhost' );",
    ]
    for name in r.sample(("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_SALT"), 2):
        lines.append(f"define( '{name}', '{d.s(_tok(r, _WP_ALPHABET, 64))}' );")
    lines.append(f"$table_prefix = '{d.k('wp' + _tok(r, _LOWER, 4) + '_')}';")
    return "\n".join(lines) + "\n"


def _flask_config(d: _Draft) -> str:
    r = d.rng
    return (
        "class ProductionConfig(Config):\n"
        f"    SECRET_KEY = '{d.s(_hex(r, 48))}'\n"
        f"    SQLALCHEMY_DATABASE_URI = 'postgresql://{_user(r)}:{d.s(_url_password(r))}@{_host(r)}"
        f"/app'\n"
        f"    {d.k('SQLALCHEMY_POOL_SIZE = 10')}\n"
        f"    {d.k('SESSION_COOKIE_SECURE = True')}\n"
    )


_family("framework_settings", _django_settings, _rails_secrets, _wp_config, _flask_config)


# --------------------------------------------------------------------------------------------
# Secret families: infrastructure as code, pipelines, clusters, containers
# --------------------------------------------------------------------------------------------

_GH_SECRET_REF = "${{ secrets.DEPLOY_TOKEN }}"
_GH_HASHFILES = "${{ hashFiles('**/package-lock.json') }}"
_VAULT_REF = 'db_password: "{{ vault_db_password }}"'
_MAX_TOKENS_LINE = 'MAX_TOKENS: "8192"'
_GITLAB_LOGIN = "echo $CI_JOB_TOKEN | docker login -u gitlab-ci-token --password-stdin $CI_REGISTRY"
_SPRING_FRAME = (
    "org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.doCreateBean"
)
_GET_SECRET_LINE = "secret = secrets_client.get_secret_value(SecretId=SECRET_ID)['SecretString']"


def _tf_tfvars(d: _Draft) -> str:
    r = d.rng
    return (
        f'region          = "{d.k(r.choice(_REGIONS))}"\n'
        f'instance_type   = "{d.k(r.choice(("t3.medium", "m6i.large", "c7g.xlarge")))}"\n'
        f'db_password     = "{d.s(_password(r))}"\n'
        f'datadog_api_key = "{d.s(_hex(r, 32))}"\n'
        f'ami_id          = "{d.k("ami-0" + _raw(r, _HEX, 16))}"\n'
    )


def _tf_provider(d: _Draft) -> str:
    r = d.rng
    return (
        'provider "cloudflare" {\n'
        f'  api_token = "{d.s(_tok(r, _B64URL, 40))}"\n}}\n\n'
        'resource "cloudflare_record" "www" {\n'
        f'  zone_id = "{d.k(_hex(r, 32))}"\n  name    = "www"\n  type    = "CNAME"\n}}\n'
    )


def _tf_state(d: _Draft) -> str:
    r = d.rng
    return json.dumps(
        {
            "version": 4,
            "terraform_version": d.k(f"1.{r.randrange(3, 10)}.{r.randrange(10)}"),
            "resources": [
                {
                    "type": "aws_db_instance",
                    "name": "main",
                    "instances": [
                        {
                            "attributes": {
                                "identifier": d.k(f"{r.choice(_SERVICES)}-db-prod"),
                                "password": d.s(_password(r)),
                                "endpoint": f"{_host(r)}:5432",
                                "arn": d.k(
                                    f"arn:aws:rds:{r.choice(_REGIONS)}:{_account(r)}:db:main"
                                ),
                            }
                        }
                    ],
                }
            ],
        },
        indent=2,
    )


def _ansible_vars(d: _Draft) -> str:
    r = d.rng
    return (
        "---\n"
        f"ansible_user: {_user(r)}\n"
        f"ansible_become_password: {d.s(_password(r))}\n"
        f"{d.k(_VAULT_REF)}\n"
        f"smtp_relay_password: {d.s(_password(r))}\n"
        f"{d.k('nginx_worker_processes: auto')}\n"
    )


def _ansible_inventory(d: _Draft) -> str:
    r = d.rng
    return (
        "[web]\n"
        f"{d.k('web-01.' + _domain(r))} ansible_host=10.0.1.11 ansible_user=deploy "
        f"ansible_password={d.s(_password(r))}\n"
        "[web:vars]\n"
        f"{d.k('ansible_python_interpreter=/usr/bin/python3')}\n"
    )


_family("terraform_ansible", _tf_tfvars, _tf_provider, _tf_state, _ansible_vars, _ansible_inventory)


def _ci_gha(d: _Draft) -> str:
    r = d.rng
    name, tok = _dev_platform(r)
    return (
        "name: release\non: push\njobs:\n  publish:\n    runs-on: ubuntu-latest\n"
        "    env:\n"
        f"      {name}: {d.s(tok)}\n"
        f"      DEPLOY_TOKEN: {d.k(_GH_SECRET_REF)}\n"
        "    steps:\n"
        f"      - uses: {d.k('actions/checkout@' + _sha(r))} # v4\n"
        "      - uses: actions/cache@v4\n        with:\n"
        f"          key: {d.k('npm-' + _GH_HASHFILES)}\n"
    )


def _ci_gitlab(d: _Draft) -> str:
    r = d.rng
    return (
        "variables:\n"
        f'  DOCKER_AUTH_PASSWORD: "{d.s(_password(r))}"\n'
        f"  {d.k('DOCKER_DRIVER: overlay2')}\n\n"
        "deploy:\n  stage: deploy\n  script:\n"
        f'    - curl -H "PRIVATE-TOKEN: {d.s("glpat-" + _tok(r, _B64URL, 20))}" '
        f'"https://gitlab.{_domain(r)}/api/v4/projects/{r.randrange(100, 9999)}/pipelines"\n'
        f"    - {d.k(_GITLAB_LOGIN)}\n"
    )


def _ci_jenkins(d: _Draft) -> str:
    r = d.rng
    return (
        "pipeline {\n  environment {\n"
        f"    SONAR_TOKEN = '{d.s('squ_' + _hex(r, 40))}'\n"
        f"    {d.k('REGISTRY_CREDS = credentials(' + repr('registry-' + _uuid(r)) + ')')}\n"
        "  }\n  stages { stage('build') { steps { sh './gradlew build' } } }\n}\n"
    )


def _ci_circle(d: _Draft) -> str:
    r = d.rng
    return (
        "version: 2.1\njobs:\n  test:\n    docker:\n"
        f"      - image: {d.k('cimg/python:3.' + str(r.randrange(9, 13)))}\n"
        "        auth:\n          username: mydockerhub\n"
        f"          password: {d.s(_password(r))}\n"
        "    environment:\n"
        f"      CODECOV_TOKEN: {d.s(_uuid(r))}\n"
        f"      {d.k('PYTEST_ADDOPTS: --maxfail=1')}\n"
    )


_family("ci_pipeline_yaml", _ci_gha, _ci_gitlab, _ci_jenkins, _ci_circle)


def _b64_pem(rng: random.Random, label: str) -> str:
    body = "\n".join(_pem_body(rng, label))
    return _b64(f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n".encode())


def _kube_cert_user(d: _Draft) -> str:
    r = d.rng
    cluster = d.k(f"{_org(r)}-{r.choice(('prod', 'staging'))}-{r.choice(('eks', 'gke', 'aks'))}")
    server = f"https://{_hex(r, 32).upper()}.gr7.{r.choice(_REGIONS)}.eks.amazonaws.com"
    return (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {d.k(_b64_pem(r, 'CERTIFICATE'))}\n"
        f"    server: {d.k(server)}\n"
        f"  name: {cluster}\ncontexts:\n- context:\n    cluster: {cluster}\n    user: admin\n"
        f"  name: {cluster}\ncurrent-context: {cluster}\nusers:\n- name: admin\n  user:\n"
        f"    client-certificate-data: {d.k(_b64_pem(r, 'CERTIFICATE'))}\n"
        f"    client-key-data: {d.s(_b64_pem(r, 'RSA PRIVATE KEY'))}\n"
    )


def _kube_token_user(d: _Draft) -> str:
    r = d.rng
    tok = _jwt(r, rs256=True, claims={"kubernetes.io": {"namespace": "ci"}})
    return (
        "users:\n- name: ci-deployer\n  user:\n"
        f"    token: {d.s(tok)}\n"
        "- name: legacy\n  user:\n"
        f"    username: admin\n    password: {d.s(_password(r))}\n"
        f"preferences: {{}}\ncurrent-context: {d.k('ci@' + _org(r) + '-cluster')}\n"
    )


def _kube_exec(d: _Draft) -> str:
    r = d.rng
    return (
        "$ kubectl config view --raw -o jsonpath='{.users[0].user.token}'\n"
        f"{d.s(_tok(r, _LOWER_ALNUM, 6) + '.' + _tok(r, _LOWER_ALNUM, 16))}\n"
        f"$ kubectl get ns {d.k('payments-' + r.choice(('prod', 'eu')))} -o name\n"
    )


_family("kubeconfig_files", _kube_cert_user, _kube_token_user, _kube_exec)


def _k8s_secret(d: _Draft) -> str:
    r = d.rng
    user_b64 = _b64(_user(r).encode())
    pw_b64 = d.s(_b64(_password(r).encode()))
    url_b64 = d.s(_b64(f"postgres://app:{_url_password(r)}@{_host(r)}:5432/app".encode()))
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n"
        f"  name: {d.k(r.choice(_SERVICES) + '-db-credentials')}\n"
        f"  namespace: {d.k(r.choice(_SERVICES) + '-prod')}\n"
        "type: Opaque\ndata:\n"
        f"  username: {user_b64}\n  password: {pw_b64}\n  database-url: {url_b64}\n"
    )


def _k8s_stringdata(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: llm-keys\n"
        f"  labels:\n    {d.k('app.kubernetes.io/part-of: ' + r.choice(_SERVICES))}\n"
        "stringData:\n"
        f"  {name}: {d.s(key)}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: llm-config\ndata:\n"
        f"  {d.k(_MAX_TOKENS_LINE)}\n"
    )


def _k8s_dockerconfig(d: _Draft) -> str:
    r = d.rng
    auth = _b64(f"{_user(r)}:{_password(r)}".encode())
    inner = json.dumps({"auths": {"ghcr.io": {"auth": auth}}})
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n"
        f"  name: {d.k('regcred-' + _org(r))}\n"
        "type: kubernetes.io/dockerconfigjson\ndata:\n"
        f"  .dockerconfigjson: {d.s(_b64(inner.encode()))}\n"
    )


def _k8s_pod_env(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "kind": "Pod",
        "metadata": {
            "name": d.k(
                f"{r.choice(_SERVICES)}-{_tok(r, _LOWER_ALNUM, 10)}-{_tok(r, _LOWER_ALNUM, 5)}"
            )
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": d.k(f"ghcr.io/{_org(r)}/api@sha256:{_sha(r, 64)}"),
                    "env": [
                        {"name": "DB_PASSWORD", "value": d.s(_password(r))},
                        {
                            "name": "API_KEY",
                            "valueFrom": {"secretKeyRef": {"name": "api", "key": "key"}},
                        },
                        {"name": "WORKERS", "value": "4"},
                    ],
                }
            ]
        },
    }


_family("k8s_secret_manifests", _k8s_secret, _k8s_stringdata, _k8s_dockerconfig, _k8s_pod_env)


def _ctr_docker_run(d: _Draft) -> str:
    r = d.rng
    return (
        "docker run -d --name db -p 5432:5432 \\\n"
        f"  -e POSTGRES_PASSWORD={d.s(_password(r))} \\\n"
        f"  -e {d.k('POSTGRES_INITDB_ARGS=--data-checksums')} \\\n"
        f"  {d.k('postgres:16.' + str(r.randrange(1, 6)) + '-bookworm')}\n"
    )


def _ctr_helm(d: _Draft) -> str:
    r = d.rng
    return (
        f"helm upgrade --install {d.k(r.choice(_SERVICES) + '-release')} bitnami/postgresql \\\n"
        f"  --set auth.postgresPassword={d.s(_password(r))} \\\n"
        f"  --set auth.replicationPassword='{d.s(_password(r))}' \\\n"
        f"  --set {d.k('primary.persistence.size=50Gi')} --version "
        f"{d.k('15.5.' + str(r.randrange(1, 30)))}\n"
    )


def _ctr_compose(d: _Draft) -> str:
    r = d.rng
    return (
        "services:\n  rabbitmq:\n"
        f"    image: {d.k('rabbitmq:3.13-management')}\n    environment:\n"
        f"      - RABBITMQ_DEFAULT_PASS={d.s(_password(r))}\n"
        f"      - {d.k('RABBITMQ_DEFAULT_VHOST=/orders')}\n"
        "  minio:\n    environment:\n"
        f"      MINIO_ROOT_PASSWORD: {d.s(_tok(r, _ALNUM, 32))}\n"
    )


def _ctr_login(d: _Draft) -> str:
    r = d.rng
    reg = d.k(f"{_account(r)}.dkr.ecr.{r.choice(_REGIONS)}.amazonaws.com")
    return (
        f"+ docker login -u AWS -p {d.s(_b64(_rbytes(r, 600)))} {reg}\n"
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n"
        "Login Succeeded\n"
    )


def _ctr_inspect(d: _Draft) -> str:
    r = d.rng
    return json.dumps(
        [
            {
                "Id": d.k(_sha(r, 64)),
                "Config": {
                    "Env": [
                        f"MYSQL_ROOT_PASSWORD={d.s(_password(r))}",
                        d.k("MYSQL_DATABASE=" + r.choice(_SERVICES)),
                        "GOSU_VERSION=1.17",
                    ],
                    "Image": d.k(f"mysql:8.{r.randrange(0, 5)}"),
                },
            }
        ],
        indent=2,
    )


_family("container_cli", _ctr_docker_run, _ctr_helm, _ctr_compose, _ctr_login, _ctr_inspect)


# --------------------------------------------------------------------------------------------
# Secret families: credential files, registries, tools' saved logins
# --------------------------------------------------------------------------------------------


def _cf_netrc(d: _Draft) -> str:
    r = d.rng
    return (
        f"machine {d.k('api.' + _domain(r))}\n  login {_user(r)}\n  password {d.s(_password(r))}\n"
        f"machine {d.k('git.' + _domain(r))} login {r.choice(_FIRST)} password {d.s(_github(r))}\n"
    )


def _cf_pgpass(d: _Draft) -> str:
    r = d.rng
    h1, h2 = d.k(_host(r)), _host(r)
    return (
        f"# hostname:port:database:username:password\n"
        f"{h1}:5432:{r.choice(_SERVICES)}:{_user(r)}:{d.s(_password(r))}\n"
        f"{h2}:6432:*:{d.k('replication_ro')}:{d.s(_password(r))}\n"
    )


def _cf_git_credentials(d: _Draft) -> str:
    r = d.rng
    return (
        f"https://{r.choice(_FIRST)}:{d.s(_github(r))}@github.com\n"
        f"https://{_user(r)}:{d.s(_url_password(r))}@{d.k('bitbucket.' + _domain(r))}\n"
    )


def _cf_hub(d: _Draft) -> str:
    r = d.rng
    return (
        "github.com:\n"
        f"- user: {r.choice(_FIRST)}{r.randrange(10, 99)}\n"
        f"  oauth_token: {d.s(_hex(r, 40))}\n"
        f"  {d.k('protocol: https')}\n"
        f"# gh hosts.yml git_protocol: ssh, last sync {d.k(_iso(r))}\n"
    )


def _cf_docker_config(d: _Draft) -> str:
    r = d.rng
    auth = d.s(_b64(f"{_user(r)}:{_password(r)}".encode()))
    tok = d.s(_b64(f"_json_key:{_hex(r, 40)}".encode()))
    return json.dumps(
        {
            "auths": {
                "https://index.docker.io/v1/": {"auth": auth},
                d.k(f"{r.choice(_REGIONS)}-docker.pkg.dev"): {"auth": tok},
            },
            "credsStore": d.k("desktop"),
            "currentContext": "default",
        },
        indent="\t",
    )


_family("credential_files", _cf_netrc, _cf_pgpass, _cf_git_credentials, _cf_hub, _cf_docker_config)


def _reg_npmrc(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('@' + _org(r) + ':registry=https://npm.pkg.github.com')}\n"
        f"//npm.pkg.github.com/:_authToken={d.s(_github(r))}\n"
        f"//registry.npmjs.org/:_authToken={d.s(_npm(r))}\n"
        f"//nexus.{_domain(r)}/repository/npm/:_auth="
        f"{d.s(_b64(f'{_user(r)}:{_password(r)}'.encode()))}\n"
        f"{d.k('save-exact=true')}\n"
    )


def _reg_pypirc(d: _Draft) -> str:
    r = d.rng
    return (
        "[distutils]\nindex-servers =\n    pypi\n    internal\n\n[pypi]\nusername = __token__\n"
        f"password = {d.s(_pypi(r))}\n\n[internal]\n"
        f"repository = {d.k('https://pypi.' + _domain(r) + '/simple/')}\n"
        f"username = {_user(r)}\npassword = {d.s(_password(r))}\n"
    )


def _reg_maven(d: _Draft) -> str:
    r = d.rng
    return (
        "<settings>\n  <servers>\n    <server>\n"
        f"      <id>{d.k(_org(r) + '-releases')}</id>\n"
        f"      <username>{_user(r)}</username>\n"
        f"      <password>{d.s(_password(r))}</password>\n"
        "    </server>\n  </servers>\n"
        f"  <localRepository>{d.k('/var/cache/maven/' + _org(r))}</localRepository>\n"
        "</settings>\n"
    )


def _reg_gradle(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('org.gradle.jvmargs=-Xmx4g -Dfile.encoding=UTF-8')}\n"
        f"ossrhUsername={_user(r)}\nossrhPassword={d.s(_password(r))}\n"
        f"signing.keyId={d.k(_raw(r, '0123456789ABCDEF', 8))}\n"
        f"signing.password={d.s(_password(r))}\n"
    )


def _reg_nuget(d: _Draft) -> str:
    r = d.rng
    feed = d.k(f"{_org(r)}-feed")
    return (
        "<configuration>\n  <packageSourceCredentials>\n"
        f'    <{feed}>\n      <add key="Username" value="{_user(r)}" />\n'
        f'      <add key="ClearTextPassword" value="{d.s(_tok(r, _LOWER_ALNUM, 52))}" />\n'
        f"    </{feed}>\n  </packageSourceCredentials>\n</configuration>\n"
    )


def _reg_pip_conf(d: _Draft) -> str:
    r = d.rng
    host = d.k(f"artifactory.{_domain(r)}")
    return (
        "[global]\n"
        f"index-url = https://{_user(r)}:{d.s(_url_password(r))}@{host}/api/pypi/pypi/simple\n"
        f"{d.k('timeout = 60')}\n"
        f"# yarnrc: npmAuthToken: {d.s(_npm(r))}\n"
    )


_family(
    "package_registry_auth",
    _reg_npmrc,
    _reg_pypirc,
    _reg_maven,
    _reg_gradle,
    _reg_nuget,
    _reg_pip_conf,
)


def _ide_filezilla(d: _Draft) -> str:
    r = d.rng
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.66.5">\n'
        "  <RecentServers>\n    <Server>\n"
        f"      <Host>{d.k('ftp.' + _domain(r))}</Host>\n      <Port>21</Port>\n"
        f"      <User>{_user(r)}</User>\n"
        f'      <Pass encoding="base64">{d.s(_b64(_password(r).encode()))}</Pass>\n'
        "    </Server>\n  </RecentServers>\n</FileZilla3>\n"
    )


def _ide_sftp_json(d: _Draft) -> str:
    r = d.rng
    return json.dumps(
        {
            "name": "production",
            "host": d.k("sftp." + _domain(r)),
            "protocol": "sftp",
            "port": 22,
            "username": _user(r),
            "password": d.s(_password(r)),
            "remotePath": d.k(f"/var/www/{_org(r)}/current"),
            "uploadOnSave": True,
        },
        indent=4,
    )


def _ide_dbeaver(d: _Draft) -> dict[str, Any]:
    r = d.rng
    cid = f"postgres-jdbc-{_hex(r, 11)}-{_hex(r, 16)}"
    return {
        "connections": {
            cid: {
                "provider": "postgresql",
                "name": d.k(f"{r.choice(_SERVICES)} (prod, read-only)"),
                "configuration": {
                    "host": d.k(_host(r)),
                    "port": "5432",
                    "user": _user(r),
                    "password": d.s(_password(r)),
                },
            }
        }
    }


def _ide_winscp(d: _Draft) -> str:
    r = d.rng
    return (
        f"[Sessions\\{_user(r)}@files.{_domain(r)}]\n"
        f"HostName=files.{_domain(r)}\nUserName={_user(r)}\n"
        f"Password={d.s(_raw(r, 'ABCDEF0123456789', 64))}\n"
        f"{d.k('FSProtocol=2')}\n"
    )


def _ide_rclone(d: _Draft) -> str:
    r = d.rng
    return (
        f"[{d.k(r.choice(('backup', 'offsite', 'archive')) + '-s3')}]\ntype = s3\nprovider = AWS\n"
        f"access_key_id = {d.s(_aws_key_id(r))}\n"
        f"secret_access_key = {d.s(_aws_secret(r))}\n"
        f"region = {d.k(r.choice(_REGIONS))}\n"
        f"[b2]\ntype = b2\naccount = {_hex(r, 12)}\nkey = {d.s('K00' + _tok(r, _ALNUM, 28))}\n"
    )


_family("tool_saved_logins", _ide_filezilla, _ide_sftp_json, _ide_dbeaver, _ide_winscp, _ide_rclone)

# --------------------------------------------------------------------------------------------
# Secret families: commands, HTTP traffic, logs
# --------------------------------------------------------------------------------------------


def _curl_user(d: _Draft) -> str:
    r = d.rng
    quote = r.choice(("", "'", '"'))
    user = r.choice((_user(r), "elastic", "admin", f"{r.choice(_FIRST)}@{_domain(r)}"))
    return (
        f"curl --cacert ca.crt -u {quote}{user}:{d.s(_password(r))}{quote} "
        f"{d.k('https://es.' + _domain(r) + ':9200/_cluster/health?pretty')}\n"
    )


def _curl_bearer(d: _Draft) -> str:
    r = d.rng
    return (
        f"curl -sS -X POST {d.k('https://api.' + _domain(r) + '/v1/jobs')} \\\n"
        "  -H 'Content-Type: application/json' \\\n"
        f"  -H 'Authorization: Bearer {d.s(_tok(r, _B64URL, r.choice((40, 64))))}' \\\n"
        f'  --data \'{{"job": "{d.k("nightly-" + r.choice(_SERVICES))}"}}\'\n'
    )


def _curl_basic(d: _Draft) -> str:
    r = d.rng
    basic = d.s(_b64(f"{_user(r)}:{_password(r)}".encode()))
    return (
        f'curl -H "Authorization: Basic {basic}" '
        f"{d.k('https://jira.' + _domain(r) + '/rest/api/2/search?jql=project%3DOPS')}\n"
    )


def _curl_apikey_header(d: _Draft) -> str:
    r = d.rng
    header = r.choice(("X-API-Key", "apikey", "X-Auth-Token", "Api-Token", "X-Octopus-ApiKey"))
    return (
        f'curl -X GET \\\n  -H "{header}: {d.s(_tok(r, _ALNUM, r.choice((32, 36, 40))))}" \\\n'
        f'  -H "Accept: application/json" \\\n  "{d.k("https://" + _domain(r) + "/rest/v1/stats")}"'
        f"\n"
    )


def _curl_form(d: _Draft) -> str:
    r = d.rng
    return (
        f"curl -c cookies.txt -d 'username={_user(r)}' "
        f"--data-urlencode 'password={d.s(_password(r))}' "
        f"{d.k('https://portal.' + _domain(r) + '/login')}\n"
        f"curl -b 'sessionid={d.s(_tok(r, _LOWER_ALNUM, 32))}; {d.k('csrftoken_age=3600')}' "
        f"https://portal.{_domain(r)}/api/me\n"
    )


_family("curl_commands", _curl_user, _curl_bearer, _curl_basic, _curl_apikey_header, _curl_form)


def _http_request(d: _Draft) -> str:
    r = d.rng
    return (
        f"POST /v2/charges HTTP/1.1\r\nHost: {d.k('api.' + _domain(r))}\r\n"
        f"Authorization: Basic {d.s(_b64((_stripe(r) + ':').encode()))}\r\n"
        f"Idempotency-Key: {d.k(_uuid(r))}\r\n"
        f"traceparent: {d.k('00-' + _hex(r, 32) + '-' + _hex(r, 16) + '-01')}\r\n"
        "Content-Length: 48\r\n\r\n"
    )


def _http_cookies(d: _Draft) -> str:
    r = d.rng
    return (
        "> GET /account HTTP/2\n"
        f"> Cookie: {d.k('_ga=GA1.1.' + str(r.randrange(10**9, 10**10)) + '.' + str(_epoch(r)))}; "
        f"session={d.s(_tok(r, _B64URL, 43))}; "
        f"remember_user_token={d.s(_b64(_rbytes(r, 60)))}\n"
        f'< etag: "{d.k(_hex(r, 32))}"\n'
    )


def _http_response(d: _Draft) -> str:
    r = d.rng
    return (
        "HTTP/1.1 200 OK\nContent-Type: application/json\n"
        f"Set-Cookie: JSESSIONID={d.s(_raw(r, '0123456789ABCDEF', 32))}; Path=/; HttpOnly\n"
        f"X-Amzn-Trace-Id: {d.k('Root=1-' + _hex(r, 8) + '-' + _hex(r, 24))}\n\n"
        f'{{"api_key": "{d.s(_tok(r, _ALNUM, 40))}", "created_at": "{d.k(_iso(r))}"}}\n'
    )


def _http_har(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "request": {
            "method": "GET",
            "url": d.k(f"https://app.{_domain(r)}/api/projects?limit=50"),
            "headers": [
                {"name": "Authorization", "value": f"Token {d.s(_hex(r, 40))}"},
                {"name": "X-CSRF-Token", "value": _tok(r, _B64, 44)},
                {
                    "name": "User-Agent",
                    "value": d.k("Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"),
                },
            ],
        },
        "timings": {"wait": 41.2},
    }


def _http_proxy(d: _Draft) -> str:
    r = d.rng
    return (
        f"CONNECT {d.k('registry.npmjs.org:443')} HTTP/1.1\n"
        f"Proxy-Authorization: Basic {d.s(_b64(f'{_user(r)}:{_password(r)}'.encode()))}\n"
        f"# HTTPS_PROXY=http://{_user(r)}:{d.s(_url_password(r))}@"
        f"{d.k('proxy.' + _domain(r) + ':3128')}\n"
    )


_family("http_traffic", _http_request, _http_cookies, _http_response, _http_har, _http_proxy)


def _nginx_line(r: random.Random, path: str, status: int = 200) -> str:
    ua = r.choice(("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5)", "curl/8.5.0", "okhttp/4.12.0"))
    return (
        f"10.0.{r.randrange(256)}.{r.randrange(1, 255)} - - [{r.randrange(1, 28):02d}/Mar/2024:"
        f'{r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d} +0000] "GET {path} '
        f'HTTP/1.1" {status} {r.randrange(200, 90000)} "-" "{ua}"'
    )


def _log_query_token(d: _Draft) -> str:
    r = d.rng
    param = r.choice(("access_token", "api_key", "token", "apikey", "auth", "signature", "sig"))
    path = f"/api/v1/export?{param}={d.s(_tok(r, _ALNUM, r.choice((32, 40, 64))))}&format=csv"
    ok = _nginx_line(r, d.k(f"/static/app.{_hex(r, 8)}.js"))
    return ok + "\n" + _nginx_line(r, path) + "\n"


def _log_reset_link(d: _Draft) -> str:
    r = d.rng
    reset = _tok(r, _LOWER_ALNUM, 6) + "-" + _hex(r, 32)
    path = f"/password/reset/confirm?uid={r.randrange(1000, 99999)}&token={d.s(reset)}"
    return _nginx_line(r, path, 302) + "\n" + _nginx_line(r, d.k("/password/reset/done")) + "\n"


def _log_magic_link(d: _Draft) -> str:
    r = d.rng
    return (
        f"{_iso(r)} INFO mailer sent login link https://app.{_domain(r)}/auth/magic?"
        f"token={d.s(_tok(r, _B64URL, 48))}&{d.k('utm_source=email&utm_campaign=login')}\n"
    )


def _log_gateway_json(d: _Draft) -> str:
    r = d.rng
    return (
        json.dumps(
            {
                "ts": d.k(_iso(r, ms=True)),
                "route": "/v1/webhooks/stripe",
                "query": f"?key={d.s(_tok(r, _ALNUM, 32))}",
                "upstream_latency_ms": 17,
                "request_id": d.k(_uuid(r)),
            }
        )
        + "\n"
    )


_family("access_logs", _log_query_token, _log_reset_link, _log_magic_link, _log_gateway_json)


def _trace_python(d: _Draft) -> str:
    r = d.rng
    pw = d.s(_password(r))
    return (
        "Traceback (most recent call last):\n"
        f'  File "{d.k("/srv/app/" + r.choice(_SERVICES) + "/db.py")}", line {r.randrange(20, 400)}'
        f", in connect\n"
        "    conn = psycopg.connect(dsn)\n"
        f"psycopg.OperationalError: connection failed: FATAL:  password authentication failed "
        f'for user "{_user(r)}"\n'
        f"Locals: dsn = 'host={_host(r)} dbname=app user={_user(r)} password={pw}'\n"
    )


def _trace_java(d: _Draft) -> str:
    r = d.rng
    return (
        "org.springframework.beans.factory.BeanCreationException: Error creating bean 'dataSource'"
        "\n"
        f"\tat {d.k(_SPRING_FRAME)}"
        f"(AbstractAutowireCapableBeanFactory.java:{r.randrange(100, 900)})\n"
        "Caused by: java.sql.SQLException: Access denied\n"
        f"Environment: {{DB_URL=jdbc:mysql://{_host(r)}/app, DB_PASSWORD={d.s(_password(r))}, "
        f"JAVA_VERSION={d.k('21.0.' + str(r.randrange(1, 5)))}}}\n"
    )


def _trace_node(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    return (
        "Error: Request failed with status code 429\n"
        f"    at settle ({d.k('/app/node_modules/axios/lib/core/settle.js:19:12')})\n"
        "  config: {\n    headers: {\n"
        f"      Authorization: 'Bearer {d.s(key)}',\n"
        f"      'User-Agent': '{d.k('axios/1.7.' + str(r.randrange(1, 9)))}'\n    }},\n"
        f"    env: {{ {name}: '[set]' }}\n  }}\n"
    )


def _trace_go_panic(d: _Draft) -> str:
    r = d.rng
    return (
        f'panic: dial redis: NOAUTH invalid password "{d.s(_tok(r, _ALNUM, 24))}"\n\n'
        "goroutine 1 [running]:\n"
        f"main.mustConnect(...)\n\t{d.k('/build/cmd/server/main.go:' + str(r.randrange(40, 300)))} "
        f"+0x1a5\n"
        f"exit status 2, build {d.k(_sha(r)[:12])}\n"
    )


def _trace_env_dump(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "exception": "KeyError: 'PAYMENT_WEBHOOK_URL'",
        "environ": {
            "HOME": "/root",
            "SENTRY_DSN": f"https://{_hex(r, 32)}@o{r.randrange(10**5, 10**6)}.ingest.sentry.io/"
            f"{r.randrange(10**6, 10**7)}",
            "DJANGO_SECRET_KEY": d.s(_tok(r, _DJANGO_ALPHABET, 50)),
            "EMAIL_HOST_PASSWORD": d.s(_password(r)),
            "GUNICORN_CMD_ARGS": d.k("--workers=4 --timeout=120"),
        },
    }


_family(
    "stack_traces_env_dumps",
    _trace_python,
    _trace_java,
    _trace_node,
    _trace_go_panic,
    _trace_env_dump,
)


def _cilog_gha(d: _Draft) -> str:
    r = d.rng
    return (
        f"{_iso(r, ms=True)} ##[group]Run npm publish\n"
        f"{_iso(r, ms=True)} npm notice Publishing to https://registry.npmjs.org/ with tag latest\n"
        f"{_iso(r, ms=True)} npm http fetch PUT 401 https://registry.npmjs.org/"
        f"{d.k('@' + _org(r) + '%2fsdk')} "
        f"(token {d.s(_npm(r))})\n"
        f"{_iso(r, ms=True)} {d.k('NODE_AUTH_TOKEN: ***')}\n"
    )


def _cilog_set_x(d: _Draft) -> str:
    r = d.rng
    return (
        f"+ export VAULT_ADDR={d.k('https://vault.' + _domain(r) + ':8200')}\n"
        f"+ vault login -method=userpass username={_user(r)} password={d.s(_password(r))}\n"
        "Success! You are now authenticated.\n"
        f"token          {d.s('hvs.' + _tok(r, _B64URL, 24))}\n"
        f"token_duration {d.k('768h')}\n"
    )


def _cilog_jenkins(d: _Draft) -> str:
    r = d.rng
    build = d.k(f"#{r.randrange(100, 9999)}")
    return (
        f"Started by GitHub push by {r.choice(_FIRST)}\nBuild {build} checkout {d.k(_sha(r))}\n"
        f"[Pipeline] sh\n+ ./deploy.sh --api-key {d.s(_hex(r, 40))} --env prod\n"
        f"{d.k('Finished: SUCCESS')}\n"
    )


def _cilog_terraform(d: _Draft) -> str:
    r = d.rng
    rid = 'id = "' + r.choice(_SERVICES) + '-db-prod"'
    return (
        "  # aws_db_instance.main will be updated in-place\n"
        '  ~ resource "aws_db_instance" "main" {\n'
        f'      ~ password = "{d.s(_password(r))}" -> (sensitive value)\n'
        f"        {d.k(rid)}\n    }}\n"
        f"Plan: 0 to add, 1 to change, 0 to destroy.\n"
    )


def _cilog_docker_build(d: _Draft) -> str:
    r = d.rng
    return (
        f"#7 [builder 3/6] RUN pip install --index-url https://__token__:{d.s(_github(r))}"
        f"@pip.{_domain(r)}/simple -r requirements.txt\n"
        f"#7 DONE {d.k(str(r.randrange(10, 99)) + '.' + str(r.randrange(10)) + 's')}\n"
        f"#8 writing image {d.k('sha256:' + _sha(r, 64))} done\n"
    )


_family("ci_logs", _cilog_gha, _cilog_set_x, _cilog_jenkins, _cilog_terraform, _cilog_docker_build)


def _chat_openai_messages(d: _Draft) -> list[dict[str, Any]]:
    r = d.rng
    name, key = _ai_key(r)
    pw = d.s(_password(r))
    k = d.s(key)
    return [
        {"role": "system", "content": "You are a deployment assistant."},
        {"role": "user", "content": f"my {name} is {k} and the db password is {pw}, set both up"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": d.k("call_" + _tok(r, _ALNUM, 24)),
                    "type": "function",
                    "function": {
                        "name": "set_secret",
                        "arguments": json.dumps({"name": name, "value": k}),
                    },
                }
            ],
        },
    ]


def _chat_plain(d: _Draft) -> str:
    r = d.rng
    who = r.choice(_FIRST).capitalize()
    return (
        f"[{_iso(r)}] {who}: can someone log into the staging admin? user is admin, pass is "
        f"{d.s(_password(r))}\n"
        f"[{_iso(r)}] Bot: Reminder: never paste credentials in "
        f"{d.k('#eng-' + r.choice(_SERVICES))}.\n"
    )


def _chat_slack_export(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "type": "message",
        "user": "U" + _tok(r, _UPPER_ALNUM, 10),
        "text": f"here's the prod token for the migration: `{d.s(_github(r))}` (revoke after)",
        "ts": d.k(f"{_epoch(r)}.{r.randrange(100000, 999999)}"),
        "thread_ts": None,
    }


def _chat_support_ticket(d: _Draft) -> str:
    r = d.rng
    return (
        "Subject: Can't connect the integration\n\n"
        f"Hi team, I generated this key {d.s(_tok(r, _ALNUM, 40))} in the dashboard but "
        f"requests still fail with {d.k('ERR_INVALID_SIGNATURE')}. Ticket "
        f"{d.k('#' + str(r.randrange(10**5, 10**6)))}.\n"
    )


def _chat_transcript_json(d: _Draft) -> str:
    r = d.rng
    msgs = [
        {
            "role": "user",
            "content": f"Use this connection: postgres://{_user(r)}:{d.s(_url_password(r))}"
            f"@{_host(r)}/app",
        },
        {
            "role": "assistant",
            "content": f"Connected. Usage: {d.k('prompt_tokens=' + str(r.randrange(100, 5000)))}",
        },
    ]
    return json.dumps({"id": d.k("chatcmpl-" + _tok(r, _ALNUM, 29)), "messages": msgs})


_family(
    "chat_transcripts",
    _chat_openai_messages,
    _chat_plain,
    _chat_slack_export,
    _chat_support_ticket,
    _chat_transcript_json,
)


def _nb(cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _nb_env_output(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    cell = {
        "cell_type": "code",
        "execution_count": r.randrange(1, 40),
        "id": d.k(_hex(r, 8)),
        "metadata": {},
        "outputs": [
            {
                "name": "stdout",
                "output_type": "stream",
                "text": [f"{name}={key}\n", f"WANDB_PROJECT={d.k(_org(r) + '-evals')}\n"],
            },
        ],
        "source": ["!env | grep -E 'KEY|WANDB'"],
    }
    d.s(key)
    return json.dumps(_nb([cell]), indent=1)


def _nb_source_key(d: _Draft) -> dict[str, Any]:
    r = d.rng
    name, key = _ai_key(r)
    png = _b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + _rbytes(r, 300))
    return _nb(
        [
            {
                "cell_type": "code",
                "execution_count": 1,
                "id": _hex(r, 8),
                "metadata": {},
                "outputs": [],
                "source": ["import os\n", f'os.environ["{name}"] = "{d.s(key)}"\n'],
            },
            {
                "cell_type": "code",
                "execution_count": 2,
                "id": _hex(r, 8),
                "metadata": {},
                "outputs": [
                    {"output_type": "display_data", "data": {"image/png": d.k(png)}, "metadata": {}}
                ],
                "source": ["plt.plot(losses)"],
            },
        ]
    )


def _nb_error_output(d: _Draft) -> str:
    r = d.rng
    user = _user(r)
    pw = d.s(_url_password(r))
    cell = {
        "cell_type": "code",
        "execution_count": 7,
        "metadata": {},
        "outputs": [
            {
                "ename": "OperationalError",
                "evalue": "(psycopg2.OperationalError) could not connect "
                f"(Background on this error at:"
                " "
                f"https://sqlalche.me/e/20/e3q8) url=postgresql://{user}:{pw}@{_host(r)}/dw",
                "output_type": "error",
                "traceback": [
                    d.k(
                        "---------------------------------------------------------------------------"
                    )
                ],
            }
        ],
        "source": ["engine = create_engine(DW_URL)"],
    }
    return json.dumps(_nb([cell]), indent=1)


_family("jupyter_outputs", _nb_env_output, _nb_source_key, _nb_error_output)


def _sql_create_user(d: _Draft) -> str:
    r = d.rng
    return (
        f"CREATE USER '{_user(r)}'@'%' IDENTIFIED BY '{d.s(_password(r))}';\n"
        f"{d.k('GRANT SELECT, INSERT ON ' + r.choice(_SERVICES) + '.* TO')} '{_user(r)}'@'%';\n"
    )


def _sql_alter_role(d: _Draft) -> str:
    r = d.rng
    return (
        f"ALTER ROLE {_user(r)} WITH LOGIN PASSWORD '{d.s(_password(r))}' "
        f"{d.k('VALID UNTIL ' + repr(_iso(r)[:10]))};\n"
        f"{d.k('SET password_encryption = ' + repr('scram-sha-256'))};\n"
    )


def _sql_user_mapping(d: _Draft) -> str:
    r = d.rng
    return (
        f"CREATE SERVER {d.k('legacy_' + r.choice(_SERVICES))} FOREIGN DATA WRAPPER postgres_fdw "
        f"OPTIONS (host '{_host(r)}', dbname 'app');\n"
        f"CREATE USER MAPPING FOR CURRENT_USER SERVER legacy OPTIONS (user '{_user(r)}', "
        f"password '{d.s(_password(r))}');\n"
    )


def _sql_oracle(d: _Draft) -> str:
    r = d.rng
    return (
        f"CREATE DATABASE LINK {d.k('dw_link_' + str(r.randrange(1, 9)))} CONNECT TO etl "
        f"IDENTIFIED BY \"{d.s(_password(r))}\" USING '{d.k('dwprod.' + _domain(r))}';\n"
    )


def _sql_insert_config(d: _Draft) -> str:
    r = d.rng
    return (
        "INSERT INTO integrations (name, api_key, webhook_secret, created_at) VALUES\n"
        f"  ('{d.k(r.choice(('hubspot', 'zendesk', 'intercom')) + '-sync')}', "
        f"'{d.s(_tok(r, _ALNUM, 40))}', '{d.s('whsec_' + _tok(r, _ALNUM, 32))}', "
        f"'{d.k(_iso(r)[:10])}');\n"
    )


def _sql_mssql(d: _Draft) -> str:
    r = d.rng
    return (
        f"CREATE LOGIN [{_user(r)}] WITH PASSWORD = N'{d.s(_password(r))}', "
        f"{d.k('CHECK_POLICY = ON')};\n"
        f"EXEC sp_addlinkedsrvlogin 'REPORTING', 'false', NULL, 'rpt', '{d.s(_password(r))}';\n"
    )


_family(
    "sql_statements",
    _sql_create_user,
    _sql_alter_role,
    _sql_user_mapping,
    _sql_oracle,
    _sql_insert_config,
    _sql_mssql,
)


def _cli_mysql(d: _Draft) -> str:
    r = d.rng
    return (
        f"mysqldump -h {d.k(_host(r))} -u {_user(r)} -p{d.s(_password(r))} "
        f"--single-transaction {r.choice(_SERVICES)} > dump.sql\n"
    )


def _cli_psql_port(d: _Draft) -> str:
    r = d.rng
    return (
        f"PGPASSWORD='{d.s(_password(r))}' psql {d.k('-h ' + _host(r) + ' -p 5432')} -U {_user(r)} "
        f"-c 'select 1'\n{d.k('ssh -p 2222')} deploy@bastion.{_domain(r)}\n"
    )


def _cli_openssl(d: _Draft) -> str:
    r = d.rng
    return (
        f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out {d.k(_org(r) + '.p12')} "
        f"-passout pass:{d.s(_password(r))}\n"
        f"keytool -importkeystore -srckeystore {_org(r)}.p12 -srcstorepass {d.s(_password(r))} "
        f"{d.k('-deststoretype pkcs12')}\n"
    )


def _cli_misc(d: _Draft) -> str:
    r = d.rng
    tool = r.randrange(4)
    pw = d.s(_password(r))
    if tool == 0:
        line = f"redis-cli -h {_host(r)} -a {pw} --no-auth-warning INFO replication"
    elif tool == 1:
        line = (
            f'mongosh "mongodb://{_host(r)}:27017" -u admin -p {pw} --authenticationDatabase admin'
        )
    elif tool == 2:
        line = f"sshpass -p '{pw}' rsync -az ./dist/ deploy@{_host(r)}:/srv/www/"
    else:
        line = f"az login --service-principal -u {_uuid(r)} -p {pw} --tenant {_uuid(r)}"
    return f"{line}\n{d.k('docker run -p 8080:80 nginx:1.27-alpine')}\n"


def _cli_htpasswd(d: _Draft) -> str:
    r = d.rng
    return (
        f"htpasswd -b -B /etc/nginx/.htpasswd {r.choice(_FIRST)} {d.s(_password(r))}\n"
        f"smbclient //{d.k('fs01.' + _domain(r))}/share -U {_user(r)}%{d.s(_password(r))}\n"
    )


def _cli_zip(d: _Draft) -> str:
    r = d.rng
    return (
        f"zip -r -P {d.s(_password(r))} {d.k('backup-' + _iso(r)[:10] + '.zip')} ./exports\n"
        f"gpg --batch --passphrase '{d.s(_password(r))}' -c {d.k('ledger.csv')}\n"
    )


_family(
    "cli_password_flags",
    _cli_mysql,
    _cli_psql_port,
    _cli_openssl,
    _cli_misc,
    _cli_htpasswd,
    _cli_zip,
)


# --------------------------------------------------------------------------------------------
# Secret families: structured values, encodings, splits, languages, prose, hashes
# --------------------------------------------------------------------------------------------


def _span_http(d: _Draft) -> dict[str, Any]:
    r = d.rng
    host = d.k(f"api.{_domain(r)}")
    return {
        "http.request.method": "GET",
        "url.full": f"https://{host}/v2/search?q=boots&api_key={d.s(_tok(r, _ALNUM, 32))}",
        "http.request.header.authorization": [f"Bearer {d.s(_tok(r, _B64URL, 48))}"],
        "http.route": d.k("/v2/search"),
        "http.response.status_code": 200,
        "server.address": host,
    }


def _span_db(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "db.system": "postgresql",
        "db.connection_string": f"postgresql://{_user(r)}:{d.s(_url_password(r))}@{_host(r)}:5432/a"
        "pp",
        "db.namespace": d.k(f"{r.choice(_SERVICES)}_prod"),
        "db.query.text": d.k("SELECT id, status FROM orders WHERE id = $1"),
    }


def _span_genai(d: _Draft) -> dict[str, Any]:
    r = d.rng
    args = json.dumps({"host": _host(r), "user": _user(r), "password": d.s(_password(r))})
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": d.k("db_connect"),
        "gen_ai.tool.call.id": d.k("call_" + _tok(r, _ALNUM, 24)),
        "gen_ai.tool.call.arguments": args,
        "gen_ai.request.model": d.k(r.choice(_MODELS)),
    }


def _span_otlp(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {
                            "key": "service.name",
                            "value": {"stringValue": d.k(r.choice(_SERVICES) + "-svc")},
                        }
                    ]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": d.k(_hex(r, 32)),
                                "spanId": d.k(_hex(r, 16)),
                                "name": "POST /charge",
                                "attributes": [
                                    {
                                        "key": "http.request.header.x-api-key",
                                        "value": {"stringValue": d.s(_tok(r, _ALNUM, 40))},
                                    },
                                    {"key": "http.request.body.size", "value": {"intValue": "512"}},
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }


def _span_log_record(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "body": "request completed",
        "severity_text": "INFO",
        "attributes": {
            "http.request.header.cookie": f"sid={d.s(_tok(r, _B64URL, 40))}; {d.k('lang=en-GB')}",
            "enduser.id": d.k("usr_" + _tok(r, _ALNUM, 14)),
            "messaging.destination.name": d.k("orders." + r.choice(("created", "paid"))),
        },
    }


_family("span_attributes", _span_http, _span_db, _span_genai, _span_otlp, _span_log_record)


def _tool_nested(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "config": {
            "integrations": [
                {
                    "type": "slack",
                    "credentials": {"botToken": d.s(_slack(r))},
                    "channel": d.k("#deploys"),
                },
                {"type": "pagerduty", "routingKey": d.s(_hex(r, 32)), "severity": d.k("critical")},
            ]
        }
    }


def _tool_key_styles(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "dbPassword": d.s(_password(r)),
        "api-key": d.s(_tok(r, _ALNUM, 32)),
        "ClientSecret": d.s(_tok(r, _B64URL, 40)),
        "passwordPolicy": {"minLength": 12, "requireSymbols": True, "name": d.k("corp-default-v2")},
        "tokenizer": d.k("cl100k_base"),
    }


def _tool_ecs_env(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "taskDefinitionArn": d.k(
            f"arn:aws:ecs:{r.choice(_REGIONS)}:{_account(r)}"
            f":task-definition/api:{r.randrange(1, 300)}"
        ),
        "containerDefinitions": [
            {
                "name": "api",
                "environment": [
                    {"name": "DB_PASSWORD", "value": d.s(_password(r))},
                    {"name": "STRIPE_KEY", "value": d.s(_stripe(r))},
                    {"name": "LOG_FORMAT", "value": d.k("json-compact")},
                ],
            }
        ],
    }


def _tool_double_encoded(d: _Draft) -> dict[str, Any]:
    r = d.rng
    inner = json.dumps({"user": _user(r), "password": d.s(_password(r)), "port": 5432})
    return {"tool": "read_file", "path": d.k("/etc/app/secrets.json"), "result": inner}


def _tool_graphql(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "data": {
            "viewer": {
                "apiTokens": {
                    "nodes": [
                        {
                            "name": d.k(f"{r.choice(_SERVICES)} CI"),
                            "token": d.s(_tok(r, _ALNUM, 40)),
                            "lastUsedAt": d.k(_iso(r)),
                        },
                    ]
                }
            }
        }
    }


def _tool_vault_read(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "request_id": d.k(_uuid(r)),
        "lease_id": "",
        "data": {
            "data": {
                "username": _user(r),
                "password": d.s(_password(r)),
                "api_key": d.s(_hex(r, 40)),
            },
            "metadata": {"created_time": d.k(_iso(r, ms=True)), "version": 3},
        },
    }


_family(
    "nested_tool_results",
    _tool_nested,
    _tool_key_styles,
    _tool_ecs_env,
    _tool_double_encoded,
    _tool_graphql,
    _tool_vault_read,
)


def _enc_urlencoded(d: _Draft) -> str:
    r = d.rng
    raw = (
        _tok(r, _ALNUM, 6)
        + r.choice("@#&!")
        + _tok(r, _ALNUM, 6)
        + r.choice("/+=%")
        + str(r.randrange(10, 99))
    )
    enc = urllib.parse.quote(raw, safe="")
    return (
        f"{_iso(r)} DEBUG form body: username={_user(r)}&password={d.s(enc)}&"
        f"{d.k('remember_me=on&next=%2Fdashboard')}\n"
    )


def _enc_b64_json_header(d: _Draft) -> str:
    r = d.rng
    blob = _b64(
        json.dumps({"user": _user(r), "password": _password(r), "tenant": _org(r)}).encode()
    )
    return (
        f"X-Auth-Context: {d.s(blob)}\n"
        f"X-Forwarded-Proto: https\nX-Request-Start: "
        f"{d.k('t=' + str(_epoch(r)) + '.' + str(r.randrange(100, 999)))}\n"
    )


def _enc_shell_b64(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    blob = _b64(f"export {name}={key}\n".encode())
    return (
        "#!/bin/sh\n# bootstrap credentials\n"
        f"echo '{d.s(blob)}' | base64 -d >> ~/.profile\n"
        f"{d.k('chmod 600 ~/.profile')}\n"
    )


def _enc_yaml_binary(d: _Draft) -> str:
    r = d.rng
    return (
        f"api_secret: !!binary {d.s(_b64(_tok(r, _ALNUM, 30).encode()))}\n"
        f"{d.k('api_base: https://api.' + _domain(r))}\n"
    )


def _enc_basic_token(d: _Draft) -> str:
    r = d.rng
    blob = _b64(f"x-access-token:{_github(r)}".encode())
    return (
        f"git -c http.extraHeader='Authorization: Basic {d.s(blob)}' "
        f"clone {d.k('https://github.com/' + _repo(r) + '.git')}\n"
    )


def _enc_jaas(d: _Draft) -> str:
    r = d.rng
    broker = f"pkc-{_tok(r, _LOWER_ALNUM, 5)}.{r.choice(_REGIONS)}.aws.confluent.cloud:9092"
    return (
        f"{d.k('security.protocol=SASL_SSL')}\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{_tok(r, _UPPER_ALNUM, 16)}" password="{d.s(_tok(r, _B64, 64))}";\n'
        f"bootstrap.servers={d.k(broker)}\n"
    )


_family(
    "encoded_secrets",
    _enc_urlencoded,
    _enc_b64_json_header,
    _enc_shell_b64,
    _enc_yaml_binary,
    _enc_basic_token,
    _enc_jaas,
)


def _split(s: str, rng: random.Random) -> tuple[str, str]:
    cut = rng.randrange(len(s) // 3, 2 * len(s) // 3)
    return s[:cut], s[cut:]


def _split_continuation(d: _Draft) -> str:
    r = d.rng
    name, key = _ai_key(r)
    a, b = _split(key, r)
    otel = "export OTEL_SERVICE_NAME=" + r.choice(_SERVICES)
    return f'export {name}="{d.s(a)}\\\n{d.s(b)}"\n{d.k(otel)}\n'


def _split_mime_wrap(d: _Draft) -> str:
    r = d.rng
    tok = _aws_session_token(r)
    lines = _wrap(tok, 76)
    _pem_marks(d, lines)
    return (
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 7bit\n\n"
        "Session token for the audit (expires in 1h):\n"
        + "\n".join(lines)
        + f"\n\n-- \n{d.k('Sent from the ' + _org(r) + ' ops mailer')}\n"
    )


def _split_next_line(d: _Draft) -> str:
    r = d.rng
    return (
        f"Service:   {d.k(r.choice(_SERVICES) + '-admin-console')}\nUsername:  admin\nPassword:\n"
        f"    {d.s(_password(r))}\n"
    )


def _split_concat(d: _Draft) -> str:
    r = d.rng
    key = _anthropic(r)
    a, b = _split(key, r)
    return f'API_KEY = (\n    "{d.s(a)}"\n    "{d.s(b)}"\n)\n{d.k("MAX_RETRIES = 5")}\n'


def _split_terminal(d: _Draft) -> str:
    """A log line hard-wrapped by a terminal at 120 columns, through a JWT: each piece of the
    token on a line (16 characters or more) is a secret."""
    r = d.rng
    tok = _jwt(r, rs256=True)
    line = f"{_iso(r)} DEBUG oidc: token acquired: {tok} (kid rotated)"
    lo_tok = line.index(tok)
    hi_tok = lo_tok + len(tok)
    for start in range(0, len(line), 120):
        lo, hi = max(start, lo_tok), min(start + 120, hi_tok)
        if hi - lo >= 16:
            d.s(line[lo:hi])
    return "\n".join(_wrap(line, 120)) + f"\n{d.k('oidc: refresh scheduled in 3300s')}\n"


def _split_yaml_folded(d: _Draft) -> str:
    r = d.rng
    tok = _tok(r, _B64, 120)
    a, b = tok[:60], tok[60:]
    return f"sendgrid:\n  {d.k('from: no-reply')}\n  api_key: >-\n    {d.s(a)}\n    {d.s(b)}\n"


_family(
    "split_and_wrapped",
    _split_continuation,
    _split_mime_wrap,
    _split_next_line,
    _split_concat,
    _split_terminal,
    _split_yaml_folded,
)


_LOCAL_LABELS = (
    "Passwort",
    "mot de passe",
    "contraseña",
    "пароль",
    "密码",
    "パスワード",
    "senha",
    "wachtwoord",
    "hasło",
    "parola",
    "lösenord",
    "비밀번호",
)


def _uni_localized(d: _Draft) -> str:
    r = d.rng
    label = r.choice(_LOCAL_LABELS)
    sep = "：" if label in ("密码", "パスワード", "비밀번호") else ": "
    host = "sftp." + _domain(r)
    return f"Server: {d.k(host)}\nBenutzer/user: {_user(r)}\n{label}{sep}{d.s(_password(r))}\n"


def _uni_fullwidth_key(d: _Draft) -> str:
    r = d.rng
    key = r.choice(("ｐａｓｓｗｏｒｄ", "pаssword", "PASSWORD", "pass\u00adword"))
    sep = r.choice(("=", "\u00a0=\u00a0", " = "))
    return f"{key}{sep}{d.s(_password(r))}\n{d.k('username_display=Ops Team')}\n"


def _uni_zero_width(d: _Draft) -> str:
    r = d.rng
    tok = _github(r)
    cut = r.randrange(8, len(tok) - 8)
    hidden = tok[:cut] + r.choice(("\u200b", "\u200c", "\u2060", "\ufeff")) + tok[cut:]
    return f"token copied from the wiki: {d.s(hidden)}\n{d.k('page: Onboarding/Access')}\n"


def _uni_non_ascii_pw(d: _Draft) -> str:
    r = d.rng
    pw = (
        r.choice(("Grüße", "Ñandú", "Çağlar", "Ærøskøbing", "Łódź", "Smørbrød"))
        + r.choice("#!-.")
        + _tok(r, _ALNUM, 8)
    )
    return f'db:\n  user: {_user(r)}\n  password: "{d.s(pw)}"\n  {d.k("charset: utf8mb4")}\n'


def _uni_cjk_adjacent(d: _Draft) -> str:
    r = d.rng
    _, key = _ai_key(r)
    return f"我的API密钥是{d.s(key)}请帮我配置到{d.k('生产环境')}。\n"


def _uni_bom_crlf(d: _Draft) -> str:
    r = d.rng
    return (
        f"\ufeffDB_PASSWORD={d.s(_password(r))}\r\nSMTP_PASSWORD={d.s(_password(r))}\r\n"
        f"{d.k('TZ=Europe/Berlin')}\r\n"
    )


_family(
    "unicode_and_localized",
    _uni_localized,
    _uni_fullwidth_key,
    _uni_zero_width,
    _uni_non_ascii_pw,
    _uni_cjk_adjacent,
    _uni_bom_crlf,
)


def _prose_staging(d: _Draft) -> str:
    r = d.rng
    return (
        f"Hey, the staging password is {d.s(_password(r))} — please rotate it after the demo on "
        f"{d.k(r.choice(('Thursday', 'Monday', 'Friday')) + ' at 10:00 CET')}.\n"
    )


def _prose_passphrase(d: _Draft) -> str:
    r = d.rng
    return (
        f"To unlock the release keystore use the passphrase {d.s(_password(r))}; "
        f"the alias is {d.k(_org(r) + '-upload')}.\n"
    )


def _prose_temp_password(d: _Draft) -> str:
    r = d.rng
    return (
        f"Welcome to {_org(r).capitalize()}!\nYour temporary password: {d.s(_password(r))}\n"
        f"{d.k('You will be asked to choose a new password at first sign-in.')}\n"
    )


def _prose_markdown_table(d: _Draft) -> str:
    r = d.rng
    rows = []
    for _ in range(2):
        rows.append(
            f"| {d.k(r.choice(_SERVICES) + '-' + r.choice(('grafana', 'kibana', 'argo')))} "
            f"| admin | {d.s(_password(r))} |"
        )
    return "| Service | User | Password |\n|---|---|---|\n" + "\n".join(rows) + "\n"


def _prose_slash(d: _Draft) -> str:
    r = d.rng
    return (
        f"router login: admin / {d.s(_password(r))} (web UI at {d.k('http://router.lan:8080')})\n"
        f"wifi: {d.k(_org(r) + '-guest')} key {d.s(_password(r))}\n"
    )


def _prose_creds_colon(d: _Draft) -> str:
    r = d.rng
    return (
        f"creds for the vendor portal are {r.choice(_FIRST)}.{r.choice(_LAST)}:{d.s(_password(r))},"
        f" "
        f"{d.k('MFA is still pending')}.\n"
    )


_family(
    "prose_credentials",
    _prose_staging,
    _prose_passphrase,
    _prose_temp_password,
    _prose_markdown_table,
    _prose_slash,
    _prose_creds_colon,
)

_CRYPT = _ALNUM + "./"


def _hash_shadow(d: _Draft) -> str:
    r = d.rng
    h = f"$6${_tok(r, _CRYPT, 16)}${_tok(r, _CRYPT, 86)}"
    return (
        f"{d.k('root:*:19742:0:99999:7:::')}\n"
        f"{r.choice(_FIRST)}:{d.s(h)}:19801:0:99999:7:::\n"
        f"{d.k('nobody:*:19742:0:99999:7:::')}\n"
    )


def _hash_htpasswd(d: _Draft) -> str:
    r = d.rng
    apr = f"$apr1${_tok(r, _CRYPT, 8)}${_tok(r, _CRYPT, 22)}"
    bcrypt = f"$2y$10${_tok(r, _CRYPT, 53)}"
    return f"{r.choice(_FIRST)}:{d.s(apr)}\n{r.choice(_FIRST)}:{d.s(bcrypt)}\n"


def _hash_django(d: _Draft) -> str:
    r = d.rng
    h = f"pbkdf2_sha256$600000${_tok(r, _ALNUM, 22)}${_b64(_rbytes(r, 32))}"
    return (
        "COPY auth_user (id, password, last_login, username) FROM stdin;\n"
        f"{r.randrange(1, 999)}\t{d.s(h)}\t{d.k(_iso(r, z=False).replace('T', ' '))}\t"
        f"{r.choice(_FIRST)}\n"
    )


def _hash_mysql(d: _Draft) -> str:
    r = d.rng
    return (
        "+------------+-------------------------------------------+\n"
        "| user       | authentication_string                     |\n"
        f"| {_user(r):<10} | {d.s('*' + _raw(r, '0123456789ABCDEF', 40))} |\n"
        f"| {d.k('mysql.sys')}  | {d.k('*THISISNOTAVALIDPASSWORDTHATCANBEUSEDHERE')} |\n"
    )


def _hash_ntlm(d: _Draft) -> str:
    r = d.rng
    return (
        f"Administrator:500:{d.k('aad3b435b51404eeaad3b435b51404ee')}:{d.s(_hex(r, 32))}:::\n"
        f"{d.k('Guest:501:aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0:::')}\n"
    )


def _hash_argon(d: _Draft) -> dict[str, Any]:
    r = d.rng
    salt = _b64(_rbytes(r, 16)).rstrip("=")
    digest = _b64(_rbytes(r, 32)).rstrip("=")
    h = f"$argon2id$v=19$m=65536,t=3,p=4${salt}${digest}"
    return {
        "id": d.k(_uuid(r)),
        "email_verified": True,
        "password_hash": d.s(h),
        "created": d.k(_iso(r)),
    }


_family(
    "password_hashes",
    _hash_shadow,
    _hash_htpasswd,
    _hash_django,
    _hash_mysql,
    _hash_ntlm,
    _hash_argon,
)


# --------------------------------------------------------------------------------------------
# Personal data (the `pii` contract: email, Luhn cards, IBAN, US SSN, phone, IP)
# --------------------------------------------------------------------------------------------


def _name(rng: random.Random) -> str:
    first, last = _person(rng)
    return f"{first.capitalize()} {last.capitalize()}"


def _em_headers(d: _Draft) -> str:
    r = d.rng
    dom = _domain(r)
    return (
        f"From: {_name(r)} <{d.s(_email(r))}>\nTo: {d.s(_email(r))}\n"
        f"Message-ID: <{_hex(r, 16)}.{_epoch(r)}@mail.{dom}>\n"
        f"Subject: {d.k('Re: invoice ' + str(r.randrange(10**5, 10**6)))}\n"
    )


def _em_record(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "id": d.k("usr_" + _tok(r, _ALNUM, 14)),
        "email": d.s(_email(r)),
        "plan": d.k(r.choice(("team-annual", "starter-monthly", "enterprise"))),
        "created_at": d.k(_iso(r)),
    }


def _em_git_log(d: _Draft) -> str:
    r = d.rng
    lib = r.choice(("axios", "requests", "serde"))
    subject = f"Bump {lib} to 1.{r.randrange(2, 9)}.{r.randrange(10)}"
    return (
        f"commit {d.k(_sha(r))}\nAuthor: {_name(r)} <{d.s(_email(r))}>\n"
        f"Date:   Tue Mar 12 14:{r.randrange(10, 59)}:07 2024 +0100\n\n"
        f"    {d.k(subject)}\n"
        f"remote: {d.k('https://github.com/' + _repo(r) + '.git')}\n"
    )


def _em_lookalikes(d: _Draft) -> str:
    r = d.rng
    return (
        f"Please contact {d.s(_email(r))} about the upgrade.\n"
        f"npm i {d.k('@types/node@20.' + str(r.randrange(1, 17)) + '.' + str(r.randrange(1, 30)))}"
        f"\n"
        f"scp build.tar {d.k('deploy@bastion-' + str(r.randrange(1, 9)) + ':/srv/releases/')}\n"
        f"image: {d.k('ghcr.io/' + _org(r) + '/api@sha256:' + _sha(r, 64))}\n"
    )


def _em_html(d: _Draft) -> str:
    r = d.rng
    e = d.s(_email(r))
    faq = f"https://help.{_domain(r)}/articles/{r.randrange(1000, 9999)}"
    return (
        f'<p>Questions? Write to <a href="mailto:{e}">{e}</a> or see '
        f'<a href="{d.k(faq)}">the FAQ</a>.</p>\n'
    )


_family("pii_emails", _em_headers, _em_record, _em_git_log, _em_lookalikes, _em_html, pii=True)


def _ph_card(d: _Draft) -> str:
    r = d.rng
    return (
        f"{_name(r)}\nTel: {d.s(_phone(r))}\nMobile: {d.s(_phone(r))}\n"
        f"{d.k('Office hours 09:00-17:30 CET')}\n"
    )


def _ph_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "customer": {"name": _name(r), "phone": d.s(_phone(r))},
        "order_id": d.k(f"ORD-{r.randrange(2023, 2026)}-{r.randrange(10**6, 10**7)}"),
        "placed_at": d.k(_iso(r)),
    }


def _ph_sms_log(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k(_iso(r, ms=True))} INFO sms.sent to={d.s(_phone(r))} template={d.k('otp_login_v3')} "
        f"segments=1 provider_id={d.k('SM' + _hex(r, 32))}\n"
    )


def _ph_chat(d: _Draft) -> str:
    r = d.rng
    return (
        f"Customer: please call me back at {d.s(_phone(r))} after 6pm, my ticket is "
        f"{d.k('SUP-' + str(r.randrange(10**4, 10**5)))} (app version "
        f"{d.k('7.' + str(r.randrange(10, 40)) + '.' + str(r.randrange(0, 9)))})\n"
    )


def _ph_signature(d: _Draft) -> str:
    r = d.rng
    street = f"{r.randrange(1, 200)} {r.choice(('Market', 'King', 'Mill'))} Street"
    return (
        f"--\n{_name(r)} | Account Manager\nT {d.s(_phone(r))} · "
        f"{d.k(street)}\n"
        f"{d.k('Registered in England No. ' + str(r.randrange(10**7, 10**8)))}\n"
    )


_family("pii_phones", _ph_card, _ph_json, _ph_sms_log, _ph_chat, _ph_signature, pii=True)


def _cc_log(d: _Draft) -> str:
    r = d.rng
    last4 = str(r.randrange(1000, 10000))
    return (
        f"{_iso(r)} WARN payment retry card={d.s(_card(r))} exp={r.randrange(1, 13):02d}/"
        f"{r.randrange(25, 31)} "
        f"amount={d.k(str(r.randrange(5, 900)) + '.' + str(r.randrange(10, 99)) + ' EUR')}\n"
        f"{_iso(r)} INFO  receipt shows {d.k('**** **** **** ' + last4)}\n"
    )


def _cc_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "card_number": d.s(_card(r)),
        "cardholder": _name(r),
        "order_number": d.k(_not_luhn(r, 16)),
        "auth_code": d.k(_tok(r, _UPPER_ALNUM, 6)),
    }


def _cc_chat(d: _Draft) -> str:
    r = d.rng
    return (
        f"user: my card is {d.s(_card(r))}, can you check why it was declined? "
        f"the reference was {d.k('TXN' + _not_luhn(r, 14))}\n"
    )


def _cc_form_dump(d: _Draft) -> str:
    r = d.rng
    return (
        "POST /checkout form={"
        f"'cc-number': '{d.s(_card(r))}', 'cc-exp': '0{r.randrange(1, 10)}/2{r.randrange(6, 9)}', "
        f"'tracking': '{d.k(_not_luhn(r, 16))}', 'sku': '{d.k('SKU-' + _tok(r, _UPPER_ALNUM, 8))}'"
        f"}}\n"
    )


_family("pii_cards", _cc_log, _cc_json, _cc_chat, _cc_form_dump, pii=True)


def _bic(rng: random.Random) -> str:
    return (
        _raw(rng, _UPPER, 4)
        + rng.choice(("DE", "FR", "GB", "NL"))
        + _raw(rng, _UPPER_ALNUM, 2)
        + "XXX"
    )


def _iban_sepa(d: _Draft) -> str:
    r = d.rng
    return (
        f"Beneficiary: {_name(r)}\nIBAN: {d.s(_iban(r))}\nBIC: {d.k(_bic(r))}\n"
        f"Reference: "
        f"{d.k('INV-' + str(r.randrange(2023, 2026)) + '-' + str(r.randrange(1000, 9999)))}\n"
    )


def _iban_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "payout": {"iban": d.s(_iban(r, grouped=False)), "bic": d.k(_bic(r)), "currency": "EUR"},
        "batch_id": d.k("po_" + _tok(r, _ALNUM, 20)),
    }


def _iban_invoice(d: _Draft) -> str:
    r = d.rng
    tax = f"{r.randrange(10, 99)}/{r.randrange(100, 999)}/{r.randrange(10000, 99999)}"
    return (
        f"Bitte überweisen Sie den Betrag bis zum "
        f"{d.k(str(r.randrange(1, 28)) + '.0' + str(r.randrange(1, 9)) + '.2025')} "
        f"auf das Konto IBAN {d.s(_iban(r, r.choice(('DE', 'AT', 'CH'))))}.\n"
        f"Steuernummer: {d.k(tax)}\n"
    )


def _iban_mixed(d: _Draft) -> str:
    r = d.rng
    return (
        f"refund requested — account {d.s(_iban(r))}, second account {d.s(_iban(r))}; "
        f"case {d.k('CASE-' + _tok(r, _UPPER_ALNUM, 10))}\n"
    )


_family("pii_ibans", _iban_sepa, _iban_json, _iban_invoice, _iban_mixed, pii=True)


def _ssn_form(d: _Draft) -> str:
    r = d.rng
    return (
        f"Applicant: {_name(r)}\nSSN: {d.s(_ssn(r))}\n"
        f"Employer EIN: {d.k(str(r.randrange(10, 99)) + '-' + str(r.randrange(10**6, 10**7)))}\n"
    )


def _ssn_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "employee": {"name": _name(r), "ssn": d.s(_ssn(r))},
        "zip": d.k(f"{r.randrange(10000, 99999)}-{r.randrange(1000, 9999)}"),
        "form": d.k("W-4 (2024)"),
    }


def _ssn_prose(d: _Draft) -> str:
    r = d.rng
    case_no = f"{r.randrange(100, 999)}-{r.randrange(1000, 9999)}-{r.randrange(10, 99)}"
    return f"Her social security number is {d.s(_ssn(r))} and the case number {d.k(case_no)}.\n"


def _ssn_csv(d: _Draft) -> str:
    r = d.rng
    rows = [
        f"{d.k('E' + str(r.randrange(10**5, 10**6)))},{_name(r)},"
        f"{d.s(_ssn(r).replace('-', '') if i else _ssn(r))}"
        for i in range(2)
    ]
    return "employee_id,name,ssn\n" + "\n".join(rows) + "\n"


_family("pii_us_ssn", _ssn_form, _ssn_json, _ssn_prose, _ssn_csv, pii=True)


def _ip_access(d: _Draft) -> str:
    r = d.rng
    return (
        f'{d.s(_public_ipv4(r))} - - [12/Mar/2024:10:11:12 +0000] "GET {d.k("/api/v1/health")} HTTP'
        f'/1.1" '
        f'200 17 "-" "{d.k("Go-http-client/1.1")}" upstream={d.k("nginx/1.25.4")}\n'
    )


def _ip_xff(d: _Draft) -> str:
    r = d.rng
    return (
        f"X-Forwarded-For: {d.s(_public_ipv4(r))}, {d.s(_public_ipv4(r))}\n"
        f"Via: {d.k('1.1 ' + _hex(r, 32) + '.cloudfront.net (CloudFront)')}\n"
    )


def _ip_v6_audit(d: _Draft) -> str:
    r = d.rng
    return (
        f"{_iso(r)} auth login ok user_id={r.randrange(10**4, 10**6)} from {d.s(_public_ipv6(r))} "
        f"os={d.k('Windows 10.0.19045.' + str(r.randrange(1000, 5000)))}\n"
    )


def _ip_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "client_ip": d.s(_public_ipv4(r)),
        "oid": d.k("1.3.6.1.4.1.311.21." + str(r.randrange(2, 20))),
        "app_version": d.k(f"v{r.randrange(1, 9)}.{r.randrange(0, 30)}.{r.randrange(0, 30)}"),
    }


_family("pii_ip_addresses", _ip_access, _ip_xff, _ip_v6_audit, _ip_json, pii=True)


def _csv_customers(d: _Draft) -> str:
    r = d.rng
    rows = ["customer_id,name,email,phone,country,signup_date,lifetime_value"]
    for _ in range(2):
        rows.append(
            f"{d.k('C' + str(r.randrange(10**6, 10**7)))},{_name(r)},{d.s(_email(r))},"
            f'"{d.s(_phone(r))}",{r.choice(("DE", "FR", "US", "GB"))},{d.k(_iso(r)[:10])},'
            f"{r.randrange(10, 9000)}.{r.randrange(10, 99)}"
        )
    return "\n".join(rows) + "\n"


def _csv_payments(d: _Draft) -> str:
    r = d.rng
    return (
        "invoice;iban;amount;email\n"
        f"{d.k('RE-' + str(r.randrange(10**5, 10**6)))};{d.s(_iban(r, grouped=False))};"
        f"{r.randrange(10, 999)},{r.randrange(10, 99)};{d.s(_email(r))}\n"
    )


def _csv_orders(d: _Draft) -> str:
    r = d.rng
    return (
        "order,card,ship_to_phone,sku\n"
        f"{d.k(_not_luhn(r, 12))},{d.s(_card(r))},{d.s(_phone(r))},"
        f"{d.k('SKU-' + _tok(r, _UPPER_ALNUM, 8))}\n"
    )


_family("pii_customer_exports", _csv_customers, _csv_payments, _csv_orders, pii=True)


# --------------------------------------------------------------------------------------------
# Look-alike families: nothing here is a secret or personal data; all of it must survive
# --------------------------------------------------------------------------------------------


def _kid_lockfile(d: _Draft) -> str:
    r = d.rng
    out = []
    for pkg in r.sample(("lodash", "react-dom", "zod", "undici", "tslib", "semver"), 2):
        ver = f"{r.randrange(1, 20)}.{r.randrange(0, 20)}.{r.randrange(0, 20)}"
        out.append(
            f'    "node_modules/{pkg}": {{\n      "version": "{ver}",\n'
            f'      "resolved": "{d.k(f"https://registry.npmjs.org/{pkg}/-/{pkg}-{ver}.tgz")}",\n'
            f'      "integrity": "{d.k("sha512-" + _b64(_rbytes(r, 64)))}"\n    }}'
        )
    return '  "packages": {\n' + ",\n".join(out) + "\n  }\n"


def _kid_pip_hashes(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('requests==2.32.' + str(r.randrange(0, 4)))} \\\n"
        f"    --hash=sha256:{d.k(_sha(r, 64))} \\\n"
        f"    --hash=sha256:{d.k(_sha(r, 64))}\n"
        f"{d.k('go.opentelemetry.io/otel v1.28.0 h1:' + _b64(_rbytes(r, 32)))}\n"
    )


def _kid_git(d: _Draft) -> str:
    r = d.rng
    lines = [
        f"{d.k(_sha(r)[:7])} {r.choice(('fix', 'feat', 'chore'))}: {r.choice(_WORDS)} handling"
        for _ in range(3)
    ]
    return (
        "\n".join(lines)
        + f"\nHEAD is now at {d.k(_sha(r))}\nMerge: {d.k(_sha(r)[:12])} {_sha(r)[:12]}\n"
    )


def _kid_docker(d: _Draft) -> str:
    r = d.rng
    return (
        "REPOSITORY   TAG       DIGEST                                                             "
        "       IMAGE ID\n"
        f"api          {d.k('2024.03.' + str(r.randrange(10, 28)))}   "
        f"{d.k('sha256:' + _sha(r, 64))}   {d.k(_sha(r, 12))}\n"
        f"container {d.k(_sha(r, 64))} started\n"
    )


def _kid_telemetry(d: _Draft) -> dict[str, Any]:
    r = d.rng
    ulid = "01" + _raw(r, _CROCKFORD, 24)
    return {
        "trace_id": d.k(_hex(r, 32)),
        "span_id": d.k(_hex(r, 16)),
        "request_id": d.k(_uuid(r)),
        "event_id": d.k(ulid),
        "k8s.pod.uid": d.k(_uuid(r)),
    }


def _kid_checksums(d: _Draft) -> str:
    r = d.rng
    ver = f"{r.randrange(0, 3)}.{r.randrange(0, 40)}.{r.randrange(0, 10)}"
    lic = 'LIC_FILES_CHKSUM = "file://LICENSE;md5=' + _sha(r, 32) + '"'
    return (
        f"{d.k(_sha(r, 64) + '  zeroclaw-' + ver + '-linux-amd64.tar.gz')}\n"
        f"{d.k(_sha(r, 64) + '  zeroclaw-' + ver + '-darwin-arm64.tar.gz')}\n"
        f"MD5 ({d.k('install.sh) = ' + _sha(r, 32))}\n"
        f"{d.k(lic)}\n"
    )


_family(
    "keep_ids_and_hashes",
    _kid_lockfile,
    _kid_pip_hashes,
    _kid_git,
    _kid_docker,
    _kid_telemetry,
    _kid_checksums,
)


def _kpk_authorized(d: _Draft) -> str:
    r = d.rng
    return (
        "\n".join(
            d.k(_ssh_public(r, f"{r.choice(_FIRST)}@{r.choice(('laptop', 'ci', 'bastion'))}"))
            for _ in range(2)
        )
        + "\n"
    )


def _kpk_cert_chain(d: _Draft) -> str:
    r = d.rng
    out = []
    for _ in range(2):
        block, body = _pem(r, "CERTIFICATE")
        lines = body.split("\n")
        d.k(lines[0])
        d.k(lines[len(lines) // 2])
        d.k(lines[-2])
        out.append(block)
    return "\n".join(out) + "\n"


def _kpk_public_pem_jwks(d: _Draft) -> str:
    r = d.rng
    block, body = _pem(r, "PUBLIC KEY")
    lines = body.split("\n")
    d.k(lines[0])
    d.k(lines[-2])
    jwks = {
        "keys": [
            {
                "kty": "RSA",
                "use": "sig",
                "kid": d.k(_tok(r, _B64URL, 22)),
                "n": d.k(_b64url(_rbytes(r, 256))),
                "e": "AQAB",
            }
        ]
    }
    return block + "\n" + json.dumps(jwks) + "\n"


def _kpk_known_hosts(d: _Draft) -> str:
    r = d.rng
    hashed = f"|1|{_b64(_rbytes(r, 20))}|{_b64(_rbytes(r, 20))}"
    return f"{d.k(hashed)} {d.k(_ssh_public(r))}\n{d.k('github.com')} {d.k(_ssh_public(r))}\n"


def _kpk_misc_public(d: _Draft) -> str:
    r = d.rng
    return (
        f"# recipients\n{d.k('age1' + _raw(r, _BECH32.lower(), 58))}\n"
        f"untrusted comment: minisign public key\n{d.k('RWQ' + _tok(r, _B64, 53))}\n"
        f"gpg fingerprint: {d.k(' '.join(_wrap(_raw(r, '0123456789ABCDEF', 40), 4)))}\n"
        f"wireguard peer PublicKey = {d.k(_b64(_rbytes(r, 32)))}\n"
    )


def _kpk_ca_configmap(d: _Draft) -> str:
    r = d.rng
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trusted-ca\ndata:\n"
        f"  ca.crt.b64: {d.k(_b64_pem(r, 'CERTIFICATE'))}\n"
        f"  sha256-fingerprint: {d.k(':'.join(_wrap(_raw(r, '0123456789ABCDEF', 64), 2)))}\n"
    )


_family(
    "keep_public_keys_certs",
    _kpk_authorized,
    _kpk_cert_chain,
    _kpk_public_pem_jwks,
    _kpk_known_hosts,
    _kpk_misc_public,
    _kpk_ca_configmap,
)


def _kpub_stripe(d: _Draft) -> str:
    r = d.rng
    return (
        f"const stripe = Stripe('{d.k('pk_live_' + _tok(r, _ALNUM, 99))}');\n"
        f"// test: {d.k('pk_test_' + _tok(r, _ALNUM, 24))}\n"
        f"const priceId = '{d.k('price_' + _tok(r, _ALNUM, 24))}';\n"
    )


def _kpub_browser_sdks(d: _Draft) -> str:
    r = d.rng
    org_id, project = r.randrange(10**5, 10**6), r.randrange(10**6, 10**7)
    dsn = f"https://{_hex(r, 32)}@o{org_id}.ingest.us.sentry.io/{project}"
    return (
        f"Sentry.init({{ dsn: '{dsn}' }});\n"
        f"posthog.init('{d.k('phc_' + _tok(r, _ALNUM, 43))}', {{ api_host: 'https://eu.i.posthog.co"
        f"m' }});\n"
        f'<div class="g-recaptcha" data-sitekey="{d.k("6L" + _tok(r, _B64URL, 38))}"></div>\n'
    )


def _kpub_oauth_ids(d: _Draft) -> str:
    r = d.rng
    client_id = (
        f"{r.randrange(10**11, 10**12)}-{_tok(r, _LOWER_ALNUM, 32)}.apps.googleusercontent.com"
    )
    claims = json.dumps(
        {"u": _org(r), "a": _tok(r, _LOWER_ALNUM, 25)}, separators=(",", ":")
    ).encode()
    mapbox = f"pk.{_b64url(claims)}.{_tok(r, _B64URL, 22)}"
    return (
        f"GOOGLE_CLIENT_ID={d.k(client_id)}\n"
        f'<script src="https://www.paypal.com/sdk/js?client-id={d.k("A" + _tok(r, _B64URL, 79))}&cu'
        f'rrency=EUR"></script>\n'
        f"mapboxgl.accessToken = '{d.k(mapbox)}';\n"
    )


def _kpub_frontend_env(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_' + _tok(r, _ALNUM, 24))}\n"
        f"{d.k('VITE_POSTHOG_KEY=phc_' + _tok(r, _ALNUM, 43))}\n"
        f"{d.k('NEXT_PUBLIC_ALGOLIA_APP_ID=' + _tok(r, _UPPER_ALNUM, 10))}\n"
    )


_family(
    "keep_publishable_keys", _kpub_stripe, _kpub_browser_sdks, _kpub_oauth_ids, _kpub_frontend_env
)

_REFERENCES = (
    "${DB_PASSWORD}",
    "${{ secrets.GITHUB_TOKEN }}",
    "{{ vault_api_key }}",
    "{{ .Values.postgresql.auth.password }}",
    'os.environ["OPENAI_API_KEY"]',
    "process.env.STRIPE_SECRET_KEY",
    'getpass.getpass("Password: ")',
    "Bearer $TOKEN",
    "$(cat /run/secrets/db_password)",
    "%(password)s",
    "<YOUR_API_KEY>",
    "your-api-key-here",
    "op://Production/Postgres/password",
    "vault kv get -field=password secret/prod/db",
    "valueFrom.secretKeyRef.name: db-credentials",
    "load_secret('prod/payments/stripe')",
    "ENV['AWS_SECRET_ACCESS_KEY']",
    'System.getenv("JWT_SECRET")',
    "${env:API_TOKEN}",
    "[REDACTED]",
    "********",
    "sk-...",
    "Authorization: Bearer <token>",
    "--password-stdin",
    "password: !vault |",
    '{{ secret "db/creds/app" }}',
    "xxxxxxxxxxxxxxxxxxxx",
    "changeit-in-production",
    "$ANSIBLE_VAULT;1.1;AES256",
    "os.getenv('SLACK_BOT_TOKEN')",
)


def _kref_sample(d: _Draft) -> str:
    r = d.rng
    picks = r.sample(_REFERENCES, 5)
    return (
        "\n".join(
            f"{r.choice(('value', 'password', 'token', 'api_key', 'secret'))}: {d.k(p)}"
            for p in picks
        )
        + "\n"
    )


def _kref_compose(d: _Draft) -> str:
    r = d.rng
    return (
        "services:\n  api:\n    environment:\n"
        f"      {d.k('DATABASE_PASSWORD: ${DATABASE_PASSWORD:?set it in .env}')}\n"
        f"      {d.k('API_KEY_FILE: /run/secrets/' + r.choice(_SERVICES) + '_api_key')}\n"
        "    secrets:\n"
        f"      - {d.k(r.choice(_SERVICES) + '_api_key')}\n"
        f'    command: ["sh", "-c", '
        f"{d.k(repr('export TOKEN=$$(cat /run/secrets/token) && exec ./api'))}]\n"
    )


def _kref_arns(d: _Draft) -> str:
    r = d.rng
    arn = (
        f"arn:aws:secretsmanager:{r.choice(_REGIONS)}:{_account(r)}:secret:prod/"
        f"{r.choice(_SERVICES)}/db-{_tok(r, _ALNUM, 6)}"
    )
    return (
        f'secret_arn = "{d.k(arn)}"\n'
        f'ssm_param  = "{d.k("/" + _org(r) + "/prod/stripe/secret_key")}"\n'
        f'kv_uri     = "'
        f'{d.k("https://" + _org(r) + "-kv.vault.azure.net/secrets/db-password/" + _hex(r, 32))}"\n'
        f'gcp_secret = "{d.k("projects/" + _org(r) + "-prod/secrets/api-key/versions/latest")}"\n'
    )


def _kref_code(d: _Draft) -> str:
    r = d.rng
    v = r.choice(("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DATABASE_PASSWORD"))
    return (
        f"{d.k(f'api_key = os.environ[{v!r}]')}\n"
        f"{d.k('password = getpass.getpass(prompt=' + repr('Vault password: ') + ')')}\n"
        f"{d.k('headers = {' + repr('Authorization') + ': f' + repr('Bearer {token}') + '}')}\n"
        f"{d.k(_GET_SECRET_LINE)}\n"
    )


_family("keep_secret_references", _kref_sample, _kref_compose, _kref_arns, _kref_code)

_CREDENTIAL_WORDS = (
    '"password_min_length": 12',
    "Forgot your password?",
    "password reset email sent",
    '"auth_method": "oauth2"',
    "max_tokens: 4096",
    "token_count=1832",
    "secret santa signup",
    "the tokenizer splits on whitespace",
    "passwordless login via magic link",
    "key_id: primary",
    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
    "password_expiry_days=90",
    "The secret to a good sourdough is time.",
    "rate limiter: token bucket, 50 tokens/s",
    '"secret_name": "db-credentials"',
    "api_key_header = APIKeyHeader(name='X-API-Key')",
    "keyboard layout: de-nodeadkeys",
    "Your password must contain at least one symbol.",
    "token_type=Bearer",
    "Authentication: required (token)",
    "access_log off;",
    "credentials: include",
    "SecretsManager: 4 secrets rotated",
    "key rotation scheduled",
    "invalid_grant: bad credentials",
    "tokens_per_minute: 90000",
    "grant_type=refresh_token",
    "auth.password.minLength=10",
)


def _kword_lines(d: _Draft) -> str:
    r = d.rng
    return "\n".join(d.k(w) for w in r.sample(_CREDENTIAL_WORDS, 5)) + "\n"


def _kword_json(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "password_policy": {
            "min_length": 12,
            "history": 5,
            "description": d.k("at least 12 characters, one digit"),
        },
        "auth_method": d.k(r.choice(("oauth2", "saml", "oidc"))),
        "token_usage": {
            "prompt_tokens": 1832,
            "completion_tokens": 211,
            "model": d.k(r.choice(_MODELS)),
        },
        "secret_manager_path": d.k(f"prod/{r.choice(_SERVICES)}/db"),
        "reset_url": d.k(f"https://app.{_domain(r)}/account/password/reset"),
    }


def _kword_prose(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('We rotated every API key last quarter')} and moved tokens to the vault. "
        f"{d.k('Passwords are hashed with Argon2id')}; "
        f"{d.k('the secret scanner runs on every push')}.\n"
        f"{d.k('Token limit reached (' + str(r.randrange(4, 128)) + 'k context)')}.\n"
    )


def _kword_config(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('LLM_MAX_TOKENS=' + str(r.choice((1024, 2048, 4096, 8192))))}\n"
        f"{d.k('PASSWORD_RESET_TIMEOUT=259200')}\n{d.k('SESSION_COOKIE_NAME=sid')}\n"
        f"{d.k('AUTH_PROVIDER=keycloak')}\n{d.k('SECRET_ROTATION_DAYS=30')}\n"
    )


_family("keep_credential_words", _kword_lines, _kword_json, _kword_prose, _kword_config)


def _kts_times(d: _Draft) -> str:
    r = d.rng
    t = _epoch(r)
    took = f"{r.randrange(1, 59)}m{r.randrange(1, 59)}.{r.randrange(100, 999)}s"
    return (
        f"{d.k(_iso(r, t, ms=True))} started, epoch_ms={d.k(str(t * 1000 + r.randrange(1000)))}\n"
        f"Date: {d.k('Tue, 12 Mar 2024 ' + str(r.randrange(10, 23)) + ':04:05 GMT')}\n"
        f"took {d.k(took)}\n"
        f"cron: {d.k('*/15 2-5 * * 1-5')}\n"
    )


def _kts_versions(d: _Draft) -> str:
    r = d.rng
    version = (
        f"{r.randrange(1, 5)}.{r.randrange(30)}.{r.randrange(30)}+build.{r.randrange(1000, 99999)}"
    )
    stamp = f"2024{r.randrange(1, 13):02d}{r.randrange(10, 28)}{r.randrange(100000, 235959)}"
    pseudo = f"v0.0.0-{stamp}-{_sha(r, 12)}"
    return (
        f"version: {d.k(version)}\n"
        f"go: {d.k(pseudo)}\n"
        f"image: {d.k('python:3.12.' + str(r.randrange(0, 9)) + '-slim-bookworm')}\n"
        f"kernel: {d.k('6.8.0-' + str(r.randrange(10, 60)) + '-generic')}\n"
    )


def _kts_k8s(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "metadata": {
            "resourceVersion": d.k(str(r.randrange(10**7, 10**9))),
            "creationTimestamp": d.k(_iso(r)),
            "generation": 7,
            "annotations": {"deployment.kubernetes.io/revision": d.k(str(r.randrange(1000, 9999)))},
        },
        "status": {"observedGeneration": 7, "conditions": [{"lastTransitionTime": d.k(_iso(r))}]},
    }


def _kts_mixed(d: _Draft) -> str:
    r = d.rng
    return (
        f"Windows build {d.k('10.0.22631.' + str(r.randrange(1000, 4000)))}, "
        f"Chrome {d.k('126.0.' + str(r.randrange(1000, 7000)) + '.' + str(r.randrange(10, 200)))}, "
        f"released {d.k('2024-0' + str(r.randrange(1, 9)) + '-1' + str(r.randrange(0, 9)))}, "
        f"schema {d.k('20240312_1530_add_index')}\n"
    )


_family("keep_timestamps_versions", _kts_times, _kts_versions, _kts_k8s, _kts_mixed)

_SENTENCES = (
    "The quarterly report is attached; revenue grew in every region except the north.",
    "Please review the onboarding checklist before Monday's stand-up meeting.",
    "Thanks for your order! Your package will ship within two business days.",
    "Reminder: the office will be closed on the public holiday next week.",
    "Meeting notes: we agreed to migrate the search cluster in the second sprint.",
)


def _kenc_mime(d: _Draft) -> str:
    r = d.rng
    text = r.choice(_SENTENCES) + " " + r.choice(_SENTENCES)
    return (
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
        + "\n".join(d.k(line) for line in _wrap(_b64(text.encode()), 76))
        + "\n"
    )


def _kenc_cursor(d: _Draft) -> dict[str, Any]:
    r = d.rng
    cursor = _b64(json.dumps({"offset": r.randrange(50, 5000), "sort": "created_at"}).encode())
    jwt_like = _b64url(b'{"page":' + str(r.randrange(2, 90)).encode() + b',"size":50}')
    return {
        "items": [],
        "next_page_token": d.k(cursor),
        "cursor": d.k(jwt_like),
        "etag": d.k('W/"' + _b64(_rbytes(r, 16)) + '"'),
    }


def _kenc_data_uri(d: _Draft) -> str:
    r = d.rng
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="{r.randrange(8, 64)}" height="16">'
    svg += f'<rect fill="#{_hex(r, 6)}"/></svg>'
    png = _b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + _rbytes(r, 120))
    return (
        f'<img src="data:image/svg+xml;base64,{d.k(_b64(svg.encode()))}">\n'
        f'<img src="data:image/png;base64,{d.k(png)}">\n'
    )


def _kenc_event(d: _Draft) -> dict[str, Any]:
    r = d.rng
    payload = json.dumps(
        {"event": "order.shipped", "order": r.randrange(10**5, 10**6), "carrier": "DHL"}
    )
    return {
        "messageId": d.k(str(r.randrange(10**15, 10**16))),
        "data": d.k(_b64(payload.encode())),
        "attributes": {"content-type": "application/json", "schema": d.k("orders.v3")},
    }


_family("keep_encoded_data", _kenc_mime, _kenc_cursor, _kenc_data_uri, _kenc_event)

_CODE_LINES = (
    "def get_api_key(self) -> str:",
    'PASSWORD_FIELD = "password"',
    "secret_key_length = 32",
    "tokens = tokenizer.encode(text)",
    'auth_header = f"Bearer {token}"',
    'KEY_PREFIX = "cache:user:"',
    "if not verify_password(plain, user.password_hash):",
    "password_hash VARCHAR(255) NOT NULL,",
    "class TokenBucket(RateLimiter):",
    "const [password, setPassword] = useState('');",
    "private final SecretKeySpec keySpec;",
    "func (c *Client) SetToken(token string) {",
    "export const API_KEY_HEADER = 'x-api-key';",
    "@field_validator('password')",
    "self.secret = secrets.token_urlsafe(32)",
    "return jwt.decode(token, key, algorithms=['RS256'])",
    '<input type="password" name="pwd">',
    "token_type_hint: str = 'access_token'",
    "assert len(api_key) == 40",
    "ALTER TABLE users ADD COLUMN api_key_hash TEXT;",
)


def _kcode_block(d: _Draft) -> str:
    r = d.rng
    return "\n".join(d.k(line) for line in r.sample(_CODE_LINES, 5)) + "\n"


def _kcode_diff(d: _Draft) -> str:
    r = d.rng
    a, b = r.sample(_CODE_LINES, 2)
    return (
        f"diff --git a/app/auth.py b/app/auth.py\nindex {d.k(_sha(r, 7) + '..' + _sha(r, 7))} 10064"
        f"4\n"
        f"-{d.k(a)}\n+{d.k(b)}\n"
    )


def _kcode_enum(d: _Draft) -> dict[str, Any]:
    return {
        "enum": ["password", "client_credentials", "refresh_token", "device_code"],
        "title": d.k("GrantType"),
        "description": d.k("OAuth 2.0 grant used to obtain the access token"),
        "examples": [d.k("client_credentials")],
    }


_family("keep_code_identifiers", _kcode_block, _kcode_diff, _kcode_enum)


def _kcloud_aws(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('i-0' + _raw(r, _HEX, 16))} {d.k('sg-0' + _raw(r, _HEX, 16))} "
        f"{d.k('vpc-' + _raw(r, _HEX, 17))} {d.k('subnet-0' + _raw(r, _HEX, 16))}\n"
        f"account {d.k(_account(r))} role "
        f"{d.k(f'arn:aws:iam::{_account(r)}:role/service-role/{r.choice(_SERVICES)}')}\n"
        f"distribution {d.k('E' + _tok(r, _UPPER_ALNUM, 13))} request-id {d.k(_uuid(r))}\n"
    )


def _kcloud_gcp_azure(d: _Draft) -> str:
    r = d.rng
    return (
        f"/subscriptions/{d.k(_uuid(r))}/resourceGroups/{d.k('rg-' + _org(r) + '-prod')}/providers/"
        f"Microsoft.Storage/storageAccounts/{_org(r).replace('-', '')}\n"
        f"projects/{d.k(_org(r) + '-prod-' + str(r.randrange(100000, 999999)))}/zones/"
        f"{d.k(r.choice(('europe-west1-b', 'us-central1-a')))}/instances/"
        f"{d.k('worker-' + _tok(r, _LOWER_ALNUM, 4))}\n"
    )


def _kcloud_sts_identity(d: _Draft) -> dict[str, Any]:
    r = d.rng
    acct = _account(r)
    return {
        "UserId": d.k("AIDA" + _tok(r, _UPPER + "234567", 17)),
        "Account": d.k(acct),
        "Arn": d.k(f"arn:aws:iam::{acct}:user/{r.choice(_FIRST)}"),
        "KeyId": d.k(_uuid(r)),
        "Region": d.k(r.choice(_REGIONS)),
    }


_family("keep_cloud_resource_ids", _kcloud_aws, _kcloud_gcp_azure, _kcloud_sts_identity)


def _kurl_query(d: _Draft) -> str:
    r = d.rng
    dom = _domain(r)
    search = f"https://shop.{dom}/search?q=winter+boots&page={r.randrange(2, 20)}&sort=price_asc"
    utm = f"utm_source=newsletter&utm_medium=email&utm_campaign=q{r.randrange(1, 5)}"
    blog = f"https://{dom}/blog/?{utm}"
    return (
        f"{d.k(search)}\n"
        f"{d.k(blog)}\n"
        f"{d.k(f'https://login.{dom}/authorize?response_type=code&client_id={r.choice(_SERVICES)}-web&redirect_uri=https%3A%2F%2Fapp.{dom}%2Fcb&scope=openid')}\n"
    )


def _kurl_remotes(d: _Draft) -> str:
    r = d.rng
    return (
        f"{d.k('https://github.com/' + _repo(r) + '.git')}\n"
        f"{d.k('ssh://gitlab.' + _domain(r) + ':2222/' + _repo(r) + '.git')}\n"
        f"{d.k('s3://' + _org(r) + '-backups/pg/' + _iso(r)[:10] + '/base.tar.zst')}\n"
        f"{d.k('https://dev.azure.com/' + _org(r) + '/_git/api')}\n"
    )


def _kurl_endpoints(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "token_url": d.k(f"https://auth.{_domain(r)}/oauth/token"),
        "jwks_uri": d.k(f"https://auth.{_domain(r)}/.well-known/jwks.json"),
        "password_reset_url": d.k(f"https://app.{_domain(r)}/reset-password"),
        "api_base": d.k(f"https://api.{_domain(r)}/v{r.randrange(1, 4)}"),
    }


_family("keep_urls_and_hosts", _kurl_query, _kurl_remotes, _kurl_endpoints)


def _knum_orders(d: _Draft) -> str:
    r = d.rng
    isbn = f"978-{r.randrange(2)}-{r.randrange(100, 999)}-{r.randrange(10000, 99999)}"
    isbn += f"-{r.randrange(10)}"
    return (
        f"Order {d.k(_not_luhn(r, 16))} shipped, tracking {d.k('1Z' + _tok(r, _UPPER_ALNUM, 16))}\n"
        f"ISBN {d.k(isbn)}\n"
        f"GTIN {d.k(_not_luhn(r, 13))}\n"
    )


def _knum_metrics(d: _Draft) -> str:
    r = d.rng
    return (
        f"p99={d.k(str(r.randrange(100, 999)) + '.' + str(r.randrange(100, 999)) + 'ms')} "
        f"bytes={d.k(str(r.randrange(10**9, 10**10)))} rows={d.k(str(r.randrange(10**6, 10**7)))}\n"
        f"port range {d.k('30000-32767')} uid {d.k(str(r.randrange(1000, 65000)))}\n"
        f"ticket {d.k('INC' + str(r.randrange(10**7, 10**8)))}\n"
    )


def _knum_invoice(d: _Draft) -> dict[str, Any]:
    r = d.rng
    return {
        "invoice_number": d.k(f"{r.randrange(2023, 2026)}-{r.randrange(10**5, 10**6)}"),
        "vat_id": d.k("DE" + str(r.randrange(10**8, 10**9))),
        "total": d.k(f"{r.randrange(10, 9999)}.{r.randrange(10, 99)}"),
        "due": d.k(f"2025-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d}"),
        "po": d.k(f"PO-{_not_luhn(r, 10)}"),
    }


_family("keep_numbers_not_pii", _knum_orders, _knum_metrics, _knum_invoice)

# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

FAMILIES: tuple[str, ...] = tuple(_REGISTRY)
"""Every family, in registration order: secret families, `pii_*`, then `keep_*`."""
PII_FAMILIES: tuple[str, ...] = tuple(f for f, (_, pii) in _REGISTRY.items() if pii)
KEEP_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f.startswith("keep_"))


def generate(seed: int = 0, per_family: int = 8) -> list[Case]:
    """The blind set: `per_family` cases of every family, identical for the same seed.

    Each family draws from its own `random.Random(f"blind:{seed}:{family}")` (string seeds are
    hashed with SHA-512, independent of `PYTHONHASHSEED`), so changing one family leaves the
    others' cases as they were.
    """
    cases: list[Case] = []
    for family, (variants, pii) in _REGISTRY.items():
        rng = random.Random(f"blind:{seed}:{family}")
        for i in range(per_family):
            draft = _Draft(rng)
            payload = variants[i % len(variants)](draft)
            cases.append(
                Case(
                    kind=family,
                    payload=payload,
                    secrets=tuple(dict.fromkeys(draft.secrets)),
                    keep=tuple(dict.fromkeys(draft.keep)),
                    pii=pii,
                )
            )
    return cases
