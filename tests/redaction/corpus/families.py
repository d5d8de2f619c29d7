"""Families of issue 15 written from their formats: password hashes, credentials typed into
chat, tables with a credential column, one-time codes and printed secrets, `password` in other
languages, national phone formats and SSN columns; and what must stay beside them (references
to secret stores, publishable keys, labels, flags, analytics cookies).

Each generator draws its values with the format's alphabet and shape (crypt's `./A-Za-z0-9`,
hex digests, base64url verifiers, diceware-style passphrases) so nothing here is copied from
another evaluation set.
"""

from __future__ import annotations

import base64
import random
import string

from ._blocks import _ALNUM, _B64URL, _HEX, _WORDS, Case, _kind, _pick, _tok, _uuid

_CRYPT = _ALNUM + "./"
_USERS = ("ana", "bo", "chen", "dmitri", "eva", "farah", "gus", "hana", "ivo", "jun")
_PW = _ALNUM + "!#%*-_.~"


def _typed_password(rng: random.Random) -> str:
    """A password a person chose: a capitalised word, a symbol, another word, digits; or a
    random mix; or a passphrase of three words and a number."""
    style = rng.randrange(3)
    if style == 0:
        a, b = rng.sample(_WORDS, 2)
        return f"{a.title()}{rng.choice('=#~^!*')}{b.title()}{rng.randint(1000, 9999)}"
    if style == 1:
        return rng.choice(string.ascii_letters) + _tok(rng, _PW, rng.randint(11, 17))
    return (
        rng.choice("-_.").join(rng.sample(_WORDS, 3)) + rng.choice("-_.") + str(rng.randint(10, 99))
    )


def _digest(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_HEX, k=n))


# Password hashes -----------------------------------------------------------------------------


@_kind("password_hash")
def _password_hash(rng: random.Random, i: int) -> Case:
    """Hashes of passwords in the files and rows that hold them (offline-crackable, so
    secrets); the locked markers, the empty password's constants and plain digests stay."""
    user = rng.choice(_USERS)
    commit = _digest(rng, 40)
    form = i % 6
    if form == 0:
        h = f"$6${_tok(rng, _CRYPT, 16)}${_tok(rng, _CRYPT, 86)}"
        text = f"root:!:19000:0:99999:7:::\n{user}:{h}:19{rng.randint(100, 999)}:0:99999:7:::\n"
        keep = ("root:!:19000:0:99999:7:::",)
    elif form == 1:
        h = f"$2b$12${_tok(rng, _CRYPT, 53)}"
        text = f"# htpasswd for the admin UI (commit {commit})\n{user}:{h}\n"
        keep = (commit,)
    elif form == 2:
        salt = _tok(rng, _ALNUM, 22)
        body = base64.b64encode(rng.randbytes(32)).decode()
        h = f"pbkdf2_sha256$870000${salt}${body}"
        text = f"{rng.randint(1, 999)}\t{user}\t{h}\t2025-0{rng.randint(1, 9)}-11 08:00:00\n"
        keep = ("2025-0",)
    elif form == 3:
        h = "*" + _digest(rng, 40).upper()
        text = f"| {user:<8} | {h} |\n| mysql.session | *THISISNOTAVALIDPASSWORDTHATCANBEUSEDHERE |"
        keep = ("*THISISNOTAVALIDPASSWORDTHATCANBEUSEDHERE",)
    elif form == 4:
        h = _digest(rng, 32)
        empty = "aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0"
        text = f"{user}:1{rng.randint(100, 999)}:aad3b435b51404eeaad3b435b51404ee:{h}:::\n"
        text += f"DefaultAccount:503:{empty}:::\n"
        keep = (f"DefaultAccount:503:{empty}:::",)
    else:
        salt = base64.b64encode(rng.randbytes(16)).decode().rstrip("=")
        body = base64.b64encode(rng.randbytes(32)).decode().rstrip("=")
        h = f"$argon2id$v=19$m=19456,t=2,p=1${salt}${body}"
        doc = {"user_id": _uuid(rng), "password_hash": h, "sha256": _digest(rng, 64)}
        return Case("password_hash", doc, (h,), (doc["user_id"], doc["sha256"]))
    return Case("password_hash", text, (h,), keep)


# Credentials typed into chat ---------------------------------------------------------------


@_kind("chat_typed_password")
def _chat_typed_password(rng: random.Random, i: int) -> Case:
    """A password or passphrase a person pasted into chat, in the shapes people write it."""
    pw = _typed_password(rng)
    host = f"{rng.choice(_WORDS)}-{rng.choice(('grafana', 'argo', 'kibana', 'router'))}"
    user = rng.choice(_USERS)
    template = _pick(
        rng,
        (
            "the {host} password is {pw} until we rotate it",
            "use the passphrase {pw} for the signing keystore",
            "try logging in with {user} / {pw} (read-only)",
            "creds for {host} are {user}:{pw}, ping me if it fails",
            "user is {user}, pass is {pw}",
            "wifi: {host}-guest key {pw}",
            "| Service | User | Password |\n|---|---|---|\n| {host} | {user} | {pw} |\n",
        ),
        i,
    )
    text = template.format(host=host, user=user, pw=pw)
    keep = (host,) if host in text else (text.split(pw)[0].rstrip(),)
    return Case("chat_typed_password", text, (pw,), keep)


# Tables with a credential column -------------------------------------------------------------


