"""Tests for the shadow copy (`_normalize.py`): folding invisible and look-alike characters."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction._normalize import fold, fold_key

ZWSP, ZWJ, WJ, BOM, SHY = "\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad"


class TestFold:
    def test_ascii_text_is_its_own_shadow(self) -> None:
        """ASCII text is returned as its own shadow with no offset map."""
        text = "password=hunter2"

        folded = fold(text)

        assert (True, []) == (folded.shadow is text, folded.gaps)

    @pytest.mark.parametrize("invisible", [ZWSP, ZWJ, WJ, BOM, SHY, "\u200c", "\U000e0041"])
    def test_invisible_characters_are_deleted(self, invisible: str) -> None:
        """Zero-width, word-joiner, BOM, soft hyphen and tag characters vanish from the shadow."""
        assert "ghp_abc" == fold(f"gh{invisible}p_abc").shadow

    def test_full_width_forms_fold_to_ascii(self) -> None:
        """Full-width letters and signs (U+FF01–U+FF5E) become their ASCII twins."""
        assert "password=x" == fold("ｐａｓｓｗｏｒｄ＝x").shadow

    @pytest.mark.parametrize(
        ("lookalike", "ascii"),
        [("pаssword", "password"), ("sеcrеt", "secret"), ("tοken", "token"), ("рwd", "pwd")],
    )
    def test_homoglyphs_fold_to_latin(self, lookalike: str, ascii: str) -> None:
        """Cyrillic and Greek look-alike letters become the Latin letters they imitate."""
        assert ascii == fold(lookalike).shadow

    def test_span_maps_back_over_deleted_characters(self) -> None:
        """A shadow span maps to the original span, invisible characters inside it included."""
        text = f"key {ZWSP}ab{ZWSP}{ZWJ}cd end"
        folded = fold(text)
        start = folded.shadow.index("abcd")

        original = folded.span(start, start + 4)

        assert f"ab{ZWSP}{ZWJ}cd" == text[original[0] : original[1]]

    @pytest.mark.parametrize("every", [7, 100, 500])
    def test_long_texts_fold_as_short_ones_do(self, every: int) -> None:
        """A long text (folded by the sparse path) gets the shadow and offsets of the plain one."""
        odd = [ZWSP, "ｐ", "а", "\u00a0", SHY, "é", "漢", "\U0001d400", "\U000e0041"]
        text = "".join(
            odd[i % len(odd)] if i % every == 0 else "password=x "[i % 11] for i in range(9000)
        )
        pieces = [fold(text[i : i + 1000]) for i in range(0, len(text), 1000)]
        expected_gaps = [
            g + sum(len(p.shadow) for p in pieces[:k]) for k, p in enumerate(pieces) for g in p.gaps
        ]

        folded = fold(text)

        assert ("".join(p.shadow for p in pieces), expected_gaps) == (folded.shadow, folded.gaps)

    def test_lone_surrogates_fold_one_for_one(self) -> None:
        """A lone surrogate (from JSON `\\ud800`) keeps every offset, in a long text too."""
        for text in ("a\ud800b\u200bc", "a\ud800b\u200bc" * 2000):
            folded = fold(text)
            assert (len(text) - text.count("\u200b"), "\ufffd") == (
                len(folded.shadow),
                folded.shadow[1],
            )

    def test_a_line_continuation_is_deleted(self) -> None:
        """`\\`-newline (raw, or JSON-escaped) is not in the shadow; a span over it covers it."""
        for brk in ("\\\n", "\\\r\n", "\\\\\\n", "\\\n    "):
            text = f"x ghp_abc{brk}def y"
            folded = fold(text)
            assert ("x ghp_abcdef y", (2, len(text) - 2)) == (
                folded.shadow,
                folded.span(2, len(folded.shadow) - 2),
            )

    def test_span_is_identity_without_deletions(self) -> None:
        """With one-for-one folds only, shadow offsets are the original offsets."""
        folded = fold("ｘ password")

        assert (2, 10) == folded.span(2, 10)


class TestFoldKey:
    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            ("apiKey", "api_key"),
            ("API-Key", "api_key"),
            ("DBPassword", "db_password"),
            ("x-api-key", "x_api_key"),
            ("spring.datasource.password", "spring_datasource_password"),
            ("--db-password", "db_password"),
            ("ｐａｓｓｗｏｒｄ", "password"),
            (f"pass{ZWSP}word", "password"),
            ("clientSecret", "client_secret"),
            ("maxTokens", "max_tokens"),
        ],
    )
    def test_keys_normalise_to_snake_case(self, key: str, expected: str) -> None:
        """Any spelling of a key (camelCase, kebab, dotted, folded) becomes snake_case."""
        assert expected == fold_key(key)

    def test_long_keys_keep_their_tail(self) -> None:
        """Only the end of a very long key is normalised: that is what decides sensitivity."""
        assert True is fold_key("x" * 10_000 + "_password").endswith("_password")
