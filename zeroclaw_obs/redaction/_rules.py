"""The secret rules: provider token formats, then secrets known by what surrounds them.

This module owns the patterns (as `Spec` data) and the small checks that refine them. The
order of `token_specs()` and `context_specs()` is the order of the chain: when two rules
claim the same span, the earlier (more specific) one names it, so `token=ghp_…` is reported
as `github_token`, not `key_value`.

Pattern conventions (RE2, so no lookaround):
- A token format is its whole match (group 0, see `_token`), since a capture group would
  cost RE2 its fast DFA on long matches; a prefix-identified token may follow anything but
  a letter or digit, a boundary the pattern matches as one leading character that the
  scanner then skips (`Spec.lead`). Context rules capture the secret in groups.
- A token ends where its greedy character run ends; nothing after it is consumed, so two
  tokens one separator apart are both found, and the automaton never reads past the match.
- A length that must be exact is checked in Python (`_exactly`) on a greedy run: a longer
  run is some other string (a digest, an id) and is left alone.

Risky part: a prefix alone (`sk-`, `AKIA`) also starts look-alikes (`sk-learn-…`, slugs, ids
inside longer runs). The boundary and the randomness checks are what keep those.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ._assignments import is_sealed
from ._keys import NOT_SENSITIVE
from ._normalize import fold_key
from ._scanner import LEAD, Check, Hit, Spec
from ._validators import (
    is_basic_credential,
    is_ipv6,
    is_placeholder,
    is_public_value,
    is_uuid,
    looks_random,
)

__all__ = [
    "context_specs",
    "credential_file_specs",
    "generic_spec",
    "prose_specs",
    "sql_specs",
    "token_specs",
]

_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_ALNUM = _TOKEN_CHARS[:-2]
_KEY_CHARS = frozenset(_TOKEN_CHARS + ".")


def _token(rule_id: str, description: str, pattern: str, trigger: str, **kw: Any) -> Spec:
    """A token format known by its prefix: the whole match is the secret.

    By default the token must not be glued to a letter or digit (`xghp_…` is some other
    string) but may follow any other character: an identifier the model invents
    (`get_ghp_…`, `fetch-sk-proj-…`), a host or path (`x.xoxb-…`, `keys/AKIA…`). That boundary
    is part of the pattern (`Spec.lead`), not a check on the character before: a check would
    let a refused match (`task-sk-…` read from the `sk` inside `task`) consume the real
    token after it. Rules that pass `not_after` keep the older, stricter check.
    """
    if "not_after" not in kw:
        pattern = rf"{LEAD}(?:{pattern})"
        kw["lead"] = True
    return Spec(rule_id, description, pattern, trigger, secret=(0,), **kw)


def _exactly(*lengths: int) -> Check:
    """Accept a hit whose secret has one of `lengths` characters."""

    def check(hit: Hit) -> tuple[int, int] | None:
        return (hit.start, hit.end) if hit.end - hit.start in lengths else None

    return check


def _random_after(separator: str, min_len: int) -> Check:
    """Accept a hit whose part after the last `separator` looks generated (not a word)."""

    def check(hit: Hit) -> tuple[int, int] | None:
        tail = hit.text[hit.start : hit.end].rsplit(separator, 1)[-1]
        return (hit.start, hit.end) if looks_random(tail, min_len=min_len) else None

    return check


def _mixed_case_after(prefix_len: int) -> Check:
    """Accept a letters-heavy token (Hugging Face) whose body mixes cases and is not a word."""

    def check(hit: Hit) -> tuple[int, int] | None:
        body = hit.text[hit.start + prefix_len : hit.end]
        mixed = body != body.lower() and body != body.upper()
        return (hit.start, hit.end) if mixed and len(set(body)) >= 12 else None

    return check


def _pem_block(hit: Hit) -> tuple[int, int] | None:
    """An unclosed block whose last key line runs on into a token takes the whole run.

    Its body is base64, so it stops at the `_` of `…St7ghp_…` (a token glued to the last key
    line), and the rest of that run would be left as it was. A short piece after the last
    break (`ghp` of a token on its own line) is left to the token's rule, which claims the
    rest (see `resolve`), so the token keeps its own marker.
    """
    text, start, end = hit.text, hit.start, hit.end
    if text.endswith("-----", start, end) and "-----END" in text[start:end]:
        return start, end
    if end >= len(text) or text[end] not in _TOKEN_CHARS:
        return start, end
    line = max(text.rfind(brk, start, end) for brk in ("\n", "\\n", " ", "\t", "-----"))
    if end - line < _KEY_LINE_PIECE:
        return start, end
    while end < len(text) and text[end] in _TOKEN_CHARS:
        end += 1
    return start, end


def _putty_lines(hit: Hit) -> tuple[int, int] | None:
    """The `Private-Lines: N` block of a PuTTY key: its first N lines (`Private-MAC:` after
    them is a checksum, not key material)."""
    count, at = int(hit.key or "0"), hit.start
    text = hit.text
    for _ in range(count):
        newline = min(
            (i for i in (text.find("\n", at, hit.end), text.find("\\n", at, hit.end)) if i >= 0),
            default=-1,
        )
        if newline < 0:
            return hit.start, hit.end
        at = newline + (2 if text.startswith("\\n", newline) else 1)
    end = at - (2 if text[at - 2 : at] == "\\n" else 1)
    if text[end - 1 : end] == "\r":
        end -= 1
    elif text[end - 2 : end] == "\\r":
        end -= 2
    return (hit.start, end) if count and end > hit.start else None


_KEY_LINE_PIECE = 12
"""A last key line at least this long that runs on into a token is key material glued to it."""


def _aws_secret(hit: Hit) -> tuple[int, int] | None:
    """A 40-character base64 string is an AWS secret key only next to AWS context."""
    value = hit.text[hit.start : hit.end]
    if len(value) != 40 or not looks_random(value, min_len=40) or len(set(value)) < 20:
        return None
    window = hit.text[max(0, hit.start - 160) : hit.start].lower()
    context = ("aws", "akia", "asia", "secret_access", "secretaccess", "secret access")
    return (hit.start, hit.end) if any(word in window for word in context) else None


def _aws_key_id(hit: Hit) -> tuple[int, int] | None:
    following = hit.text[hit.end : hit.end + 1]
    if hit.end - hit.start != 20 or (following and following.isalnum()):
        return None
    return hit.start, hit.end


def _bearer(hit: Hit) -> tuple[int, int] | None:
    """Refuse prose after `Bearer`: a lone lower-case or capitalised word."""
    value = hit.text[hit.start : hit.end].rstrip(".,")
    if value.isalpha() and (value.islower() or value.istitle() or value.isupper()):
        return None
    if value.startswith(("[REDACTED", "$")) or is_placeholder(value):
        return None
    return hit.start, hit.start + len(value)


def _basic(hit: Hit) -> tuple[int, int] | None:
    """`Basic` credentials are base64 of `user:password`, or at least a random-looking token."""
    value = hit.text[hit.start : hit.end]
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if b":" in decoded and decoded.isascii():
        return hit.start, hit.end
    return (hit.start, hit.end) if looks_random(value, min_len=12) else None


def _url_credentials(hit: Hit) -> tuple[int, int] | None:
    """`user:password` before `@` in a URL; a bare port (`host:8080@`) is not a password."""
    password = hit.text[hit.start : hit.end].partition(":")[2]
    if not password or is_placeholder(password) or (password.isdigit() and len(password) <= 5):
        return None
    return hit.start, hit.end


_NOT_SECRET_CONTEXT = (
    "sha", "md5", "digest", "hash", "checksum", "integrity", "commit", "fingerprint",
    "public", "pub ", "uuid", "trace", "span", "request", "count", "etag", "version",
    "cert", "id:", "id=", "_id", " id ", "usage", "limit", "page", "next", "http",
)  # fmt: skip
_NOT_SECRET_PREFIXES = ("AAAA", "zc-receipt-", "sha256", "sha512", "sha1-", "sha384", "h1:")


def _generic(hit: Hit) -> tuple[int, int] | None:
    """A random-looking token right after a credential word (a few separators, at most a
    short word such as `is` or `base64` between them)."""
    value = hit.text[hit.start : hit.end].rstrip(".")
    core = value.rstrip("=")
    if "=" in core or "//" in value or value[0] == "/" or value.startswith(_NOT_SECRET_PREFIXES):
        return None  # `a=b` inside the run is an assignment; `//`, `/…` are URLs and paths
    gap = hit.text[hit.match_start + len(hit.key or "") : hit.start].lower()
    if "\0" in gap or any(word in gap for word in _NOT_SECRET_CONTEXT):
        return None  # a blanked marker between: the word's own value is already gone
    if is_uuid(core) or not looks_random(value) or is_public_value(value, hit):
        return None
    if _names_a_cursor(hit) or _qualified(hit) or is_sealed(hit.text, hit.match_start, value):
        return None
    return hit.start, hit.start + len(value)


_NOT_CREDENTIAL_QUALIFIERS = frozenset(
    {
        *("cache", "primary", "foreign", "sort", "partition", "idempotency", "routing"),
        *("object", "lookup", "hash", "row", "map", "dedup", "dedupe", "shard", "composite"),
        *("unique", "index", "bucket", "group", "message", "range", "cluster", "join"),
        *("public", "host", "kms", "next", "page", "continuation", "sync", "resume", "cursor"),
    }
)
"""Words that make `key` or `token` name something that is not a credential (`cache key`,
`partition key`, `public key`, `next token`)."""


def _qualified(hit: Hit) -> bool:
    """Whether the credential word follows a qualifier of `_NOT_CREDENTIAL_QUALIFIERS`
    (`cache key v2.…`, `sort_key=…`); looks back a bounded window."""
    before = hit.text[max(0, hit.match_start - 24) : hit.match_start].rstrip(" \t_-.")
    word = before[len(before.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")) :]
    return word.lower() in _NOT_CREDENTIAL_QUALIFIERS


def _names_a_cursor(hit: Hit) -> bool:
    """Whether the credential word ends a key known to hold a public value
    (`nextPageToken`, `pagination_token`: cursors; see `NOT_SENSITIVE`)."""
    start = hit.match_start
    while start > 0 and hit.text[start - 1] in _KEY_CHARS:
        start -= 1
        if hit.match_start - start > 64:
            return False
    key = fold_key(hit.text[start : hit.match_start + len(hit.key or "")])
    return key in NOT_SENSITIVE or "_".join(key.split("_")[-2:]) in NOT_SENSITIVE


def _following_is_not_token(hit: Hit) -> tuple[int, int] | None:
    following = hit.text[hit.end : hit.end + 1]
    return None if following and following in _TOKEN_CHARS else (hit.start, hit.end)


def token_specs() -> list[Spec]:
    """The provider token formats, most specific first."""
    pem_body = r"(?:[A-Za-z0-9+/=\s]|\\+[nrt/]|[A-Za-z][A-Za-z0-9-]{0,30}:[^\r\n\\]*)"
    # An unclosed block (a truncated key) is redacted through its base64 lines only. A space
    # goes on only before a long base64 chunk (a key whose line breaks became spaces) or a
    # padded last one, so the prose after a cut-off key survives.
    open_body = (
        r"(?:[A-Za-z0-9+/=\r\n]|\\+[nrt/]|[A-Za-z][A-Za-z0-9-]{0,30}:[^\r\n\\]*"
        r"|[ \t]+[A-Za-z0-9+/]{16}|[ \t]+[A-Za-z0-9+/]{2,15}={1,2})"
    )
    end = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    return [
        _token(
            "private_key_block",
            "PEM, OpenSSH and PGP private key blocks, whole (BEGIN to END), multi-line "
            "or JSON-escaped; an unclosed block through its base64 body",
            rf"-----BEGIN[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----"
            rf"(?:{pem_body}*?{end}|{open_body}*)",
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY",
            check=_pem_block,
            not_after="",
        ),
        _token(
            "private_key_block",
            "SSH2 (RFC 4716) private key blocks, whole",
            rf"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----"
            rf"(?:{pem_body}*?---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|{open_body}*)",
            r"---- BEGIN SSH2 ",
            not_after="",
        ),
        Spec(
            "private_key_block",
            "PuTTY private keys (.ppk): the Private-Lines block",
            r"Private-Lines:[ \t]*([0-9]{1,3})[ \t]*(?:\r?\n|\\r?\\n)"
            r"([A-Za-z0-9+/=]+(?:(?:\r?\n|\\r?\\n)[A-Za-z0-9+/=]+)*)",
            r"Private-Lines:",
            secret=(2,),
            key=(1,),
            check=_putty_lines,
        ),
        _token(
            "jwt",
            "JSON Web Tokens (header.payload.signature, base64url)",
            r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+){0,2}",
            r"eyJ[A-Za-z0-9_-]{8}",
        ),
        _token(
            "anthropic_key",
            "Anthropic API keys (sk-ant-…)",
            r"sk-ant-[A-Za-z0-9_-]{20,}",
            r"sk-ant-",
            check=_random_after("sk-ant-", 20),
        ),
        _token(
            "openai_key",
            "OpenAI API keys (sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…)",
            r"sk-[A-Za-z0-9_-]{20,}",
            r"sk-[A-Za-z0-9_-]{20}",
            check=_random_after("sk-", 20),
        ),
        _token(
            "stripe_key",
            "Stripe secret and restricted keys (sk_/rk_ live or test) and webhook secrets",
            r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,}",
            r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10}|whsec_",
            check=_random_after("_", 10),
        ),
        _token(
            "github_token",
            "GitHub tokens: classic and OAuth/app/refresh (ghp_ gho_ ghu_ ghs_ ghr_), "
            "fine-grained (github_pat_)",
            r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}",
            r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22}",
        ),
        _token(
            "gitlab_token",
            "GitLab tokens (glpat-, deploy, runner, trigger, OAuth and other gl…- prefixes)",
            r"(?:glpat|glptt|gldt|glrt|glrtr|glcbt|glffct|glsoat|gloas|glimt|glagent|glft|glwt)"
            r"-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*|GR1348941[A-Za-z0-9_-]{20,}",
            r"gl(?:pat|ptt|dt|rtr|rt|cbt|ffct|soat|oas|imt|agent|ft|wt)-|GR1348941",
        ),
        _token(
            "slack_token",
            "Slack bot, user, app, refresh and configuration tokens (xox?-, xapp-)",
            r"xox[abposr]-[0-9]+-[A-Za-z0-9-]{6,}|xoxe(?:\.xox[bp])?-[0-9]-[A-Za-z0-9-]{20,}"
            r"|xapp-[0-9]-[A-Za-z0-9-]{20,}",
            r"xox[abposre][.-]|xapp-[0-9]-",
        ),
        Spec(
            "slack_webhook",
            "Slack incoming-webhook and workflow URLs (the secret path is replaced)",
            r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{16,})",
            r"hooks\.slack\.com/",
        ),
        _token(
            "aws_access_key_id",
            "AWS access key ids (AKIA, ASIA, ABIA, ACCA, A3T…)",
            r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16,}",
            r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
            check=_aws_key_id,
        ),
        _token(
            "aws_secret_access_key",
            "AWS secret access keys: 40 random base64 characters near AWS context",
            r"[A-Za-z0-9/+]{40,}",
            r"(?i:aws|akia|asia|secret.?access)",
            check=_aws_secret,
            not_after=_ALNUM + "/+=",
        ),
        _token(
            "google_api_key",
            "Google API keys (AIza…)",
            r"AIza[A-Za-z0-9_-]{35,}",
            r"AIza[A-Za-z0-9_-]{35}",
            check=_exactly(39),
        ),
        _token(
            "google_oauth",
            "Google OAuth client secrets (GOCSPX-), access tokens (ya29.) and refresh tokens",
            r"GOCSPX-[A-Za-z0-9_-]{24,}|ya29\.[A-Za-z0-9_-]{30,}|1//0[A-Za-z0-9_-]{40,}",
            r"GOCSPX-|ya29\.|1//0[A-Za-z0-9_-]{40}",
        ),
        Spec(
            "azure_connection_string",
            "Azure storage / Service Bus / Event Hubs / Cosmos keys in connection strings "
            "(AccountKey=, SharedAccessKey=, SharedAccessSignature=)",
            r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]*=[ \t]*"
            r"([^;\"'\s<>]{8,})",
            r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]*=",
        ),
        _token(
            "azure_client_secret",
            "Azure AD / Entra application client secrets (…Q~…)",
            r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
            r"[0-9]Q~[A-Za-z0-9_~.-]{31}",
            check=_following_is_not_token,
        ),
        _token(
            "twilio_key",
            "Twilio account and API key SIDs (AC/SK + 32 hex), and the auth token or API secret "
            "written next to a SID or the word Twilio",
            r"(?:AC|SK)[0-9a-fA-F]{32}",
            r"(?:AC|SK)[0-9a-fA-F]{32}",
            check=_following_is_not_token,
        ),
        Spec(
            "twilio_key",
            "Twilio auth tokens and API secrets: 32 characters after a SID or the word Twilio",
            r"(?:(?:AC|SK)[0-9a-fA-F]{32}|(?i:twilio)[A-Za-z0-9_ .-]{0,30}?(?i:auth|token|secret)"
            r"[A-Za-z0-9_\"' \t-]{0,12}?[:=])[\"' \t,:=]{1,6}([0-9A-Za-z]{32})",
            r"(?:AC|SK)[0-9a-fA-F]{32}|(?i:twilio)",
            check=_following_is_not_token,
        ),
        _token(
            "sendgrid_key",
            "SendGrid API keys (SG.xxx.yyy)",
            r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,}",
            r"SG\.[A-Za-z0-9_-]{16}",
        ),
        _token(
            "npm_token",
            "npm access tokens (npm_…)",
            r"npm_[A-Za-z0-9]{36,}",
            r"npm_[A-Za-z0-9]{36}",
            check=_exactly(40),
        ),
        _token(
            "pypi_token",
            "PyPI and TestPyPI upload tokens (pypi-AgE…)",
            r"pypi-AgE[A-Za-z0-9_-]{40,}",
            r"pypi-AgE",
        ),
        _token(
            "huggingface_token",
            "Hugging Face user and organisation tokens (hf_…, api_org_…)",
            r"(?:hf_|api_org_)[A-Za-z0-9]{30,}",
            r"hf_[A-Za-z0-9]{30}|api_org_[A-Za-z0-9]{30}",
            check=_mixed_case_after(3),
        ),
        Spec(
            "datadog_key",
            "Datadog API (32 hex) and application (40 hex) keys next to dd/datadog names",
            r"(?i)(?:dd|datadog)[_-]?(?:api|app|application)[_-]?key"
            r"[\"']?[ \t]*[:=][ \t]*[\"']?([a-f0-9]{32,40})",
            r"(?i:dd|datadog)[_-]?(?i:api|app|application)[_-]?(?i:key)",
            check=_exactly(32, 40),
        ),
    ]


def context_specs() -> list[Spec]:
    """Secrets recognised by their surroundings: auth schemes and URL user info."""
    quoted = r"(?:\"[^\"\r\n]*\"|'[^'\r\n]*')"
    return [
        Spec(
            "basic_auth",
            "a password passed as a literal to an HTTP, SMTP or FTP client in code: "
            '`auth=("user", "…")`, `HTTPBasicAuth(…)`, `NetworkCredential(…)`, '
            "`SetBasicAuth(…)`, `.login(…)`, `smtp.PlainAuth(…)`",
            r"(?:(?:^|[^A-Za-z0-9_])auth[ \t]*[=:][ \t]*[(\[]|(?i:basicauth|digestauth|basic_auth"
            r"|networkcredential|usernamepasswordcredentials|passwordauthentication"
            r"|credentials\.basic)[ \t]*\(|\.(?:login|auth)[ \t]*\("
            rf"|(?i:plainauth)[ \t]*\([ \t]*{quoted}[ \t]*,)"
            rf"[ \t]*{quoted}[ \t]*,[ \t]*(?:\"([^\"\r\n]+)\"|'([^'\r\n]+)')",
            r"auth[ \t]*[=:][ \t]*[(\[]|(?i:basicauth|digestauth|basic_auth|networkcredential"
            r"|passwordcredentials|passwordauthentication|credentials\.basic|plainauth)[ \t]*\("
            r"|\.(?:login|auth)[ \t]*\(",
            secret=(1, 2),
            check=_placeholder_refused,
        ),
        Spec(
            "bearer",
            "Bearer tokens in Authorization values (the scheme word is kept)",
            r"(?i)(?:^|[^A-Za-z0-9_-])bearer[ \t]+([A-Za-z0-9._~+/=-]{8,})",
            r"(?i:bearer)[ \t]+[A-Za-z0-9._~+/=-]{8}",
            check=_bearer,
        ),
        Spec(
            "basic_auth",
            "HTTP Basic credentials (base64 of user:password; the scheme word is kept)",
            r"(?i)(?:^|[^A-Za-z0-9_-])basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})",
            r"(?i:basic)[ \t]+[A-Za-z0-9+/]{6}",
            check=_basic,
        ),
        Spec(
            "url_credentials",
            "user:password in URLs and connection strings (postgres://, mongodb+srv://, "
            "redis://:pass@, amqp://, https://user:pass@)",
            r"(?:^|[^A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://"
            r"([^\s/?#@:\"'<>\[\]\\]*:[^\s/?#\"'<>\\]+)@",
            r"://[^\s/?#@:\"'<>]*:[^\s/?#\"'<>]*@",
            check=_url_credentials,
        ),
    ]


def _sql_value(hit: Hit) -> tuple[int, int] | None:
    """Refuse bind parameters and keywords where a SQL statement's password goes."""
    value = hit.text[hit.start : hit.end]
    head = hit.text[hit.match_start : hit.start].lower()
    if head.endswith(_ORACLE_HEADS) or head.lstrip(" \t\r\n;").startswith(_ORACLE_HEADS):
        value = value.partition("/")[2]  # Oracle `user/password`: judge the password
    if value[0] in ":?$@" or is_placeholder(value) or value.lower() in _SQL_KEYWORDS:
        return None
    return hit.start, hit.end


