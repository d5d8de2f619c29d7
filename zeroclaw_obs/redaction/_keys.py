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

from ._assignments import SCHEME_WORDS, value_check
from ._normalize import fold_key
from ._scanner import Check, Hit, Spec

__all__ = [
    "DEFAULT_SENSITIVE_KEYS",
    "LOCALIZED_PASSWORD_WORDS",
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
        # WordPress keys and salts (wp-config.php): secrets despite their names
        *("auth_key", "secure_auth_key", "logged_in_key", "nonce_key"),
        *("auth_salt", "secure_auth_salt", "logged_in_salt", "nonce_salt"),
        # peppers: the server-side secret mixed into password hashes (Devise, Laravel)
        *("pepper", "password_pepper"),
        # PKCE's code verifier and OAuth 1's verifier: what redeems an authorization code
        *("code_verifier", "oauth_verifier"),
    }
)
"""Normalised key names (see `fold_key`) whose values are masked whole."""

LOCALIZED_PASSWORD_WORDS: tuple[str, ...] = (
    *("passwort", "kennwort", "mot_de_passe", "motdepasse", "contraseña", "contrasena"),
    *("senha", "wachtwoord", "lösenord", "losenord", "adgangskode", "passord", "salasana"),
    *("hasło", "haslo", "heslo", "jelszó", "jelszo", "şifre", "sifre", "parola", "parolă"),
    *("пароль", "パスワード", "密码", "密碼", "비밀번호", "κωδικός", "mật_khẩu", "matkhau"),
    *("kata_sandi", "katasandi", "kata_laluan"),
)
"""`password` in the languages config files and forms are written in (German `Passwort`,
Portuguese `senha`, Swedish `lösenord`, Russian `пароль`, …), spelled as `fold_key` spells
them (so `Пароль`, whose Cyrillic letters the shadow folds, matches too). `parola` is
Turkish and Romanian for password (Italian for "word", which no config names a key);
Spanish `clave` ("key", any key) is left out."""

NOT_SENSITIVE: frozenset[str] = frozenset(
    {
        *("next_token", "page_token", "next_page_token", "continuation_token"),
        *("pagination_token", "sync_token", "resume_token", "cancellation_token"),
        *("max_token", "min_token", "num_token", "total_token", "input_token", "output_token"),
        *("prompt_token", "completion_token", "public_key", "publishable_key"),
    }
)
"""Names that end in a sensitive word but hold public values (pagination cursors, counts)."""

_LOCALIZED_COMPOUNDS = {
    "mot_de_passe": r"mot[_. -]?de[_. -]?passe",
    "kata_sandi": r"kata[_. -]?sandi",
    "kata_laluan": r"kata[_. -]?laluan",
    "mật_khẩu": r"mật[_. -]?khẩu",
}
_COMPOUNDS = {
    "private_key_id": r"key[_.-]?id",
    "client_key_data": r"key[_.-]?data",
    "secret_string": r"secret[_.-]?string",
}
"""Sensitive names whose last word alone (`id`, `data`, `string`) is everywhere: the text rules
look for the last two words instead, so `"data":` does not wake the `key_value` rules."""

_GLUED = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credentials")
_GLUED += ("credential", "cookie", "authorization", "storepass", "keypass")
"""Long sensitive words that count even when glued to a prefix (`dbpassword`, `apitoken`,
keytool's `-srcstorepass` and `-destkeypass`)."""

# Values under these keys inside a sensitive container describe it and are kept
# (`{"token": {"type": "bearer", "expires_in": 3600, "value": "…"}}` keeps type and expiry).
METADATA_KEYS: frozenset[str] = frozenset(
    {
        *("type", "kind", "method", "scheme", "algorithm", "alg", "name", "id", "count"),
        *("length", "ttl", "expires", "expires_in", "expires_at", "expiry", "expiration"),
        *("created", "created_at", "updated_at", "policy", "version", "provider", "format"),
    }
)


_LOCALIZED = frozenset(fold_key(word) for word in LOCALIZED_PASSWORD_WORDS)

_VERSION = re.compile(r"v?[0-9]{1,2}")
"""A last word that numbers a version of what the key names (`password_v4`, `token_2`)."""
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]{1,64}\]")
"""A marker inside a key stands for an opaque word: the rule id it names (`github_token`)
must not make a key sensitive on a second pass that the first pass did not mask."""


