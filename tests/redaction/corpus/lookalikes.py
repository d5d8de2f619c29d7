"""Look-alikes that must be kept: SHAs, UUIDs, trace ids, digests, public keys, certificates,
images, ids, prose, credential names, usage metadata, receipts."""

from __future__ import annotations

import random
from dataclasses import replace

from ._blocks import (
    _ALNUM,
    _IBAN_BBAN,
    _SERVICES,
    Case,
    _b64url,
    _cert_body,
    _clean_b64,
    _fill,
    _git_sha,
    _group4,
    _hex,
    _iban,
    _kind,
    _non_luhn,
    _pem,
    _pick,
    _public_pem_body,
    _receipt,
    _ssh_ed25519_public,
    _ssh_rsa_public,
    _tok,
    _uuid,
)

# Look-alikes that must be kept -----------------------------------------------------------------


def _keep_text(kind: str, rng: random.Random, template: str, keep: tuple[str, ...] = ()) -> Case:
    text, lookalikes = _fill(rng, template)
    return Case(kind, text, (), tuple(dict.fromkeys([*lookalikes, *keep])))


@_kind("keep_git_sha")
def _keep_git_sha(rng: random.Random, i: int) -> Case:
    """Git commit, tree and Change-Id SHAs: public identifiers, never credentials."""
    if i % 5 == 4:
        sha, tree = _git_sha(rng), _git_sha(rng)
        payload = {
            "sha": sha,
            "commit": {"tree": {"sha": tree}, "message": "fix: retry"},
            "parents": [{"sha": _git_sha(rng)}],
        }
        return Case("keep_git_sha", payload, (), (sha, tree, payload["parents"][0]["sha"]))
    return _keep_text(
        "keep_git_sha",
        rng,
        _pick(
            rng,
            (
                "$ git log --oneline -3\n⟪short_sha⟫ fix: retry on 429\n"
                "⟪short_sha2⟫ feat: add receipts\n"
                "⟪short_sha3⟫ chore: bump deps\n",
                "$ git rev-parse HEAD\n⟪sha⟫\n",
                "commit ⟪sha⟫\nMerge: ⟪short_sha⟫ ⟪short_sha2⟫\n\n    Merge pull request #⟪n⟫\n\n"
                "    Change-Id: I⟪sha2⟫\n",
                "HEAD is now at ⟪short_sha⟫ release: v⟪ver⟫\nGITHUB_SHA=⟪sha⟫\n",
            ),
            i,
        ),
    )


@_kind("keep_uuid")
def _keep_uuid(rng: random.Random, i: int) -> Case:
    """UUIDs and GUIDs as request ids, paths and idempotency keys: identifiers, not secrets."""
    if i % 5 == 4:
        a, b = _uuid(rng), _uuid(rng)
        return Case(
            "keep_uuid",
            {"id": a, "parent_id": b, "items": [{"ref": _uuid(rng).upper()}]},
            (),
            (a, b),
        )
    guid = "{" + _uuid(rng).upper() + "}"
    templates = (
        "X-Request-Id: ⟪uuid⟫\nIdempotency-Key: ⟪uuid2⟫\n",
        "GET /v1/tenants/⟪uuid⟫/users/⟪uuid2⟫ 200",
        "ProductCode = " + guid + "  ; installer run ⟪uuid⟫",
        "request ⟪uuid⟫ completed; correlation ⟪uuid2⟫",
    )
    tpl = _pick(rng, templates, i)
    return _keep_text("keep_uuid", rng, tpl, keep=(guid,) if guid in tpl else ())