_ORACLE_HEADS = ("jdbc:oracle", "sqlplus", "conn", "userid")
_SQL_KEYWORDS = frozenset({"values", "password", "externally", "globally", "expire", "null"})


def sql_specs() -> list[Spec]:
    """Passwords inside SQL statements and database client connection forms."""
    quoted = r"(?:N?'([^'\r\n]+)'|\"([^\"\r\n]+)\")"
    return [
        Spec(
            "sql_password",
            "passwords in SQL statements and database connect forms: IDENTIFIED BY …, "
            "[WITH] PASSWORD '…', SET PASSWORD FOR … = '…', PASSWORD = N'…', ODBC PWD={…}, "
            "Oracle user/password@db",
            r"(?i)identified[ \t]+(?:with[ \t]+[A-Za-z0-9_'\"]+[ \t]+)?(?:by|as)[ \t]+"
            rf"(?:password[ \t]+)?(?:{quoted}|([^\s'\";,()]+))"
            # `PASSWORD 'x'` (PostgreSQL), `= N'x'` (SQL Server), `= PASSWORD('x')` (MySQL);
            # `password = 'x'` is `key_value`'s
            r"|(?i)(?:^|[^A-Za-z0-9_])password[ \t]+(?:password[ \t]*\([ \t]*)?'([^'\r\n]+)'"
            r"|(?i)password[ \t]*=[ \t]*(?:N'([^'\r\n]+)'|password[ \t]*\([ \t]*'([^'\r\n]+)')"
            r"|(?i)set[ \t]+password[ \t]+for[ \t]+[^=;\r\n]{1,120}=[ \t]*"
            rf"(?:password[ \t]*\([ \t]*)?{quoted}"
            r"|(?i)(?:^|[;\"'\s])(?:pwd|password)[ \t]*=[ \t]*\{([^}\r\n]+)\}"
            # Oracle `user/password@db`: the pair, so an e-mail look-alike `password@db.host`
            # only partly overlaps it and loses (see `resolve`)
            r"|(?i)(?:jdbc:oracle:[a-z]+:|sqlplus[ \t]+(?:-[A-Za-z]+[ \t]+)*)[\"']?"
            r"([A-Za-z0-9_$#.]+/[^\s@/'\"]+)"
            r"|(?i)(?:(?:^|[\s;])conn(?:ect)?[ \t]+|userid[ \t]*=[ \t]*)[\"']?"
            r"([A-Za-z0-9_$#.]+/[^\s@/'\"]+)@",
            # The trigger is kept to keyword shapes: counted runs here multiply the gate's states.
            r"(?i:identified[ \t]+(?:with|by|as)|password[ \t]+(?:password[ \t]*\(|')"
            r"|password[ \t]*=[ \t]*(?:n'|password|\{)|set[ \t]+password|pwd[ \t]*=[ \t]*\{"
            r"|jdbc:oracle:|sqlplus[ \t]|conn(?:ect)?[ \t]|userid[ \t]*=)",
            secret=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
            check=_sql_value,
        ),
    ]