class SensitiveKeys:
    """The set of sensitive key names, asked with any spelling of a key."""

    __slots__ = ("_cache", "localized", "names", "words")

    def __init__(self, names: Iterable[str]) -> None:
        given = frozenset(names)
        self.names = given | _LOCALIZED
        last = {name.rsplit("_", 1)[-1] for name in given - _COMPOUNDS.keys() - _LOCALIZED}
        self.words = frozenset(last | set(_GLUED) | set(_COMPOUNDS.values()))
        """Last words of sensitive names: what the text rules look for before a separator
        (RE2 fragments; a compound name contributes its last two words, see `_COMPOUNDS`)."""
        single = _LOCALIZED - _LOCALIZED_COMPOUNDS.keys()
        self.localized = frozenset(single | set(_LOCALIZED_COMPOUNDS.values()))
        """`password` in other languages (`LOCALIZED_PASSWORD_WORDS`), for a rule of their own:
        in the main rules' alternation their letters (Cyrillic, CJK, accents under `(?i)`)
        grew the automata every dense text runs through."""
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
        if len(parts) > 1 and _VERSION.fullmatch(parts[-1]):
            parts = parts[:-1]  # `smtp_password_v4`, `api_key_2`: a version of the same secret
        elif parts[-1][-1:].isdigit() and len(parts[-1].rstrip("0123456789")) >= 3:
            parts[-1] = parts[-1].rstrip("0123456789")  # `password2`
        if "_".join(parts) in NOT_SENSITIVE:
            return False
        if any("_".join(parts[i:]) in self.names for i in range(len(parts))):
            return "_".join(parts[-2:]) not in NOT_SENSITIVE
        return parts[-1].endswith(_GLUED)


def _alternation(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=lambda w: (-len(w), w)))


_SCHEME = rf"(?:(?:{'|'.join(SCHEME_WORDS)}|sso-key)[ \t]+)?"


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
_BLOCK_OR_PLAIN = rf"(?:>[1-9+-]{{0,3}}|{_PLAIN})"
"""A plain value, or a YAML folded block indicator (`api_key: >-`), which `_PLAIN` cannot
start with (`>` ends a tag elsewhere); `|` blocks are plain values already."""
_SEPARATOR = r"(?:\\*[\"'])?\]?[ \t]*(?:=>|:=|[:=])[ \t]*(?:\r?\n[ \t]*)?"
"""The separator may end its line: `password:` then the value alone on the next line (see
`_is_next_line_value`)."""
_KEY_CHARS = r"[A-Za-z0-9_.\-]"
_SETTERS = (
    r"define|setenv|putenv|set|put|setproperty|setrequestproperty|setheader|addheader|header"
    r"|getenv|get|entry|of|add|append"
)
"""Calls whose first two arguments are a name and its value (`define('DB_PASSWORD', …)`,
`os.getenv("API_KEY", "<default>")`, `Map.of("password", …)`)."""
_VERSIONED = r"(?:[_-]?[vV]?[0-9]{1,2})?"
"""A version after the sensitive word (`SMTP_PASSWORD_V2`, `api_key2`), see `_VERSION`."""


def _shell_literal(check: Check) -> Check:
    """`check`, refusing a shell expansion (`echo "$CI_TOKEN" | …`): the secret is elsewhere."""

    def refine(hit: Hit) -> tuple[int, int] | None:
        return None if "$" in hit.text[hit.start : hit.end] else check(hit)

    return refine


def _table_value(check: Check) -> Check:
    """`check` for a table cell: a lone word is a description (`| password | string |`,
    `| token | Yes |`), so the value must hold a digit or a symbol."""

    def refine(hit: Hit) -> tuple[int, int] | None:
        value = hit.text[hit.start : hit.end]
        return None if value.replace("-", "").replace("_", "").isalpha() else check(hit)

    return refine


