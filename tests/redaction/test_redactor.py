"""Tests for `zeroclaw_obs.redaction.Redactor`: text rules, key-aware values, reports, config.

Test secrets are assembled from pieces so that secret scanners do not flag this file.
"""

from __future__ import annotations

import copy
import random
import re
import uuid
from types import MappingProxyType

import pytest

from zeroclaw_obs.receipts import ReceiptGenerator
from zeroclaw_obs.redaction import (
    DEFAULT_RULE_IDS,
    DEFAULT_SENSITIVE_KEYS,
    MAX_DEPTH,
    RULES,
    SENSITIVE_KEY_RULE_ID,
    RedactionConfigError,
    Redactor,
)
from zeroclaw_obs.redaction._normalize import fold
from zeroclaw_obs.redaction._redactor import _splice

MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")

JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
AWS_KEY_ID = "AKIA" + "Z7Q3RXPL4MWN2VBT"
GITHUB_PAT = "ghp" + "_Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8"
GITHUB_FINE = "github" + "_pat_11ABCDEFG0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
SLACK = "xox" + "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
OPENAI = "sk-" + "proj-Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7"
OPENAI_LEGACY = "sk-" + "Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7Ab6Cd5Ef"
ANTHROPIC = "sk-" + "ant-api03-Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7-AbCd"
STRIPE = "sk" + "_live_51HxYzAbCdEfGhIjKlMnOpQrSt"
SECRET_LIKE = "Zq8Wx7Vc6Bn5Ml4KpL0o"
"""Stands for a secret an operator pasted into a rule, an id or an allowlist by mistake."""
GOOGLE = "AIza" + "SyXa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9"
PEM_BODY = "MIIEowIBAAKCAQEAx9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7\nAb6Cd5Ef4Gh3Ij2Kl1Mn0Op9Qr8St7"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
OPENSSH_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# rule id, text holding the secret, the secret (what must be gone), expected output
POSITIVE = [
    ("key_value", "password=hunter2-correct-horse", "hunter2-correct-horse",
     "password=[REDACTED:key_value]"),
    ("key_value", "token: 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c",
     "token: [REDACTED:key_value]"),
    ("key_value", "GET /v1?api_key=Zq8Wx7Vc6Bn5Ml4K&page=2", "Zq8Wx7Vc6Bn5Ml4K",
     "GET /v1?api_key=[REDACTED:key_value]&page=2"),
    ("key_value", '{"user": "bob", "password": "s3cr3t pass phrase!"}', "s3cr3t pass phrase!",
     '{"user": "bob", "password": "[REDACTED:key_value]"}'),
    ("key_value", '{\\"client_secret\\": \\"Zq8Wx7Vc6Bn5Ml4K\\"}', "Zq8Wx7Vc6Bn5Ml4K",
     '{\\"client_secret\\": \\"[REDACTED:key_value]\\"}'),
    ("key_value", "export DB_PASSWORD='p@ss w0rd with spaces'", "p@ss w0rd with spaces",
     "export DB_PASSWORD='[REDACTED:key_value]'"),
    ("key_value", "mysql --password Zq8Wx7Vc6Bn5Ml4K --user root", "Zq8Wx7Vc6Bn5Ml4K",
     "mysql --password [REDACTED:key_value] --user root"),
    ("key_value", "apiKey: Zq8Wx7Vc6Bn5Ml4K", "Zq8Wx7Vc6Bn5Ml4K",
     "apiKey: [REDACTED:key_value]"),
    ("key_value", "Authorization: Bearer short12", "Bearer short12",
     "Authorization: Bearer [REDACTED:key_value]"),
    ("key_value", "Authorization: CustomScheme Zq8Wx7Vc6Bn5Ml4K\nHost: x", "Zq8Wx7Vc6Bn5Ml4K",
     "Authorization: [REDACTED:key_value]\nHost: x"),
    ("key_value", "Cookie: sid=Zq8Wx7Vc6Bn5Ml4K; theme=dark\n", "Zq8Wx7Vc6Bn5Ml4K",
     "Cookie: sid=[REDACTED:key_value]; theme=dark\n"),
    ("bearer", "curl -H 'Authorization: Bearer Zq8Wx7Vc6Bn5Ml4K.x_y'", "Zq8Wx7Vc6Bn5Ml4K.x_y",
     "curl -H 'Authorization: Bearer [REDACTED:bearer]'"),
    ("basic_auth", "Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=", "dXNlcm5hbWU6cGFzc3dvcmQ=",
     "Authorization: Basic [REDACTED:basic_auth]"),
    ("jwt", f"session cookie {JWT} set", JWT, "session cookie [REDACTED:jwt] set"),
    ("aws_access_key_id", f"id={AWS_KEY_ID}\n", AWS_KEY_ID, "id=[REDACTED:aws_access_key_id]\n"),
    ("github_token", f"using {GITHUB_PAT} now", GITHUB_PAT, "using [REDACTED:github_token] now"),
    ("github_token", f"GH={GITHUB_FINE}", GITHUB_FINE, "GH=[REDACTED:github_token]"),
    ("slack_token", f"slack {SLACK}.", SLACK, "slack [REDACTED:slack_token]."),
    ("openai_key", f"key {OPENAI} ok", OPENAI, "key [REDACTED:openai_key] ok"),
    ("openai_key", f"({OPENAI_LEGACY})", OPENAI_LEGACY, "([REDACTED:openai_key])"),
    ("anthropic_key", f'"{ANTHROPIC}"', ANTHROPIC, '"[REDACTED:anthropic_key]"'),
    ("stripe_key", f"stripe {STRIPE}", STRIPE, "stripe [REDACTED:stripe_key]"),
    ("google_api_key", f"maps?k={GOOGLE}&z=1", GOOGLE, "maps?k=[REDACTED:google_api_key]&z=1"),
    ("private_key_block", f"key:\n{PRIVATE_KEY}\ndone", PEM_BODY,
     "key:\n[REDACTED:private_key_block]\ndone"),
    ("private_key_block", f"{OPENSSH_KEY}\n", OPENSSH_KEY, "[REDACTED:private_key_block]\n"),
    ("private_key_block", "-----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY, PEM_BODY,
     "[REDACTED:private_key_block]"),
    ("url_credentials", "postgres://admin:Zq8Wx7Vc6Bn5Ml4K@db.internal:5432/app",
     "admin:Zq8Wx7Vc6Bn5Ml4K", "postgres://[REDACTED:url_credentials]@db.internal:5432/app"),
    ("url_credentials", "redis://:Zq8Wx7Vc6Bn5Ml4K@cache:6379", ":Zq8Wx7Vc6Bn5Ml4K",
     "redis://[REDACTED:url_credentials]@cache:6379"),
    ("email", "mail jane.doe+agents@example.co.uk today", "jane.doe+agents@example.co.uk",
     "mail [REDACTED:email] today"),
]  # fmt: skip

