"""The provider token formats: secrets that name themselves by a prefix or a shape.

This module owns the first rules of the chain (as `Spec` data) and the small checks that
refine them; the long tail of prefixed tokens is one table in `_providers.py`. The order of
`token_specs()` is the order of the chain: when two rules claim the same span, the earlier
(more specific) one names it, so `token=ghp_…` is reported as `github_token`, not
`key_value`.

Pattern conventions (RE2, so no lookaround):
- A token format is its whole match (group 0, see `_token`), since a capture group would
  cost RE2 its fast DFA on long matches; a prefix-identified token may follow anything but
  a letter or digit, a boundary the pattern matches as one leading character that the
  scanner then skips (`Spec.lead`).
- A token ends where its greedy character run ends; nothing after it is consumed, so two
  tokens one separator apart are both found, and the automaton never reads past the match.
- A length that must be exact is checked in Python (`_exactly`) on a greedy run: a longer
  run is some other string (a digest, an id) and is left alone.

Risky part: a prefix alone (`sk-`, `AKIA`) also starts look-alikes (`sk-learn-…`, slugs, ids
inside longer runs). The boundary and the randomness checks are what keep those.
"""

from __future__ import annotations

from typing import Any

from ._pem import block_pattern
from ._scanner import LEAD, Check, Hit, Spec
from ._validators import looks_random

__all__ = ["password_hash_specs", "token_specs"]

_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_ALNUM = _TOKEN_CHARS[:-2]


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


def _following_is_not_token(hit: Hit) -> tuple[int, int] | None:
    following = hit.text[hit.end : hit.end + 1]
    return None if following and following in _TOKEN_CHARS else (hit.start, hit.end)


_CRYPT_CHARS = frozenset(_ALNUM + "./+=")


def _password_hash(hit: Hit) -> tuple[int, int] | None:
    """A crypt string: `$id$` fields, the last one (the digest) long and not one character
    repeated (`$6$rounds=5000$salt$digest`, `$2y$10$<salt+digest>`, Django's
    `pbkdf2_sha256$600000$salt$digest`)."""
    value = hit.text[hit.start : hit.end].rstrip(".,")
    fields = value.split("$")
    if value[0] == "{":  # LDAP `{SSHA}digest`
        fields = ["", "", value.partition("}")[2]]
    digest = fields[-1]
    if len(fields) < 3 or len(digest) < 16 or not _CRYPT_CHARS.issuperset(digest):
        return None
    return (hit.start, hit.start + len(value)) if len(set(digest)) >= 8 else None


_EMPTY_LM = "aad3b435b51404eeaad3b435b51404ee"
_EMPTY_NT = "31d6cfe0d16ae931b73c59d7e0c089c0"
"""The LM and NT hashes of the empty password: constants, in every dump, that hide nothing."""


def _pwdump(hit: Hit) -> tuple[int, int] | None:
    """`user:rid:LM:NT:::`: the hashes that are not the empty password's."""
    lm, nt = hit.text[hit.start : hit.start + 32], hit.text[hit.end - 32 : hit.end]
    empty_lm, empty_nt = lm.lower() == _EMPTY_LM, nt.lower() == _EMPTY_NT
    if empty_lm and empty_nt:
        return None
    if empty_lm:
        return hit.end - 32, hit.end
    return (hit.start, hit.start + 32) if empty_nt else (hit.start, hit.end)


def _mysql_hash(hit: Hit) -> tuple[int, int] | None:
    """MySQL's native hash, `*` and 40 upper-case hex digits: not a longer run, and a digest
    (digits and letters both), not a word spelled in A-F."""
    following = hit.text[hit.end : hit.end + 1]
    value = hit.text[hit.start + 1 : hit.end]
    if following.isalnum() or value.isdigit() or value.isalpha():
        return None
    return hit.start, hit.end