def _pgpass_password(hit: Hit) -> tuple[int, int] | None:
    """A `.pgpass` line: a port (or `*`), database and user that are names, and a password
    with no unescaped `:` (the format escapes it), so IPv6 addresses and times are refused."""
    line = hit.text[hit.match_start : hit.end].lstrip()
    fields = line.split(":", 4)
    password = hit.text[hit.start : hit.end].rstrip()
    if ":" in password.replace("\\:", "") or not password or is_ipv6(line.strip()):
        return None
    if any(f.isdigit() or not f for f in fields[2:4]) or is_placeholder(password):
        return None
    return hit.start, hit.start + len(password)


def _placeholder_refused(hit: Hit) -> tuple[int, int] | None:
    value = hit.text[hit.start : hit.end]
    return None if is_placeholder(value) or value[0] == "$" else (hit.start, hit.end)


def _docker_auth(hit: Hit) -> tuple[int, int] | None:
    """`"auth": "…"` holds base64 of `user:password` (Docker, Podman, containers auth.json)."""
    return (hit.start, hit.end) if is_basic_credential(hit.text[hit.start : hit.end]) else None


def credential_file_specs() -> list[Spec]:
    """Secrets in credential files whose syntax the `key_value` rules do not read."""
    return [
        Spec(
            "credential_file",
            "passwords in credential files: .netrc (machine … login … password …), "
            ".pgpass (host:port:db:user:password), .npmrc _auth/_password, Docker "
            'config.json "auth" (base64 user:password)',
            r"(?i)(?:^|\s)(?:machine[ \t]+[^\s]+|default)"
            r"(?:[ \t\r\n]+(?:login|account|port)[ \t]+[^\s]+)*[ \t\r\n]+password[ \t]+([^\s]+)",
            r"(?i:password)[ \t]+[^\s]",
            check=_placeholder_refused,
        ),
        Spec(
            "credential_file",
            "passwords in credential files (.pgpass lines)",
            r"(?m)^[ \t]*[^\s:#]+:(?:[0-9]{1,5}|\*):[^\s:]+:[^\s:]+:([^\r\n]+)",
            r":(?:[0-9]{1,5}|\*):[^\s:]+:[^\s:]+:",
            check=_pgpass_password,
        ),
        Spec(
            "credential_file",
            "passwords in credential files (.npmrc _auth and _password)",
            r"(?i)(?:^|[\s/:])_(?:auth|password)[ \t]*=[ \t]*[\"']?([^\s\"']+)",
            r"(?i:_auth|_password)[ \t]*=",
            check=_placeholder_refused,
        ),
        Spec(
            "credential_file",
            'passwords in credential files (Docker config.json "auth")',
            r"(?i)\\*[\"']?auth\\*[\"']?[ \t]*:[ \t]*\\*[\"']?([A-Za-z0-9+/]{8,}={0,2})",
            r"(?i:auth)\\*[\"']?[ \t]*:",
            check=_docker_auth,
        ),
    ]