def _assignment(keys: SensitiveKeys, words: str, description: str, opening: str, bare: str) -> Spec:
    """The `key=value` form for keys ending in one of `words` (an RE2 alternation): the head
    up to the value's opening (`opening`, holding `_OPENING`'s group), then a `bare` value or
    a quoted one (`HeadValueRule`)."""
    return Spec(
        "key_value",
        description,
        rf"(?i)({_KEY_CHARS}*(?:{words}){_VERSIONED}){_SEPARATOR}{opening}",
        rf"(?i:{words}){_VERSIONED}\\*[\"']?\]?[ \t]*[:=]",
        secret=(2,),
        key=(1,),
        check=value_check(keys, labels=True),
        values=_values(bare),
    )


def key_value_specs(keys: SensitiveKeys) -> list[Spec]:
    """The `key_value` text rules for these sensitive keys, in chain order."""
    words = _alternation(keys.words)
    localized = _alternation(keys.localized)
    check = value_check(keys)
    args = r"(?:[ \t][^\r\n;|&]*?)?[ \t]"  # a command's other arguments, then the flag
    describe = "values after sensitive keys in {} form"
    return [
        Spec(
            "key_value",
            describe.format("`Authorization:` header (to end of line)"),
            rf"(?i)({_KEY_CHARS}*authorization)(?:\\*[\"'])?[ \t]*:[ \t]*{_OPENING}{_SCHEME}",
            r"(?i:authorization)\\*[\"']?[ \t]*:",
            secret=(2,),
            key=(1,),
            check=check,
            values=_values(_TO_EOL),
        ),
        _assignment(
            keys,
            words,
            describe.format('`key=value`, `key: value`, `"key": "value"`, `key => value`'),
            # `<%= '…' %>`, `{{ "…" }}`: a template printing a literal (see `value_check`)
            rf"(?:(?:<%[=-]|\{{\{{)[ \t]*)?{_OPENING}{_SCHEME}",
            _BLOCK_OR_PLAIN,
        ),
        _assignment(
            keys,
            localized,
            describe.format("`Passwort: value`, `senha=value` (password in other languages)"),
            _OPENING,
            _PLAIN,
        ),
        Spec(
            "key_value",
            describe.format("`--flag value` command-line"),
            rf"(?i)(?:(?:^|[ \t])--?({_KEY_CHARS}*(?:{words}))[ \t]+"
            r"(?:\"([^\"\r\n]+)\"?|'([^'\r\n]+)'?|([^\s\"'\-][^\s\"']*))"
            # an argv list: `'--api-key', 'value'` or `"--token", "value"`
            rf"|\\*[\"']--?({_KEY_CHARS}*(?:{words}))\\*[\"'][ \t]*,[ \t]*"
            r"(?:\\*\"([^\"\\\r\n]+)\\*\"|'([^'\r\n]+)'))",
            rf"-(?i:{words})(?:[ \t]+[^\s-]|\\*[\"'][ \t]*,)|(?i:storepass|keypass)[ \t]",
            secret=(2, 3, 4, 6, 7),
            key=(1, 5),
            check=check,
        ),
        Spec(
            "key_value",
            describe.format(
                "command-line password (`mysql -pPASS`, `sshpass -p`, `docker login -p`, "
                "`redis-cli -a`, `curl -u user:pass`, `mongosh -p`, `ldapsearch -w`, "
                "`smbclient -U user%pass`, `htpasswd -b`, `--password-stdin <<<`, `sqlcmd -P`, "
                "`az login -p`, `openssl -passin pass:`, `ipmitool -P`, `xfreerdp /p:`, `7z -p`, "
                "`zip -P`, `ssh-keygen -N`)"
            ),
            r"(?:^|[\s;|&(])(?:(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck"
            rf"|mysqlpump|mariadb|mariadb-dump)(?:\.exe)?{args}-p"
            rf"|sshpass{args}-p[ \t]*"
            rf"|(?i:sqlcmd|bcp|osql|isql)(?:\.exe)?{args}-P[ \t]*|ipmitool{args}-P[ \t]*"
            rf"|(?:7z|7za|7zr|rar|unrar)(?:\.exe)?{args}-p|(?:zip|unzip|zipcloak){args}-P[ \t]*"
            rf"|ssh-keygen{args}-[NP][ \t]*|openssl{args}-k[ \t]+"
            rf"|(?:docker|podman|nerdctl|buildah|skopeo|helm registry|az|oc|cf) login{args}"
            r"(?:-p|--password)[ \t]+"
            rf"|-pass(?:in|out)?[ \t]+pass:|xfreerdp{args}/p:"
            rf"|redis-cli{args}-a[ \t]+"
            rf"|curl{args}(?:-u|--user)[ \t]*[\"']?[^\s:'\"]*:"
            r"|(?i:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)(?:\.exe)?"
            rf"{args}(?:-p|--password)[ \t]*"
            rf"|ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn){args}-w[ \t]*"
            rf"|smbclient{args}(?:-U|--user=?)[ \t]*[\"']?[^\s%'\"]+%"
            r"|htpasswd(?:[ \t]+-[A-Za-z]+)+[ \t]+[^\s-][^\s]*[ \t]+[^\s-][^\s]*[ \t]+"
            r"|--password-stdin[ \t]*<<<[ \t]*)"
            r"(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s'\"`\-][^\s'\"`]*))",
            r"(?i:mysql|mariadb|mongo|sqlcmd|osql|isql)|bcp[ \t]|sshpass|login[ \t]|redis-cli"
            r"|curl[ \t]|ldap[a-z]+[ \t]|smbclient|htpasswd|--password-stdin|ipmitool"
            r"|pass:|xfreerdp|7z|rar[ \t]|zip[ \t]|ssh-keygen|openssl",
            secret=(1, 2, 3),
            check=check,
        ),
        Spec(
            "key_value",
            describe.format("piped login (`echo 'PASS' | docker login --password-stdin`)"),
            r"(?:^|[\s;&(])(?:echo[ \t]+(?:-[neE]{1,3}[ \t]+)?|printf[ \t]+(?:'%s[^']*'[ \t]+"
            r"|\"%s[^\"]*\"[ \t]+)?)(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s'\"|;&$-][^\s'\"|;&]*))"
            r"[ \t]*\|[^\r\n|;&]*--password-stdin",
            r"--password-stdin",
            secret=(1, 2, 3),
            check=_shell_literal(check),
        ),
        Spec(
            "key_value",
            describe.format("table row (`| DB_PASSWORD | value |`, or the value on the next row)"),
            # the key is a row's first cell (a `|` in code is an alternation, not a table)
            rf"(?im)^[ \t]*\|[ \t]*[`*]{{0,2}}({_KEY_CHARS}*(?:{words}))[`*]{{0,2}}[ \t]*\|[ \t]*"
            r"(?:\r?\n[ \t]*\|[ \t]*)?[`*]{0,2}([^\s|`]+?)[`*]{0,2}[ \t]*\|",
            rf"(?i:{words})[`*]{{0,2}}[ \t]*\|",
            secret=(2,),
            key=(1,),
            check=_table_value(check),
        ),
        Spec(
            "key_value",
            describe.format(
                "argument pair (`define('DB_PASSWORD', '…')`, `setenv(\"API_TOKEN\", \"…\")`, "
                '`put("password", "…")`)'
            ),
            # the key is the first argument of a setter, or the first item of a literal
            # tuple, list or map (`call("get_token", "c1")` names a tool, not a secret)
            rf"(?:(?:^|[^A-Za-z0-9_])(?i:{_SETTERS})[ \t]*\(|(?:^|[^A-Za-z0-9_\])])[(\[{{])"
            rf"[ \t]*\\*[\"'](?i)({_KEY_CHARS}*(?:{words}))\\*[\"'][ \t]*,[ \t]*"
            rf"(?:\\*\"{_SCHEME}([^\"\\\r\n]+)\\*\"|'{_SCHEME}([^'\r\n]+)')",
            rf"(?i:{words})\\*[\"'][ \t]*,[ \t]*\\*[\"']",
            secret=(2, 3),
            key=(1,),
            check=_table_value(check),
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
            # the value may sit alone on the line between the tags
            rf"(?i)<([A-Za-z0-9_.:\-]*(?:{words}))(?:[ \t][^>]{{0,200}})?>"
            r"(?:[ \t]*\r?\n[ \t]*)?([^<\r\n]+?)[ \t]*(?:\r?\n[ \t]*)?</",
            rf"(?i:{words})(?:[ \t][^>]*)?>[^<]",
            secret=(2,),
            key=(1,),
            check=check,
        ),
    ]
