"""Tests for `zeroclaw_obs.turn.truncation`: a result is redacted whole, then cut (§7)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.truncation import (
    REDACTION_MARGIN,
    WHOLE_REDACTION_LIMIT,
    bound_result,
    truncate,
    truncated_bytes,
)

DEFAULT_LIMIT = 50_000
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
PEM_BODY = "\n".join(
    ["MIIEowIBAAKCAQEAx9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7Ab6Cd5Ef4Gh3Ij2K"] * 20
    + ["l1Mn0Op9Qr8St7Uv6Wx5Yz4Ab3Cd2Ef1Gh0Ij9Kl8Mn7Op6Qr5St4Uv3Wx2Yz1Ab0Cd"]
)
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
TOKENS = {
    "github": "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8",
    "jwt": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    ),
    "openai": "sk-proj-Qm3Vx8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0YaXe4Rt",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
}
# What the redactor must see to know the value is a secret: (text around it, the secret).
SECRETS = {
    **{kind: (token, token) for kind, token in TOKENS.items()},
    "aws_key_value": (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    "pem": (PEM, PEM_BODY),
}
FILLER = "log line ok; nothing to see here.\n"


def filler(size: int) -> str:
    return (FILLER * (size // len(FILLER) + 1))[:size]


def pieces(secret: str, size: int = 8) -> set[str]:
    """Every piece of `size` characters of the secret (its lines, for multi-line secrets)."""
    found: set[str] = set()
    for part in secret.split("\n"):
        found |= {part[i : i + size] for i in range(max(1, len(part) - size + 1))}
    return found


def leaked(secret: str, text: str) -> list[str]:
    return sorted(p for p in pieces(secret) if p in text)


def around_cut(block: str, cut: int, shift: int, total: int) -> str:
    """`block` placed so that raw position `cut` falls `shift` characters into it."""
    start = max(0, cut - shift)
    text = filler(start - 1) + "\n" + block + "\n"
    return text + filler(max(0, total - len(text)))


class TestTruncate:
    def test_cuts_the_text_as_it_is(self):
        """`truncate` keeps 2/3 head, 1/3 tail, and says how many characters it dropped."""
        text = "".join(str(i % 10) for i in range(90))
        expected = text[:20] + "\n\n[... 60 characters truncated ...]\n\n" + text[-10:]
        assert (expected, 60) == truncate(text, 30)

    def test_truncated_bytes_counts_utf8(self):
        """What was cut is measured in UTF-8 bytes."""
        text = "é" * 90
        kept, dropped = truncate(text, 30)
        assert 120 == truncated_bytes(text, kept, dropped)


class TestBoundResult:
    @pytest.mark.parametrize("kind", sorted(SECRETS))
    @pytest.mark.parametrize("end", ["head", "tail"])
    def test_no_piece_of_a_secret_straddling_a_cut(self, kind, end):
        """A secret across the head or the tail cut leaves no 8-character piece in the text."""
        block, secret = SECRETS[kind]
        limit, total = 600, 6_000
        redactor = Redactor()
        for shift in range(0, len(block) + 1, max(1, len(block) // 12)):
            if end == "head":
                text = around_cut(block, limit * 2 // 3, shift, total)
            else:
                # The kept tail of the redacted text starts `limit // 3` before its end; the
                # block is the only secret, so the raw position is found from the end too.
                text = around_cut(block, total - limit // 3, shift, total)
            bounded = bound_result(text, limit, redactor)
            assert [] == leaked(secret, bounded.text), (kind, end, shift)

    @pytest.mark.parametrize("kind", ["aws_key_value", "pem"])
    def test_tail_starting_after_the_context_at_the_default_limit(self, kind):
        """At the default limit, a tail starting after `key = ` or a BEGIN line hides the value."""
        block, secret = SECRETS[kind]
        context = block[: block.index(secret)]
        total = 120_000
        tail_start = total - DEFAULT_LIMIT // 3
        text = filler(tail_start - len(context) - 1) + "\n" + block
        text += filler(total - len(text))
        assert text[tail_start:].startswith(secret[:20])
        bounded = bound_result(text, DEFAULT_LIMIT, Redactor())
        assert [] == leaked(secret, bounded.text)
        assert "[REDACTED:" in bounded.text

    def test_equals_redacting_the_whole_then_cutting(self):
        """The kept text is exactly `truncate(redact(result))`, with counts of the whole."""
        redactor = Redactor()
        text = f"{filler(700)} {TOKENS['github']} {filler(300)} {TOKENS['slack']} {filler(500)}"
        redacted, counts = redactor.redact_text_report(text)
        expected, dropped = truncate(redacted, 900)
        bounded = bound_result(text, 900, redactor)
        assert (expected, dropped, counts) == (bounded.text, bounded.dropped_chars, bounded.counts)
        assert truncated_bytes(redacted, expected, dropped) == bounded.dropped_bytes

    def test_counts_describe_the_redacted_text(self):
        """`dropped_chars` is what the redacted result loses: head + marker + tail adds up."""
        redactor = Redactor()
        text = TOKENS["github"] * 40
        bounded = bound_result(text, 60, redactor)
        redacted = redactor.redact_text(text)
        assert len(redacted) - 60 == bounded.dropped_chars

    def test_a_result_that_redaction_brings_under_the_limit_is_not_cut(self):
        """Nothing is cut when the redacted result fits, even if the raw one did not."""
        text = PEM + "\nok"
        bounded = bound_result(text, len(text) - 10, Redactor())
        assert (0, 0) == (bounded.dropped_chars, bounded.dropped_bytes)
        assert bounded.text.endswith("\nok")

    def test_zero_limit_redacts_and_never_cuts(self):
        """`max_tool_result_chars: 0` keeps the whole result, redacted."""
        text = filler(5_000) + " " + TOKENS["openai"]
        bounded = bound_result(text, 0, Redactor())
        assert (0, []) == (bounded.dropped_chars, leaked(TOKENS["openai"], bounded.text))


class TestBoundResultLargeResults:
    """Past `WHOLE_REDACTION_LIMIT` only two margin-wide windows are scanned."""

    SIZE = WHOLE_REDACTION_LIMIT + 4 * REDACTION_MARGIN + 50_000

    def test_windows_give_the_exact_text_when_the_middle_is_clean(self):
        """Head, tail and the marker's count equal those of redacting the whole result."""
        redactor = Redactor()
        head_cut = DEFAULT_LIMIT * 2 // 3
        text = around_cut(TOKENS["github"], head_cut, 10, self.SIZE)
        text = text[: -DEFAULT_LIMIT // 3 - 30] + "\n" + SECRETS["aws_key_value"][0] + "\n"
        text += filler(self.SIZE - len(text))
        redacted = redactor.redact_text(text)
        expected, dropped = truncate(redacted, DEFAULT_LIMIT)
        bounded = bound_result(text, DEFAULT_LIMIT, redactor)
        assert (expected, dropped) == (bounded.text, bounded.dropped_chars)
        assert truncated_bytes(redacted, expected, dropped) == bounded.dropped_bytes

    @pytest.mark.parametrize("kind", sorted(SECRETS))
    def test_no_piece_of_a_secret_at_either_cut(self, kind):
        """A secret across either cut of a large result leaves no 8-character piece."""
        block, secret = SECRETS[kind]
        redactor = Redactor()
        for cut in (DEFAULT_LIMIT * 2 // 3, self.SIZE - DEFAULT_LIMIT // 3):
            text = around_cut(block, cut, len(block) // 2, self.SIZE)
            bounded = bound_result(text, DEFAULT_LIMIT, redactor)
            assert [] == leaked(secret, bounded.text), (kind, cut)
            assert len(text) - DEFAULT_LIMIT < bounded.dropped_chars + len(block)

    def test_a_result_redaction_shrinks_below_the_windows_is_redacted_whole(self):
        """When the redactor shrinks the windows until they meet, the whole result is redacted."""
        text = "\n".join([PEM] * (self.SIZE // len(PEM) + 1))
        bounded = bound_result(text, DEFAULT_LIMIT, Redactor())
        assert [] == leaked(PEM_BODY, bounded.text)
        assert 0 == bounded.dropped_chars


class TestBoundResultProperties:
    @settings(max_examples=150, deadline=None)
    @given(
        kind=st.sampled_from(sorted(SECRETS)),
        before=st.integers(min_value=0, max_value=900),
        after=st.integers(min_value=0, max_value=900),
        limit=st.integers(min_value=1, max_value=700),
    )
    def test_redact_then_cut_for_any_position_and_limit(self, kind, before, after, limit):
        """For any placement and limit: exactly `truncate(redact(text))`, and no secret piece."""
        block, secret = SECRETS[kind]
        text = filler(before) + "\n" + block + "\n" + filler(after)
        redactor = Redactor()
        expected, dropped = truncate(redactor.redact_text(text), limit)
        bounded = bound_result(text, limit, redactor)
        assert (expected, dropped) == (bounded.text, bounded.dropped_chars)
        assert [] == leaked(secret, bounded.text)
