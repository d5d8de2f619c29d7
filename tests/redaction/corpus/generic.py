"""Formats: generic credential shapes (JWT, bearer/basic, PEM and OpenSSH keys, connection
strings, URL credentials and secret query parameters)."""

from __future__ import annotations

import json
import random
import urllib.parse

from ._blocks import (
    _ALNUM,
    _URL_PW,
    _WORDS,
    Case,
    _aws_key_id,
    _b64,
    _cert_body,
    _fill,
    _git_sha,
    _hex,
    _jwt,
    _kind,
    _openssh_private,
    _pem,
    _pick,
    _private_pem,
    _text_case,
    _tok,
    _url_password,
    _uuid,
)

# Generic credential shapes -------------------------------------------------------------------


@_kind("jwt")
def _jwt_kind(rng: random.Random, i: int) -> Case:
    """JWTs (header.claims.signature) in logs, URLs, cookies and tool output."""
    token = _jwt(rng)
    if i % 5 == 4:
        req = _uuid(rng)
        return Case("jwt", {"stdout": f"issued {token}\n", "run_id": req}, (token,), (req,))
    tpl = _pick(
        rng,
        (
            "⟪ts⟫ DEBUG auth: verifying ⟪token⟫ for aud=⟪svc⟫ trace_id=⟪trace⟫",
            "jwt.exceptions.ExpiredSignatureError: Signature has expired\n"
            "  while decoding ⟪token⟫\n"
            "  request ⟪uuid⟫",
            "HTTP/1.1 302 Found\nLocation: https://app.acme-corp.io/callback#id_token=⟪token⟫&state=⟪span⟫",
            "Cookie: theme=dark; jwt=⟪token⟫\nX-Request-Id: ⟪uuid⟫",
            "Use this for local testing: `⟪token⟫` (expires in 1h, build ⟪short_sha⟫)",
        ),
        i,
    )
    return _text_case("jwt", rng, tpl, {"token": token})


@_kind("bearer_basic")
def _bearer_basic(rng: random.Random, i: int) -> Case:
    """`Authorization: Bearer <opaque>` and `Basic <base64(user:pass)>` values."""
    bearer = _tok(rng, _ALNUM + "-._~+/", rng.randint(32, 64))
    password = _tok(rng, _URL_PW, rng.randint(12, 20))
    basic = _b64(f"svc-{rng.choice(_WORDS)}:{password}".encode())
    if i % 5 == 4:
        req = _uuid(rng)
        payload = {"headers": {"authorization": f"Basic {basic}", "x-request-id": req}}
        return Case("bearer_basic", payload, (basic, password), (req,))
    tpl = _pick(
        rng,
        (
            'curl -sS -H "Authorization: Bearer ⟪bearer⟫" https://api.acme-corp.io/v1/me  # ⟪uuid⟫',
            "GET /v1/items HTTP/1.1\nhost: api.acme-corp.io\nauthorization: bearer ⟪bearer⟫\n"
            "x-request-id: ⟪uuid⟫\n",
            "CONNECT api.acme-corp.io:443 HTTP/1.1\nProxy-Authorization: Basic ⟪basic⟫\n"
            "X-Request-Id: ⟪uuid⟫\n",
            'requests.get(url, headers={"Authorization": "Basic ⟪basic⟫"})  # trace ⟪trace⟫',
            "grpc metadata: authorization=Bearer ⟪bearer⟫ traceparent=00-⟪trace⟫-⟪span⟫-01",
        ),
        i,
    )
    also = (password,) if "⟪basic⟫" in tpl else ()
    return _text_case("bearer_basic", rng, tpl, {"bearer": bearer, "basic": basic}, also=also)