def generic_spec() -> Spec:
    """The last secret rule: a random-looking token just after a credential word."""
    words = r"secret|token|passw(?:or)?d|passphrase|pwd|key|credentials?|bearer|signature"
    gap = r"s?[^A-Za-z0-9\r\n]{1,8}(?:[A-Za-z][A-Za-z0-9]{0,7}[^A-Za-z0-9+/_=.~\-\r\n]{1,4})?"
    return Spec(
        "generic_secret",
        "a long high-entropy token-like string right after a credential word "
        "(secret, token, password, key, …): a few separators, at most one short word between",
        # Separators, an optional short word (`is`, `base64`), separators, then the token:
        # a shape the DFA can run without a counted window over arbitrary text.
        rf"(?i)((?:{words})){gap}([A-Za-z0-9+/_=.~\-]{{20,}})",
        rf"(?i:{words}){gap}[A-Za-z0-9+/_=.~\-]{{20}}",
        secret=(2,),
        key=(1,),
        check=_generic,
    )


_SYMBOLS = frozenset("!#$%&*+-.=?@^_~")


def _credential_shaped(hit: Hit) -> tuple[int, int] | None:
    """A value a person typed as a credential: 8+ characters mixing letters and digits with
    a second case or a symbol; not a word, a path, a URL, an address, a date or an id."""
    value = hit.text[hit.start : hit.end].rstrip(".,;:!?)")
    if len(value) < 8 or is_placeholder(value) or is_uuid(value) or value.startswith(_NOT_PROSE):
        return None
    if value[0] == "%" and (value[1:2] == "(" or _HEX_DIGITS.issuperset(value[1:3])):
        return None  # a format string (`%(pw)s`) or URL-encoded text (`%2Fvar%2F…`)
    gap = hit.text[hit.match_start : hit.start].lower()
    if "=" in value.rstrip("=") or "\0" in gap or any(w in gap for w in _NOT_SECRET_CONTEXT):
        return None  # an assignment (`prompt_tokens=9099`), or a count, an id, a digest
    chars = set(value)
    lower, upper = value != value.upper(), value != value.lower()
    if not (any(c.isdigit() for c in value) and (lower or upper)):
        return None
    if not ((lower and upper) or chars & _SYMBOLS) or "@" in value or "://" in value:
        return None
    if value[:4].isdigit() and value[4:5] in "-/.":
        return None  # a date or a timestamp
    if len(value) >= 20 and not looks_random(value):
        return None
    if is_sealed(hit.text, hit.match_start, value):
        return None
    return hit.start, hit.start + len(value)