@_kind("secret_column")
def _secret_column(rng: random.Random, i: int) -> Case:
    """A table whose header names a credential column: CSV, TSV, Markdown, SQL INSERT."""
    token = _tok(rng, _ALNUM, 32)
    name = f"{rng.choice(_WORDS)}-sync"
    day = f"2025-{rng.randint(1, 12):02d}-{rng.randint(10, 28)}"
    form = i % 4
    if form == 0:
        text = f"name,created,api_token\n{name},{day},{token}\n"
    elif form == 1:
        text = f"name\tcreated\tclient_secret\n{name}\t{day}\t{token}\n"
    elif form == 2:
        text = f"| Name | Created | Secret Key |\n|---|---|---|\n| {name} | {day} | {token} |\n"
    else:
        text = (
            "INSERT INTO integrations (name, api_key, created_at) VALUES\n"
            f"  ('{name}', '{token}', '{day}');"
        )
    return Case("secret_column", text, (token,), (name, day))


# One-time codes and printed secrets ---------------------------------------------------------


@_kind("one_time_code")
def _one_time_code(rng: random.Random, i: int) -> Case:
    """An OAuth code and PKCE verifier in a token request, an auth code in a query string, a
    kubeadm token printed by a command; the code challenge (public) stays."""
    code = _tok(rng, _B64URL, 43)
    challenge = _tok(rng, _B64URL, 43)
    form = i % 3
    if form == 0:
        verifier = _tok(rng, _B64URL, 64)
        text = (
            f"grant_type=authorization_code&code={code}&code_verifier={verifier}\n"
            f"# authorize used code_challenge={challenge}&code_challenge_method=S256"
        )
        return Case("one_time_code", text, (code, verifier), (f"code_challenge={challenge}",))
    if form == 1:
        text = f'"GET /callback?code={code}&state={challenge[:12]} HTTP/1.1" 302'
        return Case("one_time_code", text, (code,), (f"state={challenge[:12]}",))
    lower = string.ascii_lowercase + string.digits
    token = f"{_tok(rng, lower, 6)}.{_tok(rng, lower, 16)}"
    text = f"$ kubeadm token create --ttl 2h\n{token}\n$ kubectl get nodes -o wide"
    return Case("one_time_code", text, (token,), ("$ kubectl get nodes -o wide",))


# `password` in other languages ----------------------------------------------------------------


_LOCAL = ("Passwort", "senha", "lösenord", "contraseña", "wachtwoord", "hasło", "Пароль", "parola")


@_kind("localized_password_key")
def _localized_password_key(rng: random.Random, i: int) -> Case:
    """`password` written in the language of the form or config file."""
    pw = _typed_password(rng)
    key = _pick(rng, _LOCAL, i)
    host = f"sftp.{rng.choice(_WORDS)}.example"
    text = f"host: {host}\nuser: {rng.choice(_USERS)}\n{key}: {pw}\n"
    return Case("localized_password_key", text, (pw,), (host,))


# National phone formats -------------------------------------------------------------------------


@_kind("pii_national_phone")
def _pii_national_phone(rng: random.Random, i: int) -> Case:
    """Phone numbers with no `+` in their country's own grouping, or after a signature label;
    a company number and a version stay."""
    form = i % 3
    if form == 0:
        digits = " ".join(f"{rng.randint(0, 99):02d}" for _ in range(4))
        phone = f"0{rng.choice('67')} {digits}"
        text = f"INFO sms.sent to={phone} template=otp_v2"
    elif form == 1:
        phone = f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}"
        company = f"0{rng.randint(1000000, 9999999)}"
        text = f"--\nJo Bloggs | Sales\nM {phone}\nRegistered in England No. {company}"
    else:
        phone = f"0{rng.randint(1, 5)}." + ".".join(str(rng.randint(10, 99)) for _ in range(4))
        text = f"Tél. {phone} (bureau)"
    return Case("pii_national_phone", text, (phone,), (text.split()[-1],), pii=True)


# Look-alikes ----------------------------------------------------------------------------------


@_kind("keep_store_references")
def _keep_store_references(rng: random.Random, i: int) -> Case:
    """Where a secret lives, not what it is: secret-manager names and commands, publishable
    keys, labels, flags and elided examples after a credential word, analytics cookies."""
    project = f"{rng.choice(_WORDS)}-prod"
    version = _digest(rng, 32)
    lines = _pick(
        rng,
        (
            f'gcp_secret = "projects/{project}/secrets/db-password/versions/latest"',
            f'kv_uri = "https://{project}.vault.azure.net/secrets/api-key/{version}"',
            "password: vault kv get -field=password secret/prod/db",
            "DB_PASSWORD: op://Production/postgres/password",
            "secret: --password-stdin",
            "token: Authorization: Bearer <token>",
            "STRIPE_KEY=sk-...\nmapbox_token = "
            f"'pk.eyJ{_tok(rng, _ALNUM, 40)}.{_tok(rng, _ALNUM, 22)}'",
            f"VITE_POSTHOG_KEY=phc_{_tok(rng, _ALNUM, 43)}",
            f"DEPLOY_CREDS = credentials('deploy-{_uuid(rng)}')",
            f"Cookie: _ga=GA1.1.{rng.randint(10**9, 10**10 - 1)}.{rng.randint(10**9, 2 * 10**9)}",
        ),
        i,
    )
    return Case("keep_store_references", lines, (), (lines,))