def password_hash_specs() -> list[Spec]:
    """Password hashes: offline-crackable verifiers of a password, redacted as secrets.

    A decision, not a given: a hash is not the password, but a leaked `/etc/shadow` line,
    htpasswd entry, Django `auth_user` row or pwdump line lets anyone run a dictionary
    against it offline (fast hashes such as NTLM and MySQL's in seconds), and NTLM hashes
    authenticate as they are (pass-the-hash). So they are treated like the passwords they
    verify. What is kept: the empty password's LM/NT constants, locked-account markers
    (`*`, `!`, MySQL's `*THISISNOTAVALIDPASSWORD…`), and digests that are not in a password
    hash format (a git sha, a file's sha256): those carry no `$id$` and no hash context.
    """
    crypt = r"[A-Za-z0-9./+=$,-]+"
    return [
        _token(
            "password_hash",
            "password hashes in crypt formats: $1$, $2a/b/y$ (bcrypt), $5$, $6$, $y$, "
            "$apr1$ (htpasswd), $argon2id$, $scrypt$, $pbkdf2…$, Django's pbkdf2_sha256$…, "
            "LDAP {SSHA}…",
            r"\$(?:1|2[abxy]?|5|6|7|y|gy|md5|apr1|sha1|argon2(?:id|i|d)|scrypt"
            rf"|pbkdf2(?:-sha(?:1|256|512))?)\${crypt}"
            r"|(?:pbkdf2_sha(?:1|256)|argon2|bcrypt(?:_sha256)?|scrypt|sha1|md5)"
            rf"\${crypt}"
            r"|\{(?:SSHA|SHA|SSHA256|SSHA512|SHA256|SHA512|SMD5|MD5|CRYPT|PBKDF2[A-Z0-9-]*)\}"
            r"[A-Za-z0-9+/=$.]{16,}",
            r"\$(?:[0-9]|[0-9][a-z]|y|gy|md5|apr1|sha1|argon2(?:id|i|d)?|scrypt|pbkdf2)[$-]"
            r"|(?:pbkdf2_sha(?:1|256)|argon2|bcrypt|bcrypt_sha256|scrypt|sha1|md5)\$"
            r"|\{(?:S?SHA|S?MD5|CRYPT|PBKDF2)",
            check=_password_hash,
        ),
        _token(
            "password_hash",
            "MySQL native password hashes (* and 40 hex, as in mysql.user)",
            r"\*[0-9A-F]{40}",
            r"\*[0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F]",
            check=_mysql_hash,
        ),
        Spec(
            "password_hash",
            "LM/NT hashes in pwdump and secretsdump lines (user:rid:LM:NT:::)",
            r"(?:^|[\s\"'])[^:\s\"']{1,64}:[0-9]{1,10}:([0-9A-Fa-f]{32}:[0-9A-Fa-f]{32}):::",
            r"[0-9A-Fa-f]:::",
            check=_pwdump,
        ),
    ]


def token_specs() -> list[Spec]:
    """The provider token formats, most specific first."""
    begin = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    end = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    ssh2_begin = r"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----"
    ssh2_end = r"---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----"
    return [
        _token(
            "private_key_block",
            "PEM, OpenSSH and PGP private key blocks, whole (BEGIN to END), multi-line "
            "or JSON-escaped; an unclosed block through its base64 body",
            block_pattern(begin, end),
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY",
            check=_pem_block,
            not_after="",
            blocks=(begin, end),
        ),
        _token(
            "private_key_block",
            "SSH2 (RFC 4716) private key blocks, whole",
            block_pattern(ssh2_begin, ssh2_end),
            r"---- BEGIN SSH2 ",
            not_after="",
            blocks=(ssh2_begin, ssh2_end),
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
        _token(
            "discord_token",
            "Discord bot tokens: base64 of the bot's id, a timestamp and an HMAC, dot-separated",
            r"[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
            # base64 of the id's digits: every 4 characters `[MNO][DTjz][AEIMQUYcgk][w-z0-5]`;
            # four such groups are 12 digits, more than a JWT's timestamps give in a row
            r"(?:[MNO][DTjz][AEIMQUYcgk][w-z0-5]){4}",
            check=_following_is_not_token,
        ),
        *password_hash_specs(),
    ]
