"""Sensitive keys: which key names hold secrets, in values and in `key=value` text.

One predicate, `SensitiveKeys.__contains__`, decides for both surfaces: `redact_value` asks it
for every dict key, and the `key_value` text rules find *candidate* keys with RE2 (any
identifier ending in a sensitive word, before a separator) and ask it too. So `db_password`,
`DB_PASSWORD=`, `"dbPassword":`, `--db-password x` and `<dbPassword>` agree.

A key is sensitive when its normalised form (`fold_key`) equals a sensitive name or ends with
`_` and one (`github_token`, `x_api_key`), or when its last word glues a long sensitive word
to a prefix (`dbpassword`, `apitoken`). Key names that *describe* a secret but hold metadata
end in another word and are not sensitive: `secret_name`, `token_count`, `max_tokens`,
`password_reset_url`, `api_key_id`, `token_type`, `secret_ttl`. A few compounds that end in a
sensitive word but hold no secret are listed explicitly: pagination tokens (`next_token`,
`page_token`) and token counts (`max_token`).

The assignment, header and name/value forms are `HeadValueRule`s: RE2 matches a short head
(key, separator, opening quote) with groups, then the value's extent without groups, so a
long quoted value (a PEM under `"private_key":`) keeps RE2 on its fast DFA.

Risky part: everything here errs towards sensitive. Widening `NOT_SENSITIVE` loses secrets;
it holds only names whose values are public by construction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._normalize import fold_key
from ._scanner import Check, Hit, Spec
from ._validators import is_code_reference, is_measurement, is_placeholder, is_public_value

__all__ = [
    "DEFAULT_SENSITIVE_KEYS",
    "METADATA_KEYS",
    "NOT_SENSITIVE",
    "SensitiveKeys",
    "key_value_specs",
]

DEFAULT_SENSITIVE_KEYS: frozenset[str] = frozenset(
    {
        *("password", "passwd", "pwd", "pw", "pass", "passphrase", "passcode"),
        *("secret", "client_secret", "secret_key", "secret_access_key"),
        *("token", "access_token", "refresh_token", "id_token", "auth_token", "session_token"),
        *("security_token", "bearer_token", "private_token"),
        *("api_key", "apikey", "x_api_key", "authorization", "proxy_authorization"),
        *("cookie", "set_cookie", "private_key", "credential", "credentials", "session"),
        *("access_key", "account_key", "shared_access_key", "signing_key", "encryption_key"),
        *("master_key", "app_key", "functions_key", "subscription_key", "hmac_key"),
        *("license_key", "secret_key_base"),
        *("private_key_id", "client_key_data", "secret_string"),
        *("sig", "signature"),
    }
)
"""Normalised key names (see `fold_key`) whose values are masked whole."""

NOT_SENSITIVE: frozenset[str] = frozenset(
    {
        *("next_token", "page_token", "next_page_token", "continuation_token"),
        *("pagination_token", "sync_token", "resume_token", "cancellation_token"),
        *("max_token", "min_token", "num_token", "total_token", "input_token", "output_token"),
        *("prompt_token", "completion_token", "public_key", "publishable_key"),
    }
)
"""Names that end in a sensitive word but hold public values (pagination cursors, counts)."""

_COMPOUNDS = {
    "private_key_id": r"key[_.-]?id",
    "client_key_data": r"key[_.-]?data",
    "secret_string": r"secret[_.-]?string",
}
"""Sensitive names whose last word alone (`id`, `data`, `string`) is everywhere: the text rules
look for the last two words instead, so `"data":` does not wake the `key_value` rules."""

_GLUED = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credentials")
_GLUED += ("credential", "cookie", "authorization")
"""Long sensitive words that count even when glued to a prefix (`dbpassword`, `apitoken`)."""

# Values under these keys inside a sensitive container describe it and are kept
# (`{"token": {"type": "bearer", "expires_in": 3600, "value": "…"}}` keeps type and expiry).
METADATA_KEYS: frozenset[str] = frozenset(
    {
        *("type", "kind", "method", "scheme", "algorithm", "alg", "name", "id", "count"),
        *("length", "ttl", "expires", "expires_in", "expires_at", "expiry", "expiration"),
        *("created", "created_at", "updated_at", "policy", "version", "provider", "format"),
    }
)


_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]{1,64}\]")
"""A marker inside a key stands for an opaque word: the rule id it names (`github_token`)
must not make a key sensitive on a second pass that the first pass did not mask."""


class SensitiveKeys:
    """The set of sensitive key names, asked with any spelling of a key."""

    __slots__ = ("_cache", "names", "words")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        last = {name.rsplit("_", 1)[-1] for name in self.names - _COMPOUNDS.keys()}
        self.words = frozenset(last | set(_GLUED) | set(_COMPOUNDS.values()))
        """Last words of sensitive names: what the text rules look for before a separator
        (RE2 fragments; a compound name contributes its last two words, see `_COMPOUNDS`)."""
        self._cache: dict[str, bool] = {}

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        hit = self._cache.get(key)
        if hit is None:
            hit = self._decide(fold_key(_MARKER.sub("_redacted_", key)))
            if len(self._cache) < 4096:
                self._cache[key] = hit
        return hit

    def _decide(self, key: str) -> bool:
        if not key or key in NOT_SENSITIVE:
            return False
        parts = key.split("_")
        if any("_".join(parts[i:]) in self.names for i in range(len(parts))):
            return "_".join(parts[-2:]) not in NOT_SENSITIVE
        return parts[-1].endswith(_GLUED)


def _alternation(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=lambda w: (-len(w), w)))


_SCHEME_WORDS = ("bearer", "basic", "token", "digest", "bot", "negotiate", "ntlm", "apikey")
_SCHEME = rf"(?:(?:{'|'.join(_SCHEME_WORDS)}|sso-key)[ \t]+)?"


_OPENING = r"(\\+\"|\"|')?"
"""A value's opening quote: escaped (`\"` in JSON inside JSON), double, single, or none."""


