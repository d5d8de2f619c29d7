"""Tests for the secret rules (`_rules.py`): provider token formats and context rules.

Test secrets are assembled from pieces so that secret scanners do not flag this file.
"""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import Redactor

R = "Zq8Wx7Vc6Bn5Ml4KpL0o9I8uYt6R"  # a random-looking body
PEM_BODY = "MIIEowIBAAKCAQEAx9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7\nAb6Cd5Ef4Gh3Ij2Kl1Mn0Op9Qr8St7"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

# rule id, a token of that format (replaced whole)
TOKENS = [
    ("jwt", JWT),
    ("anthropic_key", "sk-" + "ant-api03-" + R + R + "-AbCd"),
    ("openai_key", "sk-" + "proj-" + R + "T3BlbkFJ" + R),
    ("openai_key", "sk-" + R[:20] + "T3BlbkFJ" + R[:20]),
    ("stripe_key", "sk" + "_live_51" + R),
    ("stripe_key", "rk" + "_test_51" + R),
    ("stripe_key", "whsec" + "_" + R),
    ("github_token", "gh" + "p_" + R + "AbCdEfGh"),
    ("github_token", "gh" + "s_" + R + "AbCdEfGh"),
    ("github_token", "github" + "_pat_11ABCDEFG0" + R + "_" + R + R),
    ("gitlab_token", "gl" + "pat-" + R[:20]),
    ("slack_token", "xo" + "xb-123456789012-1234567890123-" + R[:24]),
    ("slack_token", "xa" + "pp-1-A0123ABCDEF-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("aws_access_key_id", "AK" + "IAZ7Q3RXPL4MWN2VBT"),
    ("aws_access_key_id", "AS" + "IAZ7Q3RXPL4MWN2VBT"),
    ("google_api_key", "AI" + "za" + R + "AbCdEfG"),
    ("google_oauth", "GOC" + "SPX-" + R),
    ("google_oauth", "ya" + "29." + R + R),
    ("azure_client_secret", "abc8" + "Q~" + R + "a_b-c."),
    ("twilio_key", "SK" + "0123456789abcdef0123456789abcdef"),
    ("twilio_key", "AC" + "0123456789abcdef0123456789abcdef"),
    ("sendgrid_key", "SG" + "." + R[:22] + "." + R + R[:15]),
    ("npm_token", "np" + "m_" + R + "AbCdEfGh"),
    ("pypi_token", "py" + "pi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5"),
    ("huggingface_token", "hf" + "_ZqWxVcBnMlKpLoIuYtReWqAsDfGhJkLzXc"),
]

# rule id, text holding a secret, the expected output
IN_CONTEXT = [
    (
        "aws_secret_access_key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED:aws_secret_access_key]",
    ),
    (
        "aws_secret_access_key",
        "AKIA... , wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIA... , [REDACTED:aws_secret_access_key]",
    ),
    (
        "slack_webhook",
        "POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + R,
        "POST https://hooks.slack.com/services/[REDACTED:slack_webhook]",
    ),
    (
        "azure_connection_string",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
        + R
        + "+/x==;EndpointSuffix=x",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure_connection_string]"
        ";EndpointSuffix=x",
    ),
    (
        "azure_connection_string",
        "Endpoint=sb://x/;SharedAccessKeyName=Root;SharedAccessKey=" + R,
        "Endpoint=sb://x/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:azure_connection_string]",
    ),
    (
        "twilio_key",
        'Client("AC' + "0a" * 16 + '", "' + "9f" * 16 + '")',
        'Client("[REDACTED:twilio_key]", "[REDACTED:twilio_key]")',
    ),
    (
        "datadog_key",
        "DD_API_KEY=0123456789abcdef0123456789abcdef",
        "DD_API_KEY=[REDACTED:datadog_key]",
    ),
]

GLUES = ["get_", "fetch-", "x.", "path/", "tool_"]
"""Prefixes an invented tool name, a host or a path glues to a token."""

