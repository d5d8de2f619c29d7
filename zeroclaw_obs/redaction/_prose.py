"""The secret rules for credentials people type in prose and chat: a password pasted after
"my password is", a login pair (`user / pass`), a Wi-Fi key; known by the words around them
and by the shape of a typed credential (`credential_shaped`).

Ranked after the context rules of `_rules.py` (see `_chain.py`), which use this module's
`credential_shaped` (a command's output) and `NOT_SECRET_CONTEXT` (the generic rule's gap).
"""

from __future__ import annotations

from ._assignments import is_sealed
from ._scanner import Hit, Spec
from ._validators import is_placeholder, is_uuid, looks_random

__all__ = ["NOT_SECRET_CONTEXT", "credential_shaped", "prose_specs"]

NOT_SECRET_CONTEXT = (  # words before a value that say it is not a secret
    "sha", "md5", "digest", "hash", "checksum", "integrity", "commit", "fingerprint",
    "public", "pub ", "uuid", "trace", "span", "request", "count", "etag", "version",
    "cert", "id:", "id=", "_id", " id ", "usage", "limit", "page", "next", "http",
)  # fmt: skip


_SYMBOLS = frozenset("!#$%&*+-.=?@^_~")


def credential_shaped(hit: Hit) -> tuple[int, int] | None:
    """A value a person typed as a credential: 8+ characters mixing letters and digits with
    a second case or a symbol, or a passphrase of words and a number (`maple-orbit-cedar-62`);
    not a word, a path, a URL, an address, a date or an id."""
    value = hit.text[hit.start : hit.end].rstrip(".,;:!?)")
    if len(value) < 8 or is_placeholder(value) or is_uuid(value) or value.startswith(_NOT_PROSE):
        return None
    if value[0] == "%" and (value[1:2] == "(" or _HEX_DIGITS.issuperset(value[1:3])):
        return None  # a format string (`%(pw)s`) or URL-encoded text (`%2Fvar%2F…`)
    gap = hit.text[hit.match_start : hit.start].lower()
    if _is_argument(value) or "\0" in gap or any(w in gap for w in NOT_SECRET_CONTEXT):
        return None  # an assignment (`prompt_tokens=9099`), or a count, an id, a digest
    if is_sealed(hit.text, hit.match_start, value) or "@" in value or "://" in value:
        return None
    if _is_passphrase(value):
        return hit.start, hit.start + len(value)
    chars = set(value)
    lower, upper = value != value.upper(), value != value.lower()
    if not (any(c.isdigit() for c in value) and (lower or upper)):
        return None
    if not ((lower and upper) or chars & _SYMBOLS):
        return None
    if value[:4].isdigit() and value[4:5] in "-/.":
        return None  # a date or a timestamp
    if len(value) >= 20 and not looks_random(value):
        return None
    return hit.start, hit.start + len(value)


def _is_argument(value: str) -> bool:
    """Whether `value` is `name=value` with a lower-case identifier for a name and a plain
    value (`prompt_tokens=9099`, `mode=fast`); `Willow=Cinder9821` and `cfjo=_1=e~l*?T` are
    typed passwords."""
    name, sep, rest = value.rstrip("=").partition("=")
    if not sep or name != name.lower() or not name.replace("_", "").isalnum():
        return False
    return _PLAIN_ARGUMENT.issuperset(rest)


_PLAIN_ARGUMENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:/-")


def _is_passphrase(value: str) -> bool:
    """Whether `value` is a generated passphrase: three or more words of 3+ letters joined by
    `-`, `_` or `.`, with a number (`ember.meadow.granite.50`, `cinder_glacier_quartz_20`,
    `saffron_dune_cactus-36`). A path, a host or a slug has no number among its words."""
    if not value.isascii() or not any(c in value for c in "-_."):
        return False
    parts = value.replace("_", "-").replace(".", "-").split("-")
    words = [p for p in parts if p.isalpha()]
    numbers = [p for p in parts if p.isdigit()]
    return (
        len(words) >= 3
        and len(words) + len(numbers) == len(parts)
        and 1 <= len(numbers) <= 2
        and all(len(w) >= 3 for w in words)
    )