@_kind("keep_trace_ids")
def _keep_trace_ids(rng: random.Random, i: int) -> Case:
    """W3C traceparent, OTel, B3, Jaeger and X-Ray trace and span ids."""
    if i % 5 == 4:
        trace, span = _hex(rng, 32), _hex(rng, 16)
        payload = {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {"spans": [{"traceId": trace, "spanId": span, "name": "tool.execute"}]}
                    ]
                }
            ]
        }
        return Case("keep_trace_ids", payload, (), (trace, span))
    xray = f"Root=1-{_hex(rng, 8)}-{_hex(rng, 24)}"
    case = _keep_text(
        "keep_trace_ids",
        rng,
        _pick(
            rng,
            (
                "traceparent: 00-⟪trace⟫-⟪span⟫-01\ntracestate: acme=⟪span2⟫\n",
                '{"trace_id": "⟪trace⟫", "span_id": "⟪span⟫", "parent_span_id": "⟪span2⟫"}',
                "X-B3-TraceId: ⟪trace⟫\nX-B3-SpanId: ⟪span⟫\nX-B3-Sampled: 1\n",
                "uber-trace-id: ⟪trace⟫:⟪span⟫:0:1\nX-Amzn-Trace-Id: " + xray + "\n",
            ),
            i,
        ),
    )
    if xray in str(case.payload):
        case = replace(case, keep=(*case.keep, xray))
    return case


@_kind("keep_lockfile_digest")
def _keep_lockfile_digest(rng: random.Random, i: int) -> Case:
    """sha256/sha512 digests in lockfiles and image references: public integrity hashes."""
    sri = "sha512-" + _clean_b64(rng, b"", 64)
    h = _hex(rng, 64)
    go = "h1:" + _clean_b64(rng, b"", 32)
    templates = (
        f'    "node_modules/lodash": {{\n      "version": "4.17.21",\n'
        f'      "integrity": "{sri}"\n    }}',
        f'[[package]]\nname = "requests"\nversion = "2.32.3"\nfiles = [\n'
        f'    {{file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:{h}"}},\n]',
        f"requests==2.32.3 \\\n    --hash=sha256:{h}",
        f'[[package]]\nname = "serde"\nversion = "1.0.203"\n'
        f'source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{h}"',
        f"golang.org/x/net v0.25.0 {go}",
        f'lodash@^4.17.21:\n  version "4.17.21"\n  integrity {sri}',
        f"Digest: sha256:{h}\nStatus: Downloaded newer image for python:3.11-slim",
    )
    kept = {0: sri, 1: f"sha256:{h}", 2: f"sha256:{h}", 3: h, 4: go, 5: sri, 6: f"sha256:{h}"}
    k = i % len(templates)
    return Case("keep_lockfile_digest", templates[k], (), (kept[k],))


