"""`PemBlockRule` finds exactly the matches of its whole pattern (`_pem.py`), on any text.

The finder reads a block in pieces and runs the whole pattern only where the pieces cannot
decide; these tests compare it with the whole pattern itself (`View.matches`), match for
match, on texts built from the pieces a block is made of: BEGIN and END lines of both block
kinds, base64, header lines (`Proc-Type: 4,ENCRYPTED`), real and JSON-escaped line breaks,
spaces, junk, truncation, and second blocks. Runs are derandomized.
"""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction._pem import PemBlockRule
from zeroclaw_obs.redaction._scanner import View
from zeroclaw_obs.redaction._tokens import token_specs

PIECES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----END RSA PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "-----END PGP PRIVATE KEY BLOCK-----",
    "-----ENDPRIVATE KEY-----",
    "-----END CERTIFICATE-----",
    "---- BEGIN SSH2 PRIVATE KEY ----",
    "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
    "---- END SSH2 PRIVATE KEY ----",
    "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
    "Proc-Type: 4,ENCRYPTED",
    "DEK-Info: AES-128-CBC,3F17F5316E2BAC89",
    'Comment: "rsa-key-20260101"',
    "Version: GnuPG v2",
    "Ab:",
    ":",
    "a-b",
    "MIIEowIBAAKCAQEA",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo",
    "abc+/=",
    "==",
    "\n",
    "\r\n",
    "\\n",
    "\\\\n",
    "\\r\\n",
    "\\t",
    "\\/",
    "\\u00e9",
    '\\"',
    "\\",
    " ",
    "\t",
    " QUJDREVGR0hJSktM",
    " QUJD=",
    "-----",
    "-",
    '"',
    ",",
    "é",
    "x",
]
TEXTS = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(alphabet="AZaz09+/=:- \n\\-é", max_size=6)),
    max_size=24,
).map("".join)
FUZZ = settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@functools.cache
def _rules() -> list[PemBlockRule]:
    return [PemBlockRule(spec, 0) for spec in token_specs() if spec.blocks]


def _both(text: str) -> list[tuple[list[list[tuple[int, int]]], list[list[tuple[int, int]]]]]:
    view = View(text, text.encode(), None, 0, True)  # type: ignore[arg-type]
    return [
        ([spans[:1] for spans in view.matches(rule._regex)], list(rule._matches(view)))
        for rule in _rules()
    ]


class TestPemBlockRule:
    @FUZZ
    @given(TEXTS)
    def test_the_same_matches_as_the_whole_pattern(self, text: str) -> None:
        """Every match the finder gives is the whole pattern's, in order, on PEM-like text."""
        for whole, pieces in _both(text):
            assert whole == pieces

    @FUZZ
    @given(st.lists(TEXTS, min_size=2, max_size=4))
    def test_the_same_matches_between_blocks(self, parts: list[str]) -> None:
        """A block, an unclosed block, then another block: the same matches as the pattern."""
        begin, end = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
        text = begin + f"\n{end}\n{begin}".join(parts) + "\n" + end
        for whole, pieces in _both(text):
            assert whole == pieces

    def test_a_header_value_running_into_the_end_line(self) -> None:
        """A header whose value runs on into END takes the later END, as the pattern does."""
        text = (
            "-----BEGIN RSA PRIVATE KEY-----\nAb:c-----END RSA PRIVATE KEY-----zz\n"
            "-----END RSA PRIVATE KEY-----"
        )
        for whole, pieces in _both(text):
            assert whole == pieces
        assert [[(0, len(text))]] == _both(text)[0][1]

    def test_the_chain_reads_both_block_kinds_with_it(self) -> None:
        """The default chain finds PEM and SSH2 blocks with `PemBlockRule`."""
        rules = [r for r in Redactor()._scanner.rules if isinstance(r, PemBlockRule)]

        assert ["private_key_block"] * 2 == [r.rule_id for r in rules]