# rule id whose format a look-alike imitates, the look-alike (kept verbatim)
LOOK_ALIKES = [
    ("openai_key", "scikit-learn (sk-learn-compatible-estimators-list) and task-" + R),
    ("stripe_key", "sk_test_helper and risk_live_dashboard_2024_report"),
    ("github_token", "the ghp_ prefix, ghp_short, and xghp_" + R + "AbCdEfGh"),
    ("slack_token", "xoxb-token-here"),
    ("aws_access_key_id", "AKIAFOO and XAKIAZ7Q3RXPL4MWN2VBT"),
    ("aws_secret_access_key", "commit 3f786850e387550fdab836ed7e6dc881de23001b"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9 alone, and eyJ.a.b"),
    ("huggingface_token", "HF_HUB_ENABLE_HF_TRANSFER=1"),
    ("npm_token", "npm_config_registry=https://registry.npmjs.org/"),
    ("google_api_key", "AIzaShort"),
]


class TestTokenFormats:
    @pytest.mark.parametrize(("rule_id", "token"), TOKENS)
    def test_token_is_replaced_whole(self, rule_id: str, token: str) -> None:
        """A provider token is replaced whole by its rule's marker, in any carrier."""
        text = f"ENV: {token}\nnext line"

        assert (f"ENV: [REDACTED:{rule_id}]\nnext line", {rule_id: 1}) == (
            Redactor().redact_text_report(text)
        )

    @pytest.mark.parametrize(("rule_id", "token"), TOKENS)
    def test_token_under_a_key_keeps_its_rule_id(self, rule_id: str, token: str) -> None:
        """A token after `token=` is named by its format, not by `key_value`."""
        assert f"token=[REDACTED:{rule_id}]" == Redactor().redact_text(f"token={token}")

    @pytest.mark.parametrize(("rule_id", "text", "expected"), IN_CONTEXT)
    def test_context_formats(self, rule_id: str, text: str, expected: str) -> None:
        """Formats recognised by their surroundings replace only the secret part."""
        redacted, report = Redactor().redact_text_report(text)

        assert (expected, {rule_id}) == (redacted, set(report))

    @pytest.mark.parametrize(("rule_id", "text"), LOOK_ALIKES)
    def test_look_alikes_are_kept(self, rule_id: str, text: str) -> None:
        """Prefixes inside words, short stubs and longer runs are not tokens."""
        assert text == Redactor().redact_text(text)

    @pytest.mark.parametrize("glue", GLUES)
    @pytest.mark.parametrize(("rule_id", "token"), TOKENS)
    def test_token_glued_after_a_separator_is_replaced(
        self, rule_id: str, token: str, glue: str
    ) -> None:
        """A token glued after `_`, `-`, `.` or `/` (`get_ghp_…`, `x.xoxb-…`) is still replaced."""
        assert f"call {glue}[REDACTED:{rule_id}] ok" == Redactor().redact_text(
            f"call {glue}{token} ok"
        )

    @pytest.mark.parametrize("word", ["task", "ask", "disk"])
    def test_refused_prefix_inside_a_word_does_not_hide_the_token_after_it(self, word: str) -> None:
        """`task-sk-proj-…`: the `sk` inside `task` is no token and the key after it is one."""
        token = "sk-" + "proj-" + R + "T3BlbkFJ" + R

        assert f"{word}-[REDACTED:openai_key]" == Redactor().redact_text(f"{word}-{token}")

    @pytest.mark.parametrize(("rule_id", "token"), TOKENS)
    def test_token_glued_to_a_letter_or_digit_is_kept(self, rule_id: str, token: str) -> None:
        """A prefix glued to a letter or digit (`xghp_…`, `9AKIA…`) is inside another string."""
        text = f"ids x{token} 9{token}"

        assert text == Redactor().redact_text(text)


class TestPrivateKeyBlock:
    @pytest.mark.parametrize("label", ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    def test_whole_block_is_replaced(self, label: str) -> None:
        """A PEM or OpenSSH private key block goes whole, BEGIN to END, multi-line body included."""
        block = f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"

        assert "key:\n[REDACTED:private_key_block]\ndone" == Redactor().redact_text(
            f"key:\n{block}\ndone"
        )

    def test_json_escaped_block(self) -> None:
        """A block inside a JSON string, with `\\n` escapes, goes whole."""
        body = PEM_BODY.replace("\n", "\\n")
        text = (
            '{"private_key": "-----BEGIN PRIVATE KEY-----\\n'
            + body
            + '\\n-----END PRIVATE KEY-----\\n"}'
        )

        redacted = Redactor().redact_text(text)

        assert (False, True) == (
            "MIIEow" in redacted,
            redacted.startswith('{"private_key": "[REDACTED'),
        )

    def test_encrypted_block_with_headers(self) -> None:
        """Proc-Type and DEK-Info header lines are part of the block."""
        text = (
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
            "DEK-Info: AES-256-CBC,AB12\n\n"
            f"{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
        )

        assert "[REDACTED:private_key_block]" == Redactor().redact_text(text)

    def test_unclosed_block_stops_at_prose(self) -> None:
        """A truncated key is redacted through its base64 lines; the prose after survives."""
        text = f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n... output truncated"

        assert "[REDACTED:private_key_block]... output truncated" == Redactor().redact_text(text)

    @pytest.mark.parametrize("newline", ["\n", "\\n", "\r\n"])
    @pytest.mark.parametrize("between", ["{nl}", "{nl}{nl}", "", " "])
    def test_unclosed_block_then_a_token_leaves_neither(self, newline: str, between: str) -> None:
        """An unclosed block runs into a token: no key line and no piece of the token is left."""
        token = "gh" + "p_" + R + "AbCdEfGh"
        body = PEM_BODY.replace("\n", newline)
        gap = between.format(nl=newline)
        text = f"-----BEGIN RSA PRIVATE KEY-----{newline}{body}{gap}{token}{newline}more text"

        redacted = Redactor().redact_text(text)

        marker = "[REDACTED:github_token]" if gap else ""  # glued: one run, the block's
        assert (True, True, False, False, False) == (
            redacted.startswith("[REDACTED:private_key_block]"),
            redacted.endswith(f"{marker}{newline}more text"),
            "MIIE" in redacted or "St7" in redacted,
            R[:8] in redacted or "AbCdEfGh" in redacted,
            "_" + R[:4] in redacted,
        )

    def test_unclosed_block_on_one_line_goes_whole(self) -> None:
        """A key whose line breaks became spaces is redacted through its last padded chunk."""
        text = f"-----BEGIN PRIVATE KEY----- {PEM_BODY.replace(chr(10), ' ')} AQAB== is the key"

        assert "[REDACTED:private_key_block] is the key" == Redactor().redact_text(text)

    def test_public_keys_and_certificates_are_kept(self) -> None:
        """PUBLIC KEY and CERTIFICATE blocks are public and survive."""
        text = (
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----\n"
            "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----"
        )

        assert text == Redactor().redact_text(text)


class TestLineContinuation:
    @pytest.mark.parametrize(
        "template",
        [
            "{a}\\\n{b}",
            "echo {a}\\\n{b} | gh auth login --with-token",
            "curl -H 'Authorization: token {a}\\\n{b}' https://api.github.com",
            "export GH={a}\\\n    {b} && make",
            "{a}\\\r\n{b}",
            '{{"command": "echo {a}\\\\\\n{b}"}}',
        ],
    )
    @pytest.mark.parametrize("cut", [8, 12, 20, 30])
    def test_a_token_split_by_a_continuation_goes_whole(self, template: str, cut: int) -> None:
        """`ghp_abc\\<newline>def…` is one token: both halves and the break are replaced."""
        token = "gh" + "p_" + R + "AbCdEfGh"
        text = template.format(a=token[:cut], b=token[cut:])

        redacted = Redactor().redact_text(text)

        assert (1, False, False) == (
            redacted.count("[REDACTED:github_token]"),
            token[:cut] in redacted,
            token[cut:] in redacted,
        )

    def test_continuations_between_words_are_kept(self) -> None:
        """A multi-line shell command with no secret is left exactly as it was."""
        text = "curl -X POST \\\n   -H 'Accept: json' \\\n  --data @body.json https://x.io"

        assert text == Redactor().redact_text(text)


class TestAuthorizationSchemes:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("Authorization: Bearer " + R, "Authorization: Bearer [REDACTED:bearer]"),
            ("authorization: bearer " + R, "authorization: bearer [REDACTED:bearer]"),
            (
                "grpc authorization=Bearer " + R + " x",
                "grpc authorization=Bearer [REDACTED:bearer] x",
            ),
            (
                "Proxy-Authorization: Basic dXNlcjpwYXNz",
                "Proxy-Authorization: Basic [REDACTED:basic_auth]",
            ),
        ],
    )
    def test_scheme_word_is_kept_and_credential_replaced(self, text: str, expected: str) -> None:
        """`Bearer`/`Basic` stay; the credential after them is replaced."""
        assert expected == Redactor().redact_text(text)

    def test_jwt_bearer_is_named_jwt(self) -> None:
        """A JWT after `Bearer` is reported as `jwt`, the more specific rule."""
        assert ("Authorization: Bearer [REDACTED:jwt]", {"jwt": 1}) == (
            Redactor().redact_text_report(f"Authorization: Bearer {JWT}")
        )

    @pytest.mark.parametrize(
        "text",
        [
            "Bearer token authentication. Basic usage: see docs",
            "Basic authentication is disabled on this endpoint.",
            "scheme: bearer\nbearerFormat: JWT",
        ],
    )
    def test_prose_about_schemes_is_kept(self, text: str) -> None:
        """Words after `Bearer`/`Basic` in prose or config are not credentials."""
        assert text == Redactor().redact_text(text)


