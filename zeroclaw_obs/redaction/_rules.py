"""The secret rules known by what surrounds a secret: auth schemes, URLs, SQL, credential
files, a credential word (prose and chat credentials are in `_prose.py`).

This module owns these patterns (as `Spec` data) and the small checks that refine them; the
provider token formats, which come first in the chain, are in `_tokens.py`. The order of
each function's list is the order of the chain: when two rules claim the same span, the
earlier (more specific) one names it. Context rules capture the secret in groups.

Risky part: these rules judge by context, so each refusal (a placeholder, a bind parameter,
a cursor, a qualified `cache key`) is what keeps a look-alike; each names the one it keeps.
"""

from __future__ import annotations

import base64
import binascii

from ._assignments import is_publishable, is_sealed, is_secret_reference
from ._keys import NOT_SENSITIVE
from ._normalize import fold_key
from ._prose import NOT_SECRET_CONTEXT, credential_shaped
from ._scanner import Hit, Spec, compile_pattern
from ._validators import (
    is_basic_credential,
    is_events_routing_key,
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
    "sql_specs",
]

_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


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


_NOT_SECRET_PREFIXES = ("AAAA", "zc-receipt-", "sha256", "sha512", "sha1-", "sha384", "h1:")


def _generic(hit: Hit) -> tuple[int, int] | None:
    """A random-looking token right after a credential word (a few separators, at most a
    short word such as `is` or `base64` between them)."""
    value = hit.text[hit.start : hit.end].rstrip(".")
    core = value.rstrip("=")
    if "=" in core or "//" in value or value[0] == "/" or value.startswith(_NOT_SECRET_PREFIXES):
        return None  # `a=b` inside the run is an assignment; `//`, `/…` are URLs and paths
    gap = hit.text[hit.match_start + len(hit.key or "") : hit.start].lower()
    if "\0" in gap or any(word in gap for word in NOT_SECRET_CONTEXT):
        return None  # a blanked marker between: the word's own value is already gone
    if is_uuid(core) or not looks_random(value) or is_public_value(value, hit):
        return None
    if is_publishable(value, hit.text, hit.start) or is_secret_reference(value):
        return None
    if "/" in value and hit.text[hit.match_start - 1 : hit.match_start] == "/":
        return None  # `…/secrets/db-password/3f2a…`: a path through a store names a resource
    if gap.lstrip(" \t").startswith("(") and _NAMED_ID.match(value) is not None:
        return None  # `credentials('registry-5d3b…')`: a call naming a stored credential
    if _names_a_cursor(hit) or _qualified(hit, value):
        return None
    if is_sealed(hit.text, hit.match_start, value):
        return None
    return hit.start, hit.start + len(value)


_NAMED_ID = compile_pattern(r"[A-Za-z]{3,}[-_/.]")
"""An id that starts with a word (`registry-5d3b…`, `prod/db`): what a call such as Jenkins'
`credentials('…')` or `get_secret("…")` takes is the name of a stored secret."""

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


