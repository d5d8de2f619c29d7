"""Carriers: secrets under sensitive keys (JSON, `key=value` text, CLI flags, HTTP headers)."""

from __future__ import annotations

import random
from typing import Any

from ._blocks import (
    _ALNUM,
    _B64URL,
    _REGIONS,
    _SERVICES,
    _WORDS,
    Case,
    _kind,
    _password,
    _pick,
    _text_case,
    _tok,
    _uuid,
    _words,
)

# Key-aware and key=value forms ---------------------------------------------------------------

_SENSITIVE_JSON_KEYS = _words(
    "password Password passwd pwd secret client_secret clientSecret token access_token "
    "accessToken refresh_token api_key apiKey apikey api-key API_KEY authorization "
    "Authorization cookie Set-Cookie private_key privateKey credential session x-api-key "
    "X-Auth-Token db_password SMTP_PASSWORD github_token"
)


@_kind("sensitive_key_json")
def _sensitive_key_json(rng: random.Random, i: int) -> Case:
    """A value under a sensitive key, at depth 1 to 6 of a JSON-like document, is masked."""
    keep: list[str] = []
    secrets: list[str] = []
    leaf_id = _uuid(rng)
    keep.append(leaf_id)
    leaf: dict[str, Any] = {"id": leaf_id, "service": rng.choice(_SERVICES)}
    key = _pick(rng, _SENSITIVE_JSON_KEYS, i)
    secret = _password(rng)
    secrets.append(secret)
    if i % 7 == 3:
        user = "svc-" + rng.choice(_WORDS)
        leaf["credentials"] = {"username": user, "password": secret}
    else:
        leaf[key] = secret
    if i % 3 == 0:
        n = rng.randint(16, 4096)
        leaf["token_count"] = n
        keep.append(f'"token_count": {n}')
    if i % 4 == 1:
        second = _password(rng)
        others = [k for k in ("refreshToken", "client_secret", "passwd") if k != key]
        leaf[rng.choice(others)] = second
        secrets.append(second)
    doc: Any = leaf
    for depth in range(i % 6):
        wrap_id = _uuid(rng)
        shape = (i + depth) % 4
        if shape == 0:
            doc = {"config": doc, "version": depth + 2}
            continue
        keep.append(wrap_id)
        if shape == 1:
            doc = {"items": [{"id": wrap_id}, doc]}
        elif shape == 2:
            doc = {"result": {"data": doc, "request_id": wrap_id}}
        else:
            doc = [{"ref": wrap_id}, doc]
    return Case("sensitive_key_json", doc, tuple(secrets), tuple(keep))


_TEXT_KEYS = _words(
    "password passwd pwd secret client_secret token access_token refresh_token api_key apikey "
    "api-key credentials session x-api-key DB_PASSWORD REDIS_PASSWORD AUTH_TOKEN SECRET_KEY "
    "CLIENT_SECRET spring.datasource.password"
)
_KEY_VALUE_TEMPLATES = (
    "# .env (generated ⟪ts⟫)\nAPP_ENV=production\nINSTANCE_ID=⟪uuid⟫\n⟪key⟫=⟪secret⟫\n"
    "LOG_LEVEL=info\n",
    "services:\n  ⟪svc⟫:\n    image: ghcr.io/acme/⟪svc⟫@⟪digest⟫\n    environment:\n"
    "      ⟪key⟫: ⟪secret⟫\n      REGION: ⟪region⟫\n",
    "⟪ts⟫ INFO  db.connect host=⟪host⟫ user=app ⟪key⟫=⟪secret⟫ request_id=⟪uuid⟫",
    '[database]\nhost = "⟪host⟫"\nport = ⟪port⟫\n⟪key⟫ = "⟪secret⟫"\n\n[build]\ncommit = "⟪sha⟫"\n',
    "export ⟪key⟫='⟪secret⟫'\nexport DEPLOY_SHA=⟪sha⟫\n",
    '{"request_id": "⟪uuid⟫", "⟪key⟫": "⟪secret⟫", "region": "⟪region⟫"}',
    "```yaml\n# config for ⟪svc⟫ (commit ⟪short_sha⟫)\n⟪key⟫: ⟪secret⟫\ntimeout: 30\n```\n",
    'Traceback (most recent call last):\n  File "/srv/app/db.py", line ⟪n⟫, in connect\n'
    "    conn = driver.connect(**cfg)\nConnectionError: auth failed with ⟪key⟫=⟪secret⟫ "
    "(trace ⟪trace⟫)",
)


@_kind("sensitive_key_text")
def _sensitive_key_text(rng: random.Random, i: int) -> Case:
    """`key=value`, `key: value`, `key = "value"` forms of the sensitive keys in text carriers."""
    template = _pick(rng, _KEY_VALUE_TEMPLATES, i)
    key = _TEXT_KEYS[(i * 7) % len(_TEXT_KEYS)]
    return _text_case(
        "sensitive_key_text", rng, template, {"secret": _password(rng)}, values={"key": key}
    )