class TestUrlCredentials:
    @pytest.mark.parametrize(
        ("url", "expected"),
        [
            (
                "postgres://app:" + R + "@db:5432/x",
                "postgres://[REDACTED:url_credentials]@db:5432/x",
            ),
            (
                "mongodb+srv://app:" + R + "@c0.mongodb.net/a",
                "mongodb+srv://[REDACTED:url_credentials]@c0.mongodb.net/a",
            ),
            ("redis://:" + R + "@cache:6379/0", "redis://[REDACTED:url_credentials]@cache:6379/0"),
            ("amqps://u:p%40ss" + R + "@mq:5671/", "amqps://[REDACTED:url_credentials]@mq:5671/"),
            (
                "https://x-access-token:p@" + R + "@github.com/a.git",
                "https://[REDACTED:url_credentials]@github.com/a.git",
            ),
        ],
    )
    def test_user_info_is_replaced(self, url: str, expected: str) -> None:
        """`user:password@` in any scheme is replaced; scheme, host and path stay."""
        assert expected == Redactor().redact_text(url)

    @pytest.mark.parametrize(
        "text",
        ["https://example.com:8443/path?q=1", "ssh://git@host/repo", "http://localhost:8080@x/"],
    )
    def test_urls_without_a_password_are_kept(self, text: str) -> None:
        """Ports, user names alone and `host:port@` are not credentials."""
        assert text == Redactor().redact_text(text)


