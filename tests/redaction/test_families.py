"""Per-family tests for the families issue 15 lists: secrets that must go, look-alikes that stay.

Each case is `(payload, secrets, keep)`: every secret must be gone from the redacted output (no
piece of 12 characters, or the whole of a shorter one, left; see `caught`), and every look-alike
must survive verbatim. Payloads are text for `redact_text` or JSON-like values for
`redact_value`. Test secrets are assembled from pieces so that secret scanners do not flag this
file.
"""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

import pytest

from tests.redaction.corpus import caught, kept
from zeroclaw_obs.redaction import RULES, Redactor

R = "Zq8Wx7Vc6Bn5Ml4KpL0o9I8uYt6R"  # a random-looking body
R2 = "Hd3Kf9Lm2Np7Qr4St8Vw1Xy6Za5B"
GHP = "gh" + "p_" + R + "AbCdEfGh"
OPENAI = "sk-" + "proj-" + R + "T3BlbkFJ" + R2 + R
JWT = (
    "eyJ" + "hbGciOiJSUzI1NiIsImtpZCI6IjEifQ"
    ".eyJ" + "pc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwic3ViIjoic3lzdGVtIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c" + R
)
PEM_LINES = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + R[:12],
    "x9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7Ab6Cd5Ef4Gh3Ij2Kl1Mn0Op",
    "9Qr8St7" + R2,
]
PEM_ESCAPED = (
    "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(PEM_LINES) + "\\n-----END PRIVATE KEY-----\\n"
)


HEX64 = "3e9a7c1f5b2d8e4a6c0f9b3d7e1a5c8f" + "2b6d0e4a8c3f7b1d5e9a2c6f0b4d8e3a"
B62 = "Kx7Qm2Vn9Rb4Tz6Wc1Yd8Fh3Jk5Lp0Ns"  # 32 mixed characters


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


Case = tuple[Any, tuple[str, ...], tuple[str, ...]]

# --------------------------------------------------------------------------------------------
# Secrets that must go (with the look-alikes around them that must stay)
# --------------------------------------------------------------------------------------------

SQL: list[Case] = [
    (
        "CREATE USER 'app'@'%' IDENTIFIED BY 'Xk9#mPq2vLw';",
        ("Xk9#mPq2vLw",),
        ("CREATE USER 'app'@'%' IDENTIFIED BY",),
    ),
    (
        'ALTER USER app_ro IDENTIFIED BY "S3cure!Pass77";',
        ("S3cure!Pass77",),
        ("ALTER USER app_ro",),
    ),
    ("CREATE USER scott IDENTIFIED BY tiger42x;", ("tiger42x",), ("CREATE USER scott",)),
    (
        "CREATE USER 'etl'@'10.%' IDENTIFIED WITH mysql_native_password BY 'Etl_pw_2024';",
        ("Etl_pw_2024",),
        ("mysql_native_password",),
    ),
    (
        "CREATE ROLE reporting WITH LOGIN PASSWORD 'rep0rt-Pa55' VALID UNTIL '2026-01-01';",
        ("rep0rt-Pa55",),
        ("CREATE ROLE reporting WITH LOGIN", "VALID UNTIL '2026-01-01'"),
    ),
    (
        "ALTER ROLE analytics WITH PASSWORD 'an@lyt1csPW';",
        ("an@lyt1csPW",),
        ("ALTER ROLE analytics",),
    ),
    ("alter user bob password 'b0bPw!2024' ;", ("b0bPw!2024",), ("alter user bob",)),
    (
        "ALTER USER svc WITH ENCRYPTED PASSWORD 'md5a1b2c3d4e5f6';",
        ("md5a1b2c3d4e5f6",),
        ("ALTER USER svc",),
    ),
    (
        "SET PASSWORD FOR 'jeff'@'localhost' = 'n3wPa$$word';",
        ("n3wPa$$word",),
        ("SET PASSWORD FOR 'jeff'@'localhost'",),
    ),
    (
        "SET PASSWORD FOR jeff = PASSWORD('cl3artextPw');",
        ("cl3artextPw",),
        ("SET PASSWORD FOR jeff",),
    ),
    (
        "CREATE LOGIN svc_etl WITH PASSWORD = 'Etl#2024!xQ', CHECK_POLICY = OFF;",
        ("Etl#2024!xQ",),
        ("CREATE LOGIN svc_etl", "CHECK_POLICY = OFF"),
    ),
    (
        "GRANT ALL ON shop.* TO 'shop'@'%' IDENTIFIED BY 'Sh0pP4ss';",
        ("Sh0pP4ss",),
        ("GRANT ALL ON shop.*",),
    ),
    (
        "CREATE DATABASE LINK remote CONNECT TO hr IDENTIFIED BY Hr_link9 USING 'orcl';",
        ("Hr_link9",),
        ("CREATE DATABASE LINK remote CONNECT TO hr", "USING 'orcl'"),
    ),
    (
        "SELECT dblink_connect('host=db1.internal user=app password=Pg9xS3cret dbname=prod');",
        ("Pg9xS3cret",),
        ("host=db1.internal user=app", "dbname=prod"),
    ),
    (
        "Server=tcp:sql1.database.windows.net,1433;Database=orders;User ID=sa;"
        "Password=Sql$erver2019x;Encrypt=True;",
        ("Sql$erver2019x",),
        ("Database=orders;User ID=sa;", "Encrypt=True;"),
    ),
    (
        "Driver={ODBC Driver 18};Server=db;UID=report;PWD={Rep0rt;pw};",
        ("Rep0rt",),
        ("UID=report;",),
    ),
    (
        "jdbc:oracle:thin:scott/Tig3rPass@db.internal:1521:ORCL",
        ("Tig3rPass",),
        ("db.internal:1521:ORCL",),
    ),
    ("sqlplus system/Manag3r99@//db:1521/XEPDB1", ("Manag3r99",), ("//db:1521/XEPDB1",)),
    (
        "jdbc:postgresql://db:5432/app?user=app&password=Jdbc9Pass&ssl=true",
        ("Jdbc9Pass",),
        ("ssl=true",),
    ),
    (
        "EXEC sp_addlinkedsrvlogin @rmtsrvname = N'REMOTE', @rmtuser = N'sa', "
        "@rmtpassword = N'L1nkedPw!';",
        ("L1nkedPw!",),
        ("@rmtuser = N'sa'",),
    ),
]

SQL_KEEP: list[Case] = [
    ("ALTER USER app PASSWORD EXPIRE;", (), ("ALTER USER app PASSWORD EXPIRE;",)),
    ("CREATE USER ops IDENTIFIED EXTERNALLY;", (), ("CREATE USER ops IDENTIFIED EXTERNALLY;",)),
    (
        "ALTER ROLE app VALID UNTIL 'infinity'; ALTER ROLE app WITH PASSWORD NULL;",
        (),
        ("ALTER ROLE app VALID UNTIL 'infinity'; ALTER ROLE app WITH PASSWORD NULL;",),
    ),
    (
        "SELECT id, password_hash FROM users WHERE email = $1 AND password_reset_at > now();",
        (),
        ("SELECT id, password_hash FROM users WHERE email = $1 AND password_reset_at > now();",),
    ),
    (
        "UPDATE users SET password = ? WHERE id = ?",
        (),
        ("UPDATE users SET password = ? WHERE id = ?",),
    ),
    (
        "CREATE USER :username IDENTIFIED BY :password;",
        (),
        ("CREATE USER :username IDENTIFIED BY :password;",),
    ),
    (
        "SET password_encryption = 'scram-sha-256';",
        (),
        ("SET password_encryption = 'scram-sha-256';",),
    ),
]

_STS = "IQoJb3JpZ2luX2Vj" + (R + R2 + "/+" + B62) * 3
_LONG_JWT = JWT + R2 * 3
WRAPPED: list[Case] = [
    (  # a YAML folded block scalar: the key's value is the block below it
        "mailer:\n  from: ops\n  api_key: >-\n    "
        + R
        + R2
        + "\n    "
        + R2
        + R
        + "\n  port: 587\n",
        (R + R2, R2 + R),
        ("from: ops", "port: 587"),
    ),
    (  # a JWT wrapped at 64 columns, its last piece followed by the rest of the log line
        "DEBUG token acquired: "
        + "\n".join(_LONG_JWT[i : i + 64] for i in range(0, len(_LONG_JWT), 64))
        + " (kid rotated)\nnext line",
        (_LONG_JWT[-40:], _LONG_JWT[:40]),
        ("(kid rotated)", "next line"),
    ),
    (  # an STS session token in a mail body wrapped at 76 columns
        "Session token (expires in 1h):\n"
        + "\n".join(_STS[i : i + 76] for i in range(0, len(_STS), 76))
        + "\n\n-- \nops mailer",
        (_STS[:76], _STS[76:152], _STS[-30:]),
        ("ops mailer",),
    ),
    (  # a token wrapped at a fixed width, three lines
        f"export OPENAI_API_KEY={OPENAI[:40]}\n{OPENAI[40:80]}\n{OPENAI[80:]}\n# done",
        (OPENAI,),
        ("export OPENAI_API_KEY=", "# done"),
    ),
    (  # a GitHub token wrapped short, so neither half matches on its own
        f"token:\n{GHP[:20]}\n{GHP[20:]}\nnext step",
        (GHP,),
        ("next step",),
    ),
    (
        f"GITHUB_TOKEN={GHP[:26]}\n{GHP[26:]}\nDEBUG=1",
        (GHP,),
        ("DEBUG=1",),
    ),
    (  # implicit concatenation of literals in parentheses (Python)
        'GH_TOKEN = (\n    "' + GHP[:15] + '"\n    "' + GHP[15:] + '"\n)\nTIMEOUT = 30',
        (GHP[:15], GHP[15:]),
        ("GH_TOKEN = (", "TIMEOUT = 30"),
    ),
    (  # `+` and a line continuation (JavaScript, Java)
        'const key = "' + OPENAI[:30] + '" +\n  "' + OPENAI[30:] + '";\nconst region = "eu";',
        (OPENAI[:30], OPENAI[30:]),
        ('const region = "eu";',),
    ),
    (  # a log line wrapped mid-token, the rest of the line after it
        "2026-02-01 12:00:03 worker: HF_TOKEN=hf_"
        + R[:9]
        + "\n"
        + R[9:]
        + "Ab3 job=nightly-sync attempt=2",
        ("hf_" + R[:9] + "\n" + R[9:] + "Ab3",),
        ("job=nightly-sync attempt=2",),
    ),
    (  # a folded YAML scalar under a sensitive header
        "headers:\n  Authorization: >-\n    Bearer "
        + R
        + "\n    "
        + R2
        + "\n  Accept: application/json\n",
        (R, R2),
        ("Accept: application/json", "Authorization: >-"),
    ),
    (  # a literal block under a sensitive key
        "ssh:\n  private_key: |\n    " + R + "\n    " + R2 + "\n  user: deploy\n",
        (R, R2),
        ("user: deploy",),
    ),
]