_FLAG_FORMS = (
    "--password ⟪secret⟫",
    "--password=⟪secret⟫",
    "--token ⟪secret⟫",
    "--api-key ⟪secret⟫",
    "--client-secret=⟪secret⟫",
    "-p⟪secret⟫",
    "--secret ⟪secret⟫",
    "--access-token=⟪secret⟫",
    "--db-password ⟪secret⟫",
    "--refresh-token ⟪secret⟫",
)
_FLAG_CARRIERS = (
    "$ ⟪tool⟫ --host ⟪host⟫ ⟪flag⟫ --verbose\nconnected (session ⟪uuid⟫)\n",
    "deploy    4242  0.3  1.2 181236 24120 ?  Ssl  09:12   0:03 /usr/bin/python3 sync.py "
    "⟪flag⟫ --commit ⟪sha⟫",
    "+ ./scripts/release.sh ⟪flag⟫ --env prod --sha ⟪sha⟫\n##[group]Run release\n",
    "RUN ⟪tool⟫ ⟪flag⟫ --region ⟪region⟫ && rm -rf /tmp/*\n"
    "LABEL org.opencontainers.image.revision=⟪sha⟫",
    "```bash\n⟪tool⟫ ⟪flag⟫ --dry-run  # request ⟪uuid⟫\n```",
)


@_kind("sensitive_cli_flag")
def _sensitive_cli_flag(rng: random.Random, i: int) -> Case:
    """`--flag value`, `--flag=value` and mysql's `-pPASSWORD` in shell, ps, CI and argv."""
    secret = _password(rng).replace("~", "x")
    form = _pick(rng, _FLAG_FORMS, i)
    tool = "mysql -u app" if form.startswith("-p") else rng.choice(("mytool", "vault-sync", "psql"))
    if i % 5 == 4:
        flag, _, _ = form.partition("⟪")
        flag = flag.rstrip(" =")
        if flag == "-p":
            flag = "--password"
        argv = ["deploy", "--region", rng.choice(_REGIONS), flag, secret, "--yes"]
        req = _uuid(rng)
        payload = {"call_id": req, "argv": argv, "exit_code": 1}
        return Case("sensitive_cli_flag", payload, (secret,), (req,))
    if i % 5 == 3:
        flag = form.partition("⟪")[0].rstrip(" =")
        args = "'-p⟪secret⟫'" if flag == "-p" else f"'{flag}', '⟪secret⟫'"
        tpl = (
            f"subprocess.CalledProcessError: Command '['{tool.split()[0]}', {args}, '--quiet']' "
            "returned non-zero exit status 2. (trace ⟪trace⟫)"
        )
        return _text_case("sensitive_cli_flag", rng, tpl, {"secret": secret})
    carrier = rng.choice(_FLAG_CARRIERS)
    template = carrier.replace("⟪flag⟫", form).replace("⟪tool⟫", tool)
    return _text_case("sensitive_cli_flag", rng, template, {"secret": secret})


_HEADER_TEMPLATES = (
    "GET /v1/orders HTTP/1.1\r\nHost: api.acme-corp.io\r\nX-API-Key: ⟪secret⟫\r\n"
    "X-Request-Id: ⟪uuid⟫\r\nAccept: application/json\r\n\r\n",
    "> POST /graphql HTTP/2\n> host: gql.acme-corp.io\n> x-auth-token: ⟪secret⟫\n"
    "> traceparent: 00-⟪trace⟫-⟪span⟫-01\n> content-type: application/json\n",
    "GET /dashboard HTTP/1.1\nHost: app.acme-corp.io\nCookie: _ga=GA1.2.1554.1701; "
    "sessionid=⟪secret⟫; csrftoken=⟪secret2⟫\nX-Request-Id: ⟪uuid⟫\n",
    "HTTP/1.1 200 OK\nContent-Type: text/html\nSet-Cookie: session=⟪secret⟫; Path=/; "
    "HttpOnly; Secure; SameSite=Lax\nX-Trace-Id: ⟪trace⟫\n",
    "PUT /v1/secret/data/app HTTP/1.1\nHost: vault.internal:8200\nX-Vault-Token: ⟪secret⟫\n"
    "X-Request-Id: ⟪uuid⟫\n",
    "curl -sS https://api.partner.io/v2/items -H 'Api-Key: ⟪secret⟫' -H 'X-Request-Id: ⟪uuid⟫'",
)


@_kind("sensitive_http_header")
def _sensitive_http_header(rng: random.Random, i: int) -> Case:
    """Credential headers (X-API-Key, X-Auth-Token, Cookie, Set-Cookie, ...) in request dumps."""
    secret, secret2 = _tok(rng, _B64URL, rng.randint(24, 48)), _tok(rng, _ALNUM, 32)
    if i % 4 == 3:
        req = _uuid(rng)
        header = rng.choice(("X-API-Key", "x-auth-token", "Cookie", "X-Api-Token"))
        value = f"sessionid={secret}" if header == "Cookie" else secret
        payload = {
            "request": {
                "method": "POST",
                "url": "https://api.acme-corp.io/v1/charges",
                "headers": {header: value, "X-Request-Id": req, "Content-Type": "application/json"},
            },
            "status": 401,
        }
        return Case("sensitive_http_header", payload, (secret,), (req,))
    template = _pick(rng, _HEADER_TEMPLATES, i)
    return _text_case(
        "sensitive_http_header", rng, template, {"secret": secret, "secret2": secret2}
    )
