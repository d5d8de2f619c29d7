"""`ChunkRedactor`: streamed deltas leave as redacted increments, and no split secret leaks.

The property tests split texts at random points (hypothesis, derandomized, no example
database) and hold two things: the chunks concatenate to `redact_text` of the whole text, and
no 8-character piece of a secret that the whole text's redaction removes is ever sent. The
secrets come from the black-box redaction corpus (`tests/redaction/corpus.py`) and from the
redaction property tests' fragments (token prefixes, PEM markers, `key=value` shapes).
"""

from __future__ import annotations

import functools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.streaming import LOOKAHEAD, ChunkRedactor

from ..builders import TEXT
from ..redaction.corpus import KEEP_KINDS, generate

SECRET = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join("MIIEowIBAAKCAQEAx9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8Yz7abcdef" for _ in range(6))
    + "\n-----END RSA PRIVATE KEY-----\n"
)
PROSE = "The weather in Paris is mild today and the forecast says it stays that way. "
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def _redactor() -> Redactor:
    return Redactor()


@functools.cache
def _secret_cases() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(text, secrets) of every text case of the corpus whose secrets the redactor removes."""
    redact = _redactor().redact_text
    cases = []
    for case in generate(7, per_kind=4):
        if case.kind in KEEP_KINDS or not isinstance(case.payload, str):
            continue
        whole = redact(case.payload)
        secrets = tuple(s for s in case.secrets if not _pieces(s, whole))
        if secrets:
            cases.append((case.payload, secrets))
    return tuple(cases)


def _pieces(secret: str, text: str, size: int = 8) -> list[str]:
    """The `size`-character pieces of `secret` found in `text`."""
    width = min(size, len(secret))
    return [
        secret[i : i + width]
        for i in range(len(secret) - width + 1)
        if secret[i : i + width] in text
    ]


def stream(text: str, sizes: list[int]) -> tuple[list[str], ChunkRedactor]:
    """Feed `text` in deltas of `sizes` (cycled), finish, and return what was sent."""
    sent: list[str] = []
    chunks = ChunkRedactor(_redactor(), sent.append)
    i, k = 0, 0
    while i < len(text):
        size = sizes[k % len(sizes)] if sizes else len(text)
        chunks.feed(text[i : i + size])
        i, k = i + size, k + 1
    chunks.finish()
    return sent, chunks


class TestChunkRedactor:
    def test_clean_text_is_sent_before_the_end(self):
        """Text with no secret goes out while it streams, kept back by the lookahead only."""
        sent: list[str] = []
        chunks = ChunkRedactor(_redactor(), sent.append)
        for word in re.findall(r"\S+\s*", PROSE * 6):
            chunks.feed(word)
        streamed = "".join(sent)
        assert 0 < len(streamed) and len(PROSE * 6) - len(streamed) <= LOOKAHEAD + len(PROSE)
        chunks.finish()
        assert PROSE * 6 == "".join(sent)

    def test_a_token_split_in_two_is_sent_as_its_marker(self):
        """`gh` + `p_…` in two deltas: only `[REDACTED:github_token]` is ever sent."""
        text = f"{PROSE}token {SECRET} {PROSE}{PROSE}"
        cut = text.index(SECRET) + 2
        sent: list[str] = []
        chunks = ChunkRedactor(_redactor(), sent.append)
        chunks.feed(text[:cut])
        chunks.feed(text[cut:])
        chunks.finish()
        assert _redactor().redact_text(text) == "".join(sent)
        assert [] == _pieces(SECRET, "".join(sent))

    def test_an_open_key_block_is_held_until_its_end_line(self):
        """Nothing from `-----BEGIN` on is sent before the block's END line arrives."""
        text = PROSE + PEM + PROSE * 3
        end = text.index("-----END")
        sent: list[str] = []
        chunks = ChunkRedactor(_redactor(), sent.append)
        for i in range(0, end, 7):
            chunks.feed(text[i : min(i + 7, end)])
        assert "-----BEGIN" not in "".join(sent) and "MIIE" not in "".join(sent)
        chunks.feed(text[end:])
        chunks.finish()
        assert _redactor().redact_text(text) == "".join(sent)

    def test_a_card_in_groups_is_not_sent_group_by_group(self):
        """`4111 1111 1111 1111` is a card only once whole; its first groups are never sent."""
        text = f"{PROSE}card 4111 1111 1111 1111 please {PROSE}{PROSE}"
        sent, _ = stream(text, [1])
        assert "4111 1111" not in "".join(sent)
        assert _redactor().redact_text(text) == "".join(sent)

    def test_key_value_context_before_the_secret_is_seen(self):
        """`password = hunter2…` with the key in an earlier delta: the value is still masked."""
        text = f"{PROSE}password = Xk9pQ2wLm7Rt {PROSE}{PROSE}"
        sent, _ = stream(text, [3])
        assert "Xk9pQ2wL" not in "".join(sent)
        assert _redactor().redact_text(text) == "".join(sent)

    def test_finish_uses_the_response_text(self):
        """`finish(text)` completes from the response's whole text (the authority)."""
        sent: list[str] = []
        chunks = ChunkRedactor(_redactor(), sent.append)
        chunks.feed("Hello")
        chunks.finish(f"Hello, your token is {SECRET}")
        assert "Hello, your token is [REDACTED:github_token]" == "".join(sent)

    def test_nothing_fed_sends_nothing(self):
        """An empty stream sends no chunk at all (never an empty one)."""
        sent: list[str] = []
        ChunkRedactor(_redactor(), sent.append).finish()
        assert [] == sent

    def test_a_long_unbroken_run_is_held_whole(self):
        """A run with no whitespace (a JWT, a blob) is never cut: it goes out at the end."""
        blob = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw" * 5
        sent, _ = stream(f"{PROSE}{blob}", [4])
        assert _redactor().redact_text(f"{PROSE}{blob}") == "".join(sent)
        assert all("SflKxwRJ" not in piece for piece in sent[:-1])


class TestChunkRedactorProperties:
    @FUZZ
    @given(
        st.data(),
        st.lists(st.integers(min_value=1, max_value=48), min_size=1, max_size=8),
    )
    def test_corpus_secrets_split_anywhere_never_leak(self, data, sizes):
        """Corpus secrets amid prose, split at random points: chunks equal the whole redaction
        and carry no 8-character piece of a secret it removes."""
        cases = _secret_cases()
        picked = data.draw(st.lists(st.sampled_from(cases), min_size=1, max_size=3))
        glue = data.draw(st.sampled_from([" ", "\n", f" {PROSE}", f"\n{PROSE}\n"]))
        text = glue.join(["", *(payload for payload, _ in picked), PROSE])
        sent, chunks = stream(text, sizes)
        joined = "".join(sent)
        whole = _redactor().redact_text(text)
        assert (whole, False) == (joined, chunks.diverged)
        for _, secrets in picked:
            for secret in secrets:
                assert [] == [p for p in _pieces(secret, joined) if p not in whole]

    @FUZZ
    @given(TEXT, TEXT, st.lists(st.integers(min_value=1, max_value=32), min_size=1, max_size=6))
    def test_any_text_streams_to_its_redaction(self, before, after, sizes):
        """Fragment soup (token prefixes, PEM markers, `key=value`, odd unicode) around a token:
        the chunks concatenate to the whole text's redaction and never show the token."""
        text = f"{before} {SECRET} {after}"
        sent, chunks = stream(text, sizes)
        joined = "".join(sent)
        assert chunks.diverged or _redactor().redact_text(text) == joined
        assert [] == [p for p in _pieces(SECRET, joined) if p not in _redactor().redact_text(text)]