@_kind("pem_private_key")
def _pem_private_key(rng: random.Random, i: int) -> Case:
    """PEM private key blocks (RSA, PKCS#8, EC, encrypted, DSA): the multi-line body must go."""
    label, body = _private_pem(rng, i)
    variant = i % 6
    if variant == 0:
        digest = _hex(rng, 64)
        text = (
            f"$ cat deploy/server.key\n{_pem(label, body)}\n$ sha256sum deploy/server.key\n"
            f"{digest}  deploy/server.key\n"
        )
        return Case("pem_private_key", text, ("\n".join(body),), (digest,))
    if variant == 1:
        cert = _pem("CERTIFICATE", _cert_body(rng), indent="    ")
        key = _pem(label, body, indent="    ")
        text = (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-tls\ntype: kubernetes.io/tls\n"
            f"stringData:\n  tls.crt: |\n    {cert}\n  tls.key: |\n    {key}\n"
        )
        return Case("pem_private_key", text, ("\n    ".join(body),), (cert,))
    if variant == 2:
        run = _uuid(rng)
        text = json.dumps({"run": run, "private_key_pem": _pem(label, body) + "\n"})
        return Case("pem_private_key", text, ("\\n".join(body),), (run,))
    if variant == 3:
        run = _uuid(rng)
        payload = {"files": [{"path": "certs/client.pem", "content": _pem(label, body)}], "id": run}
        return Case("pem_private_key", payload, ("\n".join(body),), (run,))
    if variant == 4:
        crlf = "\r\n"
        run = _uuid(rng).upper()
        text = f"Export {run}:{crlf}{_pem(label, body, nl=crlf)}{crlf}exported ok{crlf}"
        return Case("pem_private_key", text, (crlf.join(body),), (run,))
    sha = _git_sha(rng)
    header = f"Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,{_hex(rng, 32).upper()}\n\n"
    text = (
        f"tls_private_key.api: Refreshing state... [id={sha}]\nOutputs:\n\n"
        "private_key_pem = <<EOT\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{header}"
        + "\n".join(body)
        + "\n-----END RSA PRIVATE KEY-----\nEOT\n"
    )
    return Case("pem_private_key", text, ("\n".join(body),), (sha,))


@_kind("openssh_private_key")
def _openssh_private_key(rng: random.Random, i: int) -> Case:
    """OpenSSH private key blocks, next to the public key that must survive."""
    body, pub = _openssh_private(rng)
    block = _pem("OPENSSH PRIVATE KEY", body)
    variant = i % 4
    if variant == 0:
        text = f"$ cat ~/.ssh/id_ed25519.pub\n{pub} deploy@ci\n$ cat ~/.ssh/id_ed25519\n{block}\n"
        return Case("openssh_private_key", text, ("\n".join(body),), (pub,))
    if variant == 1:
        indented = _pem("OPENSSH PRIVATE KEY", body, indent="    ")
        text = f"variables:\n  DEPLOY_PUBKEY: {pub}\n  SSH_DEPLOY_KEY: |\n    {indented}\n"
        return Case("openssh_private_key", text, ("\n    ".join(body),), (pub,))
    if variant == 2:
        payload = {"authorized_key": pub, "key_material": block + "\n"}
        return Case("openssh_private_key", payload, ("\n".join(body),), (pub,))
    run = _uuid(rng)
    doc = {"tool": "read_file", "path": "/home/ci/.ssh/id_ed25519", "content": block, "id": run}
    return Case("openssh_private_key", json.dumps(doc), ("\\n".join(body),), (run,))


