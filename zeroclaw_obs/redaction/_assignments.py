"""What a value after a sensitive key is: the check every `key_value` text rule runs.

The `key_value` rules (`_keys.py`) find a sensitive key, a separator and the value's extent
with RE2; the check here decides whether that value is the secret, a reference to it, or
something else that happens to follow a credential word:

- references and placeholders (`${DB_PASSWORD}`, `settings.X`, `var.api_key`, `!vault`,
  `[FILTERED]`, a shell expansion's error message `${X:?set it}`) are kept;
- measurements (`token_count: 3`) and a label before arguments (`get_token: service=x`)
  are kept;
- a value on the line after its key must fill that line;
- a YAML block scalar (`private_key: |`, `Authorization: >-`) takes the whole indented
  block below it;
- a template that only prints a literal (`<%= 'pw' %>`, `{{ "pw" }}`) gives up the literal;
- a credential document under a sensitive key (`GOOGLE_CREDENTIALS='{"type":
  "service_account", …}'`) is read on its own (`LOOK_INSIDE`): its keys say which of its
  values are secret, and its project, e-mail and URLs are not;
- ciphertext meant to be committed (a `SealedSecret`'s `encryptedData`) is kept.

Risky part: every refusal here lets a value through. Each names the shape it keeps, and all
of them look only at the value and a bounded window around it (linear in the candidate).
"""

from __future__ import annotations

import re
from collections.abc import Container

from ._scanner import LOOK_INSIDE, Check, Hit, compile_pattern
from ._validators import is_code_reference, is_measurement, is_placeholder, is_public_value

__all__ = [
    "SCHEME_WORDS",
    "is_credential_document",
    "is_publishable",
    "is_sealed",
    "is_secret_reference",
    "value_check",
]

SCHEME_WORDS = ("bearer", "basic", "token", "digest", "bot", "negotiate", "ntlm", "apikey")
_SCHEMES = frozenset(SCHEME_WORDS)
"""Authorization schemes a value may start with; the scheme word alone is not a secret."""

_BLOCK_SCALARS = frozenset(
    a + b + c + d
    for a in "|>"
    for b in ("", *"123456789")
    for c in ("", "-", "+")
    for d in ("", *"123456789")
    if not (b and d)
)
"""YAML block scalar indicators: `|`, `>-`, `|+`, with an indentation digit before or after."""
_NOT_A_VALUE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}:|--?[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){1,6}"
    r"|[A-Za-z0-9_\-]{1,8}(?:\.\.\.|…)"
)
"""Values that are no value (Python `re`, bounded and anchored: a value longer than 72
characters is not tried, so this is linear; on a short value a call into it costs less than
one into RE2): a label or nested key (`token: Authorization: Bearer …`,
`secret: valueFrom.secretKeyRef.name: …`), a command-line flag (`--password-stdin`), a
prefix then an ellipsis (`sk-...`, `ghp_…`: documentation eliding a key)."""
_FETCH_MODES = frozenset({"include", "same-origin", "omit"})
_TEMPLATE_OPENERS = ("<%=", "<%-", "{{")
_TEMPLATE_CLOSERS = ("%>", "-%>", "}}", "-}}")
_CREDENTIAL_DOCUMENT = compile_pattern(
    r"\\*\"type\\*\"[ \t]*:[ \t]*\\*\"(?:service_account|authorized_user|external_account"
    r"|impersonated_service_account)\\*\""
)
_SEALED_WINDOW = 4096
"""How far back a value looks for the `encryptedData:` mapping it may sit in."""
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


_PUBLISHABLE_PREFIXES = ("pk.eyJ", "phc_", "pk_live_", "pk_test_")
"""Keys made to be shipped to browsers: Mapbox public tokens (`pk.` — secret ones are `sk.`),
PostHog project keys (`phc_` — personal keys are `phx_`), Stripe publishable keys."""
_SECRET_MANAGER_CLIS = frozenset(
    {"vault", "op", "aws", "gcloud", "az", "bw", "pass", "doppler", "sops", "infisical"}
    | {"chamber", "security", "kubectl", "akeyless", "conjur", "gopass", "berglas"}
)
"""Commands that read a secret from a store: `password: vault kv get -field=password …` says
where the password lives, not what it is."""
_REFERENCE_PREFIXES = ("op://", "vault:", "sm://", "ssm:/", "{{resolve:", "secretsmanager:")