SPLIT: list[Case] = [
    (  # a list of tokens, one per line: each is its own token, both go
        GHP + "\n" + "gh" + "p_" + R2 + "AbCdEfGh\n",
        (GHP, "gh" + "p_" + R2 + "AbCdEfGh"),
        (),
    ),
    (  # a line continuation in a shell command
        f'curl -H "Authorization: Bearer {R[:14]}\\\n{R2}{R[14:]}" https://api.acme.io/v1',
        (R2 + R[14:],),
        ("https://api.acme.io/v1",),
    ),
    ("password:\n  Hunter2-Blue-Sky!\nretries: 3", ("Hunter2-Blue-Sky!",), ("retries: 3",)),
    (
        '{\n  "password":\n    "Qw3rty!Zx9Lp"\n,"user": "ops"}',
        ("Qw3rty!Zx9Lp",),
        ('"user": "ops"',),
    ),
    ("API_KEY=\n" + R + "\nREGION=eu-west-1", (R,), ("REGION=eu-west-1",)),
    ("client_secret:\n    " + R2 + "\nclient_id: web-app", (R2,), ("client_id: web-app",)),
    (  # an XML element whose value sits on its own line
        "<settings>\n  <smtpPassword>\n    Gr4ss-H0pper!\n  </smtpPassword>\n  <port>25</port>",
        ("Gr4ss-H0pper!",),
        ("<port>25</port>",),
    ),
    (  # a Markdown table: key and value in one row, or the value in the next
        "| setting | value |\n|---|---|\n| `DB_PASSWORD` | `Wq9-Lm2!Zt` |\n| DB_PORT | 5432 |",
        ("Wq9-Lm2!Zt",),
        ("| DB_PORT | 5432 |",),
    ),
    ("| api_token |\n| " + R2 + " |\n| region | eu |", (R2,), ("| region | eu |",)),
]

SPLIT_KEEP: list[Case] = [
    ("| field | type |\n|---|---|\n| password | string |", (), ("| password | string |",)),
    ("| token | required | Yes |", (), ("| token | required | Yes |",)),
    (
        "password:\n  min_length: 12\n  require_digit: true",
        (),
        ("min_length: 12", "require_digit: true"),
    ),
    ("token:\n  - name: ci\n    scope: read", (), ("- name: ci", "scope: read")),
    (
        "Password:\nReset your password from the account page.",
        (),
        ("Reset your password from the account page.",),
    ),
    (
        "a3f1c2e4b5d6a7f8c9e0a1b2c3d4e5f6a7b8c9d0\n"
        "b4e2d3f5c6e7b8a9d0f1b2c3d4e5f6a7b8c9d0e1\n"
        "c5f3e4a6d7f8c9b0e1a2c3d4e5f6a7b8c9d0e1f2\n",
        (),
        (
            "a3f1c2e4b5d6a7f8c9e0a1b2c3d4e5f6a7b8c9d0",
            "b4e2d3f5c6e7b8a9d0f1b2c3d4e5f6a7b8c9d0e1",
            "c5f3e4a6d7f8c9b0e1a2c3d4e5f6a7b8c9d0e1f2",
        ),
    ),
    (
        "550e8400-e29b-41d4-a716-446655440000\n6ba7b810-9dad-11d1-80b4-00c04fd430c8\n",
        (),
        ("550e8400-e29b-41d4-a716-446655440000", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
    ),
    (
        "build_id: 20240611.3-rc1-7f3a9c2\nartifact_name: service-bundle-linux-amd64\n",
        (),
        ("20240611.3-rc1-7f3a9c2", "service-bundle-linux-amd64"),
    ),
]

CREDENTIAL_FILES: list[Case] = [
    (
        "machine api.github.com\n  login octocat\n  password " + GHP + "\n",
        (GHP,),
        ("machine api.github.com", "login octocat"),
    ),
    (
        "machine ftp.example.org login anonymous password Ftp-Pass-42x\n"
        "machine backup.internal login svc password B4ckup!pw\ndefault login guest",
        ("Ftp-Pass-42x", "B4ckup!pw"),
        ("machine ftp.example.org login anonymous", "login svc", "default login guest"),
    ),
    (
        "db.internal:5432:orders:app:Pgp4ss_orders\n*:*:*:replicator:R3pl!cate99\n",
        ("Pgp4ss_orders", "R3pl!cate99"),
        ("db.internal:5432:orders:app:", "*:*:*:replicator:"),
    ),
    (
        "registry=https://registry.npmjs.org/\n"
        "//registry.npmjs.org/:_authToken=" + "np" + "m_" + R + "AbCdEfGh" + "\n",
        ("np" + "m_" + R + "AbCdEfGh",),
        ("registry=https://registry.npmjs.org/",),
    ),
    (
        "//npm.pkg.github.com/:_authToken="
        + R2
        + R
        + "\n@acme:registry=https://npm.pkg.github.com",
        (R2 + R,),
        ("@acme:registry=https://npm.pkg.github.com",),
    ),
    (
        "//nexus.acme.io/repository/npm/:_auth=" + _b64("deploy:N3xusPw!") + "\nalways-auth=true",
        (_b64("deploy:N3xusPw!"),),
        ("always-auth=true",),
    ),
    (
        "//nexus.acme.io/:username=deploy\n//nexus.acme.io/:_password="
        + _b64("N3xusPw!77")
        + "\nemail=ci@acme.io",
        (_b64("N3xusPw!77"),),
        ("//nexus.acme.io/:username=deploy",),
    ),
    (
        "[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nrepository = https://upload.pypi.org/legacy/\n"
        "username = __token__\npassword = py" + "pi-AgEIcHlwaS5vcmc" + R + R2 + "\n",
        ("py" + "pi-AgEIcHlwaS5vcmc" + R + R2,),
        ("username = __token__", "repository = https://upload.pypi.org/legacy/"),
    ),
    (
        "[internal]\nrepository: https://pypi.acme.io\nusername: deploy\npassword: Dep1oy-Pw\n",
        ("Dep1oy-Pw",),
        ("username: deploy",),
    ),
    (
        "https://octocat:" + GHP + "@github.com\nhttps://deploy:Gl-Pw-9x8y7z@gitlab.acme.io\n",
        (GHP, "Gl-Pw-9x8y7z"),
        ("@github.com", "@gitlab.acme.io"),
    ),
    (
        '{"auths": {"https://index.docker.io/v1/": {"auth": "'
        + _b64("octo:D0ckerPw!x")
        + '", "email": "ops@acme.io"}, "ghcr.io": {"auth": "'
        + _b64("bot:" + GHP)
        + '"}}, "credsStore": "desktop"}',
        (_b64("octo:D0ckerPw!x"), _b64("bot:" + GHP)),
        ('"https://index.docker.io/v1/"', '"credsStore": "desktop"'),
    ),
    (
        {"auths": {"registry.acme.io": {"auth": _b64("ci:Regi5tryPw"), "identitytoken": R}}},
        (_b64("ci:Regi5tryPw"), R),
        ("registry.acme.io",),
    ),
    (
        "users:\n- name: admin\n  user:\n"
        "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"
        "\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + R + "\n"
        "- name: sa\n  user:\n    token: " + JWT + "\n",
        ("UFJJVkFURSBLRVktLS0tLQo" + R, JWT),
        ("client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", "- name: admin"),
    ),
    (
        {
            "users": [
                {
                    "name": "ci",
                    "user": {
                        "client-certificate-data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
                        "client-key-data": "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t" + R,
                    },
                }
            ]
        },
        ("QyBQUklWQVRFIEtFWS0tLS0t" + R,),
        ("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",),
    ),
    (
        "[default]\naws_access_key_id = " + "AK" + "IAZ7Q3RXPL4MWN2VBT\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY\nregion = eu-west-1\n\n"
        "[profile deploy]\nrole_arn = arn:aws:iam::123456789012:role/Deploy\n"
        "source_profile = default\n"
        "aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH" + R + "\n",
        (
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
            "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH" + R,
        ),
        (
            "[default]",
            "region = eu-west-1",
            "[profile deploy]",
            "role_arn = arn:aws:iam::123456789012:role/Deploy",
            "source_profile = default",
        ),
    ),
]

STS: list[Case] = [
    (
        {
            "Credentials": {
                "AccessKeyId": "AS" + "IAZ7Q3RXPL4MWN2VBT",
                "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
                "SessionToken": "FwoGZXIvYXdzEBYaDH" + R + R2,
                "Expiration": "2026-03-01T12:00:00Z",
            },
            "AssumedRoleUser": {
                "AssumedRoleId": "AROA3XFRBF535PLBIFPI4:deploy-session",
                "Arn": "arn:aws:sts::123456789012:assumed-role/Deploy/deploy-session",
            },
        },
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "FwoGZXIvYXdzEBYaDH" + R + R2),
        (
            "2026-03-01T12:00:00Z",
            "AROA3XFRBF535PLBIFPI4:deploy-session",
            "arn:aws:sts::123456789012:assumed-role/Deploy/deploy-session",
        ),
    ),
    (
        '{"Credentials": {"AccessKeyId": "AS' + 'IAZ7Q3RXPL4MWN2VBT", "SecretAccessKey": '
        '"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "SessionToken": "FwoGZXIvYXdzEBYaDH'
        + R
        + '", "Expiration": "2026-03-01T12:00:00Z"}, "PackedPolicySize": 6}',
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "FwoGZXIvYXdzEBYaDH" + R),
        ('"Expiration": "2026-03-01T12:00:00Z"', '"PackedPolicySize": 6'),
    ),
]