# rule id, text that only looks like a secret and must stay exactly as it is
LOOK_ALIKES = [
    ("key_value", "see the password reset page; passwords: 3 rules"),
    ("key_value", "max_tokens=100 input_tokens: 50 token_count=3 secret_name=prod-db"),
    ("key_value", '{"token": null, "password": "", "secret": true}'),
    ("key_value", "run with --password-file /etc/pw and --max-tokens 100"),
    ("bearer", "Bearer token authentication. Basic usage: see docs"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9 alone, and eyJ.a.b"),
    ("aws_access_key_id", "AKIAFOO and XAKIAZ7Q3RXPL4MWN2VBT"),
    ("github_token", "the ghp_ prefix and ghp_short"),
    ("slack_token", "xoxb-token-here"),
    ("openai_key", "sk-learn-compatible-estimators-list and task-Xa9Bc8De7Fg6Hi5Jk4Lm3No2"),
    ("anthropic_key", "sk-ant-short"),
    ("stripe_key", "sk_test_helper and risk_live_dashboard_2024_report"),
    ("google_api_key", "AIzaShort"),
    ("private_key_block", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"),
    ("url_credentials", "https://example.com:8443/path?q=1 and ssh://host/repo"),
    ("email", "user@localhost, @decorator, a@b"),
]


def _full_scan(redactor: Redactor, text: str) -> str:
    """Reference redaction: every rule runs on the whole text, the RE2 gate is bypassed."""
    folded = fold(text)
    return _splice(folded, redactor._scanner.scan(folded.shadow, ungated=True), None)


def _fuzz_corpus(count: int) -> list[str]:
    """Texts that splice secrets, look-alikes and noise together with random separators."""
    rng = random.Random(20240601)
    parts = [text for _, text, _, _ in POSITIVE] + [text for _, text in LOOK_ALIKES]
    noise = ["", " ", "\n", "=", ":", "_", "-", "--", "@", "x", "A", '"', "'", "://", "İ"]
    corpus = []
    for _ in range(count):
        chosen = rng.sample(parts, 3)
        pieces = [rng.choice(noise) + (p.upper() if rng.random() < 0.2 else p) for p in chosen]
        corpus.append(rng.choice(noise).join(pieces))
    return corpus


def _assert_no_piece(secret: str, text: str) -> None:
    """No 12-character piece of `secret` (or the whole of a shorter one) is left in `text`."""
    width = min(12, len(secret))
    for i in range(len(secret) - width + 1):
        assert secret[i : i + width] not in text


class TestRedactor:
    @pytest.mark.parametrize(("rule_id", "text", "secret", "expected"), POSITIVE)
    def test_rule_redacts_positive_example(
        self, rule_id: str, text: str, secret: str, expected: str
    ) -> None:
        """Each default rule replaces its secret by `[REDACTED:<rule_id>]` and keeps the rest."""
        redacted, report = Redactor().redact_text_report(text)

        assert expected == redacted
        assert {rule_id: 1} == report
        _assert_no_piece(secret, redacted)

    @pytest.mark.parametrize(("rule_id", "text"), LOOK_ALIKES)
    def test_rule_keeps_look_alike(self, rule_id: str, text: str) -> None:
        """Text that only resembles a rule's secret is left exactly as it is."""
        assert text == Redactor().redact_text(text)

    @pytest.mark.parametrize(("rule_id", "text", "secret", "expected"), POSITIVE)
    def test_redaction_is_idempotent(
        self, rule_id: str, text: str, secret: str, expected: str
    ) -> None:
        """Redacting already-redacted text changes nothing and reports nothing (a second
        redactor, which does not remember the first one's outputs, scans it)."""
        once = Redactor().redact_text(text)

        assert (once, {}) == Redactor().redact_text_report(once)

    def test_idempotent_on_mixed_document(self) -> None:
        """A document with every kind of secret is stable after one pass."""
        document = "\n".join(text for _, text, _, _ in POSITIVE)
        once = Redactor().redact_text(document)

        assert once == Redactor().redact_text(once)
        for _, _, secret, _ in POSITIVE:
            _assert_no_piece(secret, once)

    @pytest.mark.parametrize(
        ("text", "value"),
        [
            (f"SSN {JWT} a 123456789", "123456789"),
            (f"SSN={JWT}; id 123456789", "123456789"),
            (f"Social Security {JWT} no 123 45 6789", "123 45 6789"),
            (
                "INSERT INTO integrations (name, api_key, created_at) VALUES ('glacier-sync', "
                "'tZD4ufT9jXq3PCQDg8qQiURxdGjDttMV', (555) 123-4567 a '2024-06-11');",
                "tZD4ufT9jXq3PCQDg8qQiURxdGjDttMV",
            ),
            (
                "SET PASSWORD FOR eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnopqrst"
                "uvwxyz012345 a 'checkout'@'localho" + "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3"
                "hJ6: st' = '7ChhlQ4HZk2rC_AHl';\n",
                "7ChhlQ4HZk2rC_AHl",
            ),
        ],
    )
    def test_idempotent_when_a_marker_opens_a_labels_gap(self, text: str, value: str) -> None:
        """A label whose value only becomes a match once a neighbour in its gap is a marker
        (the SSN label's `[^0-9]{0,20}` across a JWT, an INSERT's tuple across a phone
        number's parentheses, `SET PASSWORD FOR`'s user `[^=;]{1,120}` across a JWT): one
        call settles it, the value included."""
        once = Redactor().redact_text(text)

        assert (once, False) == (Redactor().redact_text(once), value in once)

    @pytest.mark.parametrize(
        "text",
        [
            "to IBAN ES9121000418450200051332 DE89370400440532013000 (invoice)",
            "accounts DE89370400440532013000 GB82WEST12345698765432.",
            "DE89 3704 0044 0532 0130 00 GB82 WEST 1234 5698 7654 32",
        ],
    )
    def test_idempotent_between_adjacent_ibans(self, text: str) -> None:
        """An IBAN's run crosses single spaces into the next one, which one pass then leaves
        whole until its neighbour is a marker: one call replaces both."""
        once = Redactor().redact_text(text)

        assert (once, 2) == (Redactor().redact_text(once), once.count("[REDACTED:iban]"))

    def test_idempotent_around_labels_with_gaps(self) -> None:
        """Every neighbour, in every place around an SSN label or an INSERT's tuples: a
        second redactor (which has not seen the first one's outputs) changes nothing."""
        neighbours = [JWT, "(555) 123-4567", "'(555) 123 4567'", "jane@example.com", "x"]
        values = ["123456789", "123 45 6789", "'tZD4ufT9jXq3PCQDg8qQiURxdGjDttMV'", "'pro'"]
        labels = ["SSN ", "ssn: ", "Social Security no ", "INSERT INTO t (id, api_key) VALUES ("]
        first, second, changed = Redactor(), Redactor(), []
        for label in labels:
            for a in neighbours:
                for b in values:
                    for gap in (" ", " a ", ", ", "\n"):
                        for text in (label + a + gap + b, label + b + gap + a + ")"):
                            once = first.redact_text(text)
                            if once != second.redact_text(once):
                                changed.append(re.sub("[0-9]", "9", text))
        assert [] == changed

    def test_prefilter_gives_the_same_result_as_a_full_scan(self) -> None:
        """The gate only skips work: the output equals running every rule on every text."""
        redactor = Redactor()

        for text in _fuzz_corpus(400):
            assert _full_scan(redactor, text) == redactor.redact_text(text)

    def test_specific_rule_wins_over_key_value(self) -> None:
        """A known token under a sensitive key is reported by its token rule, once."""
        redacted, report = Redactor().redact_text_report(f"token={GITHUB_PAT}")

        assert "token=[REDACTED:github_token]" == redacted
        assert {"github_token": 1} == report

    def test_keeps_receipts_ids_and_digests(self) -> None:
        """Receipts, UUIDs, git SHAs, sha256 digests and ordinary prose pass untouched."""
        generators = [ReceiptGenerator() for _ in range(200)]
        receipts = [
            g.generate("t", {"a": i}, "r", 1_700_000_000 + i) for i, g in enumerate(generators)
        ]
        text = "\n".join(
            [
                *(f"ok\n\n[receipt: {receipt}]" for receipt in receipts),
                *(str(uuid.uuid4()) for _ in range(50)),
                "commit 3f786850e387550fdab836ed7e6dc881de23001b",
                "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "Use the password reset page if you forgot your password.",
            ]
        )

        assert text == Redactor().redact_text(text)

    def test_report_counts_per_rule_without_text(self) -> None:
        """The report counts replacements per rule id and holds no matched text."""
        text = f"a@example.com, b@example.org, {JWT}, password=Zq8Wx7Vc6Bn5Ml4K"

        redacted, report = Redactor().redact_text_report(text)

        assert {"email": 2, "jwt": 1, "key_value": 1} == report
        assert all(isinstance(count, int) for count in report.values())
        assert "[REDACTED:email], [REDACTED:email], [REDACTED:jwt]" in redacted

    def test_clean_text_is_returned_unchanged(self) -> None:
        """Text with nothing to redact comes back equal, with an empty report."""
        text = "The weather in Paris is 18C and clear; Oslo is 7C with light rain."

        assert (text, {}) == Redactor().redact_text_report(text)

    def test_text_whose_lowercase_is_longer_still_redacts(self) -> None:
        """Characters that lengthen when lower-cased (`İ`) do not let a secret through."""
        text = "İstanbul İ password=Zq8Wx7Vc6Bn5Ml4K"

        assert "İstanbul İ password=[REDACTED:key_value]" == Redactor().redact_text(text)

    def test_rule_ids(self) -> None:
        """A default redactor runs the default rules, in the documented order."""
        assert DEFAULT_RULE_IDS == Redactor().rule_ids

    @pytest.mark.parametrize(
        "key",
        [
            "password",
            "PASSWORD",
            "Passwd",
            "pwd",
            "secret",
            "client_secret",
            "clientSecret",
            "token",
            "access_token",
            "refresh-token",
            "api_key",
            "apikey",
            "api-key",
            "apiKey",
            "Authorization",
            "cookie",
            "Set-Cookie",
            "private_key",
            "credential",
            "credentials",
            "session",
            "X-Api-Key",
            "db_password",
            "github_token",
        ],
    )
    def test_sensitive_keys(self, key: str) -> None:
        """Sensitive names match case-insensitively, with `-`/`_`/camelCase normalised."""
        assert True is Redactor().is_sensitive_key(key)

    @pytest.mark.parametrize(
        "key",
        [
            "secret_name",
            "token_count",
            "max_tokens",
            "maxTokens",
            "input_tokens",
            "tokenizer",
            "password_hint",
            "author",
            "city",
            "api_key_id",
        ],
    )
    def test_non_sensitive_keys(self, key: str) -> None:
        """Keys that merely contain a sensitive word are not sensitive."""
        assert False is Redactor().is_sensitive_key(key)

    def test_redact_value_masks_sensitive_keys_at_depth(self) -> None:
        """Values under sensitive keys are masked at any depth and the structure is kept."""
        value = {
            "city": "Paris",
            "max_tokens": 100,
            "auth": {"api_key": "Zq8Wx7Vc6Bn5Ml4K", "Password": 123456, "user": "bob"},
            "calls": [
                {"headers": {"Authorization": "Bearer x", "Accept": "json"}},
                ("keep", {"client-secret": "Zq8Wx7Vc6Bn5Ml4K"}),
            ],
            "token": None,
            "refresh_token": "",
            "session": True,
        }

        redacted, report = Redactor().redact_value_report(value)

        assert {
            "city": "Paris",
            "max_tokens": 100,
            "auth": {
                "api_key": "[REDACTED:sensitive_key]",
                "Password": "[REDACTED:sensitive_key]",
                "user": "bob",
            },
            "calls": [
                {"headers": {"Authorization": "[REDACTED:sensitive_key]", "Accept": "json"}},
                ("keep", {"client-secret": "[REDACTED:sensitive_key]"}),
            ],
            "token": None,
            "refresh_token": "",
            "session": True,
        } == redacted
        assert {SENSITIVE_KEY_RULE_ID: 4} == report

    def test_redact_value_masks_every_leaf_under_a_sensitive_container(self) -> None:
        """A container under a sensitive key keeps its shape but every leaf is masked."""
        value = {"credentials": {"user": "bob", "keys": ["k1", 4821]}}

        assert {
            "credentials": {
                "user": "[REDACTED:sensitive_key]",
                "keys": ["[REDACTED:sensitive_key]", "[REDACTED:sensitive_key]"],
            }
        } == Redactor().redact_value(value)

    def test_redact_value_masks_bytes_and_objects_under_sensitive_keys(self) -> None:
        """Under a sensitive key, bytes and other objects are masked too, not passed through."""
        value = MappingProxyType({"private_key": b"raw-key-bytes", "secret": object(), "pwd": b""})

        assert {
            "private_key": "[REDACTED:sensitive_key]",
            "secret": "[REDACTED:sensitive_key]",
            "pwd": b"",
        } == Redactor().redact_value(value)

    def test_redact_value_runs_text_rules_on_strings(self) -> None:
        """Strings anywhere in a value, dict keys included, go through the text rules."""
        value = {"note": f"use {GITHUB_PAT}", "items": ["mail bob@example.com"], 3: JWT}

        redacted, report = Redactor().redact_value_report(value)

        assert {
            "note": "use [REDACTED:github_token]",
            "items": ["mail [REDACTED:email]"],
            3: "[REDACTED:jwt]",
        } == redacted
        assert {"github_token": 1, "email": 1, "jwt": 1} == report

    def test_redact_value_does_not_mutate_input(self) -> None:
        """The input structure is left exactly as it was."""
        value = {"password": "Zq8Wx7Vc6Bn5Ml4K", "nested": [{"token": "abc"}, f"k {OPENAI}"]}
        before = copy.deepcopy(value)

        Redactor().redact_value(value)

        assert before == value

    def test_redact_value_is_idempotent(self) -> None:
        """Redacting a redacted value changes nothing and reports nothing."""
        redactor = Redactor()
        once = redactor.redact_value({"password": "x", "note": f"{JWT} a@example.com"})

        assert (once, {}) == redactor.redact_value_report(once)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                GOOGLE + "-----BEGIN RSA PRIVATE KEY-----",
                "[REDACTED:google_api_key][REDACTED:private_key_block]",
            ),
            (
                "call 555-123-4567-1//0" + "Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7Ab6",
                "call [REDACTED:phone_number]-[REDACTED:google_oauth]",
            ),
            (  # a phone number's run crosses a space: the rescan is not skipped there
                "call +1 555 123 4567 1//0" + "Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7Ab6",
                "call [REDACTED:phone_number] [REDACTED:google_oauth]",
            ),
            (  # a generic token's run crosses `=` into a token another rule replaces
                "token Xk9vL2mQ8rT5wY3zA7bCq1=AKIAIOSFODNN7EXAMPLF",
                "token [REDACTED:generic_secret][REDACTED:aws_access_key_id]",
            ),
        ],
    )
    def test_a_rule_that_needs_its_neighbour_replaced_fires_on_the_first_pass(
        self, text: str, expected: str
    ) -> None:
        """A match refused only because of text another rule replaces is found in one call."""
        assert expected == Redactor().redact_text(text)

    def test_a_marker_in_a_key_does_not_make_it_sensitive(self) -> None:
        """`get_[REDACTED:github_token]` is no `…_token` key: its value is not masked later."""
        redactor = Redactor()
        once = redactor.redact_value({"get_" + GITHUB_PAT: "ghp_", "token_" + GITHUB_PAT: "x"})

        assert (
            {"get_[REDACTED:github_token]": "ghp_", "token_[REDACTED:github_token]": "x"},
            {},
        ) == (once, redactor.redact_value_report(once)[1])

    def test_keys_inside_a_masked_container_are_redacted(self) -> None:
        """A token used as a key under a sensitive key is replaced on the first pass."""
        value = {"-----BEGIN RSA PRIVATE KEY-----": {GITHUB_PAT: None, "n": ("a", 0.5)}}

        assert {
            "[REDACTED:private_key_block]": {
                "[REDACTED:github_token]": None,
                "n": ("[REDACTED:sensitive_key]", 0.5),
            }
        } == Redactor().redact_value(value)

    def test_redact_value_passes_other_objects_through(self) -> None:
        """Numbers, booleans, None and unknown objects outside sensitive keys are returned as is."""
        marker = object()
        value = [1, 2.5, True, None, marker]

        assert [1, 2.5, True, None, marker] == Redactor().redact_value(value)

    def test_redact_value_bounds_depth(self) -> None:
        """Containers nested deeper than `MAX_DEPTH` are replaced by `[REDACTED:max_depth]`."""
        value: list[object] = []
        node = value
        for _ in range(MAX_DEPTH + 5):
            child: list[object] = []
            node.append(child)
            node = child

        redacted, report = Redactor().redact_value_report(value)

        node = redacted
        for _ in range(MAX_DEPTH):
            node = node[0]
        assert "[REDACTED:max_depth]" == node
        assert {"max_depth": 1} == report

    def test_default_sensitive_keys_cover_the_design_list(self) -> None:
        """The documented sensitive names are all in `DEFAULT_SENSITIVE_KEYS`."""
        documented = {
            "password", "passwd", "pwd", "secret", "client_secret", "token", "access_token",
            "refresh_token", "api_key", "apikey", "authorization", "cookie", "set_cookie",
            "private_key", "credential", "credentials", "session", "x_api_key",
        }  # fmt: skip

        assert documented <= DEFAULT_SENSITIVE_KEYS

    def test_from_config_extra_rule(self) -> None:
        """An extra rule replaces its whole match under its own id."""
        redactor = Redactor.from_config(extra_rules={"acme_token": r"acme_[0-9a-f]{16}"})

        assert ("id [REDACTED:acme_token].", {"acme_token": 1}) == redactor.redact_text_report(
            "id acme_0123456789abcdef."
        )

    def test_from_config_extra_rule_secret_group(self) -> None:
        """An extra rule with a `secret` group replaces only that group."""
        redactor = Redactor.from_config(extra_rules={"pin": r"PIN (?P<secret>\d{4,8})\b"})

        assert "card PIN [REDACTED:pin] ok" == redactor.redact_text("card PIN 482913 ok")

    def test_from_config_extra_rule_runs_before_context_rules(self) -> None:
        """An extra rule names a token under a sensitive key before `key_value` sees it."""
        redactor = Redactor.from_config(extra_rules={"acme_token": r"acme_[0-9a-f]{16}"})

        assert "token=[REDACTED:acme_token]" == redactor.redact_text("token=acme_0123456789abcdef")

    def test_from_config_allowlist(self) -> None:
        """Allowlisted strings survive every rule and key-aware masking."""
        redactor = Redactor.from_config(allow=["support@example.com", AWS_KEY_ID, "guest"])
        text = f"mail support@example.com or bob@example.com; id {AWS_KEY_ID}; password=guest"

        redacted, report = redactor.redact_text_report(text)

        assert (
            f"mail support@example.com or [REDACTED:email]; id {AWS_KEY_ID}; password=guest"
            == redacted
        )
        assert {"email": 1} == report
        assert {"password": "guest"} == redactor.redact_value({"password": "guest"})

    def test_from_config_extra_sensitive_keys(self) -> None:
        """Extra key names are normalised and then masked in values and in text."""
        redactor = Redactor.from_config(extra_sensitive_keys=["X-Tenant-Key"])

        assert {"xTenantKey": "[REDACTED:sensitive_key]"} == redactor.redact_value(
            {"xTenantKey": "t-123"}
        )
        assert "x-tenant-key: [REDACTED:key_value]" == redactor.redact_text("x-tenant-key: t-123")

    def test_from_config_pii_off_keeps_email(self) -> None:
        """With `pii=False` email addresses are kept and the `email` rule is not run."""
        redactor = Redactor.from_config(pii=False)

        assert "mail bob@example.com" == redactor.redact_text("mail bob@example.com")
        assert "email" not in redactor.rule_ids

    def test_from_config_invalid_regex_names_rule(self) -> None:
        """An extra rule that does not compile raises RedactionConfigError naming its path."""
        with pytest.raises(RedactionConfigError, match=r"^extra_rules\.broken_rule: invalid regex"):
            Redactor.from_config(extra_rules={"broken_rule": r"(unclosed"})

    @pytest.mark.parametrize(
        ("rules", "problem"),
        [
            ({"empty_match": r"x*"}, r"^extra_rules\.empty_match: .*empty"),
            ({"ok": "x", "Bad-Id": r"x"}, "^extra_rules entry 2: .*snake_case"),
            ({"jwt": r"x"}, "^extra_rules entry 1: .*default"),
            ({"sensitive_key": r"x"}, "^extra_rules entry 1: .*default"),
        ],
    )
    def test_from_config_rejects_bad_rule(self, rules: dict[str, str], problem: str) -> None:
        """A rule that matches empty text, a non-snake_case id or a taken id is refused."""
        with pytest.raises(RedactionConfigError, match=problem):
            Redactor.from_config(extra_rules=rules)

    def test_from_config_rejects_blank_sensitive_key(self) -> None:
        """A blank extra sensitive key raises RedactionConfigError."""
        with pytest.raises(RedactionConfigError, match="must not be blank"):
            Redactor.from_config(extra_sensitive_keys=[" - "])

    def test_marker_never_contains_secret(self) -> None:
        """Every replacement is exactly a marker; nothing of the secret sits inside it."""
        document = "\n".join(text for _, text, _, _ in POSITIVE)

        redacted = Redactor().redact_text(document)

        for found in MARKER.findall(redacted):
            assert re.fullmatch(r"\[REDACTED:[a-z_]+\]", found) is not None


