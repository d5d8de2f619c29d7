"""Tests for sensitive keys (`_keys.py`): the key predicate and the `key_value` text rules."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction._keys import DEFAULT_SENSITIVE_KEYS, SensitiveKeys

PW = "Zq8Wx7Vc6Bn5Ml4K"


class TestSensitiveKeys:
    @pytest.mark.parametrize(
        "key",
        [
            *("password", "Passwd", "pwd", "SMTP_PASSWORD", "dbPassword", "DBPassword"),
            *("secret", "client_secret", "clientSecret", "jwt_secret", "token", "accessToken"),
            *("refresh-token", "X-Auth-Token", "x-api-key", "apikey", "API_KEY", "Api-Key"),
            *("authorization", "Proxy-Authorization", "cookie", "Set-Cookie", "private_key"),
            *("credential", "credentials", "session", "AccountKey", "signing_key", "sig"),
            *("X-Amz-Signature", "webhookSigningKey", "apitoken", "mypassword", "_authToken"),
            *("private_key_id", "privateKeyId", "client-key-data", "SecretString"),
        ],
    )
    def test_sensitive(self, key: str) -> None:
        """Sensitive names match in any spelling, at the end of the key, or glued to a prefix."""
        assert True is (key in SensitiveKeys(DEFAULT_SENSITIVE_KEYS))

    @pytest.mark.parametrize(
        "key",
        [
            *("secret_name", "token_count", "max_tokens", "input_tokens", "tokenizer"),
            *("password_reset_url", "password_hint", "api_key_id", "client_certificate_data"),
            *("token_type", "secret_ttl", "session_id", "password_policy", "auth"),
            *("next_token", "NextToken", "page_token", "max_token", "public_key", "author"),
        ],
    )
    def test_not_sensitive(self, key: str) -> None:
        """Names describing a secret (`_name`, `_count`, `_url`, `_id`…) or counts are not."""
        assert False is (key in SensitiveKeys(DEFAULT_SENSITIVE_KEYS))

    def test_non_strings_are_not_sensitive(self) -> None:
        """Only string keys can be sensitive."""
        assert False is (3 in SensitiveKeys(DEFAULT_SENSITIVE_KEYS))


class TestKeyValueText:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (f"password={PW}", "password=[REDACTED:key_value]"),
            (f"DB_PASSWORD={PW} LOG=info", "DB_PASSWORD=[REDACTED:key_value] LOG=info"),
            (f"api-key: {PW}\n", "api-key: [REDACTED:key_value]\n"),
            (f'secret = "{PW}"', 'secret = "[REDACTED:key_value]"'),
            (f"export TOKEN='{PW} x'", "export TOKEN='[REDACTED:key_value]'"),
            (f"$cfg['password'] => '{PW}';", "$cfg['password'] => '[REDACTED:key_value]';"),
            (f'{{"clientSecret": "{PW}"}}', '{"clientSecret": "[REDACTED:key_value]"}'),
            (f'{{\\"token\\": \\"{PW}\\"}}', '{\\"token\\": \\"[REDACTED:key_value]\\"}'),
            (
                f"spring.datasource.password: {PW}",
                "spring.datasource.password: [REDACTED:key_value]",
            ),
            (
                f"GET /x?a=1&access_token={PW}&b=2",
                "GET /x?a=1&access_token=[REDACTED:key_value]&b=2",
            ),
            (
                f"Server=x;User ID=u;Password={PW};Encrypt=true",
                "Server=x;User ID=u;Password=[REDACTED:key_value];Encrypt=true",
            ),
            (f'password: "{PW}', 'password: "[REDACTED:key_value]'),
        ],
    )
    def test_value_after_a_sensitive_key(self, text: str, expected: str) -> None:
        """Only the value after a sensitive key is replaced, in every assignment form."""
        assert expected == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                "Authorization: Token abc123\nHost: x",
                "Authorization: Token [REDACTED:key_value]\nHost: x",
            ),
            (f"Cookie: sid={PW}; theme=dark\n", "Cookie: sid=[REDACTED:key_value]; theme=dark\n"),
            (f"X-Api-Key: {PW}\r\nAccept: */*", "X-Api-Key: [REDACTED:key_value]\r\nAccept: */*"),
        ],
    )
    def test_headers(self, text: str, expected: str) -> None:
        """Credential headers are replaced to the end of the line (a cookie: its value); the
        scheme word stays."""
        assert expected == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Forgot your password? Use the password reset page.",
            "max_tokens=100 input_tokens: 50 token_count=3 secret_name=prod-db",
            '{"token": null, "password": "", "secret": true}',
            "password=${DB_PASSWORD} token: <your-token> secret: '****' api_key={{ vault }}",
            "PWD=/home/bob OLDPWD=/tmp",
            "password == other and password: null",
            "password_min_length: 12\nsession_timeout_minutes: 30",
            "auth: {method: oauth}\nauth_type: password\nauth_method: token",
            "name: X-API-Key\nkey: password\n-field=password",
        ],
    )
    def test_mentions_references_and_metadata_are_kept(self, text: str) -> None:
        """Prose, counts, literals, placeholders, paths and settings are not secrets."""
        assert text == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        "text",
        [
            "get_deploy_token: 1.79e+09",
            "password_age: 1700000000.5 token=-3 secret: NaN",
            '{"session": 0.25, "token": 12}',
            "api_key = 2.5e-07",
        ],
    )
    def test_a_number_after_a_credential_word_is_a_measurement(self, text: str) -> None:
        """A float, a signed number or a count under 1000 after a sensitive key is kept."""
        assert text == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("password: 482913", "password: [REDACTED:key_value]"),
            ("token=17000000001234", "token=[REDACTED:key_value]"),
        ],
    )
    def test_long_digit_strings_under_a_sensitive_key_stay_secret(
        self, text: str, expected: str
    ) -> None:
        """Four or more bare digits (a PIN, a numeric password or token) are still redacted."""
        assert expected == Redactor().redact_text(text)

    def test_a_label_then_arguments_is_not_a_key_and_its_value(self) -> None:
        """`get_deploy_token: service=billing` (a progress line) keeps its arguments."""
        text = "⏳ get_deploy_token: service=billing, token=hunter2-x9"

        assert "⏳ get_deploy_token: service=billing, token=[REDACTED:key_value]" == (
            Redactor().redact_text(text)
        )

    def test_an_assignment_after_equals_stays_the_secret(self) -> None:
        """After `=` (`password=a=b`) the whole value is still the secret; a cookie's value
        after its name is too."""
        assert ("password=[REDACTED:key_value]", "Cookie: sid=[REDACTED:key_value]") == (
            Redactor().redact_text("password=ab=cd"),
            Redactor().redact_text("Cookie: sid=ab12cd34"),
        )


class TestCommandLine:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (f"tool --password {PW} --verbose", "tool --password [REDACTED:key_value] --verbose"),
            (f"tool --api-key={PW}", "tool --api-key=[REDACTED:key_value]"),
            (f"tool --client-secret '{PW}'", "tool --client-secret '[REDACTED:key_value]'"),
            (f"mysql -u root -p{PW} db", "mysql -u root -p[REDACTED:key_value] db"),
            (f"mysql -p{PW}", "mysql -p[REDACTED:key_value]"),
            (f"sshpass -p {PW} ssh host", "sshpass -p [REDACTED:key_value] ssh host"),
            (
                f"docker login -u bot -p {PW} ghcr.io",
                "docker login -u bot -p [REDACTED:key_value] ghcr.io",
            ),
            (f"redis-cli -h cache -a {PW} ping", "redis-cli -h cache -a [REDACTED:key_value] ping"),
            (f"curl -u alice:{PW} https://x", "curl -u alice:[REDACTED:key_value] https://x"),
            (
                f"Command '['psql', '--db-password', '{PW}', '-q']'",
                "Command '['psql', '--db-password', '[REDACTED:key_value]', '-q']'",
            ),
        ],
    )
    def test_password_arguments(self, text: str, expected: str) -> None:
        """Flags and command conventions that carry a password have it replaced."""
        assert expected == Redactor().redact_text(text)

    @pytest.mark.parametrize(
        "text",
        [
            "docker run -p8080:80 nginx && gcc -pthread -pipe x.c",
            "run with --password-file /etc/pw and --max-tokens 100",
            "mysql -P3306 -h db --no-password --user root",
            "docker run -u 1000:1000 img",
        ],
    )
    def test_other_flags_are_kept(self, text: str) -> None:
        """Ports, compiler flags, file options and uid:gid are not passwords."""
        assert text == Redactor().redact_text(text)


class TestStructuredPairs:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                f'{{"name": "DB_PASSWORD", "value": "{PW}"}}',
                '{"name": "DB_PASSWORD", "value": "[REDACTED:key_value]"}',
            ),
            (
                f"- name: API_TOKEN\n  value: {PW}\n",
                "- name: API_TOKEN\n  value: [REDACTED:key_value]\n",
            ),
            (
                f'<add key="DbPassword" value="{PW}"/>',
                '<add key="DbPassword" value="[REDACTED:key_value]"/>',
            ),
            (f"<password>{PW}</password>", "<password>[REDACTED:key_value]</password>"),
        ],
    )
    def test_name_value_pairs_and_xml(self, text: str, expected: str) -> None:
        """A value paired with a sensitive name, or inside a sensitive XML element, is replaced."""
        assert expected == Redactor().redact_text(text)