SERVICE_ACCOUNT: list[Case] = [
    (
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-prod-42",
                "private_key_id": "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
                "private_key": PEM_ESCAPED.replace("\\n", "\n"),
                "client_email": "deployer@acme-prod-42.iam.gserviceaccount.com",
                "client_id": "104857600123456789012",
                "token_uri": "https://oauth2.googleapis.com/token",
            },
            indent=2,
        ),
        ("3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", *PEM_LINES),
        (
            '"project_id": "acme-prod-42"',
            "deployer@acme-prod-42.iam.gserviceaccount.com",
            '"token_uri": "https://oauth2.googleapis.com/token"',
            '"type": "service_account"',
        ),
    ),
    (
        {
            "type": "service_account",
            "private_key_id": "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c",
            "private_key": PEM_ESCAPED.replace("\\n", "\n"),
            "client_email": "ci@builds-7.iam.gserviceaccount.com",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
            "ci%40builds-7.iam.gserviceaccount.com",
        },
        ("9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c", *PEM_LINES),
        ("ci@builds-7.iam.gserviceaccount.com", "ci%40builds-7.iam.gserviceaccount.com"),
    ),
    (  # one line, as a tool prints it
        '{"type":"service_account","private_key_id":"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",'
        '"private_key":"' + PEM_ESCAPED + '","client_email":"x@p.iam.gserviceaccount.com"}',
        ("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", *PEM_LINES),
        ("x@p.iam.gserviceaccount.com",),
    ),
]

ORCHESTRATION: list[Case] = [
    (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\n"
        "  namespace: prod\ntype: Opaque\n"
        "data:\n  username: YWRtaW4tdXNlcg==\n  password: " + _b64("S3cr3t-DB-pw") + "\n"
        "  host: " + _b64("db.internal") + "\n",
        ("YWRtaW4tdXNlcg==", _b64("S3cr3t-DB-pw"), _b64("db.internal")),
        ("name: db-creds", "namespace: prod", "type: Opaque", "kind: Secret"),
    ),
    (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n"
        "  API_URL: https://api.acme.io\n  STRIPE_SECRET: sk" + "_live_51" + R + "\n"
        "  config.yaml: |\n    endpoint: https://x.acme.io\n    signing: K3y-For-Signing-42\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  LOG_LEVEL: debug\n"
        "  FEATURE_FLAGS: search,checkout\n",
        ("sk" + "_live_51" + R, "K3y-For-Signing-42"),
        ("name: api", "LOG_LEVEL: debug", "FEATURE_FLAGS: search,checkout", "kind: ConfigMap"),
    ),
    (
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "tls-and-creds", "labels": {"app": "web"}},
            "type": "Opaque",
            "data": {"user": "d2ViYXBw", "pass": _b64("W3b-App-Pw!")},
        },
        ("d2ViYXBw", _b64("W3b-App-Pw!")),
        ("tls-and-creds", "web", "Opaque"),
    ),
    (
        '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"regcred"},'
        '"data":{".dockerconfigjson":"'
        + _b64('{"auths":{"r.io":{"auth":"' + _b64("a:Zz9-pw-Q") + '"}}}')
        + '"}}',
        (_b64('{"auths":{"r.io":{"auth":"' + _b64("a:Zz9-pw-Q") + '"}}}')[:40],),
        ('"name":"regcred"',),
    ),
    (
        "docker run -d -e POSTGRES_PASSWORD=Pg-D0cker-pw -e POSTGRES_USER=app "
        "--env API_TOKEN=" + R + " -e TZ=UTC postgres:16",
        ("Pg-D0cker-pw", R),
        ("POSTGRES_USER=app", "TZ=UTC", "postgres:16"),
    ),
    (
        'docker run --rm -e "STRIPE_API_KEY=sk'
        + "_test_51"
        + R2
        + '" -e "LOG_LEVEL=info" acme/api',
        ("sk" + "_test_51" + R2,),
        ("LOG_LEVEL=info", "acme/api"),
    ),
    (
        "helm upgrade --install api ./chart --set db.password=H3lm-Db-pw,db.user=api "
        "--set-string auth.rootPassword=R00t!pw --set image.tag=1.4.2",
        ("H3lm-Db-pw", "R00t!pw"),
        ("db.user=api", "image.tag=1.4.2", "./chart"),
    ),
    (
        "services:\n  db:\n    image: mysql:8\n    environment:\n"
        "      - MYSQL_ROOT_PASSWORD=My5ql-r00t\n"
        "      - MYSQL_DATABASE=shop\n  api:\n    environment:\n      JWT_SECRET: " + R + "\n"
        '      DB_HOST: db\n      SESSION_SECRET: "S3ss10n-Secr3t"\n',
        ("My5ql-r00t", R, "S3ss10n-Secr3t"),
        ("MYSQL_DATABASE=shop", "DB_HOST: db", "image: mysql:8"),
    ),
]

ORCHESTRATION.append(
    (
        {
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", "tls.key": R + R2},
        },
        (R + R2,),
        ("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", "kubernetes.io/tls"),
    )
)