def is_publishable(value: str, text: str, at: int) -> bool:
    """Whether `value`, found at `at` in `text`, is a key made public by design: a prefix of
    `_PUBLISHABLE_PREFIXES`, or a reCAPTCHA/Turnstile *site* key (`6L…`, 40 characters, under
    a name saying `site`; the secret key has the same shape under a name saying `secret`)."""
    if value.startswith(_PUBLISHABLE_PREFIXES):
        return True
    if value.startswith(("6L", "0x4AAAAAAA")) and len(value) in (40, 24):
        before = text[max(0, at - 48) : at].lower()
        return "site" in before and "secret" not in before
    return False


def is_secret_reference(value: str, following: str = "") -> bool:
    """Whether `value` names where a secret lives instead of holding it: a secret manager's
    resource name or URI (GCP `projects/p/secrets/name/versions/v`, Azure Key Vault
    `https://v.vault.azure.net/secrets/name/…`, 1Password `op://…`, CloudFormation
    `{{resolve:secretsmanager:…}}`, Vault `vault:secret/…`), or a secret manager's command
    (`vault kv get …`, `op read …`), which `following` (the text after the value) carries on."""
    if value.startswith(_REFERENCE_PREFIXES):
        return True
    if value.startswith("projects/") and "/secrets/" in value:
        return True
    if value.startswith("https://") and ".vault.azure.net/secrets/" in value:
        return True
    return value in _SECRET_MANAGER_CLIS and following[:1] == " " and following[1:2].isalpha()


def is_credential_document(value: str) -> bool:
    """Whether `value` is a Google credential file as JSON text (`"type": "service_account"`,
    `authorized_user`, `external_account`): a document whose own keys name its secrets."""
    return value[:1] == "{" and _CREDENTIAL_DOCUMENT.search(value) is not None


def value_check(keys: Container[str], *, labels: bool = False) -> Check:
    """Accept a value whose key is sensitive and which is not a placeholder or a path.

    With `labels`, `key: name=value` is read as a label then an assignment (see
    `_is_labelled_assignment`); headers (`Authorization: …`) are not read that way.
    """

    def check(hit: Hit) -> tuple[int, int] | None:
        if hit.key is not None and hit.key not in keys:
            return None
        value = hit.text[hit.start : hit.end]
        stripped = value.rstrip()
        if not stripped:
            return None
        head = hit.text[hit.match_start : hit.start]
        if stripped in _BLOCK_SCALARS and ":" in head:
            return _block_scalar(hit)
        quoted = hit.text[hit.start - 1 : hit.start] in ("'", '"')
        if (stripped[0] in "=>" and not quoted) or stripped in ("$", "$$"):
            return None  # `==`, `=>`: an operator; a quoted value may start with `=` (Django)
        if is_placeholder(stripped):
            return None  # `$` alone: the start of a `${VAR}` or `$(cmd)` (`$$(` in compose)
        if _refused(hit, head, stripped, labels):
            return None
        if is_credential_document(stripped):
            return LOOK_INSIDE
        return hit.start, hit.start + len(stripped)

    return check


def _refused(hit: Hit, head: str, value: str, labels: bool) -> bool:
    """The refusals of `value_check`, each for a shape that holds no secret."""
    text, key = hit.text, hit.key
    if value.lower() in _SCHEMES:
        return True  # a scheme word alone: its token was already replaced
    if key is not None and key[-6:].lower() == "cookie" and ":" in head:
        return True  # a cookie header: `CookieHeaderRule` reads its pairs one by one
    if len(value) <= 72 and _NOT_A_VALUE.fullmatch(value) is not None:
        return True  # `Authorization:`, `--password-stdin`, `sk-...`: a label, a flag, an elision
    if value in _FETCH_MODES and key is not None and key.lower().endswith("credentials"):
        return True  # `fetch(url, {credentials: "include"})`: the Fetch API's mode
    if value[0] in "/~" and key is not None and key.lower().endswith("pwd"):
        return True  # $PWD / OLDPWD hold the working directory, not a password
    if value[0] == "!" and value[1:].replace("_", "").isalpha() and ":" in head:
        return True  # a YAML tag (`!vault |`, `!secret db_password`, `!Ref DbPassword`)
    if value[0] in "?+" and text[hit.match_start - 2 : hit.match_start] == "${":
        return True  # `${SMTP_PASSWORD:?set it}`: an expansion's error message
    if is_measurement(value):
        return True  # a count, a duration, a timestamp: see `is_measurement`
    following = text[hit.start + len(value) : hit.start + len(value) + 3]
    if is_code_reference(value, following[:1]) or is_public_value(value, hit):
        return True  # `os.getenv(…)`, `settings.X`; a publishable key, a secret's ARN
    if is_publishable(value, text, hit.start) or is_secret_reference(value, following):
        return True  # a site key; `projects/p/secrets/db/versions/3`, `vault kv get …`
    if labels and _is_labelled_assignment(hit, value):
        return True
    if ("<" in head or "{" in head) and _template_reference(hit, head, value):
        return True  # `{{ env "DB_PASSWORD" }}`: the template reads the secret elsewhere
    if "\n" in head and "\n" in head.lstrip() and not _is_next_line_value(hit, value):
        return True
    return is_sealed(hit.text, hit.match_start, value)