_NOT_PROSE = ("/", "~", "http", "www.", "$", "{", "<", "ENC[")
"""Starts of what is not a typed credential: paths, URLs, references, templates, and SOPS
ciphertext (`ENC[AES256_GCM,data:…]`), encrypted to be committed."""
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def prose_specs() -> list[Spec]:
    """Credentials pasted into chat: `my password is …`, `log in with admin / …`, a Wi-Fi key.

    One rule of three shapes (each its own group, all with `credential_shaped`): every rule
    with a trigger of its own costs the gate's sets a share of a pass over every text.
    """
    shapes = [_prose_spec(), _login_pair_spec(), _wifi_spec()]
    return [
        Spec(
            "prose_secret",
            "; ".join(spec.description for spec in shapes),
            "(?i)" + "|".join(f"(?:{spec.pattern.removeprefix('(?i)')})" for spec in shapes),
            "|".join(spec.trigger for spec in shapes),
            secret=(1, 2, 3),
            check=credential_shaped,
        )
    ]


def _login_pair_spec() -> Spec:
    """`log in with admin / Xk9…`, `creds for the portal are deploy:Xk9…`: a user, a slash
    or a colon, a password."""
    return Spec(
        "prose_secret",
        "a user and password pasted into chat after a login phrase (`try logging in with "
        "admin / …`, `creds: deploy/…`, `creds for the portal are ana:…`): the password, when "
        "it is credential-shaped",
        r"(?i)(?:^|[^A-Za-z0-9_])(?:log(?:ging)?[ \t-]?in|sign(?:ing)?[ \t-]?in|creds?"
        r"|credentials)[:,]?(?:[ \t]+[A-Za-z'][A-Za-z0-9'._-]{0,24}){0,6}?"
        r"[ \t]+[A-Za-z0-9._@+-]{1,64}"
        r"(?:[ \t]*/[ \t]*|:)[\"'`]?([^\s\"'`]{8,})",
        r"(?i:log(?:ging)?[ \t-]?in|sign(?:ing)?[ \t-]?in|creds?|credentials)[:,]?[ \t]",
        check=credential_shaped,
    )


def _prose_spec() -> Spec:
    """A credential pasted into chat: `my password is …`, `the token you need: …`,
    `use the passphrase …`."""
    noun = (
        r"passwords?|passphrase|passcode|pass|passwd|pwd|pw|pin|tokens?|secret|credentials?"
        r"|(?:my|this|the|our|your|api|access|secret|license|private)[ \t_-]+keys?"
    )
    return Spec(
        "prose_secret",
        "a credential pasted into prose or chat (`my password is …`, `the token you need: "
        "…`, `use the passphrase …`): a credential noun, a few short words, `is`/`are`/`:`, "
        "then a credential-shaped value; after `password`/`passphrase` the value may follow "
        "the noun at once",
        rf"(?i)(?:^|[^A-Za-z0-9_])(?:(?:{noun})(?:[ \t]+[A-Za-z']{{1,12}}){{0,4}}?"
        r"(?:[ \t]+(?:is|was|are|=)|[ \t]*:)|passphrase|password|passcode)[ \t]+[\"'`]?"
        r"([^\s\"'`]{8,})",
        # Keyword shapes only: a counted run here multiplies the gate's states.
        r"(?i:passwords?|passphrase|passcode|pass|passwd|pwd|pw|pin|tokens?|secret"
        r"|credentials?|keys?)(?:[ \t]|:[ \t])",
        check=credential_shaped,
    )


def _wifi_spec() -> Spec:
    """`wifi: guest-net key Xk9…`, `WPA2 passphrase: …`: a network key shared in chat."""
    return Spec(
        "prose_secret",
        "a Wi-Fi key shared in prose (`wifi: office-guest key …`, `WPA2 passphrase: …`): "
        "the value after key/psk/password on a line that names the network",
        r"(?i)(?:wi-?fi|wlan|wpa[23]?|ssid)[^\r\n]{0,60}?[ \t:](?:key|psk|pass(?:word|phrase)?"
        r"|pw)[ \t]*[:=]?[ \t]+[\"'`]?([^\s\"'`]{8,})",
        r"(?i:wi-?fi|wlan|wpa[23]?|ssid)",
        check=credential_shaped,
    )