class TestConfig:
    def test_extra_rule_is_compiled_with_re2(self) -> None:
        """An extra rule with lookaround is refused at load with an error naming it."""
        with pytest.raises(RedactionConfigError, match=r"^extra_rules\.acme_pin: .*RE2"):
            Redactor.from_config(extra_rules={"acme_pin": r"(?<=PIN )\d{4}"})

    @pytest.mark.parametrize(
        ("kwargs", "problem"),
        [
            ({"extra_rules": {"ok_rule": 42}}, r"^extra_rules\.ok_rule: .*string"),
            ({"extra_rules": {"encoded_secret": "x"}}, "^extra_rules entry 1: .*default"),
            ({"allow": ["a", ""]}, r"^allow\.1: .*blank"),
            ({"allow_patterns": ["(unclosed"]}, r"^allow_patterns\.0: .*RE2"),
            ({"extra_sensitive_keys": [None]}, r"^extra_sensitive_keys\.0: must not be blank"),
            ({"pii": "yes"}, "^pii: "),
        ],
    )
    def test_invalid_config_is_rejected_with_a_clear_error(
        self, kwargs: dict[str, object], problem: str
    ) -> None:
        """Wrong types, blank entries, taken ids and bad patterns raise RedactionConfigError."""
        with pytest.raises(RedactionConfigError, match=problem):
            Redactor.from_config(**kwargs)  # type: ignore[arg-type]

    def test_allow_patterns(self) -> None:
        """A secret whose text fully matches an allowlisted RE2 pattern is kept."""
        redactor = Redactor.from_config(allow_patterns=[r".*@example\.com", r"test-[0-9]+"])
        text = "mail ops@example.com or bob@acme.io; password=test-1234"

        assert "mail ops@example.com or [REDACTED:email]; password=test-1234" == (
            redactor.redact_text(text)
        )

    def test_allow_patterns_apply_to_sensitive_key_values(self) -> None:
        """Allowlisted values under sensitive keys in structured data stay too."""
        redactor = Redactor.from_config(allow_patterns=[r"test-[0-9]+"])

        assert {"password": "test-1", "token": "[REDACTED:sensitive_key]"} == (
            redactor.redact_value({"password": "test-1", "token": "x1"})
        )

    def test_extra_rule_never_joins_two_strings_of_a_value(self) -> None:
        """A rule that could match across strings of one value still sees each on its own."""
        redactor = Redactor.from_config(extra_rules={"acme_span": r"ACME[\s\S]*END"})
        value = {"a": "ACME start", "b": "stop END", "c": "ACME 1 END"}

        assert {"a": "ACME start", "b": "stop END", "c": "[REDACTED:acme_span]"} == (
            redactor.redact_value(value)
        )

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"extra_rules": {"acme_rule": "(unclosed " + SECRET_LIKE}},
            {"extra_rules": {"acme_rule": "[" + SECRET_LIKE}},
            {"extra_rules": {"acme_rule": "(?<=" + SECRET_LIKE + ")x"}},
            {"extra_rules": {"acme_rule": SECRET_LIKE + "\\q"}},
            {"extra_rules": {SECRET_LIKE: "x"}},
            {"extra_rules": {"ok": "x", "Bad " + SECRET_LIKE: "x"}},
            {"allow_patterns": ["ok", "(" + SECRET_LIKE]},
            {"allow": [SECRET_LIKE, " "]},
            {"pii": SECRET_LIKE},
        ],
    )
    def test_errors_never_repeat_the_offending_text(self, kwargs: dict[str, object]) -> None:
        """The message names the field and the problem, never the pattern, id or value."""
        with pytest.raises(RedactionConfigError) as raised:
            Redactor.from_config(**kwargs)  # type: ignore[arg-type]

        message = str(raised.value)
        assert (False, False, False) == (
            SECRET_LIKE in message,
            SECRET_LIKE[:8] in message,
            "\n" in message,
        )

    def test_config_error_is_a_value_error(self) -> None:
        """RedactionConfigError is a ValueError, so the package stays a leaf."""
        assert True is issubclass(RedactionConfigError, ValueError)