def _values(bare: str) -> dict[str, str]:
    """The value after each kind of opening quote, for `HeadValueRule`.

    A missing closing quote is allowed, so a value cut off by truncation is still found.
    """
    return {
        "": bare,
        '"': r"(?:[^\"\\\r\n]|\\[^\r\n])+",
        "'": r"[^'\r\n]+",
        "\\": r"[^\"\\\r\n]+",
    }


_PLAIN = r"[^\s\"'`,;&(){}\[\]<>\\]+"
_TO_EOL = r"[^\r\n\"'\\]+"
_SEPARATOR = r"(?:\\*[\"'])?\]?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\r?\n[ \t]*)?"
"""The separator may end its line: `password:` then the value alone on the next line (see
`_is_next_line_value`)."""
_KEY_CHARS = r"[A-Za-z0-9_.\-]"


def _value_check(keys: SensitiveKeys, *, labels: bool = False) -> Check:
    """Accept a value whose key is sensitive and which is not a placeholder or a path.

    With `labels`, `key: name=value` is read as a label then an assignment (see
    `_is_labelled_assignment`); headers (`Cookie: sid=…`) are not read that way.
    """

    def check(hit: Hit) -> tuple[int, int] | None:
        if hit.key is not None and hit.key not in keys:
            return None
        value = hit.text[hit.start : hit.end]
        stripped = value.rstrip()
        if not stripped or stripped[0] in "=>" or stripped == "$" or is_placeholder(stripped):
            return None  # `$` alone: the start of a `${VAR}` reference
        if stripped.lower() in _SCHEME_WORDS:
            return None  # a scheme word alone: its token was already replaced
        if stripped[0] in "/~" and hit.key is not None and hit.key.lower().endswith("pwd"):
            return None  # $PWD / OLDPWD hold the working directory, not a password
        if is_measurement(stripped):
            return None  # a count, a duration, a timestamp: see `is_measurement`
        following = hit.text[hit.start + len(stripped) : hit.start + len(stripped) + 1]
        if is_code_reference(stripped, following) or is_public_value(stripped, hit):
            return None  # `os.getenv(…)`, `settings.X`; a publishable key, a secret's ARN
        if labels and _is_labelled_assignment(hit, stripped):
            return None
        if "\n" in hit.text[hit.match_start : hit.start] and not _is_next_line_value(hit, stripped):
            return None
        return hit.start, hit.start + len(stripped)

    return check


def _is_next_line_value(hit: Hit, value: str) -> bool:
    """Whether a value on the line after its key is that key's value, not what follows.

    It must fill its line (prose that goes on is not one: `Password:` then `Reset your
    password…`), and not open a nested mapping (`min_length: 12`) or a list (`- name: ci`).
    """
    rest = hit.text[hit.start + len(value) : hit.start + len(value) + 3].lstrip("\"', \t")
    if rest and rest[0] not in "\r\n":
        return False
    return not value.endswith(":") and not value.startswith(("-", "#"))


def _is_labelled_assignment(hit: Hit, value: str) -> bool:
    """Whether `key: name=value` is a label then an assignment, not a key and its secret.

    The runtime's progress line `get_deploy_token: service=billing` names a tool whose name
    ends in a credential word; what follows the colon is that call's arguments. Only the
    colon form is read this way: after `=` (`password=a=b`) the whole value stays a secret,
    and an argument under a sensitive name (`…: token=x`) is caught by its own key.
    """
    if hit.key is None or ":" not in hit.text[hit.match_start + len(hit.key) : hit.start]:
        return False
    name, sep, rest = value.partition("=")
    bare = name.replace("_", "").replace("-", "").replace(".", "")
    return bool(sep and rest and rest[0] != "=" and bare.isalnum() and name[0].isalpha())


