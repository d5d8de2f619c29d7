"""Redaction time is linear in the input, whatever the input (crafted 1 MB adversarial texts).

Each family builds a 100 KB and a 1 MB input from the same adversarial pattern. A linear
engine takes about 10× longer on the larger one; a quadratic one about 100×. The tests assert
the ratio stays under 25 rather than any absolute time, and measure CPU time of this process
(best of a few runs), so a busy machine does not make them flaky.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from zeroclaw_obs.redaction import Redactor

SMALL, LARGE = 100_000, 1_000_000
MAX_RATIO = 25.0
SECRET = "gh" + "p_Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8"


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


def _log_with_secret(n: int) -> str:
    line = "2026-12-03T10:00:00.000Z INFO ok request_id=4f1c2b7a-9d3e-4c1b-8a2f-0e5d6c7b8a9f\n"
    half = line * (n // (2 * len(line)))
    return f"{half}token={SECRET}\n{half}"


FAMILIES: dict[str, Callable[[int], str]] = {
    "run of a": _repeat("a"),
    "run of -": _repeat("-"),
    "run of =": _repeat("="),
    "base64 characters": _repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo+/"),
    "wrapped base64 lines": _repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo\n"),
    "unclosed BEGIN lines": _repeat("-----BEGIN RSA PRIVATE KEY-----\n"),
    "BEGIN then endless body": lambda n: "-----BEGIN PRIVATE KEY-----\n" + "A" * n,
    "key=key=key=": _repeat("key="),
    "password=password=": _repeat("password="),
    "password= password= ": _repeat("password= "),
    '"password": "': _repeat('"password": "'),
    "nested quotes": _repeat('"\\"\'`'),
    "nested brackets": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "JSON under a sensitive key, deep": lambda n: '{"password": ' + "[" * (n // 2) + "]" * (n // 2),
    "digits": _repeat("1"),
    "grouped digits": _repeat("4111 "),
    "dots and digits": _repeat("1."),
    "colons and hex": _repeat("a:"),
    "e-mail fragments": _repeat("a.b@c."),
    "percent escapes": _repeat("%41"),
    "zero-width characters": _repeat("a\u200b"),
    "full-width key": _repeat("ｐａｓｓｗｏｒｄ＝"),
    "non-ASCII text with dense keys": _repeat('é password=ü"tökén": "ß'),
    "URL user info without @": _repeat("http://a:"),
    "non-ASCII text with base64 runs": _repeat("é QUJDREVGR0hJSktMTU5PUFFSU1RV\nQUJD\n"),
    "sparse zero-width characters": _repeat("a" * 70 + "\u200b"),
    "JWT prefixes": _repeat("eyJhbGciOiJ."),
    "credential words": _repeat("secret token key "),
    "100 KB+ log with a secret in the middle": _log_with_secret,
    "cookie headers on one line": _repeat("Cookie: sid=Zq8Wx7Vc6Bn5Ml4K; "),
    "nested YAML block scalars": lambda n: "password: |\n" + _repeat(" password: |\n")(n),
    "credential documents under keys": _repeat(
        'password=\'{"type": "service_account", "token": "Zq8Wx7Vc6Bn5Ml4K", '
    ),
    "joined string literals": _repeat('"Zq8Wx7Vc" + '),
    "string literals one per line": _repeat('"Zq8Wx7Vc6Bn5"\n'),
    "lines wrapped mid-token": _repeat("TOKEN=Zq8Wx7Vc6B\nn5Ml4KpL0o9 x\n"),
    "CSV headers naming phones": _repeat("name,phone\n"),
    "CSV rows under a phone column": lambda n: "name,phone\n" + _repeat("a,020 7946 0958\n")(n),
    "SQL INSERT tuples": lambda n: (
        "INSERT INTO t (id, phone) VALUES " + _repeat("('1', '020 7946 0958'), ")(n)
    ),
    "PuTTY private lines": _repeat("Private-Lines: 999\nQUJDREVGR0hJSktM\n"),
    "login phrases": _repeat("log in with admin / "),
    "table rows with keys": _repeat("| password |\n"),
    "piped echoes": _repeat("echo abc | "),
    "provider prefixes": _repeat("dop_v1_hvs.key-"),
    "webhook paths": _repeat("/hooks/discord.com/api/webhooks/"),
    "template openers": _repeat("password: <%= '"),
    "argument pairs": _repeat('("password", "'),
    "escaped slashes": _repeat("\\/"),
    "escaped slashes after backslashes": _repeat("\\\\/a"),
    # the rules of the blind-set families (issue 15)
    "crypt prefixes": _repeat("$6$abc$"),
    "pwdump lines": _repeat("a:1:" + "0a" * 16 + ":" + "0b" * 16 + ":::"),
    "credential column rows": lambda n: (
        "| user | password |\n|---|---|\n" + _repeat("| ana | Zq8Wx7Vc6B |\n")(n)
    ),
    "prompts naming a token": _repeat("$ get token\n"),
    "query codes": _repeat("?code=Zq8Wx7Vc6Bn5Ml4K&"),
    "network key lines": _repeat("wifi key "),
    "login phrases, many words": _repeat("creds for a b c d e f "),
    "passphrase words": _repeat("password is a-b-c-"),
    "localized keys": _repeat("\u041f\u0430\u0440\u043e\u043b\u044c: "),
    "base64 of digits": _repeat("MTIzNDU2"),
    "national phone pairs": _repeat("06 12 "),
    "signature labels": _repeat("T 0\n"),
    "folded block scalars": _repeat("api_key: >-\n"),
    "labels after keys": _repeat("token: a: "),
    # the pieces `PemBlockRule` reads a block in (the first END far away, header values)
    "BEGIN lines, one END at the end": lambda n: (
        _repeat("-----BEGIN RSA PRIVATE KEY-----\nQUJD-\n")(n) + "-----END RSA PRIVATE KEY-----"
    ),
    "BEGIN and header lines, one END at the end": lambda n: (
        _repeat("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,E\nQUJD\n")(n)
        + "Ab: -----END RSA PRIVATE KEY-----"
    ),
    "header names on a base64 line, one END at the end": lambda n: (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + _repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVoa-b:")(n)
        + "\n-----END RSA PRIVATE KEY-----"
    ),
}


def _cpu_time(redactor: Redactor, text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        redactor.redact_text(text)
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


class TestLinearTime:
    @pytest.mark.parametrize("family", list(FAMILIES))
    def test_ten_times_the_input_costs_about_ten_times_the_time(self, family: str) -> None:
        """Redacting 1 MB of an adversarial pattern costs well under 25× redacting 100 KB."""
        make = FAMILIES[family]
        redactor = Redactor()
        small, large = make(SMALL), make(LARGE)

        ratio = _cpu_time(redactor, large, 2) / _cpu_time(redactor, small, 3)

        assert True is (ratio < MAX_RATIO), f"{family}: 1 MB / 100 KB = {ratio:.1f}"

    def test_secret_in_the_middle_of_a_long_log_is_found(self) -> None:
        """A secret in the middle of a 1 MB log is replaced; the log around it is unchanged."""
        text = _log_with_secret(LARGE)

        redacted = Redactor().redact_text(text)

        assert text.replace(SECRET, "[REDACTED:github_token]") == redacted