_NOT_PROSE = ("/", "~", "http", "www.", "$", "{", "<")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def prose_specs() -> list[Spec]:
    """Credentials pasted into chat: `my password is …`, `log in with admin / …`."""
    return [_prose_spec(), _login_pair_spec()]


def _login_pair_spec() -> Spec:
    """`log in with admin / Xk9…`, `creds: deploy/Xk9…`: a user, a slash, a password."""
    return Spec(
        "prose_secret",
        "a user and password pasted into chat after a login phrase (`try logging in with "
        "admin / …`, `creds: deploy/…`): the password, when it is credential-shaped",
        r"(?i)(?:^|[^A-Za-z0-9_])(?:log(?:ging)?[ \t-]?in|sign(?:ing)?[ \t-]?in|creds?"
        r"|credentials)[:,]?(?:[ \t]+[A-Za-z']{1,12}){0,3}?[ \t]+[A-Za-z0-9._@+-]{1,64}"
        r"[ \t]*/[ \t]*[\"'`]?([^\s\"'`]{8,})",
        r"(?i:log(?:ging)?[ \t-]?in|sign(?:ing)?[ \t-]?in|creds?|credentials)[:,]?[ \t]",
        check=_credential_shaped,
    )


def _prose_spec() -> Spec:
    """A credential pasted into chat: `my password is …`, `the token you need: …`."""
    noun = (
        r"passwords?|passphrase|passcode|pin|tokens?|secret|credentials?"
        r"|(?:my|this|the|our|your|api|access|secret|license|private)[ \t_-]+keys?"
    )
    return Spec(
        "prose_secret",
        "a credential pasted into prose or chat (`my password is …`, `the token you need: "
        "…`): a credential noun, a few short words, `is`/`:`, then a credential-shaped value",
        rf"(?i)(?:^|[^A-Za-z0-9_])(?:{noun})(?:[ \t]+[A-Za-z']{{1,12}}){{0,4}}?"
        r"(?:[ \t]+(?:is|was|=)|[ \t]*:)[ \t]+[\"'`]?([^\s\"'`]{8,})",
        # Keyword shapes only: a counted run here multiplies the gate's states.
        r"(?i:passwords?|passphrase|passcode|pin|tokens?|secret|credentials?|keys?)"
        r"(?:[ \t]|:[ \t])",
        check=_credential_shaped,
    )