def _template_reference(hit: Hit, head: str, value: str) -> bool:
    """Whether a value sits in a template expression that is not just a quoted literal
    (`{{ env "DB_PASSWORD" }}` reads the secret; `<%= 'pw' %>` prints it)."""
    if not head.rstrip(" \t\"'").endswith(_TEMPLATE_OPENERS):
        return False
    return not _template_literal(hit, value)


def _template_literal(hit: Hit, value: str) -> bool:
    """Whether a quoted value is the whole of a template expression (`<%= 'pw' %>`)."""
    opening = hit.text[hit.start - 1 : hit.start]
    if opening not in ("'", '"'):
        return False
    after = hit.start + len(value)
    closing = hit.text[after : after + 1]
    rest = hit.text[after + 1 : after + 8].lstrip(" \t")
    return closing == opening and rest.startswith(_TEMPLATE_CLOSERS)


def is_sealed(text: str, at: int, value: str) -> bool:
    """Whether `value`, whose key starts at `at`, is a `SealedSecret`'s ciphertext
    (`encryptedData:` above it): encrypted for one cluster's key, committed to git by design.

    Sealed values are base64 of a 2-byte length (`0x0200`, the RSA block) and the blocks, so
    they start with `Ag`.
    """
    if len(value) < 64 or not value.startswith("Ag") or not _BASE64.issuperset(value):
        return False
    return text.rfind("encryptedData", max(0, at - _SEALED_WINDOW), at) >= 0


def _block_scalar(hit: Hit) -> tuple[int, int] | None:
    """The span of a YAML block scalar's content (the lines indented deeper than its key).

    `private_key: |` then the key's lines, or `Authorization: >-` then `Bearer …` folded over
    two lines: the value is the whole block, from its first character to its last.
    """
    text = hit.text
    line = text.rfind("\n", 0, hit.match_start) + 1
    column = hit.match_start - line
    while column > 0 and text[line + column - 1] in "\"'":
        column -= 1  # a quoted key starts at its quote
    first = last = -1
    at = text.find("\n", hit.start)
    while at >= 0:
        stop = text.find("\n", at + 1)
        stop = len(text) if stop < 0 else stop
        content = text[at + 1 : stop].rstrip(" \t\r")
        body = content.lstrip(" \t")
        if body:
            if len(content) - len(body) <= column:
                break
            if first < 0:
                first = at + 1 + len(content) - len(body)
            last = at + 1 + len(content)
        at = stop if stop < len(text) else -1
    return (first, last) if first >= 0 else None


def _is_next_line_value(hit: Hit, value: str) -> bool:
    """Whether a value on the line after its key is that key's value, not what follows.

    It must fill its line (prose that goes on is not one: `Password:` then `Reset your
    password…`; a table cell's closing `|` may follow), and not open a nested mapping
    (`min_length: 12`) or a list (`- name: ci`).
    """
    rest = hit.text[hit.start + len(value) : hit.start + len(value) + 3].lstrip("\"', \t|")
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
    if hit.text[hit.start - 1 : hit.start] in ("'", '"'):
        return False  # a quoted scalar is one string: `password: 'Maple=Cinder6775'`
    name, sep, rest = value.partition("=")
    bare = name.replace("_", "").replace("-", "").replace(".", "")
    # An argument name is an identifier in lower case (`service=billing`); a capitalised
    # word before `=` is part of a typed password (`Willow=Cinder9821`).
    return bool(
        sep
        and rest
        and rest[0] != "="
        and bare.isalnum()
        and name[0].isalpha()
        and name == name.lower()
    )