CLI: list[Case] = [
    (  # the second of two commands on consecutive lines
        "mysql -u app -pFirst-pw-81 shop\nmysql -u app -pSecond-pw-82 shop",
        ("First-pw-81", "Second-pw-82"),
        ("shop",),
    ),
    ("sqlcmd -S sql01 -U sa -P 'Sq1-cmd-Pw!' -Q \"SELECT 1\"", ("Sq1-cmd-Pw!",), ("-S sql01",)),
    ("bcp dbo.orders out o.dat -S sql01 -U etl -P Bcp-pw-555 -c", ("Bcp-pw-555",), ("-c",)),
    (
        "keytool -list -keystore app.p12 -storepass St0re-pw-9 -v",
        ("St0re-pw-9",),
        ("-keystore app.p12",),
    ),
    (
        "keytool -importkeystore -srckeystore a.jks -srcstorepass Src-pw-1x -destkeypass Dst-pw-2y",
        ("Src-pw-1x", "Dst-pw-2y"),
        ("-srckeystore a.jks",),
    ),
    (
        "az login --service-principal -u 0f8fad5b-d9cb-469f-a165-70867728950e -p Az.Sp~"
        + R2[:12]
        + " --tenant acme.onmicrosoft.com",
        ("Az.Sp~" + R2[:12],),
        ("--tenant acme.onmicrosoft.com",),
    ),
    ("oc login https://api.ocp:6443 -u dev -p Oc-pw-4471", ("Oc-pw-4471",), ("-u dev",)),
    (
        "echo 'Reg-pw-" + R2[:10] + "' | podman login quay.io -u bot --password-stdin",
        ("Reg-pw-" + R2[:10],),
        ("podman login quay.io -u bot",),
    ),
    (
        'printf "%s" "Pr1ntf-pw-77" | docker login -u ci --password-stdin ghcr.io',
        ("Pr1ntf-pw-77",),
        ("ghcr.io",),
    ),
    ("ipmitool -I lanplus -H bmc1 -U admin -P Ipmi-pw-3 power status", ("Ipmi-pw-3",), ("power",)),
    ("xfreerdp /v:win01 /u:ops /p:Rdp-pw-2024 /cert:ignore", ("Rdp-pw-2024",), ("/cert:ignore",)),
    ("7z a -pArch1ve-Pw7 backup.7z data/", ("Arch1ve-Pw7",), ("backup.7z data/",)),
    ("zip -r -P Z1p-Pw-x out.zip dir", ("Z1p-Pw-x",), ("out.zip dir",)),
    ("ssh-keygen -t ed25519 -N 'Kg-Pass-55' -f key", ("Kg-Pass-55",), ("-f key",)),
    ("openssl enc -aes-256-cbc -k Enc-Pw-771 -in a -out b", ("Enc-Pw-771",), ("-in a -out b",)),
    ("mysql -h db -u root --password=My-Cli-pw9 shop", ("My-Cli-pw9",), ("-h db -u root", "shop")),
    ("mysql -uroot -pR00tPw42 -h 10.0.0.5 shop", ("R00tPw42",), ("shop",)),
    ("gh api --token " + R + " /repos", (R,), ("/repos",)),
    (
        "PGPASSWORD=Pg-Env-pw7 psql -h db -U app orders",
        ("Pg-Env-pw7",),
        ("psql -h db -U app orders",),
    ),
    ("sshpass -p 'Ssh!pass99' ssh deploy@bastion", ("Ssh!pass99",), ("ssh deploy@bastion",)),
    ("curl -u admin:Cu7l-pw-x https://api.acme.io/v1", ("Cu7l-pw-x",), ("https://api.acme.io/v1",)),
    ("curl --user 'ci:Ci-pass-42' -X POST https://ci.acme.io", ("Ci-pass-42",), ("-X POST",)),
    (
        "mongosh --username admin --password M0ngo-pw1 mongodb://db",
        ("M0ngo-pw1",),
        ("--username admin",),
    ),
    (
        "mongo -u admin -p 'M0ng0-Old-pw' --authenticationDatabase admin",
        ("M0ng0-Old-pw",),
        ("admin",),
    ),
    ("redis-cli -h cache -a R3dis-pw-55 PING", ("R3dis-pw-55",), ("PING",)),
    ("ldapsearch -x -D cn=admin,dc=acme -w Ld4p-pw-z -b dc=acme", ("Ld4p-pw-z",), ("-b dc=acme",)),
    (
        "openssl pkcs12 -export -in c.pem -passout pass:P12-export-pw -out c.p12",
        ("P12-export-pw",),
        ("-out c.p12",),
    ),
    (
        "wget --http-password=Wg3t-pw --http-user=bob https://x.io/f",
        ("Wg3t-pw",),
        ("--http-user=bob",),
    ),
    (
        "docker login -u ci --password-stdin <<< 'D0ck-stdin-pw'",
        ("D0ck-stdin-pw",),
        ("docker login -u ci",),
    ),
    ("smbclient //fs/share -U alice%Smb-pw-11", ("Smb-pw-11",), ("//fs/share",)),
    (
        "htpasswd -b -c .htpasswd alice Ht-pass-77",
        ("Ht-pass-77",),
        ("htpasswd -b -c .htpasswd alice",),
    ),
    ("psql 'postgresql://app:Psql-url-pw@db:5432/app'", ("Psql-url-pw",), ("@db:5432/app",)),
    (
        "java -Djavax.net.ssl.keyStorePassword=Ks-pw-2024 -jar app.jar",
        ("Ks-pw-2024",),
        ("-jar app.jar",),
    ),
]

CHAT: list[Case] = [
    ("my api key is " + R2 + R, (R2 + R,), ("my api key is",)),
    ("Here's the token you need: " + R + "x9", (R + "x9",), ("Here's the token you need:",)),
    ("hey, can you use my openai key " + OPENAI + " for this?", (OPENAI,), ("for this?",)),
    ("my password is Tr0ub4dor&3x, please log in", ("Tr0ub4dor&3x",), ("please log in",)),
    (
        "the db password for prod is Sup3r-S3cret!",
        ("Sup3r-S3cret!",),
        ("the db password for prod is",),
    ),
    (
        {"role": "user", "content": "use this key for the deploy: " + R2 + "Q7"},
        (R2 + "Q7",),
        ("user", "use this key for the deploy:"),
    ),
    ("pw: Blu3-Mo0n-77 (don't share)", ("Blu3-Mo0n-77",), ("(don't share)",)),
    (
        "[ops] you can sign in with deploy / Gx7!pQ2-vLw8 for now",
        ("Gx7!pQ2-vLw8",),
        ("you can sign in with deploy /", "for now"),
    ),
    ("creds: svc-backup/Tz4~Kp9Wq2Lm", ("Tz4~Kp9Wq2Lm",), ("creds: svc-backup/",)),
    # a typed password holding `=` or `^` is still one value
    ("the staging password is Cedar=Dune4410 until Friday", ("Cedar=Dune4410",), ("until Friday",)),
    # a generated passphrase: words, one separator, a number
    ("unlock it with the passphrase otter.fjord.bramble.83;", ("otter.fjord.bramble.83",), ()),
    (
        "router login: admin / puffin_tundra_juniper_12 (LAN only)",
        ("puffin_tundra_juniper_12",),
        ("(LAN only)",),
    ),
    # the value right after `passphrase`/`password`, no verb between
    ("use the password Vk2mQ9xLp4Rt for the kiosk", ("Vk2mQ9xLp4Rt",), ("for the kiosk",)),
    # `user:password` after a credentials phrase
    (
        "creds for the vendor portal are ana.silva:Pq7Lm2Vx9Rk4Wz, MFA later",
        ("Pq7Lm2Vx9Rk4Wz",),
        ("MFA later",),
    ),
    ("user is admin, pass is Gk4-Marble!71", ("Gk4-Marble!71",), ("user is admin",)),
    # a Wi-Fi key shared in chat
    ("wifi: lobby-guest key Hx8kQ2mVz7Lp", ("Hx8kQ2mVz7Lp",), ("wifi: lobby-guest",)),
    ("WPA2 passphrase: Nimbus-Otter-5521", ("Nimbus-Otter-5521",), ()),
]

DEFAULTS: list[Case] = [
    # Decided: a working default (`changeme`) is a password on every system that kept it, so
    # it is redacted; text that asks the reader for a value (`YOUR_API_KEY_HERE`) is kept.
    ("password=changeme", ("changeme",), ("password=",)),
    ("secret_key: CHANGE_ME", ("CHANGE_ME",), ("secret_key:",)),
]

CHAT_KEEP: list[Case] = [
    (
        "log in with your account / see the docs at acme.io/login",
        (),
        ("log in with your account / see the docs at acme.io/login",),
    ),
    (
        "my password is too short, what are the rules?",
        (),
        ("my password is too short, what are the rules?",),
    ),
    ("The token is expired; please refresh it.", (), ("The token is expired; please refresh it.",)),
    ("your password is required to continue", (), ("your password is required to continue",)),
    (
        "the api key is stored in Vault under prod/api",
        (),
        ("the api key is stored in Vault under prod/api",),
    ),
    (
        "The secret is in the environment variable",
        (),
        ("The secret is in the environment variable",),
    ),
    ("token usage is prompt_tokens=9099 completion_tokens=120", (), ()),
    ("password: ENC[AES256_GCM,data:Zm9vYmFyYmF6,iv:cXV4cXV4cXV4,type:str]", (), ()),
    ("the wifi is down again, key ring is on the desk", (), ()),
    ("passwords are hashed with argon2id and salted", (), ()),
    ("login with your SSO account at sso.example.com:8443/app", (), ()),
]

SPAN_ATTRIBUTES: list[Case] = [
    (
        {"http.request.header.authorization": ["Bearer " + R2 + R], "http.request.method": "GET"},
        (R2 + R,),
        ("GET",),
    ),
    (
        {"http.request.header.authorization": "Basic " + _b64("svc:Sp4n-pw!")},
        (_b64("svc:Sp4n-pw!"),),
        (),
    ),
    (
        {"db.connection_string": "Server=sql1;Database=app;User Id=app;Password=C0nn-Str-pw;"},
        ("C0nn-Str-pw",),
        ("Server=sql1;Database=app;User Id=app;",),
    ),
    (
        {"db.connection_string": "host=pg port=5432 dbname=app user=app password=Pg-Attr-pw9"},
        ("Pg-Attr-pw9",),
        ("host=pg port=5432 dbname=app user=app",),
    ),
    (
        {"url.full": "https://api.acme.io/v1/items?access_token=" + R + "&page=2"},
        (R,),
        ("https://api.acme.io/v1/items?", "&page=2"),
    ),
    (
        {"url.full": "https://maps.acme.io/geo?address=x&key=" + R2 + "&sensor=false"},
        (R2,),
        ("&sensor=false",),
    ),
    (
        {
            "url.full": "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2026-01-01"
            "&sp=r&sig=" + R + "%2Bq%3D"
        },
        (R,),
        ("sv=2022-11-02", "sp=r"),
    ),
    (
        {
            "url.full": "https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Signature=" + "a1b2c3d4e5f6a7b8c9d0" * 3 + "abcd&X-Amz-Expires=900"
        },
        ("a1b2c3d4e5f6a7b8c9d0" * 3 + "abcd",),
        ("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Expires=900"),
    ),
    (
        "span attributes: http.request.header.authorization=Bearer "
        + R
        + " url.full=https://x.io/?q=1",
        (R,),
        ("url.full=https://x.io/?q=1",),
    ),
]