def key_value_specs(keys: SensitiveKeys) -> list[Spec]:
    """The `key_value` text rules for these sensitive keys, in chain order."""
    words = _alternation(keys.words)
    check = _value_check(keys)
    args = r"(?:[ \t][^\r\n;|&]*?)?[ \t]"  # a command's other arguments, then the flag
    describe = "values after sensitive keys in {} form"
    return [
        Spec(
            "key_value",
            describe.format("`Authorization:`/`Cookie:` header (to end of line)"),
            rf"(?i)({_KEY_CHARS}*(?:authorization|cookie))(?:\\*[\"'])?[ \t]*:[ \t]*"
            rf"{_OPENING}{_SCHEME}",
            r"(?i:authorization|cookie)\\*[\"']?[ \t]*:",
            secret=(2,),
            key=(1,),
            check=check,
            values=_values(_TO_EOL),
        ),
        Spec(
            "key_value",
            describe.format('`key=value`, `key: value`, `"key": "value"`, `key => value`'),
            rf"(?i)({_KEY_CHARS}*(?:{words})){_SEPARATOR}{_OPENING}{_SCHEME}",
            rf"(?i:{words})\\*[\"']?\]?[ \t]*[:=]",
            secret=(2,),
            key=(1,),
            check=_value_check(keys, labels=True),
            values=_values(_PLAIN),
        ),
        Spec(
            "key_value",
            describe.format("`--flag value` command-line"),
            rf"(?i)(?:(?:^|[ \t])--?({_KEY_CHARS}*(?:{words}))[ \t]+"
            r"(?:\"([^\"\r\n]+)\"?|'([^'\r\n]+)'?|([^\s\"'\-][^\s\"']*))"
            # an argv list: `'--api-key', 'value'` or `"--token", "value"`
            rf"|\\*[\"']--?({_KEY_CHARS}*(?:{words}))\\*[\"'][ \t]*,[ \t]*"
            r"(?:\\*\"([^\"\\\r\n]+)\\*\"|'([^'\r\n]+)'))",
            rf"-(?i:{words})(?:[ \t]+[^\s-]|\\*[\"'][ \t]*,)",
            secret=(2, 3, 4, 6, 7),
            key=(1, 5),
            check=check,
        ),
        Spec(
            "key_value",
            describe.format(
                "command-line password (`mysql -pPASS`, `sshpass -p`, `docker login -p`, "
                "`redis-cli -a`, `curl -u user:pass`, `mongosh -p`, `ldapsearch -w`, "
                "`smbclient -U user%pass`, `htpasswd -b`, `--password-stdin <<<`)"
            ),
            r"(?:^|[\s;|&(])(?:(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck"
            rf"|mysqlpump|mariadb|mariadb-dump)(?:\.exe)?{args}-p"
            rf"|sshpass{args}-p[ \t]*"
            rf"|(?:docker|podman|nerdctl|buildah|skopeo|helm registry) login{args}"
            r"(?:-p|--password)[ \t]+"
            rf"|redis-cli{args}-a[ \t]+"
            rf"|curl{args}(?:-u|--user)[ \t]*[\"']?[^\s:'\"]*:"
            r"|(?i:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)(?:\.exe)?"
            rf"{args}(?:-p|--password)[ \t]*"
            rf"|ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn){args}-w[ \t]*"
            rf"|smbclient{args}(?:-U|--user=?)[ \t]*[\"']?[^\s%'\"]+%"
            r"|htpasswd(?:[ \t]+-[A-Za-z]+)+[ \t]+[^\s-][^\s]*[ \t]+[^\s-][^\s]*[ \t]+"
            r"|--password-stdin[ \t]*<<<[ \t]*)"
            r"(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s'\"\-][^\s'\"]*))",
            r"(?i:mysql|mariadb|mongo)|sshpass|login[ \t]|redis-cli|curl[ \t]|ldap[a-z]+[ \t]"
            r"|smbclient|htpasswd|--password-stdin",
            secret=(1, 2, 3),
            check=check,
        ),
        Spec(
            "key_value",
            describe.format('name/value pair (`{"name": "DB_PASSWORD", "value": …}`)'),
            rf"(?i)(?:name|key)\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?([A-Za-z0-9_./\-]*(?:{words}))"
            r"\\*[\"']?[ \t]*,?[ \t\r\n]{0,40}?(?:-[ \t]+)?\\*[\"']?[A-Za-z_]{0,16}value\\*[\"']?"
            rf"[ \t]*[:=][ \t]*{_OPENING}{_SCHEME}",
            rf"(?i:{words})\\*[\"']?[ \t]*,?[ \t\r\n]{{0,40}}(?:-[ \t]+)?\\*[\"']?"
            r"[A-Za-z_]{0,16}(?i:value)",
            secret=(2,),
            key=(1,),
            check=check,
            values=_values(_PLAIN),
        ),
        Spec(
            "key_value",
            describe.format("XML element (`<password>…</password>`)"),
            rf"(?i)<([A-Za-z0-9_.:\-]*(?:{words}))(?:[ \t][^>]{{0,200}})?>([^<\r\n]+)</",
            rf"(?i:{words})(?:[ \t][^>]*)?>[^<]",
            secret=(2,),
            key=(1,),
            check=check,
        ),
    ]