@_kind("db_connection_string")
def _db_connection_string(rng: random.Random, i: int) -> Case:
    """Database URLs and DSNs with credentials: postgres, mysql, mongodb, JDBC, ADO.NET, libpq."""
    shown, raw = _url_password(rng)
    user = rng.choice(("app", "admin", "etl_rw", "report"))
    url = _pick(
        rng,
        (
            f"postgres://{user}:⟪pw⟫@⟪host⟫:5432/orders?sslmode=require",
            f"postgresql+psycopg2://{user}:⟪pw⟫@⟪host⟫/ledger",
            f"mysql://{user}:⟪pw⟫@⟪host⟫:3306/shop",
            f"mongodb+srv://{user}:⟪pw⟫@cluster0.x7kq2.mongodb.net/app?retryWrites=true&w=majority",
            f"mongodb://{user}:⟪pw⟫@mongo-0:27017,mongo-1:27017/admin?replicaSet=rs0",
            f"jdbc:postgresql://⟪host⟫:5432/orders?user={user}&password=⟪pw⟫&ssl=true",
        ),
        i,
    )
    if i % 8 == 6:
        url = (
            "Server=tcp:acme.database.windows.net,1433;Database=orders;"
            f"User ID={user};Password=⟪pw⟫;Encrypt=true"
        )
    if i % 8 == 7:
        url = f"host=⟪host⟫ port=5432 dbname=orders user={user} password=⟪pw⟫ sslmode=require"
    if i % 5 == 4:
        run = _uuid(rng)
        filled, _ = _fill(rng, url, pw=shown)
        payload = {"datasource": {"url": filled, "pool_size": 10}, "run_id": run}
        return Case("db_connection_string", payload, (shown, raw), (run,))
    tpl = rng.choice(
        (
            "DATABASE_URL=⟪url⟫\nRELEASE_SHA=⟪sha⟫\n",
            "⟪ts⟫ INFO  sqlalchemy.engine connecting to ⟪url⟫ (pool ⟪uuid⟫)",
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
            "failed\n"
            "[SQL: SELECT 1]\n(url: ⟪url⟫) trace_id=⟪trace⟫",
            "spring:\n  datasource:\n    url: ⟪url⟫\n    hikari:\n      pool-name: ⟪uuid⟫\n",
        )
    )
    return _text_case(
        "db_connection_string", rng, tpl.replace("⟪url⟫", url), {"pw": shown}, also=(raw,)
    )


@_kind("broker_connection_string")
def _broker_connection_string(rng: random.Random, i: int) -> Case:
    """Broker and cache URLs with credentials: redis(s)://, amqp(s)://, nats://."""
    shown, raw = _url_password(rng)
    url = _pick(
        rng,
        (
            "redis://:⟪pw⟫@cache-01.internal:6379/0",
            "rediss://default:⟪pw⟫@redis-12345.c1.eu-west-1-2.ec2.cloud.redislabs.com:16380",
            "amqp://celery:⟪pw⟫@rabbitmq:5672/%2F",
            "amqps://orders:⟪pw⟫@b-1c2d3e4f.mq.us-east-1.amazonaws.com:5671/prod",
            "nats://svc:⟪pw⟫@nats.internal:4222",
        ),
        i,
    )
    tpl = rng.choice(
        (
            "CELERY_BROKER_URL=⟪url⟫\nCELERY_RESULT_BACKEND=rpc://\nBUILD=⟪sha⟫\n",
            "⟪ts⟫ ERROR kombu.connection: Connection to ⟪url⟫ refused, retrying in 2s (task "
            "⟪uuid⟫)",
            "[2024-05-01 12:00:00,000: INFO/MainProcess] Connected to ⟪url⟫\n"
            "[worker] hostname=celery@⟪svc⟫ trace=⟪trace⟫",
            "cache:\n  url: ⟪url⟫\n  ttl: 300\n  instance: ⟪uuid⟫\n",
        )
    )
    return _text_case(
        "broker_connection_string", rng, tpl.replace("⟪url⟫", url), {"pw": shown}, also=(raw,)
    )