ENCODED: list[Case] = [
    ("echo '" + _b64("OPENAI_API_KEY=" + OPENAI) + "' | base64 -d", (OPENAI,), ("| base64 -d",)),
    (
        "data:text/plain;base64," + _b64("password=D4ta-Uri-Pw!x"),
        (_b64("password=D4ta-Uri-Pw!x"),),
        ("data:text/plain;base64,",),
    ),
    (
        '{"state": "' + _b64('{"token":"' + R + R2 + '"}') + '"}',
        (R + R2, _b64('{"token":"' + R + R2 + '"}')[:24]),
        ('"state": "',),
    ),
    (
        "X-Config: "
        + base64.urlsafe_b64encode(("api_key=" + R2 + R).encode()).decode().rstrip("="),
        (R2 + R,),
        ("X-Config: ",),
    ),
    (
        "Proxy-Authorization: Basic " + _b64("proxyuser:Pr0xy-Pw-9"),
        (_b64("proxyuser:Pr0xy-Pw-9"),),
        ("Proxy-Authorization: Basic",),
    ),
]

UNICODE: list[Case] = [
    (  # full-width letters and digits inside the token
        "token=" + "ｇｈｐ＿" + "".join(chr(ord(c) + 0xFEE0) for c in R) + "AbCdEfGh",
        ("".join(chr(ord(c) + 0xFEE0) for c in R),),
        ("token=",),
    ),
    (  # combining marks sprinkled through the token
        "key: " + "gh" + "p_" + "\u0301".join(R) + "AbCdEfGh",
        ("\u0301".join(R)[:30],),
        ("key: ",),
    ),
    ("password\u00a0=\u00a0Nbsp-Pw-12x done", ("Nbsp-Pw-12x",), ("done",)),
    ("password\u2009:\u3000Thin-Sp4ce-pw end", ("Thin-Sp4ce-pw",), ("end",)),
    ("passw\u0336ord = Strike-Pw-99", ("Strike-Pw-99",), ()),
    ("api_key\u2007=\u2007" + R2, (R2,), ()),
    ("\u0440\u0430ssword: Cyr-Mix-Pw-4", ("Cyr-Mix-Pw-4",), ()),
]

LOCALIZED: list[Case] = [
    # `password` in the language the file or form was written in
    ("Benutzer: etl\nPasswort: Kq7-Winter-Lm2x\n", ("Kq7-Winter-Lm2x",), ("Benutzer: etl",)),
    ("usuario=app\ncontraseña=Ocq9dLm-3Zp\n", ("Ocq9dLm-3Zp",), ("usuario=app",)),
    ("login: ana\nsenha: 7YtPq2LmZx\n", ("7YtPq2LmZx",), ("login: ana",)),
    ("värd: ftp.example.se\nlösenord: Hav?Sten4471\n", ("Hav?Sten4471",), ("ftp.example.se",)),
    ("Mot de passe : Vq3mLz8-Rk\n", ("Vq3mLz8-Rk",), ()),
    ("\u041f\u0430\u0440\u043e\u043b\u044c: Zx8Lm3Qp9w", ("Zx8Lm3Qp9w",), ()),
    ("\u30d1\u30b9\u30ef\u30fc\u30c9: Zx8Lm3Qp9w", ("Zx8Lm3Qp9w",), ()),
    ({"wachtwoord": "kaas-Fiets-88", "gebruiker": "jan"}, ("kaas-Fiets-88",), ("jan",)),
    ("hasło=Zdr0we!Jab1ko", ("Zdr0we!Jab1ko",), ()),
    ("kullanıcı: deniz\nparola: kartal-deniz-gece-41\n", ("kartal-deniz-gece-41",), ("deniz",)),
    # a capitalised word before `=` is part of a quoted password, not an argument label
    ("mail:\n  password: 'Harbor=Cedar5521'\n", ("Harbor=Cedar5521",), ("mail:",)),
    ('{"password": "Maple=Ridge6612"}', ("Maple=Ridge6612",), ()),
    # Django's secret-key alphabet has `=`: a quoted value may start with it
    (
        "SECRET_KEY = '=k3x@q9!v+z" + R[:20] + "'\nDEBUG = False",
        ("=k3x@q9!v+z" + R[:20],),
        ("DEBUG = False",),
    ),
    # a typed password with symbols after `=` is not an argument
    ("user is admin, pass is qzv=_1=e~k*?T", ("qzv=_1=e~k*?T",), ("user is admin",)),
]

SALT = "Qz7.Lm2/Rk9wXv3B"
PASSWORD_HASHES: list[Case] = [
    # /etc/shadow: the sha512-crypt field goes, locked accounts and the ageing fields stay
    (
        "root:*:19000:0:99999:7:::\nana:$6$" + SALT + "$" + R + R2 + "x/y.Z:19500:0:99999:7:::\n",
        (SALT + "$" + R + R2,),
        ("root:*:19000:0:99999:7:::", ":19500:0:99999:7:::"),
    ),
    # htpasswd: bcrypt and apr1-md5
    ("ana:$2b$12$" + R + R2[:25] + "\nbo:$apr1$" + SALT[:8] + "$" + R[:22] + "\n", (R, R[:22]), ()),
    # Django's auth_user.password, in a COPY dump
    (
        "7\tpbkdf2_sha256$720000$" + SALT + "$" + R + "=\t2024-05-01 10:00:00\tana",
        (R,),
        ("2024-05-01",),
    ),
    # argon2 in a JSON user record (the key itself is metadata, the value is in a hash format)
    (
        {"id": "u-17", "password_hash": "$argon2id$v=19$m=65536,t=3,p=4$" + SALT + "$" + R},
        (R,),
        ("u-17",),
    ),
    # MySQL mysql.user: the native hash goes, the locked-account marker stays
    (
        "| app | *"
        + HEX64[:40].upper()
        + " |\n| mysql.sys | *THISISNOTAVALIDPASSWORDTHATCANBEUSEDHERE |",
        (HEX64[:40].upper(),),
        ("*THISISNOTAVALIDPASSWORDTHATCANBEUSEDHERE",),
    ),
    # pwdump: the NT hash goes; the empty password's LM and NT constants stay
    (
        "Administrator:500:aad3b435b51404eeaad3b435b51404ee:" + HEX64[:32] + ":::\n"
        "Guest:501:aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0:::",
        (HEX64[:32],),
        ("Guest:501:aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0:::",),
    ),
    ("userPassword: {SSHA}" + R, (R,), ("userPassword:",)),
]

PII: list[Case] = [
    ("call me on +44 20 7946 0958 after 5", ("+44 20 7946 0958",), ("after 5",)),
    ("office: (555) 010-0199", ("(555) 010-0199",), ()),
    ("Reach support at +1-202-555-0143 or +33 1 23 45 67 89.", ("202-555-0143", "23 45 67 89"), ()),
    ("mobile +49 (0)30 1234 5678", ("1234 5678",), ()),
    ("WhatsApp +91 98765 43210", ("98765 43210",), ()),
    ("ring 555.010.0199 x12", ("555.010.0199",), ()),
]