class TestRuleCatalogue:
    def test_every_rule_id_is_described(self) -> None:
        """`RULES` describes every default rule id, `sensitive_key` and `max_depth`."""
        assert set() == {*DEFAULT_RULE_IDS, "sensitive_key", "max_depth"} - set(RULES)

    def test_rule_ids_are_snake_case_and_descriptions_one_line(self) -> None:
        """Rule ids are snake_case and each description is one non-empty line."""
        bad = [
            rule_id
            for rule_id, text in RULES.items()
            if not re.fullmatch(r"[a-z][a-z0-9_]*", rule_id) or not text or "\n" in text
        ]

        assert [] == bad

    def test_report_names_rules_never_text(self) -> None:
        """A report maps rule ids to integer counts, for text and for values."""
        _, report = Redactor().redact_value_report(
            {"password": "x1", "note": f"{GITHUB_PAT} {JWT}"}
        )

        assert {"sensitive_key": 1, "github_token": 1, "jwt": 1} == report


class TestDisguisedSecrets:
    @pytest.mark.parametrize(
        "invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
    )
    def test_invisible_characters_inside_a_token_do_not_hide_it(self, invisible: str) -> None:
        """A token split by an invisible character is replaced, invisible character and all."""
        split = GITHUB_PAT[:9] + invisible + GITHUB_PAT[9:]

        assert "use [REDACTED:github_token] now" == Redactor().redact_text(f"use {split} now")

    @pytest.mark.parametrize(
        "key", ["ｐａｓｓｗｏｒｄ", "pаssword", "ѕecret", "аpi_key", "pass\u200bword"]
    )
    def test_disguised_key_names_are_recognised(self, key: str) -> None:
        """Full-width, homoglyph and zero-width spellings of sensitive keys still mark secrets."""
        redactor = Redactor()

        assert (f"{key}=[REDACTED:key_value]", {key: "[REDACTED:sensitive_key]"}) == (
            redactor.redact_text(f"{key}=Zq8Wx7Vc6Bn5Ml4K"),
            redactor.redact_value({key: "Zq8Wx7Vc6Bn5Ml4K"}),
        )


class TestMustKeep:
    @pytest.mark.parametrize(
        "text",
        [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b (3f78685)",
            "req 4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f trace_id=4422ac11c4ca618fbea57f38b1d54e41",
            "traceparent: 00-4422ac11c4ca618fbea57f38b1d54e41-2de2d624a210d70b-01",
            "requests==2.32.3 --hash=sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d",
            '"integrity": "sha512-Zq8Wx7Vc6Bn5Ml4KpL0o9I8uYt6Rq8Wx7Vc6Bn5Ml4KpL0o9I8u=="',
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGm4b6hW2sYx8kVqJt3LpQz0rN1cE5dF7gH9 ci@host",
            "Order #4111111111111112 shipped; invoice 73920174",
            "The tokenizer splits text into tokens; see the password reset page.",
            '{"input_tokens": 123, "output_tokens": 45, "max_tokens": 4096}',
            "secret_name: db-password\ntoken_count: 12\nauth: {method: oauth}",
            "receipt zc-receipt-1700000000-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEf",
        ],
    )
    def test_look_alikes_survive(self, text: str) -> None:
        """Git SHAs, UUIDs, trace ids, digests, public keys, ids, prose, usage and receipts stay."""
        assert (text, {}) == Redactor().redact_text_report(text)