class TestGenericSecret:
    @pytest.mark.parametrize(
        "text",
        [
            "the api key is 4f8a9b2c7d1e6f3a5b0c8d7e2f1a9b4c",
            "generated new passphrase " + R + " for tenant",
            "APP_KEY base64:" + R + "=",
            'hmac_secret = "' + R + '"  # signing key ' + R[::-1],
        ],
    )
    def test_random_token_after_a_credential_word(self, text: str) -> None:
        """A long random token right after a credential word is replaced."""
        redacted = Redactor().redact_text(text)

        assert (False, True) == (
            R in redacted or "4f8a9b2c7d1e" in redacted,
            "[REDACTED:" in redacted,
        )

    @pytest.mark.parametrize(
        "text",
        [
            "cache key 4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f",
            "public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGm4b6hW2sYx8kVqJt3LpQz0rN1cE5dF7gH9",
            "token counts: prompt_tokens=9099 completion_tokens=2942",
            "Bad credentials (https://api.github.com/repos/acme/api/commits/3f786850e387550fdab836)",
            "signing key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
            "token zc-receipt-1700000000-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEf",
        ],
    )
    def test_ids_digests_and_urls_after_credential_words_are_kept(self, text: str) -> None:
        """UUIDs, public keys, counts, URLs, fingerprints and receipts are not secrets."""
        assert text == Redactor().redact_text(text)