PROVIDERS: list[Case] = [
    ("deploy failed: dop_v1_" + HEX64 + " is revoked", ("dop_v1_" + HEX64,), ("deploy failed:",)),
    ("shpat_" + HEX64[:32] + "\tactive\t2026-01-04", ("shpat_" + HEX64[:32],), ("active",)),
    ("vault: hvs." + B62 + "Xy12 (ttl 768h)", ("hvs." + B62 + "Xy12",), ("(ttl 768h)",)),
    ("- lin_api_" + B62 + "Qw8Er5Ty", ("lin_api_" + B62 + "Qw8Er5Ty",), ()),
    ("`sbp_" + HEX64[:40] + "` leaked", ("sbp_" + HEX64[:40],), ("leaked",)),
    (
        "GRAFANA=glsa_" + B62 + "_" + HEX64[:8] + " ok",
        ("glsa_" + B62 + "_" + HEX64[:8],),
        ("ok",),
    ),
    ("bot 7712345601:AA" + B62 + "x answered", ("7712345601:AA" + B62 + "x",), ("bot",)),
    ("dapi" + HEX64[:32] + ",prod", ("dapi" + HEX64[:32],), (",prod",)),
    ("mailgun key-" + HEX64[32:] + " (eu)", ("key-" + HEX64[32:],), ("(eu)",)),
    ("doppler dp.pt." + B62 + "Ab12Cd34Ef5", ("dp.pt." + B62 + "Ab12Cd34Ef5",), ("doppler",)),
    ("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2, ("AGE-SECRET-KEY-1QPZRY",), ()),
    (
        "POST https://discord.com/api/webhooks/1203344556677889900/" + B62 + B62 + " 204",
        ("1203344556677889900/" + B62 + B62,),
        ("https://discord.com/api/webhooks/", " 204"),
    ),
    (
        "teams: https://contoso.webhook.office.com/webhookb2/"
        + "0f8fad5b-d9cb-469f-a165-70867728950e@7c9e6679-7425-40de-944b-e07fc1f90ae7/"
        + "IncomingWebhook/"
        + HEX64[:32]
        + "/6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        ("0f8fad5b-d9cb-469f-a165-70867728950e@7c9e6679",),
        ("https://contoso.webhook.office.com/webhookb2/",),
    ),
    (
        "ZAP_URL=https://hooks.zapier.com/hooks/catch/8812345/b7x9k2q/",
        ("8812345/b7x9k2q",),
        ("https://hooks.zapier.com/hooks/catch/",),
    ),
    (
        "https://maker.ifttt.com/trigger/door_open/with/key/" + B62[:22],
        (B62[:22],),
        ("https://maker.ifttt.com/trigger/door_open/with/key/",),
    ),
]

JSON_ESCAPED_URLS: list[Case] = [
    (
        '{"hook": "https:\\/\\/discord.com\\/api\\/webhooks\\/1203344556677889900\\/'
        + B62
        + B62
        + '"}',
        (B62 + B62,),
        ('{"hook": "https:\\/\\/discord.com\\/api\\/webhooks\\/',),
    ),
    (
        '{"dsn": "mysql:\\/\\/app:Js0n-Url-pw@db:3306\\/shop"}',
        ("Js0n-Url-pw",),
        ("@db:3306\\/shop",),
    ),
]

PROVIDERS_KEEP: list[str] = [
    "dop_v1_" + "0" * 64,
    "the key-value store is warm",
    "build sha256~ of the layer",
    "https://discord.com/api/webhooks",
    "version v1.0-beta shipped",
]

KEY_FILES: list[Case] = [
    (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 1\n"
        "AAAAB3NzaC1yc2EAAAADAQABAAABAQ\nPrivate-Lines: 2\n"
        + PEM_LINES[1]
        + "\n"
        + PEM_LINES[2]
        + "\nPrivate-MAC: 5f1e0c9a8b7d6e5f4a3b2c1d0e9f8a7b\n",
        (PEM_LINES[1], PEM_LINES[2]),
        ("Comment: deploy@ci", "Private-MAC: 5f1e0c9a8b7d6e5f4a3b2c1d0e9f8a7b", "Public-Lines: 1"),
    ),
    (
        '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key-20260101"\n'
        + "\n".join(PEM_LINES)
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\nnext line",
        tuple(PEM_LINES),
        ("next line",),
    ),
]

CODE: list[Case] = [
    (
        'r = requests.post(url, auth=("svc-export", "Ex9-Port!pw"), json=body)',
        ("Ex9-Port!pw",),
        ('auth=("svc-export", "', "json=body"),
    ),
    (
        "auth = HTTPBasicAuth('ops', 'B4sic-Auth-pw')",
        ("B4sic-Auth-pw",),
        ("HTTPBasicAuth('ops', '",),
    ),
    (
        'var cred = new NetworkCredential("svc", "N3t-Cred-pw!");',
        ("N3t-Cred-pw!",),
        ("new NetworkCredential",),
    ),
    ('req.SetBasicAuth("admin", "G0-basic-pw")', ("G0-basic-pw",), ("req.SetBasicAuth",)),
    ('server.login("alerts@acme.io", "Smtp-L0gin-pw")', ("Smtp-L0gin-pw",), ("server.login(",)),
    (
        'auth := smtp.PlainAuth("", "bot@acme.io", "Pl4in-Auth-pw", "smtp.acme.io")',
        ("Pl4in-Auth-pw",),
        ('"smtp.acme.io")',),
    ),
    ("  password: <%= 'Erb-L1teral-pw' %>\n  pool: 5", ("Erb-L1teral-pw",), ("pool: 5",)),
    ("stripe.api_key = 'rk_live_' + '" + B62 + "'", (B62,), ("stripe.api_key",)),
]

APP_CONFIG: list[Case] = [
    (  # wp-config.php: the database password and a key
        "define( 'DB_PASSWORD', 'Wp-Db-pw!71' );\ndefine( 'DB_HOST', 'localhost' );\n"
        "define('LOGGED_IN_KEY', '" + R2 + "-!x');",
        ("Wp-Db-pw!71", R2 + "-!x"),
        ("define( 'DB_HOST', 'localhost' );", "define('LOGGED_IN_KEY', '"),
    ),
    ('os.setenv("API_TOKEN", "' + R + '")', (R,), ('os.setenv("API_TOKEN", "',)),
    (
        'conn.setRequestProperty("Authorization", "Bearer ' + R2 + '");',
        (R2,),
        ('"Authorization", "Bearer ',),
    ),
    (
        "spring:\n  datasource:\n    username: app\n    password: Spr1ng-Pw-77\n",
        ("Spr1ng-Pw-77",),
        ("username: app",),
    ),
]

CODE_KEEP: list[str] = [
    "define('NONCE_SALT', 'put your unique phrase here');",
    'choices = [("token", "Token"), ("password", "Password")]',
    '["password", "token", "secret"]',
    'calls(call("get_deploy_token", "c1"), call("GET_SECRET", "c2"))',
    "requests.get(url, auth=(user, password))",
    'password: {{ env "DB_PASSWORD" }}',
    "api_key = var.api_key",
    "password = random_password.db.result",
    "if not token: raise ValueError('missing token')",
    'let token = std::env::var("API_TOKEN")?;',
    "SMTP_PASSWORD: ${SMTP_PASSWORD:?set SMTP_PASSWORD}",
    "db_password: !vault |",
    "password: !secret db_password",
    "Authorization: Bearer [FILTERED]",
    "password: [MASKED]",
    "cache key v3.Qk8f-Zt2.mWx9Lp4r",
    "partition_key=tenant-7f3a9c2b1e",
    'words = r"secret|token|passw(?:or)?d|passphrase|pwd"',
    'requests.get(url, auth=("user", "…"))',
    "Cookie: lang=en-GB; consent=1 (set by the banner)",
    "kind: SealedSecret\nspec:\n  encryptedData:\n    api_token: Ag" + _b64(R * 4).rstrip("="),
]

COOKIES: list[Case] = [
    (
        "Cookie: lang=en; sessionid=" + R + "; theme=dark",
        (R,),
        ("lang=en", "theme=dark", "sessionid="),
    ),
    (
        "Set-Cookie: __Secure-sid=" + R2 + "; Path=/; Secure; HttpOnly; SameSite=Strict",
        (R2,),
        ("Path=/; Secure; HttpOnly; SameSite=Strict",),
    ),
    (
        {"http.request.header.cookie": ["csrftoken=" + R + "; locale=fr-FR"], "method": "GET"},
        (R,),
        ("locale=fr-FR",),
    ),
    # curl's cookie flag: the pairs' values go, a cookie jar's file name and counts stay
    (
        "curl -c jar.txt -b jar.txt https://a.io && curl -b 'sid="
        + R
        + "; max_age=3600' https://a.io/me",
        (R,),
        ("-b jar.txt", "max_age=3600"),
    ),
    # analytics client ids are counted visits, not logins
    (
        "Cookie: _ga=GA1.1.1234567890.1700000000; _fbp=fb.1.1700000000.99; session=" + R2,
        (R2,),
        ("_ga=GA1.1.1234567890.1700000000", "_fbp=fb.1.1700000000.99"),
    ),
]

# One-time and bot credentials, printed secrets, SQL Server procedures
TG = "12345678" + "9:AA" + R[:20] + R2[:13]
DISCORD = "MTE0NTk4MjQxNjQ4NTQyNzIwMA" + ".GhK2xQ." + R + "AbCdEfGhIj"
ONE_TIME: list[Case] = [
    ("POST https://api.telegram.org/bot" + TG + "/sendMessage", (TG,), ("/sendMessage",)),
    (
        "bot = commands.Bot(command_prefix='!')\nbot.run('" + DISCORD + "')",
        (DISCORD,),
        ("bot.run(",),
    ),
    (
        'gateway = BraintreeGateway("access_'
        + "token$production$"
        + "k2v9q8x7w6m5n4b3$"
        + HEX64[:32]
        + '")',
        (HEX64[:32], "k2v9q8x7w6m5n4b3"),
        ("BraintreeGateway(",),
    ),
    (
        "POST /oauth/token\ngrant_type=authorization_code&code="
        + R
        + "&redirect_uri=https%3A%2F%2Fa.io%2Fcb"
        "&code_verifier=" + R2 + R + "\n# code_challenge=" + B62 + "Q9x&code_challenge_method=S256",
        (R, R2 + R),
        ("code_challenge=" + B62 + "Q9x", "code_challenge_method=S256"),
    ),
    ("GET /cb?code=" + R2 + "&state=af0ifjsldkj HTTP/1.1", (R2,), ("state=af0ifjsldkj",)),
    ('"GET /export?auth=' + B62 + '&format=csv HTTP/1.1" 200', (B62,), ("format=csv",)),
    (
        "$ kubectl config view --raw -o jsonpath='{.users[0].user.token}'\n"
        "q7x2kd.9f3b2c8e1a7d4f60\n$ kubectl get pods",
        ("q7x2kd.9f3b2c8e1a7d4f60",),
        ("$ kubectl get pods",),
    ),
    ("$ kubeadm token create\nw8e2rt.k3j9x0c7m2q5v8z1\n", ("w8e2rt.k3j9x0c7m2q5v8z1",), ()),
    (
        "$ kubeadm token list -o jsonpath='{.token}'\nabcdef.qx7m2vz9k4lp8wrt\n",
        ("abcdef.qx7m2vz9k4lp8wrt",),
        (),
    ),
    (
        "EXEC sp_addlinkedsrvlogin 'LEDGER', 'false', NULL, 'rpt', 'Dune#Cedar4471';",
        ("Dune#Cedar4471",),
        ("'LEDGER', 'false', NULL, 'rpt'",),
    ),
    ("EXEC sp_addlogin 'etl', N'Qv8#Lm2xRk';", ("Qv8#Lm2xRk",), ("'etl'",)),
]
ONE_TIME_KEEP: list[str] = [
    # a JWT's timestamps are base64 of digits too, but not a Discord id's 17+
    "decoded claims segment: MTcwMDAwMDAwMCwxNzAwMDAzNjAw.abc",
    "/search?code=hello-world&lang=en",
    "?code=US&auth=true",
    "$ kubectl get secret db-creds -o name\nsecret/db-creds",
    "$ echo $TOKEN_COUNT\n4096",
    "# code_challenge=" + B62 + "Q9x&code_challenge_method=S256",
]


CREDENTIAL_DOCUMENTS: list[Case] = [
    (
        "GOOGLE_APPLICATION_CREDENTIALS_JSON='"
        + json.dumps(
            {
                "type": "service_account",
                "project_id": "ledger-prod-31",
                "private_key_id": HEX64[:40],
                "private_key": PEM_ESCAPED.replace("\\n", "\n"),
                "client_email": "etl@ledger-prod-31.iam.gserviceaccount.com",
                "token_uri": "https://oauth2.googleapis.com/token",
            }
        )
        + "'",
        (HEX64[:40], *PEM_LINES),
        ('"project_id": "ledger-prod-31"', '"token_uri": "https://oauth2.googleapis.com/token"'),
    ),
    (
        {
            "gcp": {
                "credentials": {
                    "type": "authorized_user",
                    "client_id": "7712-web.apps.googleusercontent.com",
                    "client_secret": "GOCSPX-" + B62[:28],
                    "refresh_token": "1//0" + B62 + B62[:12],
                }
            }
        },
        ("GOCSPX-" + B62[:28], "1//0" + B62 + B62[:12]),
        ("7712-web.apps.googleusercontent.com", "authorized_user"),
    ),
    (
        {"secret": json.dumps({"type": "service_account", "private_key_id": HEX64[24:64]})},
        (HEX64[24:64],),
        ("service_account",),
    ),
    (  # non-ASCII text around it, and a second key after the document
        'Übergabe: SA_JSON=\'{"type": "service_account", "project_id": "zähler-9", '
        '"private_key_id": "' + HEX64[:40] + "\"}' token=" + R2,
        (HEX64[:40], R2),
        ('"project_id": "zähler-9"', "Übergabe:"),
    ),
]

VERSIONED_KEYS: list[Case] = [
    ("SMTP_PASSWORD_V2=Zk8-Pw-v2x\nSMTP_HOST=mail", ("Zk8-Pw-v2x",), ("SMTP_HOST=mail",)),
    ('{"db_password_2": "Db2-Pw!x9", "db_port_2": 5433}', ("Db2-Pw!x9",), ('"db_port_2": 5433',)),
    ({"api_key2": R, "oauth2": "enabled"}, (R,), ("enabled",)),
    ("SET PASSWORD FOR 'ops'@'%' = '%9Zq-Lm2!Pw';", ("%9Zq-Lm2!Pw",), ("SET PASSWORD FOR",)),
]

# National numbers without a `+` or a label, known only by their column or key.
PII_COLUMNS: list[Case] = [
    (
        "name,email,phone\nJane Doe,jane.doe@example.com,020 7946 0958\n"
        "Raj Patel,raj.p@example.org,07700 900123\n",
        ("jane.doe@example.com", "020 7946 0958", "raj.p@example.org", "07700 900123"),
        ("name,email,phone",),
    ),
    (
        "customer_id;full_name;email;mobile\n10042;Ana Silva;ana@example.pt;912 345 678\n",
        ("ana@example.pt", "912 345 678"),
        ("customer_id;full_name;email;mobile", "10042"),
    ),
    (
        "id\tcity\twork_phone\n88\tLeeds\t0113 496 0000\n89\tYork\t(01904) 555777\n",
        ("0113 496 0000", "(01904) 555777"),
        ("88\tLeeds", "89\tYork"),
    ),
    (
        "INSERT INTO leads (ref, cell_phone, source) VALUES ('L-1', '06 12 34 56 78', 'web'),"
        " ('L-2', '0612-345-679', 'fair');",
        ("06 12 34 56 78", "0612-345-679"),
        ("'L-1'", "'web'", "'fair'"),
    ),
    ({"customer": {"name": "Jane", "phone": "020 7946 0958"}}, ("020 7946 0958",), ()),
    # an undashed SSN is nine digits like any number; in a column named ssn it is one
    (
        "emp_id,name,ssn\nE1001,Ana Silva,219-09-9999\nE1002,Raj Patel,219099998\n",
        ("219-09-9999", "219099998"),
        ("E1001", "E1002", "emp_id,name,ssn"),
    ),
    # national formats and a signature's label
    (
        "2025-01-02 INFO sms.sent to=06 12 34 56 78 template=otp",
        ("06 12 34 56 78",),
        ("template=otp",),
    ),
    ("--\nAna Silva | Sales\nT 07700 900123 · 1 High St\n", ("07700 900123",), ("1 High St",)),
    (
        "id;social_security_number;dept\n7;536 22 8100;ops\n",
        ("536 22 8100",),
        ("dept",),
    ),
]

SECRET_COLUMNS: list[Case] = [
    # a Markdown table pasted into chat: the Password column goes, the others stay
    (
        "| Service | User | Password |\n|---|---|---|\n| grafana | admin | Tq8#vL2m_Xw9 |\n"
        "| argo | deploy | cedar-harbor-violet-71 |\n",
        ("Tq8#vL2m_Xw9", "cedar-harbor-violet-71"),
        ("| grafana | admin |", "| argo | deploy |", "|---|---|---|"),
    ),
    # a CSV export with a token column
    (
        "name,url,api_token\nbilling,https://billing.internal," + R + "\n",
        (R,),
        ("https://billing.internal", "name,url,api_token"),
    ),
    # SQL INSERT naming credential columns
    (
        "INSERT INTO integrations (name, api_key, client_secret, created_at) VALUES\n"
        "  ('crm-sync', '" + R + "', '" + R2 + "', '2025-01-09');",
        (R, R2),
        ("'crm-sync'", "'2025-01-09'"),
    ),
]


# --------------------------------------------------------------------------------------------
# Look-alikes that must stay (no secrets at all)
# --------------------------------------------------------------------------------------------

REFERENCES: list[str] = [
    "password: ${DB_PASSWORD}",
    "DB_PASSWORD=${DB_PASSWORD:-}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "env:\n  GH_TOKEN: ${{ secrets.GH_PAT }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
    "api_key: {{ vault_api_key }}",
    "password: \"{{ lookup('env', 'DB_PASS') }}\"",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "api_key = os.environ.get('OPENAI_API_KEY')",
    'password = os.getenv("DB_PASSWORD")',
    "token = getpass.getpass('GitHub token: ')",
    "secret = load_secret('prod/payments/stripe')",
    "db_password = settings.DATABASE_PASSWORD",
    "const apiKey = process.env.STRIPE_SECRET_KEY;",
    "client_secret = config['oauth']['client_secret']",
    "token = request.headers.get('Authorization')",
    "password: str = Field(..., min_length=12)",
    "api_key: Optional[str] = None",
    "token: SecretStr",
    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.io',
    "Authorization: Bearer ${TOKEN}",
    'headers = {"Authorization": f"Bearer {token}"}',
    "OPENAI_API_KEY=<YOUR_API_KEY>",
    "api_key: YOUR_API_KEY_HERE",
    "password: xxxxxxxx",
    "token: <token>",
    "password = %(db_password)s",
    "password: '********'",
    "export AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY",
    'password = keyring.get_password("acme", "deploy")',
    "token = vault.read('secret/data/ci')['data']['token']",
    # secret managers' names and commands
    "password: vault kv get -field=password secret/prod/db",
    'gcp_secret = "projects/acme-prod/secrets/api-key/versions/latest"',
    'kv_uri = "https://acme-kv.vault.azure.net/secrets/db-password/' + HEX64[:32] + '"',
    "DB_PASSWORD: op://Production/db/password",
    "command: ['sh', '-c', 'export TOKEN=$$(cat /run/secrets/token) && exec ./api']",
    # publishable by design
    "mapboxgl.accessToken = 'pk.eyJ" + "1IjoiYWNtZSIsImEiOiJjbHgifQ." + B62 + "';",
    "VITE_POSTHOG_KEY=phc_" + R + R2[:15],
    '<div class="g-recaptcha" data-sitekey="6L' + R + "AbCdEfGhIj" + '"></div>',
    "RECAPTCHA_SITE_KEY=6L" + R2 + "AbCdEfGhIj",
    # a label, a flag, an elided example, a call naming a stored credential, a Fetch mode
    "token: Authorization: Bearer <token>",
    "secret: valueFrom.secretKeyRef.name: db-credentials",
    "password: --password-stdin",
    "OPENAI_API_KEY=sk-...",
    "REGISTRY_CREDS = credentials('registry-" + "5d3bb42b-3f31-4e8f-bff9-4f0fbc533ad1')",
    "fetch(url, { credentials: 'include' })",
]

NEIGHBOURS: list[Any] = [
    "[profile prod-admin]\nregion = us-east-1\nrole_arn = arn:aws:iam::123456789012:role/Admin\n"
    "mfa_serial = arn:aws:iam::123456789012:mfa/alice\nduration_seconds = 3600\noutput = json",
    "x_security_token_expires: 2026-03-01T12:00:00Z",
    {
        "Credentials": {"Expiration": "2026-03-01T12:00:00Z"},
        "ResponseMetadata": {"RequestId": "c6104cbe-af31-11e0-8154-cbc7ccf896c7"},
    },
    '{"password_min_length": 12, "password_max_age_days": 90, "password_history": 5}',
    '{"password_reset_url": "https://app.acme.io/account/password/reset", "auth_method": "oauth2"}',
    "Forgot it? Go to https://app.acme.io/forgot-password?email_hint=1 to reset your password.",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    '{"SecretId": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/api-key-Xy12Zw"}',
    "aws secretsmanager get-secret-value --secret-id prod/db/password --region eu-west-1",
    "projects/acme-prod/secrets/db-password/versions/latest",
    "vault kv get -field=password secret/prod/db",
    '{"auth_method": "oauth2", "token_type": "Bearer", "expires_in": 3600, "scope": "read"}',
    '{"token_count": 1532, "password_attempts": 3, "last_password_change": "2024-05-01"}',
    {"token_usage": {"prompt_tokens": 812, "completion_tokens": 94}, "secret_name": "prod/db"},
    "password_last_changed=2024-05-01T10:00:00Z token_ttl=3600 secret_version=7",
]

DOTENV_KEEP: list[str] = [
    "STRIPE_PUBLISHABLE_KEY=pk" + "_live_51" + R,
    "NEXT_PUBLIC_STRIPE_KEY=pk" + "_test_51" + R2,
    "VITE_STRIPE_PK=pk" + "_live_" + R2 + R,
    "stripe_key: pk" + "_test_" + R + R2,
    "LLM_MAX_TOKENS=4096",
    "MAX_TOKENS=4096",
    "DB_HOST=db.internal",
    "DB_PORT=5432",
    "PASSWORD_MIN_LENGTH=12",
    "AUTH_TOKEN_TTL=3600",
    "TOKEN_URL=https://oauth2.googleapis.com/token",
    "SESSION_COOKIE_NAME=sid",
    "API_KEY_HEADER=X-Api-Key",
    "SECRET_ROTATION_DAYS=90",
    "JWT_ALGORITHM=RS256",
    "KEY_VAULT_NAME=acme-prod-kv",
    "TOKEN_AUDIENCE=api://acme-backend",
    "PASSWORD_HASHER=argon2",
]

TOKEN_SHAPED_KEEP: list[str] = [
    "cursor eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 header only",
    "header: eyJhbGciOiJSUzI1NiIsImtpZCI6ImFiYyJ9.",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
    "request_id: 550e8400-e29b-41d4-a716-446655440000",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "build id: 20240611.3-ci-7f3a9c2b",
    'etag: W/"5e15153d-120f"',
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/"
    "SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "nextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA",
    "pagination_token=AQICAHhX3r4M2L1sQ9vQnN5xk",
    "idempotency_key=ord_20240611_000123",
    "x-request-id: req_8f3a9c2e1b7d4f6a",
    "digest: md5=1B2M2Y8AsgTpgAmY7PhCfg==",
]


def _cases(group: list[Case], name: str) -> list[Any]:
    return [pytest.param(*case, id=f"{name}-{i}") for i, case in enumerate(group)]


SECRET_CASES = [
    *_cases(SQL, "sql"),
    *_cases(SPLIT, "split"),
    *_cases(WRAPPED, "wrapped"),
    *_cases(CREDENTIAL_FILES, "credfile"),
    *_cases(STS, "sts"),
    *_cases(SERVICE_ACCOUNT, "gcp_sa"),
    *_cases(ORCHESTRATION, "orchestration"),
    *_cases(CLI, "cli"),
    *_cases(CHAT, "chat"),
    *_cases(DEFAULTS, "default"),
    *_cases(SPAN_ATTRIBUTES, "span"),
    *_cases(ENCODED, "encoded"),
    *_cases(UNICODE, "unicode"),
    *_cases(LOCALIZED, "localized"),
    *_cases(PASSWORD_HASHES, "password_hashes"),
    *_cases(PII, "pii"),
    *_cases(PII_COLUMNS, "pii_columns"),
    *_cases(SECRET_COLUMNS, "secret_columns"),
    *_cases(ONE_TIME, "one_time"),
    *_cases(PROVIDERS, "providers"),
    *_cases(KEY_FILES, "key_files"),
    *_cases(CODE, "code"),
    *_cases(COOKIES, "cookies"),
    *_cases(CREDENTIAL_DOCUMENTS, "credential_documents"),
    *_cases(VERSIONED_KEYS, "versioned_keys"),
    *_cases(APP_CONFIG, "app_config"),
    *_cases(JSON_ESCAPED_URLS, "json_escaped_urls"),
]
KEEP_CASES = [
    *_cases(SQL_KEEP, "sql_keep"),
    *_cases(SPLIT_KEEP, "split_keep"),
    *_cases(CHAT_KEEP, "chat_keep"),
    *[pytest.param(t, (), (t,), id=f"reference-{i}") for i, t in enumerate(REFERENCES)],
    *[
        pytest.param(v, (), (v,) if isinstance(v, str) else (), id=f"neighbour-{i}")
        for i, v in enumerate(NEIGHBOURS)
    ],
    *[pytest.param(t, (), (t,), id=f"dotenv-{i}") for i, t in enumerate(DOTENV_KEEP)],
    *[pytest.param(t, (), (t,), id=f"token_shaped-{i}") for i, t in enumerate(TOKEN_SHAPED_KEEP)],
    *[pytest.param(t, (), (t,), id=f"providers_keep-{i}") for i, t in enumerate(PROVIDERS_KEEP)],
    *[pytest.param(t, (), (t,), id=f"code_keep-{i}") for i, t in enumerate(CODE_KEEP)],
    *[pytest.param(t, (), (t,), id=f"one_time_keep-{i}") for i, t in enumerate(ONE_TIME_KEEP)],
    pytest.param("passwort_länge: 12\nsenha_minima: 8\n", (), (), id="localized_keep-0"),
    pytest.param("get_deploy_token: service=billing", (), (), id="labelled_keep-0"),
    pytest.param("it costs $5$ a seat; PRICE=$1$2$3", (), (), id="password_hashes_keep-0"),
    pytest.param(
        "sha256: " + HEX64 + "\ncommit " + HEX64[:40], (), (), id="password_hashes_keep-1"
    ),
    pytest.param(
        "| key | type | description |\n|---|---|---|\n| password | string | required |\n"
        "| token | ${API_TOKEN} | <your-token> |\n",
        (),
        (),
        id="secret_columns_keep-0",
    ),
    pytest.param(
        "name,password_min_length,token_count\nweb,12,4096\n", (), (), id="secret_columns_keep-1"
    ),
    pytest.param(
        "Registered in England No. 07751370\nv06.12.34 released 2025.06.12",
        (),
        (),
        id="phones_keep-0",
    ),
    pytest.param(
        "def check_password(password: str, hashed: bytes) -> bool:\n"
        "    return bcrypt.checkpw(password.encode(), hashed)\n",
        (),
        (),
        id="secret_columns_keep-2",
    ),
    pytest.param(
        "| user | password | last_login |\n|---|---|---|\n| ana | ******** | 2025-01-02 |\n",
        (),
        (),
        id="secret_columns_keep-3",
    ),
    pytest.param(
        "name,order,total\nJane,ORD-5512,020 7946 0958\n",
        (),
        ("ORD-5512", "020 7946 0958"),
        id="pii_columns_keep-0",
    ),
    pytest.param(
        {"phone_verified": "true", "support_phone_hours": "09:00-17:00"},
        (),
        (),
        id="pii_columns_keep-1",
    ),
]


@functools.cache
def _redactor() -> Redactor:
    return Redactor()


def _redact(payload: Any) -> tuple[Any, dict[str, int]]:
    if isinstance(payload, str):
        return _redactor().redact_text_report(payload)
    return _redactor().redact_value_report(payload)


def _mask(secret: str) -> str:
    return f"{secret[:3]!r}…({len(secret)} chars)"


@pytest.mark.parametrize(("payload", "secrets", "keep"), SECRET_CASES)
def test_secrets_of_the_family_are_gone(
    payload: Any, secrets: tuple[str, ...], keep: tuple[str, ...]
) -> None:
    """Every secret is gone, every look-alike beside it stays, and the report is counts only."""
    out, report = _redact(payload)

    assert [] == [_mask(s) for s in secrets if not caught(s, out)]
    assert [] == [k for k in keep if not kept(k, out)]
    assert True is all(isinstance(n, int) and n > 0 and rule in RULES for rule, n in report.items())


@pytest.mark.parametrize(("payload", "secrets", "keep"), KEEP_CASES)
def test_lookalikes_of_the_family_stay(
    payload: Any, secrets: tuple[str, ...], keep: tuple[str, ...]
) -> None:
    """A look-alike is returned unchanged (text) or with every string kept (values)."""
    out, report = _redact(payload)

    assert (payload, {}) == (out, report)


@pytest.mark.parametrize(
    ("payload", "secrets", "keep"),
    [pytest.param(*case.values, id=case.id) for case in SECRET_CASES + KEEP_CASES],
)
def test_redacting_the_output_again_changes_nothing(
    payload: Any, secrets: tuple[str, ...], keep: tuple[str, ...]
) -> None:
    """Idempotent on every family: a redacted output redacts to itself."""
    out, _ = _redact(payload)

    assert out == _redact(out)[0]