@_kind("keep_public_key")
def _keep_public_key(rng: random.Random, i: int) -> Case:
    """SSH public keys, PEM public keys and JWKs: public by design."""
    variant = i % 5
    if variant == 0:
        _, pub = _ssh_ed25519_public(rng)
        return Case(
            "keep_public_key", f"$ cat ~/.ssh/id_ed25519.pub\n{pub} deploy@ci-runner\n", (), (pub,)
        )
    if variant == 1:
        pub = _ssh_rsa_public(rng)
        return Case("keep_public_key", f"# ~/.ssh/authorized_keys\n{pub} ops-laptop\n", (), (pub,))
    if variant == 2:
        _, pub = _ssh_ed25519_public(rng)
        return Case("keep_public_key", f"github.com {pub}\n", (), (pub,))
    if variant == 3:
        block = _pem("PUBLIC KEY", _public_pem_body(rng))
        return Case("keep_public_key", f"JWT verification key:\n{block}\n", (), (block,))
    n = _b64url(bytes([rng.randint(0x80, 0xFF)]) + rng.randbytes(255))
    kid = _hex(rng, 16)
    payload = {
        "keys": [{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"}]
    }
    return Case("keep_public_key", payload, (), (n, kid))


def _colon_hex(rng: random.Random, n: int, upper: bool = False) -> str:
    s = ":".join(f"{b:02x}" for b in rng.randbytes(n))
    return s.upper() if upper else s


@_kind("keep_certificate")
def _keep_certificate(rng: random.Random, i: int) -> Case:
    """X.509 certificates, chains and `openssl x509 -text` dumps: public documents."""
    variant = i % 3
    if variant == 0:
        block = _pem("CERTIFICATE", _cert_body(rng))
        return Case("keep_certificate", f"$ cat fullchain.pem\n{block}\n", (), (block,))
    if variant == 1:
        a, b = _pem("CERTIFICATE", _cert_body(rng)), _pem("CERTIFICATE", _cert_body(rng))
        return Case(
            "keep_certificate", {"ca_bundle": f"{a}\n{b}\n", "not_after": "2025-08-01"}, (), (a, b)
        )
    serial = _colon_hex(rng, 16)
    modulus = [_colon_hex(rng, 15) + ":" for _ in range(4)]
    fingerprint = _colon_hex(rng, 32, upper=True)
    text = (
        "Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number:\n"
        f"            {serial}\n        Signature Algorithm: sha256WithRSAEncryption\n"
        "        Subject: CN=api.acme-corp.io\n        Subject Public Key Info:\n"
        "            Public Key Algorithm: rsaEncryption\n                Public-Key: (2048 bit)\n"
        "                Modulus:\n"
        + "".join(f"                    {m}\n" for m in modulus)
        + f"sha256 Fingerprint={fingerprint}\n"
    )
    return Case("keep_certificate", text, (), (serial, *modulus, fingerprint))


@_kind("keep_base64_image")
def _keep_base64_image(rng: random.Random, i: int) -> Case:
    """Base64 images and file blobs with no credential context."""
    heads = (
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "application/pdf"),
        (b"GIF89a", "image/gif"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "application/gzip"),
    )
    head, mime = heads[i % len(heads)]
    blob = _clean_b64(rng, head, rng.randint(150, 2200))
    variant = i % 4
    if variant == 0:
        return Case("keep_base64_image", f"![chart](data:{mime};base64,{blob})\n", (), (blob,))
    if variant == 1:
        payload = {"type": "image", "source": {"type": "base64", "media_type": mime, "data": blob}}
        return Case("keep_base64_image", payload, (), (blob,))
    if variant == 2:
        payload = {
            "attachments": [
                {
                    "filename": f"report-{rng.randint(1, 99)}.bin",
                    "content_type": mime,
                    "content": blob,
                }
            ]
        }
        return Case("keep_base64_image", payload, (), (blob,))
    return Case(
        "keep_base64_image", f'<img alt="logo" src="data:{mime};base64,{blob}">', (), (blob,)
    )


@_kind("keep_non_luhn_ids")
def _keep_non_luhn_ids(rng: random.Random, i: int) -> Case:
    """Card-length order numbers, tracking numbers and snowflake ids that fail Luhn."""
    a, b = _non_luhn(rng, rng.choice((13, 15, 16, 19))), _non_luhn(rng, 16)
    tpl = _pick(
        rng,
        (
            "Order #{a} shipped; tracking number {b}.",
            '{"order_id": "{a}", "invoice_no": "{b}", "total": 42.5}',
            "message_id={a} channel_id={b}",
            "ref {a} / batch {b} processed",
        ),
        i,
    )
    text = tpl.replace("{a}", a).replace("{b}", b)
    if i % 5 == 4:
        return Case("keep_non_luhn_ids", {"order_id": int(a), "tracking_number": b}, (), (a, b))
    return Case("keep_non_luhn_ids", text, (), (a, b))


@_kind("keep_invalid_iban")
def _keep_invalid_iban(rng: random.Random, i: int) -> Case:
    """IBAN-shaped strings whose mod-97 check fails: not account numbers."""
    bad = _iban(rng, list(_IBAN_BBAN)[i % len(_IBAN_BBAN)], valid=False)
    shown = _group4(bad) if i % 2 else bad
    tpl = rng.choice(
        (
            "validation failed: {x} is not a valid IBAN (checksum)",
            '{"field": "iban", "value": "{x}", "error": "invalid_checksum"}',
            "test fixture (bad checksum): {x}",
        )
    )
    return Case("keep_invalid_iban", tpl.replace("{x}", shown), (), (shown,))


_PROSE = (
    "Forgot your password? Use the password reset page to choose a new one.",
    "The tokenizer splits the prompt into tokens before the model sees it.",
    "Store secrets in the vault and never commit them to the repository.",
    "Rotate the API key from the dashboard if you think it leaked.",
    "Your session expired; please sign in again.",
    "Basic authentication is disabled on this endpoint.",
    "We use cookies to remember your language preference.",
    "Each access token is valid for one hour and each refresh token for thirty days.",
    "The private key never leaves the hardware security module.",
    "Authorization failed because the user lacks the admin role.",
    "Credentials are injected at runtime by the secrets operator.",
    "## Token usage\n\nThe model returned fewer tokens than the limit.",
)


@_kind("keep_prose")
def _keep_prose(rng: random.Random, i: int) -> Case:
    """Prose that merely mentions tokens, passwords, secrets, keys and sessions."""
    first = _PROSE[i % len(_PROSE)]
    second = _PROSE[(i + 5) % len(_PROSE)]
    if i % 5 == 4:
        return Case(
            "keep_prose", {"role": "assistant", "content": f"{first} {second}"}, (), (first, second)
        )
    return Case("keep_prose", f"{first}\n\n{second}\n", (), (first, second))


@_kind("keep_credential_names")
def _keep_credential_names(rng: random.Random, i: int) -> Case:
    """Names of and references to credentials (secret_name, secretKeyRef, --secret-id, ...)."""
    svc = rng.choice(_SERVICES)
    options: tuple[tuple[str, tuple[str, ...]], ...] = (
        (f"secret_name: db-password\nnamespace: {svc}\n", ("secret_name: db-password",)),
        (
            f"        env:\n          - name: DB_PASSWORD\n            valueFrom:\n"
            "              secretKeyRef:\n"
            f"                name: {svc}-credentials\n                key: password\n",
            ("name: DB_PASSWORD", f"name: {svc}-credentials", "key: password"),
        ),
        (
            f"$ aws secretsmanager get-secret-value --secret-id prod/{svc}/api-token --query "
            "SecretString",
            (f"--secret-id prod/{svc}/api-token",),
        ),
        (
            f'resource "aws_secretsmanager_secret" "db" {{\n  name = "prod/{svc}/db-password"\n}}',
            (f'name = "prod/{svc}/db-password"',),
        ),
        (
            f"$ vault kv get -field=password secret/data/prod/{svc}/postgres",
            ("-field=password", f"secret/data/prod/{svc}/postgres"),
        ),
        (
            "password_min_length: 12\npassword_expiry_days: 90\nsession_timeout_minutes: 30\n",
            ("password_min_length: 12", "password_expiry_days: 90", "session_timeout_minutes: 30"),
        ),
        (
            "[profile ci]\nrole_arn = arn:aws:iam::123456789012:role/ci\n"
            "credential_source = Ec2InstanceMetadata\n",
            ("credential_source = Ec2InstanceMetadata",),
        ),
    )
    if i % 8 == 7:
        payload = {
            "issuer": "https://login.acme-corp.io",
            "authorization_endpoint": "https://login.acme-corp.io/oauth2/authorize",
            "token_endpoint": "https://login.acme-corp.io/oauth2/token",
            "jwks_uri": "https://login.acme-corp.io/.well-known/jwks.json",
        }
        return Case("keep_credential_names", payload, (), tuple(payload.values()))
    if i % 8 == 6:
        payload = {"secret_name": f"{svc}-api-key", "secret_version": 3, "rotation_days": 30}
        return Case("keep_credential_names", payload, (), (f"{svc}-api-key", '"secret_version": 3'))
    text, keep = options[i % len(options)]
    return Case("keep_credential_names", text, (), keep)


@_kind("keep_auth_method")
def _keep_auth_method(rng: random.Random, i: int) -> Case:
    """Authentication *settings* (methods, schemes, grant types), not credentials."""
    options: tuple[tuple[str | dict, tuple[str, ...]], ...] = (
        ("auth: {method: oauth}\nretries: 3\n", ("auth: {method: oauth}",)),
        (
            {"auth": {"method": "oauth", "scopes": ["repo", "read:org"]}},
            ('"method": "oauth"', "read:org"),
        ),
        (
            "components:\n  securitySchemes:\n    bearerAuth:\n      type: http\n"
            "      scheme: bearer\n"
            "      bearerFormat: JWT\n    ApiKeyAuth:\n      type: apiKey\n      in: header\n"
            "      name: X-API-Key\n",
            ("scheme: bearer", "bearerFormat: JWT", "name: X-API-Key"),
        ),
        ("grant_type=client_credentials&scope=orders.read", ("grant_type=client_credentials",)),
        (
            {"authentication": {"type": "basic", "required": True}},
            ('"type": "basic"', '"required": true'),
        ),
        (
            "auth_type: password\nauth_method: token\nmfa: required\n",
            ("auth_type: password", "auth_method: token"),
        ),
        (
            "Host bastion\n  PasswordAuthentication no\n  PubkeyAuthentication yes\n",
            ("PasswordAuthentication no", "PubkeyAuthentication yes"),
        ),
        (
            {
                "mcpServers": {
                    "github": {"auth": {"type": "oauth", "client_id": "Iv1.8a61f9b3a7aba766"}}
                }
            },
            ('"type": "oauth"', "Iv1.8a61f9b3a7aba766"),
        ),
    )
    payload, keep = options[i % len(options)]
    return Case("keep_auth_method", payload, (), keep)


@_kind("keep_usage_metadata")
def _keep_usage_metadata(rng: random.Random, i: int) -> Case:
    """Token counts, limits and usage metadata of LLM calls."""
    p, c = rng.randint(10, 9000), rng.randint(1, 4000)
    variant = i % 6
    if variant == 0:
        payload = {
            "id": "chatcmpl-" + _tok(rng, _ALNUM, 29),
            "model": "gpt-4o-mini",
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        }
        return Case(
            "keep_usage_metadata",
            payload,
            (),
            (f'"prompt_tokens": {p}', f'"total_tokens": {p + c}'),
        )
    if variant == 1:
        payload = {"usage": {"input_tokens": p, "output_tokens": c, "cache_read_input_tokens": 0}}
        return Case(
            "keep_usage_metadata", payload, (), (f'"input_tokens": {p}', f'"output_tokens": {c}')
        )
    if variant == 2:
        return Case(
            "keep_usage_metadata",
            {"model": "claude-sonnet-4-20250514", "max_tokens": 4096},
            (),
            ('"max_tokens": 4096',),
        )
    texts = (
        (f"token_count: {p}\nmax_tokens: 4096\n", (f"token_count: {p}", "max_tokens: 4096")),
        (
            f"gen_ai.usage.input_tokens={p} gen_ai.usage.output_tokens={c}",
            (f"gen_ai.usage.input_tokens={p}", f"gen_ai.usage.output_tokens={c}"),
        ),
        (
            f'{{"max_tokens": 4096, "temperature": 0.2, "tokens_per_second": {c}.5}}',
            ('"max_tokens": 4096', f'"tokens_per_second": {c}.5'),
        ),
    )
    text, keep = texts[variant - 3]
    return Case("keep_usage_metadata", text, (), keep)


@_kind("keep_receipt")
def _keep_receipt(rng: random.Random, i: int) -> Case:
    """zeroclaw HMAC receipts (`zc-receipt-{unix seconds}-{43 base64url}`) and their key id."""
    receipt = _receipt(rng)
    key_id = _hex(rng, 16)
    if i % 3 == 2:
        payload = {"tool": "read_file", "outcome": "success", "receipt": receipt, "key_id": key_id}
        return Case("keep_receipt", payload, (), (receipt, key_id))
    tpl = rng.choice(
        (
            "zeroclaw.tool.name=read_file zeroclaw.tool.receipt=⟪r⟫ trace_id=⟪trace⟫",
            '{"ts": "⟪ts⟫", "tool": "http_get", "receipt": "⟪r⟫", "key_id": "⟪k⟫"}',
            "tool: read_file\noutcome: success\nreceipt: ⟪r⟫\n",
        )
    )
    text, keep = _fill(rng, tpl, r=receipt, k=key_id)
    return Case("keep_receipt", text, (), (receipt, *([key_id] if key_id in text else []), *keep))


@_kind("keep_token_lookalike_words")
def _keep_token_lookalike_words(rng: random.Random, i: int) -> Case:
    """Words and names that contain a token prefix but are ordinary text."""
    words = (
        "scikit-learn (sk-learn) estimators",
        "risk-assessment-framework-guidelines-v2",
        "task-scheduler-configuration-reference",
        "disk-encryption-at-rest-requirements",
        "HF_HUB_ENABLE_HF_TRANSFER=1",
        "npm_config_registry=https://registry.npmjs.org/",
        "ask-the-expert-knowledge-base-articles",
        "desk_booking_service_migration_plan",
    )
    a, b = words[i % len(words)], words[(i + 3) % len(words)]
    return Case("keep_token_lookalike_words", f"See {a} and {b}.\n", (), (a, b))
