"""A held-out evaluation set for the redactor, written apart from `corpus.py` (issue 15).

The team's corpus is written from our own specification; this set is written from material the
team did not write: the shapes of the fake secrets in public secret scanners' test fixtures
(gitleaks `cmd/generate/config/rules/*.go` true and false positives, trufflehog
`pkg/detectors/*/*_test.go`, detect-secrets `test_data/`) and the real file formats those
secrets live in (`.netrc`, `.pgpass`, `.npmrc`, kubeconfig, STS responses, service-account
JSON, Kubernetes `Secret` manifests, compose files, OTLP attributes, chat transcripts...). No
fixture is copied: every value is generated here from a seeded RNG in its format's prefix,
length, alphabet and checksum (GitHub-style CRC32 tails, Luhn cards, mod-97 IBANs, DER-prefixed
key bodies, base64 of what a format base64-encodes).

Each case is a `corpus.Case` whose `kind` is its *family* (`sql_credentials`, `netrc`,
`keep_template_reference`, ...), so one scorer (`corpus.score`) serves both sets. A secret is
the exact substring that must disappear, as it appears in the payload (escapes, line breaks and
invisible characters included); a look-alike is an exact substring that must survive, and
always occurs outside every secret. Families named `keep_*` carry only look-alikes.

This set is for measuring, not for tuning: its figures go to `make bench`, and no test asserts
the redactor's recall on it (`test_heldout.py` checks only that the set is well-formed). A rule
written to pass a case here should be justified by the format, not by the case.

    from tests.redaction.heldout import FAMILIES, generate, dense_payload
"""

from __future__ import annotations

import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import replace

from tests.redaction.corpus import Case
from tests.redaction.corpus._blocks import _b64, _b64url, _hex
from tests.redaction.formats import base62

__all__ = ["FAMILIES", "KEEP_FAMILIES", "PII_FAMILIES", "dense_payload", "generate"]

# --------------------------------------------------------------------------------------------
# Alphabets and random values in real formats
# --------------------------------------------------------------------------------------------

_LOWER, _UPPER, _DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS
_B64 = _ALNUM + "+/"
_B64URL = _ALNUM + "-_"
_HEX = "0123456789abcdef"
_B32 = _UPPER + "234567"
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
_PW_SYMBOLS = "!#%*+-_.^~"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    """`n` characters of `alphabet`, redrawn until every letter/digit class of it appears."""
    classes = [c for c in (_LOWER, _UPPER, _DIGITS) if set(c) & set(alphabet)]
    while True:
        s = "".join(rng.choices(alphabet, k=n))
        if n < 8 or all(set(s) & set(c) for c in classes):
            return s


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _crc_token(rng: random.Random, prefix: str) -> str:
    """GitHub / npm style: prefix, 30 random base62 characters, then their CRC32 in base62."""
    body = _rand(rng, _ALNUM, 30)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


def _password(rng: random.Random, symbols: str = _PW_SYMBOLS) -> str:
    """A password a person or a generator chose; `symbols` are those its context tolerates."""
    style = rng.randrange(3)
    if style == 0:
        words = ("Maple", "Harbor", "Falcon", "Quartz", "Tundra", "Orbit", "Cedar", "Ember")
        sep = rng.choice(symbols) if symbols else ""
        return sep.join(rng.sample(words, 2)) + str(rng.randint(10, 9999)) + (symbols[:1] or "Z")
    if style == 1:
        return _rand(rng, _ALNUM + symbols, rng.randint(14, 24))
    return _rand(rng, _ALNUM, rng.randint(16, 32))


def _aws_key_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + "".join(rng.choices(_B32, k=16))


def _aws_secret(rng: random.Random) -> str:
    return _rand(rng, _B64, 40)


def _session_token(rng: random.Random) -> str:
    return "IQoJb3JpZ2luX2Vj" + _b64(rng.randbytes(rng.randint(280, 420))).rstrip("=")


def _jwt(rng: random.Random, claims: dict | None = None) -> str:
    header = {"alg": rng.choice(("RS256", "HS256", "ES256")), "typ": "JWT"}
    now = 1_714_000_000 + rng.randrange(10_000_000)
    body = claims or {"sub": _uuid(rng), "iat": now, "exp": now + 3600, "scope": "api"}
    segs = [_b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, body)]
    return ".".join([*segs, _b64url(rng.randbytes(rng.choice((32, 64, 256))))])


