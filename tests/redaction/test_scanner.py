"""Tests for the scanner (`_scanner.py`): the RE2 gate, blanking of markers, and `resolve`."""

from __future__ import annotations

import random

import pytest

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction import _scanner as scanner_module
from zeroclaw_obs.redaction._scanner import resolve

PW = "Zq8Wx7Vc6Bn5Ml4K"
GH = "gh" + "p_Xa9Bc8De7Fg6Hi5Jk4Lm3No2Pq1Rs0Tu9Vw8"
M = "[REDACTED:sensitive_key]"


class TestResolve:
    def test_disjoint_candidates_are_kept_in_text_order(self) -> None:
        """Candidates that do not overlap all survive, sorted by position."""
        found = [(10, 12, 5, "b"), (0, 3, 9, "a")]

        assert [(0, 3, 9, "a"), (10, 12, 5, "b")] == resolve(found)

    def test_same_span_goes_to_the_earlier_rule(self) -> None:
        """Two rules on the same span: the one earlier in the chain names it."""
        assert [(4, 9, 1, "github_token")] == resolve(
            [(4, 9, 7, "key_value"), (4, 9, 1, "github_token")]
        )

    def test_a_larger_candidate_replaces_what_it_contains(self) -> None:
        """A quoted value that contains a token is replaced whole, under its own rule."""
        assert [(0, 20, 7, "key_value")] == resolve(
            [(5, 9, 1, "github_token"), (0, 20, 7, "key_value")]
        )

    def test_a_partial_overlap_loses_to_the_earlier_rule(self) -> None:
        """A later rule that only partly overlaps an earlier claim is dropped."""
        assert [(3, 10, 2, "url_credentials")] == resolve(
            [(3, 10, 2, "url_credentials"), (8, 20, 30, "email")]
        )

    def test_huge_overlap_clusters_are_merged_whole(self) -> None:
        """A cluster of more than 64 mutually overlapping candidates becomes one span."""
        found = [(i, i + 3, i % 5, f"r{i % 5}") for i in range(0, 300, 2)]

        assert [(0, 301, 0, "r0")] == resolve(found)


class TestGate:
    def test_gate_gives_the_same_result_as_running_every_rule(self) -> None:
        """The RE2 set only skips rules that cannot match: gated and ungated scans agree."""
        rng = random.Random(7)
        parts = [
            f"password={PW}",
            GH,
            "bob@example.com",
            "10.0.0.1",
            "4111 1111 1111 1111",
            "Bearer " + PW,
            "max_tokens=100",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n",
            "https://u:" + PW + "@h/x",
            "q=token%3D" + PW,
            "[REDACTED:email]",
            "İ",
            "\u200b",
        ]
        scanner = Redactor()._scanner
        for _ in range(300):
            text = rng.choice(["", " ", "\n", "=", "x"]).join(rng.sample(parts, 4))
            assert scanner.scan(text, ungated=True) == scanner.scan(text)

    def test_clean_text_stops_at_the_gate(self) -> None:
        """Text that trips no trigger yields nothing."""
        assert [] == Redactor()._scanner.scan("The weather in Paris is 18C and clear.")


class TestMarkers:
    @pytest.mark.parametrize(
        "text",
        [
            "password=[REDACTED:key_value] and token: [REDACTED:github_token]",
            "Authorization: Bearer [REDACTED:bearer]",
            "https://[REDACTED:url_credentials]@cluster0.x7kq2.mongodb.net/app?w=majority",
            'api_key="[REDACTED:anthropic_key]")  # msg_01KbZpvwPx8Pl10zzPimRrAZ',
        ],
    )
    def test_markers_are_never_redacted_nor_context(self, text: str) -> None:
        """Markers are blanked before the rules run: no rule matches them or reads their words."""
        assert (text, {}) == Redactor().redact_text_report(text)

    def test_allowlisted_candidates_are_dropped(self) -> None:
        """A candidate whose text is allowlisted is dropped before overlaps are resolved."""
        redactor = Redactor.from_config(allow=[PW])

        assert f"password={PW}" == redactor.redact_text(f"password={PW}")


class TestEncodingEdges:
    def test_lone_surrogates_do_not_break_redaction(self) -> None:
        """Text with lone surrogates (from JSON escapes) is redacted, surrogates kept in place."""
        text = f"\ud800 password={PW} \udfff"
        value = {"k\ud800": [text], "password": "x\ud800"}

        assert (
            "\ud800 password=[REDACTED:key_value] \udfff",
            {"k\ud800": ["\ud800 password=[REDACTED:key_value] \udfff"], "password": M},
        ) == (Redactor().redact_text(text), Redactor().redact_value(value))

    def test_public_finditer_path_matches_the_fast_path(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without google-re2's internal `Match`, the public `finditer` gives the same result."""
        text = f"password={PW} {GH} bob@example.com 10.0.0.1 Bearer {PW}"
        fast = Redactor().redact_text(text)
        monkeypatch.setattr(scanner_module, "_FAST", False)

        assert fast == Redactor().redact_text(text)
