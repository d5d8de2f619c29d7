"""Carriers: encoded and disguised secrets (base64, URL-encoded, JSON in JSON, zero-width
splits, homoglyph keys, long logs, high-entropy values)."""

from __future__ import annotations

import json
import random
import urllib.parse
from typing import Any

from ._blocks import (
    _ALNUM,
    _B64URL,
    Case,
    _aws_key_id,
    _aws_secret,
    _b64,
    _fill,
    _git_sha,
    _github,
    _hex,
    _jwt,
    _kind,
    _password,
    _pem,
    _pick,
    _private_pem,
    _provider_token,
    _stripe,
    _text_case,
    _tok,
    _ts,
    _url_password,
    _uuid,
    _words,
    _wrap,
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