_DER = {
    "RSA PRIVATE KEY": (bytes.fromhex("308204a40201000282010100"), 1180),
    "PRIVATE KEY": (bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8"), 1190),
    "EC PRIVATE KEY": (bytes.fromhex("30770201010420"), 114),
}


def _pem_body(rng: random.Random, label: str) -> list[str]:
    prefix, n = _DER[label]
    blob = _b64(prefix + rng.randbytes(n))
    return [blob[k : k + 64] for k in range(0, len(blob), 64)]


def _pem(label: str, body: list[str], nl: str = "\n") -> str:
    return f"-----BEGIN {label}-----{nl}{nl.join(body)}{nl}-----END {label}-----{nl}"


def _luhn_complete(body: str) -> str:
    for d in _DIGITS:
        digits = [int(c) for c in body + d]
        total = sum(
            (x * 2 - 9 if x > 4 else x * 2) if k % 2 else x for k, x in enumerate(reversed(digits))
        )
        if total % 10 == 0:
            return body + d
    raise AssertionError("unreachable")


def _card(rng: random.Random) -> str:
    prefix, length = rng.choice((("4", 16), ("5", 16), ("37", 15), ("6011", 16), ("35", 16)))
    body = prefix + "".join(rng.choices(_DIGITS, k=length - 1 - len(prefix)))
    digits = _luhn_complete(body)
    sep = rng.choice(("", " ", "-"))
    if length == 15:
        return sep.join((digits[:4], digits[4:10], digits[10:]))
    return sep.join(digits[k : k + 4] for k in range(0, 16, 4))


def _iban(rng: random.Random) -> str:
    country, bban_len = rng.choice((("DE", 18), ("FR", 23), ("ES", 20), ("NL", 14), ("BE", 12)))
    if country == "NL":
        bban = "".join(rng.choices(_UPPER, k=4)) + "".join(rng.choices(_DIGITS, k=10))
    else:
        bban = "".join(rng.choices(_DIGITS, k=bban_len))
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _phone(rng: random.Random, k: int) -> str:
    a, e, n = rng.randint(201, 989), rng.randint(200, 989), rng.randint(1000, 9999)
    forms = (
        f"+1{a}{e}{n}",
        f"tel:+1-{a}-{e}-{n}",
        f"+44 (0)7700 {rng.randint(900000, 900999)}",
        f"({a}) {e} {n}",
        f"+49 (0)30 {rng.randint(1000000, 9999999)}",
        f"+33 (0)1 {rng.randint(10, 99)}.{rng.randint(10, 99)}.{rng.randint(10, 99)}."
        f"{rng.randint(10, 99)}",
        f"1-{a}-{e}-{n} ext. {rng.randint(10, 999)}",
        f"+61 (0)2 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        f"{a}/{e}-{n}",
        f"+353 87 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
    )
    return forms[k % len(forms)]


def _ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def _email(rng: random.Random) -> str:
    first = rng.choice(("maria", "li.wei", "j.okafor", "sven", "priya", "tomasz", "aiko"))
    return f"{first}{rng.randint(1, 99)}@{rng.choice(('gmail.com', 'outlook.de', 'proton.me'))}"


# Provider token formats, shaped after the scanners' rule fixtures.
_PROVIDER_TOKENS: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("GITHUB_TOKEN", lambda r: _crc_token(r, "ghp_")),
    ("GH_ACTIONS_TOKEN", lambda r: _crc_token(r, "ghs_")),
    ("NPM_TOKEN", lambda r: _crc_token(r, "npm_")),
    ("GITLAB_TOKEN", lambda r: "glpat-" + _rand(r, _B64URL, 20)),
    (
        "SLACK_BOT_TOKEN",
        lambda r: (
            f"xoxb-{r.randint(10**10, 10**11)}-{r.randint(10**12, 10**13)}-" + _rand(r, _ALNUM, 24)
        ),
    ),
    ("SENDGRID_API_KEY", lambda r: "SG." + _rand(r, _B64URL, 22) + "." + _rand(r, _B64URL, 43)),
    ("SHOPIFY_ACCESS_TOKEN", lambda r: "shpat_" + _hex(r, 32)),
    ("DIGITALOCEAN_TOKEN", lambda r: "dop_v1_" + _hex(r, 64)),
    ("VAULT_TOKEN", lambda r: "hvs." + _rand(r, _B64URL, 24)),
    ("DATABRICKS_TOKEN", lambda r: "dapi" + _hex(r, 32)),
    ("DOPPLER_TOKEN", lambda r: "dp.pt." + _rand(r, _ALNUM, 43)),
    ("GRAFANA_SA_TOKEN", lambda r: "glsa_" + _rand(r, _ALNUM, 32) + "_" + _hex(r, 8)),
    ("POSTMAN_API_KEY", lambda r: "PMAK-" + _hex(r, 24) + "-" + _hex(r, 34)),
    ("LINEAR_API_KEY", lambda r: "lin_api_" + _rand(r, _ALNUM, 40)),
    ("STRIPE_SECRET_KEY", lambda r: "sk_live_51" + _rand(r, _ALNUM, 96)),
    (
        "OPENAI_API_KEY",
        lambda r: "sk-proj-" + _rand(r, _B64URL, 74) + "T3BlbkFJ" + _rand(r, _B64URL, 74),
    ),
    ("ANTHROPIC_API_KEY", lambda r: "sk-ant-api03-" + _rand(r, _B64URL, 93) + "AA"),
    ("HF_TOKEN", lambda r: "hf_" + _rand(r, _LOWER + _UPPER, 34)),
    ("GOOGLE_API_KEY", lambda r: "AIza" + _rand(r, _B64URL, 35)),
    ("AGE_SECRET_KEY", lambda r: "AGE-SECRET-KEY-1" + "".join(r.choices(_BECH32, k=58))),
    ("SUPABASE_ACCESS_TOKEN", lambda r: "sbp_" + _hex(r, 40)),
    ("PLANETSCALE_PASSWORD", lambda r: "pscale_pw_" + _rand(r, _B64URL, 43)),
    ("MAILGUN_API_KEY", lambda r: "key-" + _hex(r, 32)),
    ("TELEGRAM_BOT_TOKEN", lambda r: f"{r.randint(10**8, 10**10)}:AA" + _rand(r, _B64URL, 33)),
    (
        "AZURE_CLIENT_SECRET",
        lambda r: _rand(r, _ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + _rand(r, _ALNUM + "_.-", 34),
    ),
    ("PYPI_API_TOKEN", lambda r: "pypi-AgEIcHlwaS5vcmc" + _rand(r, _B64URL, 140)),
)


def _token_of(name: str, rng: random.Random) -> str:
    return dict(_PROVIDER_TOKENS)[name](rng)


def _provider(rng: random.Random, k: int) -> tuple[str, str]:
    """(environment variable name, token) of the `k`-th provider format, cycling."""
    name, make = _PROVIDER_TOKENS[k % len(_PROVIDER_TOKENS)]
    return name, make(rng)


_HOSTS = ("db-primary.internal", "pg.prod.svc.cluster.local", "10.20.4.17", "mysql-02.corp.lan")
_SERVICES = ("billing", "orders", "ledger", "search", "notifier", "checkout")
_REGIONS = ("eu-west-1", "us-east-1", "ap-southeast-2", "eu-central-1", "us-west-2")


def _ts(rng: random.Random) -> str:
    d, h, m, s = rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    return f"2025-0{rng.randint(1, 9)}-{d:02d}T{h:02d}:{m:02d}:{s:02d}Z"


def _case(family: str, payload: object, secrets: list[str], keep: list[str]) -> Case:
    found, kept = tuple(dict.fromkeys(secrets)), tuple(dict.fromkeys(keep))
    return Case(family, payload, found, kept, family in PII_FAMILIES)  # type: ignore[arg-type]


_Generator = Callable[[random.Random, int], Case]
_GENERATORS: dict[str, _Generator] = {}


def _family(name: str) -> Callable[[_Generator], _Generator]:
    def register(fn: _Generator) -> _Generator:
        _GENERATORS[name] = fn
        return fn

    return register


PII_FAMILIES = ("pii_phone_layouts", "pii_customer_record")

# --------------------------------------------------------------------------------------------
# Secret families
# --------------------------------------------------------------------------------------------


@_family("sql_credentials")
def _sql_credentials(rng: random.Random, i: int) -> Case:
    """Passwords in DDL: CREATE USER / ALTER ROLE / CREATE LOGIN / SET PASSWORD / mappings."""
    pw = _password(rng, "!#%*+-_.^")
    svc = rng.choice(_SERVICES)
    until = f"{rng.randint(2025, 2027)}-12-31"
    forms = (
        (
            f"CREATE USER {svc}_app WITH LOGIN PASSWORD '{pw}' VALID UNTIL '{until}';\n"
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {svc} TO {svc}_app;",
            [f"VALID UNTIL '{until}'", f"IN SCHEMA {svc} TO {svc}_app"],
        ),
        (
            f"ALTER ROLE {svc}_rw PASSWORD '{pw}';  -- rotated {until}",
            [f"ALTER ROLE {svc}_rw", f"-- rotated {until}"],
        ),
        (
            f"CREATE USER '{svc}'@'%' IDENTIFIED BY '{pw}';\nGRANT ALL PRIVILEGES ON {svc}.* "
            f"TO '{svc}'@'%';",
            [f"GRANT ALL PRIVILEGES ON {svc}.*"],
        ),
        (
            f"CREATE LOGIN {svc}_svc WITH PASSWORD = '{pw}', CHECK_POLICY = ON;",
            ["CHECK_POLICY = ON", f"CREATE LOGIN {svc}_svc"],
        ),
        (f"SET PASSWORD FOR '{svc}'@'localhost' = '{pw}';", [f"'{svc}'@'localhost'"]),
        (
            f"CREATE USER MAPPING FOR {svc}_app SERVER warehouse_fdw\n  OPTIONS (user 'etl', "
            f"password '{pw}');",
            ["SERVER warehouse_fdw", "OPTIONS (user 'etl'"],
        ),
        (
            f'ALTER USER {svc.upper()}_OWNER IDENTIFIED BY "{pw}" ACCOUNT UNLOCK;',
            ["ACCOUNT UNLOCK", f"ALTER USER {svc.upper()}_OWNER"],
        ),
        (
            f"mysql> CREATE USER 'report'@'10.0.%' IDENTIFIED WITH mysql_native_password BY "
            f"'{pw}';\nQuery OK, 0 rows affected (0.01 sec)",
            ["IDENTIFIED WITH mysql_native_password", "Query OK, 0 rows affected (0.01 sec)"],
        ),
    )
    text, keep = forms[i % len(forms)]
    return _case("sql_credentials", text, [pw], keep)


@_family("sql_connection_in_sql")
def _sql_connection_in_sql(rng: random.Random, i: int) -> Case:
    """Connection strings inside SQL: dblink, COPY FROM PROGRAM, OPENROWSET, linked servers."""
    pw = _password(rng, "!*-_.~")
    host = rng.choice(_HOSTS)
    forms = (
        (
            f"SELECT * FROM dblink('host={host} dbname=ledger user=etl password={pw}', "
            "'SELECT id, total FROM invoices') AS t(id int, total numeric);",
            ["AS t(id int, total numeric)", "'SELECT id, total FROM invoices'"],
        ),
        (
            f"SELECT dblink_connect('ledger_conn', 'hostaddr={host} port=5432 user=etl "
            f"password={pw} dbname=ledger');",
            ["dblink_connect('ledger_conn'", "port=5432"],
        ),
        (
            f"COPY staging.orders FROM PROGRAM 'psql postgresql://etl:{pw}@{host}:5432/orders "
            '-c "\\copy orders TO STDOUT"\' WITH (FORMAT csv);',
            ["COPY staging.orders FROM PROGRAM", "WITH (FORMAT csv)"],
        ),
        (
            f"SELECT * FROM OPENROWSET('SQLNCLI', 'Server={host};Uid=report;Pwd={pw};', "
            "'SELECT TOP 10 * FROM sales.dbo.Orders');",
            ["OPENROWSET('SQLNCLI'", "SELECT TOP 10 * FROM sales.dbo.Orders"],
        ),
        (
            f"EXEC sp_addlinkedsrvlogin @rmtsrvname = N'LEDGER', @useself = N'False', "
            f"@rmtuser = N'etl', @rmtpassword = N'{pw}';",
            ["@rmtsrvname = N'LEDGER'", "@useself = N'False'"],
        ),
    )
    text, keep = forms[i % len(forms)]
    return _case("sql_connection_in_sql", text, [pw], keep)


@_family("wrapped_secret")
def _wrapped_secret(rng: random.Random, i: int) -> Case:
    """Tokens broken over lines: terminal wrapping, `\\` continuations, string concatenation."""
    name, token = _provider(rng, i * 3 + 1)
    cut = rng.randint(12, len(token) - 12)
    head, tail = token[:cut], token[cut:]
    req = _uuid(rng)
    forms = (
        (f"$ export {name}={head}\\\n{tail}\n$ ./deploy.sh --request {req}", f"{head}\\\n{tail}"),
        (f'{name} = (\n    "{head}"\n    "{tail}"\n)\n# request {req}', None),
        (f"[{_ts(rng)}] env: {name}={head}\n{tail} request_id={req}", f"{head}\n{tail}"),
        (
            f"headers:\n  Authorization: >-\n    Bearer {head}\n    {tail}\n  X-Request-Id: {req}",
            f"{head}\n    {tail}",
        ),
        (f'token = "{head}" + \\\n        "{tail}"  # request {req}', None),
    )
    text, joined = forms[i % len(forms)]
    secrets = [joined] if joined else [head, tail]
    return _case("wrapped_secret", text, secrets, [req])


@_family("split_key_value")
def _split_key_value(rng: random.Random, i: int) -> Case:
    """A credential key on one line and its value on the next (YAML, INI, tables, prompts)."""
    pw = _password(rng)
    svc = rng.choice(_SERVICES)
    forms = (
        f"{svc}:\n  password:\n    {pw}\n  pool_size: 8\n",
        f"[{svc}]\npassword =\n    {pw}\npool_size = 8\n",
        f"| key | value |\n|---|---|\n| password |\n| {pw} |\n| pool_size | 8 |\n",
        f"Enter the database password:\n{pw}\npool_size: 8 (default)\n",
        f"DB_PASSWORD=\\\n{pw}\nPOOL_SIZE=8\n",
        f"<password>\n    {pw}\n</password>\n<pool_size>8</pool_size>\n",
    )
    text = forms[i % len(forms)]
    keep = [
        k
        for k in (
            "pool_size: 8",
            "pool_size = 8",
            "| pool_size | 8 |",
            "POOL_SIZE=8",
            "<pool_size>8</pool_size>",
        )
        if k in text
    ]
    keep += [k for k in (f"{svc}:\n", f"[{svc}]") if k in text]
    return _case("split_key_value", text, [pw], keep)


@_family("netrc")
def _netrc(rng: random.Random, i: int) -> Case:
    """`.netrc` / `_netrc` entries, one per line or spread over lines."""
    _, token = _provider(rng, (0, 3, 4, 8)[i % 4])
    pw = _password(rng)
    forms = (
        f"machine api.heroku.com\n  login deploy-bot\n  password {token}\n"
        f"machine git.heroku.com\n  login deploy-bot\n  password {pw}\n",
        f"machine github.com login x-access-token password {token}\n"
        f"machine ftp.mirror.internal login anonymous password {pw}\n",
        f"default login ci password {pw}\nmachine artifacts.corp.lan\nlogin ci\npassword {token}\n",
        f"# ~/.netrc (chmod 600)\nmachine gitlab.com\n\tlogin oauth2\n\tpassword {token}\n"
        f"macdef init\ncd /pub\n\nmachine backup.internal login svc password {pw}\n",
    )
    text = forms[i % len(forms)]
    keep = [
        k
        for k in (
            "machine api.heroku.com",
            "machine github.com",
            "login x-access-token",
            "machine artifacts.corp.lan",
            "machine gitlab.com",
            "macdef init",
            "machine ftp.mirror.internal",
            "login deploy-bot",
        )
        if k in text
    ]
    return _case("netrc", text, [token, pw], keep)


@_family("pgpass")
def _pgpass(rng: random.Random, i: int) -> Case:
    """`.pgpass` lines `host:port:database:user:password`, with comments and escapes."""
    pws = [_password(rng, "!#%*+-_.^~") for _ in range(2)]
    svc = rng.choice(_SERVICES)
    lines = [
        "# hostname:port:database:username:password",
        f"{rng.choice(_HOSTS)}:5432:{svc}:{svc}_app:{pws[0]}",
        f"*:6432:*:pgbouncer:{pws[1]}" if i % 2 else f"localhost:5432:{svc}_test:ci:{pws[1]}",
    ]
    keep = [f":5432:{svc}:{svc}_app:", "# hostname:port:database:username:password"]
    if i % 3 == 2:
        lines.insert(1, f"# rotated {_ts(rng)} by vault-agent")
    return _case("pgpass", "\n".join(lines) + "\n", pws, keep)


@_family("npmrc")
def _npmrc(rng: random.Random, i: int) -> Case:
    """`.npmrc` / `.yarnrc.yml` auth: `_authToken`, `_auth`, `_password` (base64)."""
    npm = _crc_token(rng, "npm_")
    gh = _crc_token(rng, "ghp_")
    user_pw = _b64(f"ci-bot:{_password(rng)}".encode())
    pw_b64 = _b64(_password(rng).encode())
    forms = (
        (
            f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={npm}\n"
            "always-auth=true\n",
            [npm],
            ["registry=https://registry.npmjs.org/", "always-auth=true"],
        ),
        (
            f"@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken={gh}\n",
            [gh],
            ["@acme:registry=https://npm.pkg.github.com"],
        ),
        (
            f"_auth={user_pw}\nemail=ci@acme-corp.io\nstrict-ssl=true\n",
            [user_pw],
            ["strict-ssl=true"],
        ),
        (
            f"//nexus.corp.lan/repository/npm/:username=ci-bot\n"
            f"//nexus.corp.lan/repository/npm/:_password={pw_b64}\n",
            [pw_b64],
            ["//nexus.corp.lan/repository/npm/:username=ci-bot"],
        ),
        (
            f'npmRegistryServer: "https://registry.yarnpkg.com"\nnpmAuthToken: {npm}\n'
            "nodeLinker: node-modules\n",
            [npm],
            ["nodeLinker: node-modules"],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("npmrc", text, secrets, keep)


@_family("pypirc")
def _pypirc(rng: random.Random, i: int) -> Case:
    """`.pypirc`, `pip.conf` index URLs and `poetry`/`uv` token settings."""
    tok = _token_of("PYPI_API_TOKEN", rng)
    pw = _password(rng, "-_.~")
    forms = (
        (
            f"[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n"
            f"[pypi]\nusername = __token__\npassword = {tok}\n\n[testpypi]\nrepository = https://test.pypi.org/legacy/\n",
            [tok],
            ["username = __token__", "repository = https://test.pypi.org/legacy/"],
        ),
        (
            f"[global]\nindex-url = https://ci:{pw}@pypi.corp.lan/simple/\ntimeout = 60\n",
            [pw],
            ["timeout = 60", "pypi.corp.lan/simple/"],
        ),
        (
            f"$ poetry config pypi-token.pypi {tok}\n$ poetry publish --build\n",
            [tok],
            ["poetry publish --build"],
        ),
        (
            f"UV_PUBLISH_TOKEN={tok}\nUV_INDEX_URL=https://pypi.org/simple\n",
            [tok],
            ["UV_INDEX_URL=https://pypi.org/simple"],
        ),
        (f"[pypi]\n  username: __token__\n  password: {tok}\n", [tok], ["username: __token__"]),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("pypirc", text, secrets, keep)


@_family("git_credentials")
def _git_credentials(rng: random.Random, i: int) -> Case:
    """`~/.git-credentials` lines, credential-helper output and remotes with tokens."""
    gh = _crc_token(rng, "ghp_")
    gl = "glpat-" + _rand(rng, _B64URL, 20)
    pw = _password(rng, "-_.~")
    forms = (
        (
            f"https://octo-bot:{gh}@github.com\nhttps://oauth2:{gl}@gitlab.com\n"
            "# ~/.gitconfig: [credential] helper = store",
            [gh, gl],
            ["# ~/.gitconfig: [credential] helper = store"],
        ),
        (
            f"$ git credential fill <<< 'protocol=https\nhost=github.com'\nprotocol=https\n"
            f"host=github.com\nusername=octo-bot\npassword={gh}\n",
            [gh],
            ["username=octo-bot"],
        ),
        (
            f'[remote "origin"]\n\turl = https://ci:{pw}@bitbucket.org/acme/'
            f"{_SERVICES[i % 6]}.git\n"
            "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
            [pw],
            ["fetch = +refs/heads/*:refs/remotes/origin/*"],
        ),
        (
            f"remote: Invalid username or password.\nfatal: Authentication failed for "
            f"'https://x-access-token:{gh}@github.com/acme/infra.git/'",
            [gh],
            ["remote: Invalid username or password."],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("git_credentials", text, secrets, keep)


@_family("docker_config_auths")
def _docker_config_auths(rng: random.Random, i: int) -> Case:
    """`~/.docker/config.json` `auths` (base64 user:password), identity and registry tokens."""
    auth = _b64(f"{rng.choice(('ci', 'deploy', 'AWS'))}:{_password(rng)}".encode())
    ecr = f"{rng.randint(10**11, 10**12 - 1)}.dkr.ecr.{rng.choice(_REGIONS)}.amazonaws.com"
    ident = _jwt(rng)
    cfg: dict = {"auths": {"https://index.docker.io/v1/": {"auth": auth}}}
    secrets = [auth]
    if i % 3 == 1:
        cfg["auths"]["ghcr.io"] = {"identitytoken": ident}
        secrets.append(ident)
    cfg["credHelpers"] = {ecr: "ecr-login"}
    cfg["credsStore"] = "desktop"
    text = json.dumps(cfg, indent=rng.choice((1, 2, 4)) if i % 2 else None)
    if i % 4 == 3:
        text = f"$ cat ~/.docker/config.json\n{text}\n$ docker pull {ecr}/api:1.4.2"
    return _case("docker_config_auths", text, secrets, [ecr, '"credsStore": "desktop"'])


@_family("kubeconfig")
def _kubeconfig(rng: random.Random, i: int) -> Case:
    """kubeconfig users: bearer tokens, client keys (base64 PEM), basic-auth passwords."""
    cluster = f"{rng.choice(_SERVICES)}-{rng.choice(('prod', 'staging'))}"
    server = f"https://{_hex(rng, 32).upper()}.gr7.{rng.choice(_REGIONS)}.eks.amazonaws.com"
    token = (
        _jwt(
            rng, {"iss": "kubernetes/serviceaccount", "sub": f"system:serviceaccount:ci:{cluster}"}
        )
        if i % 2
        else f"{_rand(rng, _LOWER + _DIGITS, 6)}.{_rand(rng, _LOWER + _DIGITS, 16)}"
    )
    key_data = _b64(_pem("EC PRIVATE KEY", _pem_body(rng, "EC PRIVATE KEY")).encode())
    user = (
        f"    token: {token}\n"
        if i % 3 != 2
        else f"    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
        f"    client-key-data: {key_data}\n"
    )
    secret = token if i % 3 != 2 else key_data
    text = (
        f"apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: {server}\n"
        f"  name: {cluster}\ncontexts:\n- context:\n    cluster: {cluster}\n"
        f"    namespace: default\n    user: {cluster}-admin\n  name: {cluster}\n"
        f"current-context: {cluster}\nusers:\n- name: {cluster}-admin\n  user:\n{user}"
    )
    return _case("kubeconfig", text, [secret], [server, f"current-context: {cluster}"])


@_family("aws_credentials_file")
def _aws_credentials_file(rng: random.Random, i: int) -> Case:
    """`~/.aws/credentials` and `config` profiles, with their non-secret neighbours."""
    kid, sec = _aws_key_id(rng), _aws_secret(rng)
    profile = rng.choice(("default", "prod-admin", "ci", "data-eng"))
    region = rng.choice(_REGIONS)
    acct = str(rng.randint(10**11, 10**12 - 1))
    role = f"arn:aws:iam::{acct}:role/{rng.choice(('Deploy', 'ReadOnly', 'Admin'))}"
    lines = [f"[{profile}]", f"aws_access_key_id = {kid}", f"aws_secret_access_key = {sec}"]
    secrets = [kid, sec]
    if i % 3 == 1:
        tok = _session_token(rng)
        lines[0] = f"[{profile}]"
        lines[1] = f"aws_access_key_id = {_aws_key_id(rng, 'ASIA')}"
        secrets[0] = lines[1].split(" = ")[1]
        lines.append(f"aws_session_token = {tok}")
        secrets.append(tok)
    lines += [
        f"region = {region}",
        "",
        f"[profile {profile}-assume]",
        f"role_arn = {role}",
        f"source_profile = {profile}",
        "duration_seconds = 3600",
    ]
    keep = [
        f"region = {region}",
        f"role_arn = {role}",
        f"source_profile = {profile}",
        "duration_seconds = 3600",
    ]
    return _case("aws_credentials_file", "\n".join(lines) + "\n", secrets, keep)


@_family("aws_sts_response")
def _aws_sts_response(rng: random.Random, i: int) -> Case:
    """`aws sts assume-role` / `get-session-token` output, JSON or text, and its env export."""
    kid, sec, tok = _aws_key_id(rng, "ASIA"), _aws_secret(rng), _session_token(rng)
    acct = str(rng.randint(10**11, 10**12 - 1))
    role_id = "AROA" + "".join(rng.choices(_B32, k=17))
    session = f"ci-{rng.randint(1000, 9999)}"
    exp = _ts(rng)
    arn = f"arn:aws:sts::{acct}:assumed-role/Deploy/{session}"
    if i % 3 == 2:
        text = (
            f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={sec}\n"
            f"export AWS_SESSION_TOKEN={tok}\n# expires {exp} ({arn})\n"
        )
        return _case("aws_sts_response", text, [kid, sec, tok], [f"# expires {exp}", arn])
    doc = {
        "Credentials": {
            "AccessKeyId": kid,
            "SecretAccessKey": sec,
            "SessionToken": tok,
            "Expiration": exp,
        },
        "AssumedRoleUser": {"AssumedRoleId": f"{role_id}:{session}", "Arn": arn},
        "PackedPolicySize": rng.randint(5, 40),
    }
    text = json.dumps(doc, indent=4)
    keep = [f'"Expiration": "{exp}"', f"{role_id}:{session}", f'"Arn": "{arn}"']
    return _case("aws_sts_response", text, [kid, sec, tok], keep)


@_family("gcp_service_account")
def _gcp_service_account(rng: random.Random, i: int) -> Case:
    """Service-account key JSON: `\\n`-escaped `private_key`, `private_key_id`; also nested."""
    project = f"{rng.choice(_SERVICES)}-{rng.randint(100000, 999999)}"
    key_id = _hex(rng, 40)
    body = _pem_body(rng, "PRIVATE KEY")
    key = _pem("PRIVATE KEY", body)
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": key_id,
        "private_key": key,
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": str(rng.randint(10**20, 10**21 - 1)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "universe_domain": "googleapis.com",
    }
    text = json.dumps(doc, indent=2)
    escaped_body = "\\n".join(body)
    if i % 3 == 1:  # the key file as a string inside another JSON document
        text = json.dumps({"credentials": json.dumps(doc, indent=2), "project": project})
        escaped_body = "\\\\n".join(body)
    elif i % 3 == 2:
        text = f"GOOGLE_CREDENTIALS='{json.dumps(doc)}'\nGOOGLE_CLOUD_PROJECT={project}\n"
    keep = ["https://oauth2.googleapis.com/token", "service_account"]
    return _case("gcp_service_account", text, [escaped_body, key_id], keep)


@_family("k8s_secret_manifest")
def _k8s_secret_manifest(rng: random.Random, i: int) -> Case:
    """Kubernetes `Secret`: base64 `data:` before or after `kind:`, `stringData:`, dockerconfig."""
    name = f"{rng.choice(_SERVICES)}-credentials"
    pw = _password(rng)
    api = _provider(rng, i)[1]
    pw64, api64 = _b64(pw.encode()), _b64(api.encode())
    meta = f"metadata:\n  name: {name}\n  namespace: prod\n  labels:\n    app: {name[:-12]}\n"
    if i % 4 == 0:
        text = (
            f"apiVersion: v1\nkind: Secret\n{meta}type: Opaque\ndata:\n"
            f"  password: {pw64}\n  api-key: {api64}\n"
        )
        secrets = [pw64, api64]
    elif i % 4 == 1:
        text = (
            f'apiVersion: v1\ndata:\n  DB_PASSWORD: "{pw64}"\n  API_TOKEN: "{api64}"\n'
            f"kind: Secret\n{meta}type: Opaque\n"
        )
        secrets = [pw64, api64]
    elif i % 4 == 2:
        text = (
            f"apiVersion: v1\nkind: Secret\n{meta}type: Opaque\nstringData:\n"
            f'  password: "{pw}"\n  token: {api}\n'
        )
        secrets = [pw, api]
    else:
        dcfg = _b64(
            json.dumps({"auths": {"ghcr.io": {"auth": _b64(f"bot:{api}".encode())}}}).encode()
        )
        text = (
            f"apiVersion: v1\nkind: Secret\n{meta}type: kubernetes.io/dockerconfigjson\n"
            f"data:\n  .dockerconfigjson: {dcfg}\n"
        )
        secrets = [dcfg]
    return _case("k8s_secret_manifest", text, secrets, [f"name: {name}", "namespace: prod"])


@_family("docker_run_env")
def _docker_run_env(rng: random.Random, i: int) -> Case:
    """`docker run -e` / `--env` / `podman run` with credentials beside ordinary settings."""
    pw = _password(rng, "-_.~")
    name, tok = _provider(rng, i + 5)
    tag = f"{rng.randint(13, 17)}.{rng.randint(0, 9)}"
    forms = (
        f"docker run -d --name db -e POSTGRES_USER=app -e POSTGRES_PASSWORD={pw} "
        f"-e PGDATA=/var/lib/postgresql/data -p 5432:5432 postgres:{tag}",
        f"docker run --rm --env {name}={tok} --env LOG_LEVEL=debug ghcr.io/acme/worker:{tag}",
        f"podman run -e MYSQL_ROOT_PASSWORD='{pw}' -e MYSQL_DATABASE=shop -p 3306:3306 mysql:{tag}",
        f'docker run -e "{name}={tok}" \\\n  -e POSTGRES_PASSWORD={pw} \\\n  -e LOG_LEVEL=debug '
        f"\\\n  acme/api:{tag}",
    )
    text = forms[i % len(forms)]
    secrets = [s for s in (pw, tok) if s in text]
    keep = [
        k
        for k in (
            "-e POSTGRES_USER=app",
            "-p 5432:5432",
            f"postgres:{tag}",
            "LOG_LEVEL=debug",
            "-e MYSQL_DATABASE=shop",
            f"mysql:{tag}",
            "-p 3306:3306",
        )
        if k in text
    ]
    return _case("docker_run_env", text, secrets, keep)


@_family("helm_set")
def _helm_set(rng: random.Random, i: int) -> Case:
    """`helm install/upgrade --set`, `--set-string`, `--set-file` values beside plain ones."""
    pw = _password(rng, "-_.~")
    _, tok = _provider(rng, i + 2)
    rel = rng.choice(_SERVICES)
    forms = (
        f"helm upgrade --install {rel} bitnami/postgresql --namespace prod "
        f"--set auth.postgresPassword={pw} --set primary.persistence.size=50Gi",
        f"helm install {rel} ./chart --set-string secrets.apiToken={tok} --set replicaCount=3 "
        "--set image.tag=1.8.2",
        f"helm upgrade {rel} oci://ghcr.io/acme/charts/{rel} --set redis.auth.password='{pw}',"
        "redis.architecture=standalone --wait --timeout 10m",
        f"helm template {rel} . \\\n  --set global.imagePullSecrets[0].name=regcred \\\n"
        f"  --set externalDatabase.password={pw} \\\n  --set ingress.hosts[0]={rel}.acme-corp.io",
    )
    text = forms[i % len(forms)]
    secrets = [s for s in (pw, tok) if s in text]
    keep = [
        k
        for k in (
            "--namespace prod",
            "--set primary.persistence.size=50Gi",
            "--set replicaCount=3",
            "--set image.tag=1.8.2",
            "redis.architecture=standalone",
            "--wait --timeout 10m",
            "imagePullSecrets[0].name=regcred",
            f"{rel}.acme-corp.io",
        )
        if k in text
    ]
    return _case("helm_set", text, secrets, keep)


@_family("compose_environment")
def _compose_environment(rng: random.Random, i: int) -> Case:
    """docker-compose `environment:` as a list or a map, beside `${VAR}` references."""
    pw = _password(rng, "-_.~")
    name, tok = _provider(rng, i + 7)
    if i % 2:
        env = (
            f"    environment:\n      - POSTGRES_DB=app\n      - POSTGRES_PASSWORD={pw}\n"
            f"      - {name}={tok}\n      - REDIS_URL=${{REDIS_URL}}\n"
        )
        keep = ["- POSTGRES_DB=app", "- REDIS_URL=${REDIS_URL}"]
    else:
        env = (
            f'    environment:\n      POSTGRES_DB: app\n      POSTGRES_PASSWORD: "{pw}"\n'
            f"      {name}: {tok}\n      SMTP_PASSWORD: ${{SMTP_PASSWORD:?set it}}\n"
        )
        keep = ["POSTGRES_DB: app", "SMTP_PASSWORD: ${SMTP_PASSWORD:?set it}"]
    text = (
        f'services:\n  db:\n    image: postgres:16-alpine\n{env}    ports:\n      - "5432:5432"\n'
    )
    return _case("compose_environment", text, [pw, tok], [*keep, "image: postgres:16-alpine"])


@_family("cli_password_flags")
def _cli_password_flags(rng: random.Random, i: int) -> Case:
    """Passwords on command lines: glued `-p`, `-P`, `-a`, `pass:`, `--password-stdin` misuse."""
    pw = _password(rng, "-_.")
    host = rng.choice(_HOSTS)
    forms = (
        (f"mysql -h {host} -u root -p{pw} --port 3306 shop", ["--port 3306", "-u root"]),
        (
            f"sqlcmd -S {host},1433 -U sa -P '{pw}' -d master -Q \"SELECT @@VERSION\"",
            ["-d master", "SELECT @@VERSION"],
        ),
        (
            f"redis-cli -h {host} -p 6379 -a {pw} --no-auth-warning INFO replication",
            ["-p 6379", "INFO replication"],
        ),
        (
            f"openssl pkcs12 -export -in tls.crt -inkey tls.key -out tls.p12 -passout pass:{pw}",
            ["-out tls.p12", "-inkey tls.key"],
        ),
        (
            f"keytool -importkeystore -srckeystore app.jks -srcstorepass {pw} "
            "-deststoretype pkcs12",
            ["-deststoretype pkcs12", "-srckeystore app.jks"],
        ),
        (
            f"sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no deploy@{host}",
            ["-o StrictHostKeyChecking=no"],
        ),
        (
            f'mongosh "mongodb://{host}:27017/admin" --username admin --password {pw} --quiet',
            ["--username admin", "--quiet"],
        ),
        (
            f"az login --service-principal -u {_uuid(rng)} -p {pw} --tenant {_uuid(rng)}",
            ["az login --service-principal"],
        ),
        (f"htpasswd -b -c /etc/nginx/.htpasswd admin {pw}", ["/etc/nginx/.htpasswd"]),
        (
            f"echo '{pw}' | docker login ghcr.io -u ci-bot --password-stdin",
            ["--password-stdin", "-u ci-bot"],
        ),
        (
            f'ldapsearch -x -H ldap://{host} -D "cn=admin,dc=acme,dc=io" -w {pw} -b dc=acme,dc=io',
            ["-b dc=acme,dc=io"],
        ),
    )
    text, keep = forms[i % len(forms)]
    return _case("cli_password_flags", text, [pw], keep)


@_family("curl_auth")
def _curl_auth(rng: random.Random, i: int) -> Case:
    """curl with `-u user:pass`, `-H Authorization`, `--oauth2-bearer`, `-d client_secret=`."""
    pw = _password(rng, "-_.~")
    tok = _provider(rng, i)[1]
    jwt = _jwt(rng)
    forms = (
        (
            f"curl -s --user 'api:{pw}' https://api.mailgun.net/v3/acme-corp.io/messages",
            [pw],
            ["https://api.mailgun.net/v3/acme-corp.io/messages"],
        ),
        (
            f"curl -H \"Authorization: Bearer {jwt}\" -H 'Accept: application/json' "
            "https://api.acme-corp.io/v2/orders?limit=20",
            [jwt],
            ["Accept: application/json", "/v2/orders?limit=20"],
        ),
        (f"curl --oauth2-bearer {tok} https://api.acme-corp.io/v1/me", [tok], ["/v1/me"]),
        (
            f"curl -X POST https://login.acme-corp.io/oauth2/token \\\n  -d grant_type="
            f"client_credentials \\\n  -d client_id=orders-svc \\\n  -d client_secret={pw}",
            [pw],
            ["grant_type=client_credentials", "client_id=orders-svc"],
        ),
        (
            f"curl -sS -H \"X-Api-Key: {tok}\" https://api.acme-corp.io/v1/export | jq '.items[]'",
            [tok],
            ["jq '.items[]'"],
        ),
        (
            f"curl -u ci-bot:{pw} -T build.tar.gz https://nexus.corp.lan/repository/raw/",
            [pw],
            ["-T build.tar.gz"],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("curl_auth", text, secrets, keep)


@_family("chat_pasted_secret")
def _chat_pasted_secret(rng: random.Random, i: int) -> Case:
    """Secrets pasted by a user into chat history, in prose, transcripts and message JSON."""
    name, tok = _provider(rng, i * 2)
    pw = _password(rng)
    msg = "msg_01" + _rand(rng, _ALNUM, 22)
    advice = "Please rotate that credential now; it is in this conversation's history."
    forms = (
        (
            f"user: my deploy fails with 401, this is the key I use: {tok}\nassistant: {advice}",
            [tok],
            [advice],
        ),
        (
            f"User: the admin password is {pw} and it stopped working after the upgrade\n"
            f"Assistant: {advice}",
            [pw],
            [advice],
        ),
        (
            json.dumps(
                [
                    {
                        "id": msg,
                        "role": "user",
                        "content": f"here is my .env:\n{name}={tok}\nDEBUG=true",
                    },
                    {"role": "assistant", "content": advice},
                ]
            ),
            [tok],
            [msg, advice, "DEBUG=true"],
        ),
        (
            f"> {rng.choice(('Maria', 'Wei', 'Sven'))}: try logging in with admin / {pw}\n"
            f"> bot: {advice}",
            [pw],
            [advice],
        ),
        (
            f"[user] can you check why `{name}={tok}` is rejected?\n[assistant] {advice}",
            [tok],
            [advice],
        ),
        (f"Human: use password: {pw} for the staging box\n\nAssistant: {advice}", [pw], [advice]),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("chat_pasted_secret", text, secrets, keep)


@_family("span_attr_credentials")
def _span_attr_credentials(rng: random.Random, i: int) -> Case:
    """OpenTelemetry span attributes (structured) that carry credentials by semantic convention."""
    tok, pw = _provider(rng, i)[1], _password(rng, "!*-_.~")
    jwt = _jwt(rng)
    host = rng.choice(_HOSTS)
    trace = _hex(rng, 32)
    forms: tuple[tuple[dict, list[str], list[str]], ...] = (
        (
            {
                "http.request.method": "GET",
                "http.request.header.authorization": [f"Bearer {jwt}"],
                "url.path": "/v1/orders",
                "http.response.status_code": 200,
            },
            [jwt],
            ['"http.request.method": "GET"', "/v1/orders", '"http.response.status_code": 200'],
        ),
        (
            {
                "db.system": "mssql",
                "db.connection_string": f"Server=tcp:{host},1433;Initial "
                f"Catalog=orders;User ID=app;Password={pw};Encrypt=True",
                "server.port": 1433,
            },
            [pw],
            ['"db.system": "mssql"', "Initial Catalog=orders", '"server.port": 1433'],
        ),
        (
            {
                "url.full": f"https://api.acme-corp.io/v1/export?access_token={tok}&format=csv",
                "http.request.method": "POST",
                "trace_id": trace,
            },
            [tok],
            [trace, "format=csv"],
        ),
        (
            {
                "http.request.header.cookie": [f"session_id={_rand(rng, _ALNUM, 32)}; theme=dark"],
                "http.request.header.x-api-key": [tok],
                "user_agent.original": "curl/8.5.0",
            },
            [tok],
            ["theme=dark", "curl/8.5.0"],
        ),
        (
            {
                "db.statement": f"ALTER USER reporting WITH PASSWORD '{pw}'",
                "db.operation": "ALTER",
                "db.name": "analytics",
            },
            [pw],
            ['"db.operation": "ALTER"', '"db.name": "analytics"'],
        ),
        (
            {
                "messaging.system": "rabbitmq",
                "server.address": host,
                "messaging.url": f"amqps://orders:{pw}@{host}:5671/prod",
            },
            [pw],
            ['"messaging.system": "rabbitmq"'],
        ),
    )
    attrs, secrets, keep = forms[i % len(forms)]
    if "session_id=" in json.dumps(attrs):
        secrets = [*secrets, attrs["http.request.header.cookie"][0].split(";")[0][11:]]
    payload = {"name": f"{rng.choice(_SERVICES)}.request", "attributes": attrs}
    return _case("span_attr_credentials", payload, secrets, keep)


@_family("otlp_json_attributes")
def _otlp_json_attributes(rng: random.Random, i: int) -> Case:
    """OTLP/JSON key-value lists as text: the key and its value are separate JSON members."""
    jwt, tok, pw = _jwt(rng), _provider(rng, i + 3)[1], _password(rng, "!*-_.~")
    choice = i % 3
    key, value, secret = (
        (
            "http.request.header.authorization",
            f'{{"arrayValue":{{"values":[{{"stringValue":"Bearer {jwt}"}}]}}}}',
            jwt,
        ),
        (
            "db.connection_string",
            f'{{"stringValue":"postgresql://app:{pw}@db-1:5432/app?sslmode=require"}}',
            pw,
        ),
        ("url.full", f'{{"stringValue":"https://hooks.acme-corp.io/ingest?token={tok}"}}', tok),
    )[choice]
    span_id = _hex(rng, 16)
    text = (
        f'{{"spanId":"{span_id}","name":"tool.execute","attributes":['
        f'{{"key":"http.request.method","value":{{"stringValue":"POST"}}}},'
        f'{{"key":"{key}","value":{value}}},'
        f'{{"key":"zeroclaw.tool.name","value":{{"stringValue":"http_get"}}}}]}}'
    )
    keep = [
        span_id,
        '{"key":"http.request.method","value":{"stringValue":"POST"}}',
        '"stringValue":"http_get"',
    ]
    return _case("otlp_json_attributes", text, [secret], keep)


@_family("base64_carriers")
def _base64_carriers(rng: random.Random, i: int) -> Case:
    """Secrets inside base64: Basic auth, data: URLs, encoded env files, JSON blobs, `base64 -d`."""
    name, tok = _provider(rng, i * 5)
    pw = _password(rng)
    req = _uuid(rng)
    forms = (
        (lambda b: f"Proxy-Authorization: Basic {b}\nX-Request-Id: {req}", f"proxy:{pw}"),
        (
            lambda b: f"![cfg](data:text/plain;base64,{b}) uploaded by request {req}",
            f"{name}={tok}\nLOG_LEVEL=info\n",
        ),
        (
            lambda b: f"$ echo {b} | base64 -d > .env  # request {req}",
            f"DB_PASSWORD={pw}\n{name}={tok}\n",
        ),
        (
            lambda b: f'{{"config_b64": "{b}", "request_id": "{req}"}}',
            json.dumps({"api_key": tok, "region": "eu-west-1"}),
        ),
        (
            lambda b: f"Cookie: auth={b}; lang=en\nX-Request-Id: {req}",
            json.dumps({"user": "ci", "password": pw}),
        ),
        (lambda b: f"ENV_FILE_B64={b}\nREQUEST_ID={req}", f"export {name}={tok}\n"),
    )
    make, plain = forms[i % len(forms)]
    blob = _b64(plain.encode())
    keep = [req] + (["lang=en"] if i % 6 == 4 else [])
    return _case("base64_carriers", make(blob), [blob], keep)


_INVISIBLE = ("\u00ad", "\u2060", "\u2063", "\u180e", "\ufeff", "\u034f")


@_family("unicode_tricks")
def _unicode_tricks(rng: random.Random, i: int) -> Case:
    """Soft hyphens, word joiners, bidi overrides, NBSP, fullwidth and math-letter keys."""
    _, tok = _provider(rng, i * 7 + 2)
    pw = _password(rng)
    inv = _INVISIBLE[i % len(_INVISIBLE)]
    cut = rng.randint(6, len(tok) - 6)
    split = tok[:cut] + inv + tok[cut:]
    note = "Пароль должен содержать не менее 12 символов."
    forms = (
        (f"token={split}\n{note}", [split]),
        (f"api_key=\u202e{tok}\u202c (copied from the dashboard)", [tok]),
        (f"password\u00a0=\u00a0{pw}\n{note}", [pw]),
        (f"ｐａｓｓｗｏｒｄ：{pw}\n{note}", [pw]),
        (f"𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝 = {pw}  # pasted from a rich-text doc", [pw]),
        (f"Authorization:\u2003Bearer\u00a0{tok}\n{note}", [tok]),
        (f"secret\u200d_key = {pw}\n{note}", [pw]),
    )
    text, secrets = forms[i % len(forms)]
    keep = (
        [note]
        if note in text
        else ["(copied from the dashboard)"]
        if "copied" in text
        else ["# pasted from a rich-text doc"]
    )
    return _case("unicode_tricks", text, secrets, keep)


@_family("jdbc_connection")
def _jdbc_connection(rng: random.Random, i: int) -> Case:
    """JDBC, ADO.NET, ODBC and Redis-style connection strings with the password as a parameter."""
    pw = _password(rng, "!*-_.~")
    host = rng.choice(_HOSTS)
    forms = (
        (
            f"jdbc:postgresql://{host}:5432/orders?user=app&password={pw}&sslmode=require",
            ["sslmode=require", f"jdbc:postgresql://{host}:5432/orders"],
        ),
        (
            f"jdbc:sqlserver://{host}:1433;databaseName=sales;user=sa;password={pw};encrypt=true",
            ["databaseName=sales", "encrypt=true"],
        ),
        (
            f"Server={host};Database=crm;User Id=crm_app;Password={pw};"
            "TrustServerCertificate=True;",
            ["TrustServerCertificate=True", "Database=crm"],
        ),
        (
            f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};UID=etl;PWD={pw};",
            ["Driver={ODBC Driver 18 for SQL Server}"],
        ),
        (
            f"cache.redis.cache.windows.net:6380,password={pw},ssl=True,abortConnect=False",
            ["ssl=True,abortConnect=False"],
        ),
        (
            f"jdbc:mysql://{host}:3306/shop?user=shop&password={pw}&useSSL=true",
            ["useSSL=true", f"jdbc:mysql://{host}:3306/shop"],
        ),
        (
            f"Data Source={host};Initial Catalog=master;User ID=sa;Password={pw};"
            "Persist Security Info=true;MultipleActiveResultSets=true",
            ["Initial Catalog=master", "MultipleActiveResultSets=true"],
        ),
    )
    text, keep = forms[i % len(forms)]
    if i % 2:
        text = (
            f'{{"ConnectionStrings": {{"Default": "{text}"}}, "Logging": {{"LogLevel": "Info"}}}}'
        )
        keep = [*keep, '"LogLevel": "Info"']
    return _case("jdbc_connection", text, [pw], keep)


@_family("private_key_variants")
def _private_key_variants(rng: random.Random, i: int) -> Case:
    """Private keys in YAML block scalars, JSON strings, env files, PuTTY and age formats."""
    label = ("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY")[i % 3]
    body = _pem_body(rng, label)
    fp = "SHA256:" + _b64(rng.randbytes(32)).rstrip("=")
    choice = i % 5
    if choice == 0:
        ind = "    "
        text = (
            f"tls:\n  key: |\n{ind}-----BEGIN {label}-----\n"
            + "".join(f"{ind}{line}\n" for line in body)
            + f"{ind}-----END {label}-----\n  fingerprint: {fp}\n"
        )
        secret = f"\n{ind}".join(body)
    elif choice == 1:
        text = json.dumps({"key_pem": _pem(label, body), "fingerprint": fp})
        secret = "\\n".join(body)
    elif choice == 2:
        text = f'SSH_PRIVATE_KEY="{_pem(label, body, nl=chr(92) + "n")}"\nKEY_FINGERPRINT={fp}\n'
        secret = "\\n".join(body)
    elif choice == 3:
        pub = _b64(rng.randbytes(51))
        priv = _b64(rng.randbytes(rng.choice((96, 144))))
        privs = [priv[k : k + 64] for k in range(0, len(priv), 64)]
        text = (
            f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: {fp}\n"
            f"Public-Lines: 1\n{pub}\nPrivate-Lines: {len(privs)}\n"
            + "\n".join(privs)
            + f"\nPrivate-MAC: {_hex(rng, 64)}\n"
        )
        secret = "\n".join(privs)
    else:
        age = _token_of("AGE_SECRET_KEY", rng)
        text = (
            f"# created: 2025-01-12T10:04:11+01:00\n"
            f"# public key: age1{_rand(rng, _LOWER + _DIGITS, 58)}"
            f"\n{age}\n# fingerprint {fp}\n"
        )
        secret = age
    return _case("private_key_variants", text, [secret], [fp])


@_family("webhook_urls")
def _webhook_urls(rng: random.Random, i: int) -> Case:
    """Incoming-webhook URLs whose path is the credential (Slack, Discord, Teams, Zapier)."""
    forms = (
        lambda: (
            f"T{_rand(rng, _UPPER + _DIGITS, 10)}/B{_rand(rng, _UPPER + _DIGITS, 10)}/"
            + _rand(rng, _ALNUM, 24),
            "https://hooks.slack.com/services/",
        ),
        lambda: (
            f"{rng.randint(10**17, 10**18)}/{_rand(rng, _B64URL, 68)}",
            "https://discord.com/api/webhooks/",
        ),
        lambda: (
            f"{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{_hex(rng, 32)}/{_uuid(rng)}",
            "https://acme.webhook.office.com/webhookb2/",
        ),
        lambda: (
            f"{rng.randint(10**6, 10**7)}/{_rand(rng, _LOWER + _DIGITS, 7)}/",
            "https://hooks.zapier.com/hooks/catch/",
        ),
    )
    path, base = forms[i % len(forms)]()
    channel = f"#{rng.choice(_SERVICES)}-alerts"
    text = rng.choice(
        (
            f"ALERT_WEBHOOK_URL={base}{path}\nALERT_CHANNEL={channel}\n",
            f'{{"webhook": "{base}{path}", "channel": "{channel}", "retries": 3}}',
            f'notify:\n  url: {base}{path}\n  channel: "{channel}"\n',
        )
    )
    return _case("webhook_urls", text, [path], [channel])


@_family("url_signed_params")
def _url_signed_params(rng: random.Random, i: int) -> Case:
    """Signed and token-carrying URLs: S3 presigned, Azure SAS, `?key=`, `?token=`, fragments."""
    kid = _aws_key_id(rng)
    sig = _hex(rng, 64)
    sas = _b64(rng.randbytes(32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    _, tok = _provider(rng, i + 11)
    forms = (
        (
            f"https://acme-exports.s3.eu-west-1.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-"
            f"SHA256&X-Amz-Credential={kid}%2F20250301%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date="
            f"20250301T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}",
            [kid, sig],
            ["X-Amz-Expires=3600", "X-Amz-Date=20250301T101500Z"],
        ),
        (
            f"https://acmedata.blob.core.windows.net/exports/q1.parquet?sv=2022-11-02&ss=b&srt=o"
            f"&sp=r&se=2025-03-02T10:00:00Z&spr=https&sig={sas}",
            [sas],
            ["sv=2022-11-02", "se=2025-03-02T10:00:00Z"],
        ),
        (
            f"GET /v1/geocode?address=Main+St&key={tok}&language=en HTTP/1.1",
            [tok],
            ["address=Main+St", "language=en"],
        ),
        (
            f"https://app.acme-corp.io/callback#access_token={tok}&token_type=Bearer&expires_in=3600",
            [tok],
            ["token_type=Bearer&expires_in=3600"],
        ),
        (
            f"wss://stream.acme-corp.io/v2/events?token={tok}&channel=orders",
            [tok],
            ["channel=orders"],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("url_signed_params", text, secrets, keep)


@_family("http_headers_more")
def _http_headers_more(rng: random.Random, i: int) -> Case:
    """Less common credential headers: Private-Token, X-Vault-Token, DD-API-KEY, apikey, Cookie."""
    _, tok = _provider(rng, i + 4)
    hdr = (
        "Private-Token",
        "X-Vault-Token",
        "DD-API-KEY",
        "apikey",
        "X-Auth-Token",
        "Ocp-Apim-Subscription-Key",
        "X-Shopify-Access-Token",
    )[i % 7]
    req = _uuid(rng)
    sess = _rand(rng, _ALNUM, 40)
    lines = [
        "GET /api/v4/projects HTTP/1.1",
        "Host: api.acme-corp.io",
        f"{hdr}: {tok}",
        "Accept: application/json",
        f"X-Request-Id: {req}",
        "X-RateLimit-Remaining: 4999",
    ]
    secrets = [tok]
    if i % 3 == 0:
        lines.insert(3, f"Cookie: sessionid={sess}; csrftoken={_rand(rng, _ALNUM, 32)}; tz=UTC")
        secrets.append(sess)
    return _case(
        "http_headers_more",
        "\r\n".join(lines) + "\r\n\r\n",
        secrets,
        [req, "X-RateLimit-Remaining: 4999", "Accept: application/json"],
    )


@_family("ci_log_secrets")
def _ci_log_secrets(rng: random.Random, i: int) -> Case:
    """CI output that echoes a secret: `set -x`, `::add-mask::`, terraform plans, npm config."""
    name, tok = _provider(rng, i * 3)
    pw = _password(rng, "-_.")
    forms = (
        (
            f"+ export {name}={tok}\n+ ./scripts/publish.sh --dry-run=false\n",
            [tok],
            ["./scripts/publish.sh --dry-run=false"],
        ),
        (
            f"::add-mask::{tok}\nRun actions/checkout@v4\n  with:\n    token: ***\n",
            [tok],
            ["Run actions/checkout@v4", "token: ***"],
        ),
        (
            f'  + resource "aws_db_instance" "main" {{\n      + engine   = "postgres"\n'
            f'      + password = "{pw}"\n      + username = (sensitive value)\n    }}',
            [pw],
            ['+ engine   = "postgres"', "(sensitive value)"],
        ),
        (
            f"$ npm config set //registry.npmjs.org/:_authToken {tok}\n"
            "$ npm publish --access public",
            [tok],
            ["npm publish --access public"],
        ),
        (
            f"Step 4/9 : ARG DB_PASSWORD={pw}\n ---> Running in {_hex(rng, 12)}\n",
            [pw],
            ["Step 4/9"],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("ci_log_secrets", text, secrets, keep)


@_family("terraform_state")
def _terraform_state(rng: random.Random, i: int) -> Case:
    """`terraform.tfstate` resources with secret attributes beside their plain ones."""
    pw = _password(rng, "!#*-_.")
    kid, sec = _aws_key_id(rng), _aws_secret(rng)
    if i % 2:
        smtp = _rand(rng, _B64, 44)
        attrs = {
            "id": kid,
            "user": "ci-deployer",
            "secret": sec,
            "status": "Active",
            "ses_smtp_password_v4": smtp,
        }
        rtype, secrets = "aws_iam_access_key", [kid, sec, smtp]
        keep = ['"status": "Active"', '"type": "aws_iam_access_key"']
    else:
        attrs = {
            "engine": "postgres",
            "engine_version": "16.2",
            "password": pw,
            "username": "app",
            "port": 5432,
        }
        rtype, secrets = "aws_db_instance", [pw]
        keep = ['"engine_version": "16.2"', '"type": "aws_db_instance"']
    doc = {
        "version": 4,
        "terraform_version": "1.7.5",
        "resources": [
            {
                "mode": "managed",
                "type": rtype,
                "name": "main",
                "instances": [
                    {"schema_version": 0, "attributes": attrs, "sensitive_attributes": []}
                ],
            }
        ],
    }
    return _case(
        "terraform_state", json.dumps(doc, indent=2), secrets, [*keep, '"mode": "managed"']
    )


@_family("app_config_files")
def _app_config_files(rng: random.Random, i: int) -> Case:
    """Spring properties, Maven settings.xml, .NET appSettings, INI, PHP arrays, Rails YAML."""
    pw = _password(rng, "!#*-_.")
    host = rng.choice(_HOSTS)
    forms = (
        (
            f"spring.datasource.url=jdbc:postgresql://{host}:5432/app\n"
            f"spring.datasource.username=app\nspring.datasource.password={pw}\n"
            "spring.jpa.open-in-view=false\n",
            ["spring.datasource.username=app", "spring.jpa.open-in-view=false"],
        ),
        (
            f"<server>\n  <id>nexus-releases</id>\n  <username>deployer</username>\n"
            f"  <password>{pw}</password>\n</server>",
            ["<id>nexus-releases</id>"],
        ),
        (
            f'<appSettings>\n  <add key="SmtpHost" value="smtp.acme-corp.io" />\n'
            f'  <add key="SmtpPassword" value="{pw}" />\n</appSettings>',
            ['<add key="SmtpHost" value="smtp.acme-corp.io" />'],
        ),
        (
            f"[mysql]\nhost = {host}\nuser = reporting\npasswd = {pw}\nconnect_timeout = 10\n",
            ["connect_timeout = 10", "user = reporting"],
        ),
        (
            f"'db' => [\n    'host' => '{host}',\n    'password' => '{pw}',\n    'charset' => "
            "'utf8mb4',\n],",
            ["'charset' => 'utf8mb4'"],
        ),
        (
            f"production:\n  adapter: postgresql\n  pool: 10\n  password: <%= '{pw}' %>\n",
            ["adapter: postgresql", "pool: 10"],
        ),
        (
            f"mail.smtp.auth=true\nmail.smtp.password={pw}\nmail.smtp.port=587\n",
            ["mail.smtp.auth=true", "mail.smtp.port=587"],
        ),
    )
    text, keep = forms[i % len(forms)]
    return _case("app_config_files", text, [pw], keep)


@_family("code_literal_secrets")
def _code_literal_secrets(rng: random.Random, i: int) -> Case:
    """Credentials hard-coded in code, next to the right way of reading one from the env."""
    tok = _provider(rng, i * 4 + 1)[1]
    pw = _password(rng, "!#*-_.")
    kid, sec = _aws_key_id(rng), _aws_secret(rng)
    forms = (
        (
            f'client = OpenAI(api_key="{tok}")\nfallback = os.environ["OPENAI_API_KEY"]',
            [tok],
            ['os.environ["OPENAI_API_KEY"]'],
        ),
        (
            f's3 = boto3.client("s3", aws_access_key_id="{kid}",\n'
            f'    aws_secret_access_key="{sec}",'
            '\n    region_name="eu-west-1")',
            [kid, sec],
            ['region_name="eu-west-1"'],
        ),
        (
            f'conn = psycopg2.connect(host="{rng.choice(_HOSTS)}", user="app", password="{pw}")\n'
            "# TODO: read from getpass.getpass()",
            [pw],
            ['user="app"', "getpass.getpass()"],
        ),
        (
            f'const stripe = require("stripe")("{tok}");\nconst pk = process.env.STRIPE_PK;',
            [tok],
            ["process.env.STRIPE_PK"],
        ),
        (f'requests.get(url, auth=("ci-bot", "{pw}"), timeout=10)', [pw], ["timeout=10"]),
        (
            f'private static final String API_TOKEN = "{tok}";\n'
            'String fromEnv = System.getenv("API_TOKEN");',
            [tok],
            ['System.getenv("API_TOKEN")'],
        ),
        (
            f'db_password := "{pw}" // FIXME\nhost := os.Getenv("DB_HOST")',
            [pw],
            ['os.Getenv("DB_HOST")'],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("code_literal_secrets", text, secrets, keep)


@_family("dotenv_mixed")
def _dotenv_mixed(rng: random.Random, i: int) -> Case:
    """`.env` files: secrets beside public keys and plain settings that must stay."""
    name, tok = _provider(rng, i * 6 + 3)
    pw = _password(rng, "-_.")
    pk = "pk_live_51" + _rand(rng, _ALNUM, 96)
    lines = [
        f"{name}={tok}",
        f'DB_PASSWORD="{pw}"',
        f"STRIPE_PUBLISHABLE_KEY={pk}",
        "LLM_MAX_TOKENS=4096",
        f"DB_HOST={rng.choice(_HOSTS)}",
        "DB_PORT=5432",
        "TOKEN_TTL_SECONDS=3600",
    ]
    rng.shuffle(lines)
    keep = [
        f"STRIPE_PUBLISHABLE_KEY={pk}",
        "LLM_MAX_TOKENS=4096",
        "DB_PORT=5432",
        "TOKEN_TTL_SECONDS=3600",
    ]
    return _case("dotenv_mixed", "\n".join(lines) + "\n", [tok, pw], keep)


@_family("provider_token_bare")
def _provider_token_bare(rng: random.Random, i: int) -> Case:
    """Provider tokens with no sensitive key near them: in prose, tables, lists, error messages."""
    _, tok = _provider(rng, i * 11 + 6)
    req = _uuid(rng)
    forms = (
        f"Error: request {req} rejected, credential {tok} was revoked",
        f"| env | value |\n|---|---|\n| staging | {tok} |\n| request | {req} |",
        f"- old: {tok}\n- request: {req}",
        f"found `{tok}` in commit history (scan {req})",
        f"{tok}\t{req}\tactive",
    )
    return _case("provider_token_bare", forms[i % len(forms)], [tok], [req])


@_family("jwt_credentials")
def _jwt_credentials(rng: random.Random, i: int) -> Case:
    """JWT access/ID/refresh tokens where they travel: cookies, storage dumps, OAuth responses."""
    jwt = _jwt(rng)
    refresh = _rand(rng, _B64URL, 64)
    forms = (
        (
            f"Set-Cookie: __Host-session={jwt}; Path=/; Secure; HttpOnly; SameSite=Lax",
            [jwt],
            ["Path=/; Secure; HttpOnly; SameSite=Lax"],
        ),
        (
            json.dumps(
                {
                    "access_token": jwt,
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "refresh_token": refresh,
                    "scope": "openid profile",
                }
            ),
            [jwt, refresh],
            ['"token_type": "Bearer"', '"expires_in": 3600'],
        ),
        (f"localStorage['auth.idToken'] = '{jwt}'", [jwt], ["localStorage['auth.idToken']"]),
        (f"id_token={jwt}&state=af0ifjsldkj&session_state=expired", [jwt], ["state=af0ifjsldkj"]),
        (f"grpc metadata: authorization=bearer {jwt} grpc-timeout=5S", [jwt], ["grpc-timeout=5S"]),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("jwt_credentials", text, secrets, keep)


# --------------------------------------------------------------------------------------------
# Personal data
# --------------------------------------------------------------------------------------------


@_family("pii_phone_layouts")
def _pii_phone_layouts(rng: random.Random, i: int) -> Case:
    """Phone numbers in E.164, `tel:` URIs, trunk-prefix `(0)`, extensions and slashes."""
    phone = _phone(rng, i)
    epoch = str(rng.randint(1_700_000_000, 1_760_000_000))
    order = f"ORD-{rng.randint(10**6, 10**7)}"
    forms = (
        f"Customer asked for a callback on {phone} (order {order}, ts {epoch})",
        f'{{"contact": {{"mobile": "{phone}"}}, "order": "{order}", "created": {epoch}}}',
        f"BEGIN:VCARD\nVERSION:4.0\nTEL;VALUE=uri;TYPE=cell:{phone}\n"
        f"NOTE:{order} ({epoch})\nEND:VCARD",
        f'name,phone,order\nS. Okafor,"{phone}",{order}\n# exported {epoch}',
        f"<contact><phone>{phone}</phone><ref>{order}</ref></contact><!-- {epoch} -->",
    )
    return _case("pii_phone_layouts", forms[i % len(forms)], [phone], [order, epoch])


@_family("pii_customer_record")
def _pii_customer_record(rng: random.Random, i: int) -> Case:
    """Customer records as SQL INSERTs, fixed-width, YAML, key=value logs and Markdown tables."""
    email, phone, card, iban, ssn = (
        _email(rng),
        _phone(rng, i + 3),
        _card(rng),
        _iban(rng),
        _ssn(rng),
    )
    cid = f"cus_{_rand(rng, _ALNUM, 14)}"
    amount = f"{rng.randint(10, 999)}.{rng.randint(0, 99):02d}"
    forms = (
        (
            "INSERT INTO customers (id, email, phone, plan) "
            f"VALUES ('{cid}', '{email}', '{phone}', "
            "'pro');",
            [email, phone],
            ["'pro');"],
        ),
        (f"{cid:<22}{email:<30}{card:<22}{amount:>10}", [email, card], [amount]),
        (
            f'customer:\n  id: {cid}\n  ssn: "{ssn}"\n  iban: {iban}\n  balance: {amount}\n',
            [ssn, iban],
            [f"balance: {amount}"],
        ),
        (
            f'level=info msg="refund issued" customer={cid} card={card} amount={amount} '
            f"email={email}",
            [card, email],
            [f"amount={amount}", 'msg="refund issued"'],
        ),
        (
            f"| id | email | phone | iban |\n|---|---|---|---|\n| {cid} | {email} | {phone} | "
            f"{iban} |",
            [email, phone, iban],
            ["| id | email | phone | iban |"],
        ),
    )
    text, secrets, keep = forms[i % len(forms)]
    return _case("pii_customer_record", text, secrets, [cid, *keep])


# --------------------------------------------------------------------------------------------
# Look-alike families (nothing here is a credential)
# --------------------------------------------------------------------------------------------


def _keep_case(
    family: str, items: tuple[str, ...], rng: random.Random, i: int, k: int = 4, sep: str = "\n"
) -> Case:
    """A case of `k` look-alikes drawn from `items`, starting at a different one each time."""
    start = (i * k) % len(items)
    chosen = [items[(start + n) % len(items)] for n in range(k)]
    if i >= len(items) // k:
        rng.shuffle(chosen)
    return _case(family, sep.join(chosen) + sep, [], chosen)


_TEMPLATE_REFS = (
    "password: ${DB_PASSWORD}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'api_key: "{{ vault_api_key }}"',
    'password: "{{ .Values.auth.password }}"',
    "DATABASE_URL=postgres://app:${POSTGRES_PASSWORD}@db:5432/app",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer ${ACCESS_TOKEN}",
    '-H "X-Api-Key: $API_KEY"',
    "secret_key = %(SECRET_KEY)s",
    "password = <%= ENV['DB_PASSWORD'] %>",
    "password: \"{{ lookup('env', 'DB_PASSWORD') }}\"",
    "client_secret: !vault |",
    "api_key=YOUR_API_KEY_HERE",
    "password=<your-password>",
    'token: "{{ token }}"',
    "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
    "--set auth.password=$(cat /run/secrets/db_password)",
    "export GITHUB_TOKEN=$(gh auth token)",
    'PGPASSWORD="$DB_PASS" psql -h db -U app',
    'curl -u "${USERNAME}:${PASSWORD}" https://nexus.corp.lan/',
    'password: {{ env "DB_PASSWORD" }}',
    "api_key = var.api_key",
    "password = data.aws_secretsmanager_secret_version.db.secret_string",
    "token: #{ENV.fetch('API_TOKEN')}",
)


@_family("keep_template_reference")
def _keep_template_reference(rng: random.Random, i: int) -> Case:
    """References to a secret in templates, CI and shell: the value lives elsewhere."""
    return _keep_case("keep_template_reference", _TEMPLATE_REFS, rng, i)


_CODE_REFS = (
    'api_key = os.environ["OPENAI_API_KEY"]',
    'password = os.getenv("DB_PASSWORD")',
    'password = getpass.getpass("Vault password: ")',
    "secret = load_secret('prod/billing/db-password')",
    "const key = process.env.STRIPE_SECRET_KEY;",
    'String token = System.getenv("GITHUB_TOKEN");',
    "token = secrets.token_urlsafe(32)",
    'pw = keyring.get_password("smtp", user)',
    'api_key = ENV.fetch("API_KEY")',
    'password = config.get("database", "password")',
    "def check_password(password: str, hashed: bytes) -> bool:",
    "hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
    'if not api_key: raise RuntimeError("set OPENAI_API_KEY")',
    'headers = {"Authorization": f"Bearer {token}"}',
    "client = Anthropic(api_key=settings.anthropic_api_key)",
    'secret = client.access_secret_version(name=f"{parent}/secrets/db/versions/latest")',
    'let token = env::var("API_TOKEN")?;',
    "password: str = Field(repr=False)",
    "auth = HTTPBasicAuth(username, password)",
    'token := os.Getenv("VAULT_TOKEN")',
)


@_family("keep_code_secret_access")
def _keep_code_secret_access(rng: random.Random, i: int) -> Case:
    """Code that reads, checks or passes a credential without containing one."""
    return _keep_case("keep_code_secret_access", _CODE_REFS, rng, i)


@_family("keep_aws_neighbours")
def _keep_aws_neighbours(rng: random.Random, i: int) -> Case:
    """The non-secret lines of AWS config and STS output: profiles, regions, ARNs, expiries."""
    acct = str(rng.randint(10**11, 10**12 - 1))
    region = rng.choice(_REGIONS)
    items = (
        f"[profile {rng.choice(_SERVICES)}-admin]",
        f"region = {region}",
        f"role_arn = arn:aws:iam::{acct}:role/OrganizationAccountAccessRole",
        f"mfa_serial = arn:aws:iam::{acct}:mfa/maria",
        "sso_start_url = https://acme.awsapps.com/start",
        f"sso_account_id = {acct}",
        "credential_process = /usr/local/bin/aws-vault export --format=json prod",
        f'"Expiration": "{_ts(rng)}"',
        f'"Arn": "arn:aws:sts::{acct}:assumed-role/Deploy/ci-{rng.randint(100, 999)}"',
        f'"AssumedRoleId": "AROA{"".join(rng.choices(_B32, k=17))}:ci-session"',
        "output = json",
        "duration_seconds = 43200",
        f"arn:aws:secretsmanager:{region}:{acct}:secret:prod/orders/db-{_rand(rng, _ALNUM, 6)}",
        f"arn:aws:kms:{region}:{acct}:key/{_uuid(rng)}",
    )
    return _keep_case("keep_aws_neighbours", items, rng, i)


@_family("keep_json_neighbours")
def _keep_json_neighbours(rng: random.Random, i: int) -> Case:
    """JSON members next to credentials that are policies, URLs, paths, methods and counters."""
    items = (
        '"password_min_length": 12',
        '"password_reset_url": "https://acme-corp.io/account/password/reset"',
        '"secret_path": "kv/data/prod/billing"',
        '"auth_method": "oauth2"',
        '"token_type": "Bearer"',
        '"expires_in": 3600',
        f'"password_changed_at": "{_ts(rng)}"',
        '"failed_login_attempts": 3',
        '"mfa_enabled": true',
        '"has_password": false',
        '"secret_version": "v7"',
        '"key_rotation_days": 90',
        '"token_endpoint": "https://login.acme-corp.io/oauth2/v2.0/token"',
        '"credential_type": "client_secret_basic"',
        '"api_key_last4": "x9Qz"',
        f'"session_started": "{_ts(rng)}"',
        '"password_policy": {"require_symbols": true, "history": 5}',
        '"max_tokens": 4096',
    )
    pick = _keep_case("keep_json_neighbours", items, rng, i, k=5, sep=", ")
    text = "{" + pick.payload.rstrip(", ") + "}"  # type: ignore[union-attr]
    return replace(pick, payload=text)


@_family("keep_dotenv_public")
def _keep_dotenv_public(rng: random.Random, i: int) -> Case:
    """dotenv lines that are public keys or plain settings, not credentials."""
    items = (
        "STRIPE_PUBLISHABLE_KEY=pk_live_51" + _rand(rng, _ALNUM, 96),
        "NEXT_PUBLIC_STRIPE_KEY=pk_test_51" + _rand(rng, _ALNUM, 96),
        "LLM_MAX_TOKENS=4096",
        "OPENAI_MODEL=gpt-4o-mini",
        "DB_HOST=db-primary.internal",
        "DB_PORT=5432",
        "LOG_LEVEL=info",
        "TOKEN_TTL_SECONDS=3600",
        "PASSWORD_MIN_LENGTH=12",
        "SECRET_NAME=prod/billing/db",
        "AUTH_PROVIDER=oauth2",
        f"GOOGLE_CLIENT_ID={rng.randint(10**11, 10**12)}-{_rand(rng, _LOWER + _DIGITS, 32)}"
        ".apps.googleusercontent.com",
        "KEY_FILE=/etc/ssl/private/server.key",
        "NEXT_PUBLIC_API_BASE_URL=https://api.acme-corp.io",
        "SESSION_COOKIE_SECURE=true",
        "API_KEY_HEADER=X-Api-Key",
    )
    return _keep_case("keep_dotenv_public", items, rng, i)


@_family("keep_token_shaped")
def _keep_token_shaped(rng: random.Random, i: int) -> Case:
    """Token-shaped public values: digests, SRI, JWKS moduli, fingerprints, trace context."""
    items = (
        'integrity="sha384-' + _b64(rng.randbytes(48)) + '"',
        '"integrity": "sha512-' + _b64(rng.randbytes(64)) + '"',
        'ETag: W/"' + _hex(rng, 40) + '"',
        '"n": "' + _b64url(rng.randbytes(256)) + '", "e": "AQAB"',
        "traceparent: 00-" + _hex(rng, 32) + "-" + _hex(rng, 16) + "-01",
        "ED25519 key fingerprint is SHA256:" + _b64(rng.randbytes(32)).rstrip("=") + ".",
        "oid sha256:" + _hex(rng, 64),
        "x-amz-id-2: " + _b64(rng.randbytes(56)),
        "image: ghcr.io/acme/api@sha256:" + _hex(rng, 64),
        "nonce-" + _b64(rng.randbytes(18)),
        '"kid": "' + _b64url(rng.randbytes(32)) + '"',
        "VersionId: " + _rand(rng, _B64URL, 32),
    )
    return _keep_case("keep_token_shaped", items, rng, i, k=3)


@_family("keep_jwt_shaped")
def _keep_jwt_shaped(rng: random.Random, i: int) -> Case:
    """Dotted base64url-looking strings that are not bearer credentials."""
    header = _b64url(json.dumps({"alg": "RS256", "kid": _hex(rng, 8)}).encode())
    items = (
        f"JOSE header only (decoded in the docs): {header}",
        "com.acme.billing.v1.InvoiceService.CreateInvoice",
        f"release {rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}"
        f"-rc.{rng.randint(1, 9)}"
        f"+build.{_hex(rng, 7)}",
        f"chunk main.{_hex(rng, 8)}.{_hex(rng, 20)}.js",
        f"cache key v2.{_b64url(rng.randbytes(6))}.{_b64url(rng.randbytes(6))}",
        f"k8s.io/api/core/v1.PodSpec.containers[{rng.randint(0, 3)}].env",
        f"otel.{rng.choice(_SERVICES)}.request.duration",
        f"fingerprint {_hex(rng, 2)}:{_hex(rng, 2)}:{_hex(rng, 2)}:{_hex(rng, 2)}",
    )
    return _keep_case("keep_jwt_shaped", items, rng, i, k=3)


@_family("keep_object_ids")
def _keep_object_ids(rng: random.Random, i: int) -> Case:
    """Provider object ids that share prefixes with keys but grant nothing."""
    items = (
        "cus_" + _rand(rng, _ALNUM, 14),
        "pi_3" + _rand(rng, _ALNUM, 23),
        "evt_1" + _rand(rng, _ALNUM, 23),
        "chatcmpl-" + _rand(rng, _ALNUM, 29),
        "msg_01" + _rand(rng, _ALNUM, 22),
        "toolu_01" + _rand(rng, _ALNUM, 22),
        "asst_" + _rand(rng, _ALNUM, 24),
        "file-" + _rand(rng, _ALNUM, 22),
        "req_" + _hex(rng, 32),
        "run_" + _rand(rng, _ALNUM, 24),
        "resp_" + _hex(rng, 48),
        "batch_" + _rand(rng, _ALNUM, 24),
    )
    case = _keep_case("keep_object_ids", items, rng, i, k=4, sep="  ")
    return replace(case, payload=f"ids: {case.payload}")


@_family("keep_encrypted_at_rest")
def _keep_encrypted_at_rest(rng: random.Random, i: int) -> Case:
    """Ciphertext meant to be committed: SOPS values, Sealed Secrets, ansible-vault, KMS blobs."""
    sops = (
        f"ENC[AES256_GCM,data:{_b64(rng.randbytes(18))},iv:{_b64(rng.randbytes(32))},"
        f"tag:{_b64(rng.randbytes(16))},type:str]"
    )
    sealed = "AgB" + _b64(rng.randbytes(rng.choice((180, 240))))
    vault_hdr = "$ANSIBLE_VAULT;1.1;AES256"
    vault_line = _hex(rng, 80)
    forms = (
        (f"db:\n    password: {sops}\nsops:\n    version: 3.8.1\n", [sops, "version: 3.8.1"]),
        (
            f"kind: SealedSecret\nspec:\n  encryptedData:\n    password: {sealed}\n",
            [sealed, "kind: SealedSecret"],
        ),
        (f"db_password: !vault |\n  {vault_hdr}\n  {vault_line}\n", [vault_hdr, vault_line]),
        (
            f'"CiphertextBlob": "AQICAHh{_b64(rng.randbytes(120))}"\n"KeyId": "alias/app"',
            ['"KeyId": "alias/app"'],
        ),
    )
    text, keep = forms[i % len(forms)]
    if i % 4 == 3:
        keep = [*keep, text.split('"')[3]]
    return _case("keep_encrypted_at_rest", text, [], keep)


@_family("keep_masked_values")
def _keep_masked_values(rng: random.Random, i: int) -> Case:
    """Values already masked by someone else: asterisks, last-four displays, placeholders."""
    items = (
        "password: ********",
        "token=***",
        f"sk-...{_rand(rng, _ALNUM, 4)}",
        "AKIA****************",
        '"api_key": "<hidden>"',
        "Authorization: Bearer [FILTERED]",
        "DB_PASSWORD=••••••••",
        f"card ending in {rng.randint(1000, 9999)}",
        "secret: (sensitive value)",
        "client_secret: xxxxxxxxxxxxxxxx",
        "api_key: REPLACE_ME",
    )
    return _keep_case("keep_masked_values", items, rng, i)


@_family("keep_auth_settings")
def _keep_auth_settings(rng: random.Random, i: int) -> Case:
    """Authentication settings and public client identifiers."""
    items = (
        "PasswordAuthentication no",
        "token_endpoint_auth_method: client_secret_basic",
        "grant_type=authorization_code&code_challenge_method=S256",
        "response_type=code&scope=openid%20profile%20email",
        f"client_id: Iv1.{_hex(rng, 16)}",
        "auth_type: password",
        "security: [{bearerAuth: []}]",
        "require_mfa: true",
        "token_lifetime: 1h",
        "password_hash_algorithm: argon2id",
        "session.cookie_secure = 1",
        "AuthType Basic",
        'auth_method = "oauth2"',
        "allow_password_grant: false",
    )
    return _keep_case("keep_auth_settings", items, rng, i)


@_family("keep_numbers_and_dates")
def _keep_numbers_and_dates(rng: random.Random, i: int) -> Case:
    """Numbers near PII: epochs, versions, order numbers, durations, ports, invoice ids."""
    items = (
        f"created_at={rng.randint(1_700_000_000, 1_760_000_000)}",
        f"order {rng.randint(10**7, 10**8)}",
        f"v{rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}",
        f"duration_ms={rng.randint(100, 99999)}",
        f"invoice INV-{rng.randint(2023, 2026)}-{rng.randint(1000, 99999)}",
        f"build #{rng.randint(1000, 9999)}",
        f"listening on 0.0.0.0:{rng.choice((8080, 8443, 9090))}",
        f"{rng.randint(2024, 2026)}-{rng.randint(10, 12)}-{rng.randint(10, 28)} "
        f"{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}",
        f"ISBN 978-{rng.randint(0, 9)}-{rng.randint(100, 999)}-{rng.randint(10000, 99999)}-"
        f"{rng.randint(0, 9)}",
        f"zip {rng.randint(10000, 99999)}",
        f"bytes={rng.randint(0, 999)}-{rng.randint(1000, 99999)}",
        f"pid {rng.randint(1000, 65000)}",
    )
    return _keep_case("keep_numbers_and_dates", items, rng, i, k=5, sep=" | ")


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

FAMILIES: tuple[str, ...] = tuple(_GENERATORS)
"""Every family, secret families first, then `keep_*` families."""
KEEP_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f.startswith("keep_"))
"""Families whose cases carry only look-alikes."""


_PAIRED = frozenset(
    (
        "sql_credentials",
        "sql_connection_in_sql",
        "split_key_value",
        "cli_password_flags",
        "jdbc_connection",
        "app_config_files",
        "unicode_tricks",
        "webhook_urls",
        "provider_token_bare",
        "pii_phone_layouts",
        "otlp_json_attributes",
        "chat_pasted_secret",
        "url_signed_params",
        "code_literal_secrets",
    )
)
"""Families whose items are short: each case joins two items, as a file or a log would."""


def _paired(make: _Generator, rng: random.Random, i: int, per_family: int) -> Case:
    first, second = make(rng, i), make(rng, i + per_family)
    return replace(
        first,
        payload=f"{first.payload}\n\n{second.payload}",
        secrets=tuple(dict.fromkeys([*first.secrets, *second.secrets])),
        keep=tuple(dict.fromkeys([*first.keep, *second.keep])),
    )


def generate(seed: int = 0, per_family: int = 11) -> list[Case]:
    """The held-out set: `per_family` cases of every family, the same for the same seed.

    Each family draws from its own `random.Random(f"heldout:{seed}:{family}")`, so changing
    one family leaves every other family's cases as they were.
    """
    cases: list[Case] = []
    for family, make in _GENERATORS.items():
        rng = random.Random(f"heldout:{seed}:{family}")
        for i in range(per_family):
            paired = family in _PAIRED
            cases.append(_paired(make, rng, i, per_family) if paired else make(rng, i))
    return cases


def _as_text(case: Case) -> str:
    if isinstance(case.payload, str):
        return case.payload
    return json.dumps(case.payload, ensure_ascii=False)


def dense_payload(seed: int, size_bytes: int) -> list[str]:
    """Secret-dense records of about `size_bytes` in all: every record a tool result or a log.

    Each record joins two to four held-out cases (secret, PII and look-alike families alike,
    drawn from sets generated with other seeds than the evaluation set's) under a log prefix or
    inside a tool-result JSON envelope, so records are distinct and nearly every one carries
    credentials beside look-alikes or personal data. For throughput only: records may span
    lines, and what they carry is scored on the set itself, not here.
    """
    rng = random.Random(f"dense:{seed}")
    pool = [_as_text(c) for s in range(4) for c in generate(seed * 100 + s + 1)]
    records: list[str] = []
    size = 0
    while size < size_bytes:
        body = "\n".join(rng.sample(pool, rng.randint(2, 4)))
        call = "toolu_01" + _rand(rng, _ALNUM, 22)
        if rng.random() < 0.4:
            record = json.dumps({"type": "tool_result", "tool_use_id": call, "content": body})
        else:
            record = f"{_ts(rng)} INFO tool_result call_id={call} output={body}"
        records.append(record)
        size += len(record.encode()) + 1
    return records