def _qualified(hit: Hit, value: str) -> bool:
    """Whether the credential word follows a qualifier of `_NOT_CREDENTIAL_QUALIFIERS`
    (`cache key v2.…`, `sort_key=…`); looks back a bounded window. A `routing_key` holding a
    PagerDuty routing key (`is_events_routing_key`) is a credential all the same."""
    before = hit.text[max(0, hit.match_start - 24) : hit.match_start].rstrip(" \t_-.")
    word = before[len(before.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")) :]
    word = word.lower()
    if word == "routing" and is_events_routing_key(value):
        return False
    return word in _NOT_CREDENTIAL_QUALIFIERS


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
            "redis://:pass@, amqp://, https://user:pass@), and one-time credentials in a URL "
            "query or form body: an OAuth authorization code (`?code=…&state=`, "
            "`grant_type=authorization_code&code=…`), an `auth=` or `access_code=` token "
            "(random-looking values only; `code_challenge` is public)",
            r"(?:^|[^A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://"
            r"([^\s/?#@:\"'<>\[\]\\]*:[^\s/?#\"'<>\\]+)@"
            r"|[?&](?:code|auth|auth_code|access_code|authorization_code|ticket)="
            r"([A-Za-z0-9._~%+/-]{16,})",
            r"://[^\s/?#@:\"'<>]*:[^\s/?#\"'<>]*@"
            r"|[?&](?:code|auth|auth_code|access_code|authorization_code|ticket)=",
            secret=(1, 2),
            check=_url_secret,
        ),
        Spec(
            "command_secret",
            "a secret a shell command printed: the line after a `$ ` prompt whose command "
            "names a token, password or key (`kubectl config view … user.token`, "
            "`kubeadm token create`, `vault read -field=password …`), when the line is one "
            "credential-shaped value",
            r"(?m)^[ \t]*\$[ \t]+[^\r\n]*(?i:token|secret|passw(?:or)?d|passphrase|api[_-]?key"
            r"|credential|private[_-]?key|access[_-]?key)[^\r\n]*\r?\n[ \t]*([^\s]{8,})"
            r"[ \t]*\r?$",
            r"\$[ \t]",
            check=_command_output,
        ),
    ]


def _url_secret(hit: Hit) -> tuple[int, int] | None:
    """`user:password@` (see `_url_credentials`), or a query or form value (after `=`) that is
    a generated credential, not a word, id or number."""
    if hit.text[hit.start - 1 : hit.start] != "=":
        return _url_credentials(hit)
    value = hit.text[hit.start : hit.end]
    return (hit.start, hit.end) if looks_random(value, min_len=16) else None


def _command_output(hit: Hit) -> tuple[int, int] | None:
    """The printed line is a credential: not another prompt, a path, a URL, a resource name
    (`secret/db-creds`), a placeholder or a sentence; random-looking or credential-shaped."""
    value = hit.text[hit.start : hit.end]
    if value[0] in "$#>[{(<-" or "/" in value or is_placeholder(value):
        return None
    if looks_random(value, min_len=16) or _BOOTSTRAP_TOKEN.fullmatch(value) is not None:
        return hit.start, hit.end  # a kubeadm bootstrap token: `[a-z0-9]{6}.[a-z0-9]{16}`
    return credential_shaped(hit._replace(match_start=hit.start))


_BOOTSTRAP_TOKEN = compile_pattern(r"[a-z0-9]{6}\.[a-z0-9]{16}")


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
            r"([A-Za-z0-9_$#.]+/[^\s@/'\"]+)@"
            # SQL Server procedures that take a password positionally: sp_addlinkedsrvlogin
            # (the 5th argument, @rmtpassword), sp_addlogin (the 2nd, @passwd)
            r"|(?i)sp_addlinkedsrvlogin[ \t]+(?:(?:N?'[^'\r\n]*'|[A-Za-z0-9_@]+)[ \t]*,[ \t]*){4}"
            r"N?'([^'\r\n]+)'"
            r"|(?i)sp_addlogin[ \t]+N?'[^'\r\n]*'[ \t]*,[ \t]*N?'([^'\r\n]+)'",
            # The trigger is kept to keyword shapes: counted runs here multiply the gate's states.
            r"(?i:identified[ \t]+(?:with|by|as)|password[ \t]+(?:password[ \t]*\(|')"
            r"|password[ \t]*=[ \t]*(?:n'|password|\{)|set[ \t]+password|pwd[ \t]*=[ \t]*\{"
            r"|jdbc:oracle:|sqlplus[ \t]|conn(?:ect)?[ \t]|userid[ \t]*=|sp_addl)",
            secret=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13),
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
        # Case-blind like the pattern, its `s?` included (`KEYS: …`).
        rf"(?i:(?:{words}){gap})[A-Za-z0-9+/_=.~\-]{{20}}",
        secret=(2,),
        key=(1,),
        check=_generic,
    )