@_kind("url_credentials")
def _url_credentials(rng: random.Random, i: int) -> Case:
    """`scheme://user:pass@host` credentials in HTTP(S), proxy, FTP, git+https and index URLs."""
    shown, raw = _url_password(rng)
    tpl = _pick(
        rng,
        (
            "HTTPS_PROXY=http://proxyuser:⟪pw⟫@proxy.corp.internal:3128\nNO_PROXY=localhost\n"
            "RUNNER_ID=⟪uuid⟫\n",
            "--index-url https://deploy:⟪pw⟫@nexus.acme-corp.io/repository/pypi/simple\n"
            "acme-sdk==⟪ver⟫ --hash=⟪digest⟫\n",
            "git+https://ci:⟪pw⟫@git.acme-corp.io/platform/tools.git@⟪sha⟫#egg=tools",
            "⟪ts⟫ INFO  fetching https://backup:⟪pw⟫@files.acme-corp.io/exports/⟪uuid⟫.tar.gz",
            "ftp://reports:⟪pw⟫@ftp.partner-bank.com/outgoing/⟪n⟫.csv downloaded in ⟪ms⟫ms "
            "(transfer ⟪uuid⟫)",
            '[remote "origin"]\n\turl = https://bot:⟪pw⟫@bitbucket.org/acme/api.git\n# HEAD ⟪sha⟫',
        ),
        i,
    )
    return _text_case("url_credentials", rng, tpl, {"pw": shown}, also=(raw,))


@_kind("url_query_secret")
def _url_query_secret(rng: random.Random, i: int) -> Case:
    """Secret query parameters: api_key, token, access_token, client_secret, sig, Amz signature."""
    variant = i % 8
    if variant == 5:
        sig_raw = _b64(rng.randbytes(32))
        base = "https://acmelogs.blob.core.windows.net/logs/app.log"
        url = f"{base}?sv=2022-11-02&ss=b&srt=o&sp=r&se=2025-01-01T00:00:00Z&spr=https&sig=⟪sig⟫"
        tpl = "⟪ts⟫ INFO  uploaded to ⟪url⟫ (request ⟪uuid⟫)"
        secrets = {"sig": urllib.parse.quote(sig_raw, safe="")}
        return _text_case(
            "url_query_secret",
            rng,
            tpl,
            secrets,
            values={"url": url},
            also=(sig_raw,),
            keep=(base,),
        )
    if variant in (6, 7):
        key_id, signature = _aws_key_id(rng), _hex(rng, 64)
        base = "https://acme-exports.s3.eu-west-1.amazonaws.com/reports/q3.parquet"
        query = (
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=⟪id⟫%2F20240501%2Feu-west-1%2Fs3"
            "%2Faws4_request&X-Amz-Date=20240501T120000Z&X-Amz-Expires=3600"
            "&X-Amz-SignedHeaders=host&X-Amz-Signature=⟪signature⟫"
        )
        if variant == 7:
            url = base + query.replace("⟪id⟫", key_id).replace("⟪signature⟫", signature)
            payload = {"download_url": url, "bytes": rng.randint(1000, 90000)}
            return Case("url_query_secret", payload, (signature, key_id), (base,))
        tpl = "presigned: ⟪url⟫\nexpires in 3600s (⟪uuid⟫)"
        return _text_case(
            "url_query_secret",
            rng,
            tpl,
            {"signature": signature, "id": key_id},
            values={"url": base + query},
            keep=(base,),
        )
    param = ("api_key", "token", "access_token", "client_secret", "apikey")[variant]
    base = "https://files.acme-corp.io/exports/report-2024.csv"
    tpl = rng.choice(
        (
            "⟪ts⟫ INFO  GET ⟪base⟫?page=2&⟪param⟫=⟪value⟫ 200 ⟪ms⟫ms request_id=⟪uuid⟫",
            "curl -s '⟪base⟫?⟪param⟫=⟪value⟫&format=json' | jq .  # trace ⟪trace⟫",
            "[Download the report](⟪base⟫?⟪param⟫=⟪value⟫) (generated for run ⟪uuid⟫)",
        )
    )
    value = _tok(rng, _ALNUM, rng.randint(24, 40))
    return _text_case(
        "url_query_secret",
        rng,
        tpl,
        {"value": value},
        values={"base": base, "param": param},
        keep=(base,),
    )
